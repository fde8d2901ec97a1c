#!/usr/bin/env bash
# Two DKMS builds for one kernel at once (dpkg configuring two packages, an administrator's
# `dkms autoinstall` beside apt) must not clobber each other's Rust metadata: one rebuilds it,
# the other waits and reuses it, and the cache holds one whole tree. Run against a Debian-shaped
# headers tree with stand-ins for dpkg-query and the kernel's make (each "build" takes two
# seconds, so the two overlap), the script itself as DKMS runs it.
# And a rebuild waits for a module build that reads the metadata: dkms-make.sh (with a fake
# make that reads the metadata at its start and at its end, three seconds later) holds the
# kernel's lock to the end of make; a rebuild for another rustc started meanwhile replaces
# the metadata only after it.
# usage: dkms-metadata-race.sh WORK_DIR   (as root; WORK_DIR in directories only root can
# write, as make test's build/test: dkms-make.sh runs only root's make and bindgen)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/install/work-dir.sh"
work_dir dkms-metadata-race.sh "$1" bin src cache
rel=7.99.0-1-test

# The headers as Debian lays them out: Makefile naming KBUILD_OUTPUT, .kernelvariables, .config.
headers=$work/headers
mkdir -p "$headers/scripts"
printf 'KBUILD_OUTPUT=/somewhere\ninclude /usr/src/common/Makefile\n' >"$headers/Makefile"
echo 'CC=gcc' >"$headers/.kernelvariables"
printf 'CONFIG_RUST=y\nCONFIG_RUSTC_VERSION_TEXT="rustc 1.95.0"\n' >"$headers/.config"
touch "$headers/scripts/module.lds" "$headers/Module.symvers"
# linux-source-7.99: a tarball with one directory.
mkdir -p "$work/tree/linux-source-7.99"
touch "$work/tree/linux-source-7.99/Makefile"
tar -cJf "$work/src/linux-source-7.99.tar.xz" -C "$work/tree" linux-source-7.99
mkdir -p "$work/tree/linux-source-7.2"
touch "$work/tree/linux-source-7.2/Makefile"
tar -cJf "$work/src/linux-source-7.2.tar.xz" -C "$work/tree" linux-source-7.2

cat >"$work/bin/dpkg-query" <<'EOF'
#!/bin/sh
# -S FILE: the headers package owns it; -W -f FORMAT PKG: every package is at 1.0-1.
case $1 in
-S) echo "linux-headers-test: $2" ;;
-W) echo "1.0-1" ;;
*) exit 1 ;;
esac
EOF
cat >"$work/bin/make" <<'EOF'
#!/bin/sh
# The kernel's make: olddefconfig keeps the .config; prepare "builds" for two seconds, metadata
# that names the rustc. The module's (KDIR=): reads that metadata, three seconds apart, into
# the events log (next to the cache).
dir=""
prev=""
kdir=""
rustc=""
for a in "$@"; do
	[ "$prev" = -C ] && dir=$a
	case $a in KDIR=*) kdir=${a#KDIR=} ;; RUSTC=*) rustc=${a#RUSTC=} ;; esac
	prev=$a
done
case " $* " in
*" prepare "*)
	sleep 2
	mkdir -p "$dir/rust" "$dir/scripts"
	echo "meta of $rustc" >"$dir/rust/libkernel.rmeta"
	echo so >"$dir/rust/libmacros.so"
	echo '{}' >"$dir/scripts/target.json"
	;;
*" KDIR="*)
	echo "module build starts: $(cat "$kdir/rust/libkernel.rmeta")" >>"$kdir/../../events"
	sleep 3
	echo "module build ends: $(cat "$kdir/rust/libkernel.rmeta")" >>"$kdir/../../events"
	;;
esac
EOF
printf '#!/bin/sh\necho "rustc 1.95.0"\n' >"$work/bin/rustc-test"
printf '#!/bin/sh\necho "rustc 1.95.1"\n' >"$work/bin/rustc-other"
printf '#!/bin/sh\necho "bindgen 0.1.0"\n' >"$work/bin/bindgen"
chmod 755 "$work/bin"/*

build() { # build N: one DKMS build's metadata step, its stderr in $work/N.err
	PATH="$work/bin:$PATH" RDNA1_KBUILD_CACHE=$work/cache RDNA1_SOURCE_DIR=$work/src \
		sh "$top/kmod/dkms-rust-metadata.sh" "$headers" "$rel" "$work/bin/rustc-test" "$work/bin/none" \
		>"$work/$1.out" 2>"$work/$1.err"
}
rc1=0 rc2=0
build 1 &
p1=$!
build 2 &
p2=$!
wait $p1 || rc1=$?
wait $p2 || rc2=$?

[ $rc1 = 0 ] && [ $rc2 = 0 ] || bad "exit $rc1 and $rc2: $(cat "$work/1.err" "$work/2.err")"
rebuilt=$(cat "$work/1.err" "$work/2.err" | grep -c 'rebuilding the kernel' || true)
reused=$(cat "$work/1.err" "$work/2.err" | grep -c 'reusing its Rust metadata' || true)
[ "$rebuilt" = 1 ] && [ "$reused" = 1 ] ||
	bad "$rebuilt rebuilt and $reused reused (want one of each): $(cat "$work/1.err" "$work/2.err")"
out=$work/cache/$rel
[ "$(cat "$work/1.out")" = "$out" ] && [ "$(cat "$work/2.out")" = "$out" ] ||
	bad "build dirs printed: $(cat "$work/1.out") and $(cat "$work/2.out")"
[ -f "$out/rust/libkernel.rmeta" ] && [ -f "$out/scripts/target.json" ] && [ -f "$out/.rdna1-key" ] ||
	bad "the cached tree is not whole: $(find "$out" | head -20)"
[ -z "$(find "$out" -mindepth 1 -maxdepth 1 -name "$rel*")" ] || bad "a tree inside the tree: $(ls "$out")"
left=$(find "$work/cache" -mindepth 1 -maxdepth 1 ! -name "$rel" ! -name ".$rel.lock")
[ -z "$left" ] || bad "left in the cache: $left"
[ $fails = 0 ] || { echo "$fails metadata race check(s) failed" >&2; exit 1; }
echo "ok   two builds at once: one rebuilt, one reused, one whole tree"

# A module build (dkms-make.sh, the metadata rebuilt first) and, while its make runs, a rebuild
# of the same kernel's metadata for another rustc.
rel=7.2.99-1-test
out=$work/cache/$rel
events=$work/events
PATH="$work/bin:/usr/sbin:/usr/bin:/sbin:/bin" RDNA1_KBUILD_CACHE=$work/cache RDNA1_SOURCE_DIR=$work/src \
	RDNA1_RUSTC=$work/bin/rustc-test RDNA1CTL='' \
	sh "$top/kmod/dkms-make.sh" "$headers" "$rel" >"$work/module.out" 2>&1 &
pm=$!
for _ in $(seq 100); do
	grep -q 'module build starts' "$events" 2>/dev/null && break
	kill -0 $pm 2>/dev/null || break
	sleep 0.1
done
rcm=0 rco=0
if grep -q 'module build starts' "$events" 2>/dev/null; then
	PATH="$work/bin:$PATH" RDNA1_KBUILD_CACHE=$work/cache RDNA1_SOURCE_DIR=$work/src \
		sh "$top/kmod/dkms-rust-metadata.sh" "$headers" "$rel" "$work/bin/rustc-other" "$work/bin/bindgen" \
		>"$work/other.out" 2>"$work/other.err" || rco=$?
	echo "rebuild for the other rustc done: $(cat "$out/rust/libkernel.rmeta")" >>"$events"
fi
wait $pm || rcm=$?
[ $rcm = 0 ] && [ $rco = 0 ] && grep -q 'module build ends' "$events" ||
	bad "module build exit $rcm, rebuild exit $rco: $(cat "$work/module.out" "$work/other.err" "$events" 2>/dev/null)"
want_events="module build starts: meta of $work/bin/rustc-test
module build ends: meta of $work/bin/rustc-test
rebuild for the other rustc done: meta of $work/bin/rustc-other"
[ "$(cat "$events" 2>/dev/null)" = "$want_events" ] ||
	bad "the rebuild did not wait for the module build (events, in order: $(tr '\n' '|' <"$events" 2>/dev/null))"
[ $fails = 0 ] || { echo "$fails metadata lock check(s) failed" >&2; exit 1; }
echo "ok   a rebuild while a module build reads the metadata: waits for it"
