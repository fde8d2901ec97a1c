#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernel's Rust metadata (rust/*.rmeta, the proc-macro .so files, scripts/target.json) for
# a Debian kernel whose linux-headers package leaves it out: rebuilt from the matching
# linux-source-X.Y with the headers' own .config and .kernelvariables, by the rustc that built
# the kernel (dkms-make.sh finds it). The module is then built against a thin kernel build
# dir, /var/cache/rdna1-mtype/kbuild/KERNELRELEASE, that is the headers' own (links) plus
# rust/: the installed headers are not touched. Kept there, keyed by what it was made from,
# so the next build for the same kernel reuses it; a headers or rustc update makes it anew.
# Builds for one kernel run one at a time (a lock per kernel: the second reuses what the first
# made), each in a directory of its own, and the result replaces the old one in one rename;
# dkms-make.sh holds the same lock across the module build that reads it.
# usage: dkms-rust-metadata.sh KERNEL_BUILD_DIR KERNELRELEASE RUSTC [BINDGEN]
# Prints the build dir to use. RDNA1_KBUILD_CACHE overrides /var/cache/rdna1-mtype/kbuild,
# RDNA1_SOURCE_DIR /usr/src (where linux-source-X.Y puts its tarball; tests).
set -eu
die() { printf 'rdna1-mtype: %s\n' "$*" >&2; exit 1; }
say() { printf 'rdna1-mtype: %s\n' "$*" >&2; }
[ $# -ge 3 ] || die "usage: dkms-rust-metadata.sh KERNEL_BUILD_DIR KERNELRELEASE RUSTC [BINDGEN]"
kdir=$1
rel=$2
rustc=$3
bindgen=${4:-}
# The release names the cache's files and goes into sed and make below: only a release's own
# characters, checked before anything uses it (as dkms-make.sh does; the letters spelled out,
# a range like a-z follows the locale).
alnum=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz
kmaj=${rel%%.*}
kmin=${rel#*.}
kmin=${kmin%%[!0123456789]*}
case $kmaj:$rel in
:* | *[!0123456789]*:* | *:*[!"$alnum"._+~-]* | "$rel:$rel") kmin="" ;;
esac
[ -n "$kmin" ] && [ ${#rel} -le 64 ] ||
	die "\"$rel\" is not a kernel release (MAJOR.MINOR then digits, letters, . _ + ~ -, at most 64): refusing it"
cache=${RDNA1_KBUILD_CACHE:-/var/cache/rdna1-mtype/kbuild}
case $cache in
/*) ;;
*) die "RDNA1_KBUILD_CACHE=$cache is not an absolute path" ;;
esac
case $cache in *[!"$alnum"/._+~-]*) die "RDNA1_KBUILD_CACHE=$cache: a path of digits, letters and / . _ + ~ - only (it goes into sed and make)" ;; esac

# Only Debian's layout is known: KDIR/Makefile sets KBUILD_OUTPUT and includes the common
# headers' Makefile; .kernelvariables names the compiler.
headers=$(cd "$kdir" && pwd -P)
[ -f "$headers/.kernelvariables" ] && grep -q '^KBUILD_OUTPUT=' "$headers/Makefile" ||
	die "$kdir/rust has no libkernel.rmeta and this is not a Debian headers tree it could be rebuilt for: install the kernel's Rust metadata (Ubuntu: apt install linux-lib-rust-$rel; docs/INSTALL.md)"
hpkg=$(dpkg-query -S "$headers/.config" 2>/dev/null | cut -d: -f1 || true)
[ -n "$hpkg" ] || die "no package owns $headers/.config: cannot tell which linux-source matches it"
hver=$(dpkg-query -W -f '${Version}' "$hpkg") || die "dpkg-query cannot tell the version of $hpkg"
series=$(echo "$rel" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
spkg=linux-source-$series
tarball=${RDNA1_SOURCE_DIR:-/usr/src}/$spkg.tar.xz
sver=$(dpkg-query -W -f '${Version}' "$spkg" 2>/dev/null || true)
[ "$sver" = "$hver" ] ||
	die "Debian's $hpkg ships no Rust metadata; it is rebuilt from the kernel source of the same version: apt install $spkg=$hver${sver:+ (installed: $sver)}"
[ -r "$tarball" ] || die "$tarball is missing although $spkg $sver is installed: apt install --reinstall $spkg"
missing=""
for t in make flex bison bc python3 openssl pahole xz; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -z "$missing" ] ||
	die "rebuilding $rel's Rust metadata needs:$missing. apt install make flex bison bc python3 openssl dwarves xz-utils libelf-dev libssl-dev"

# The tools by absolute paths (dkms-make.sh passes its vetted ones): make would look a bare
# name up on PATH.
case $rustc in /*) ;; *) die "RUSTC $rustc is not an absolute path (dkms-make.sh passes the rustc it vetted)" ;; esac
case $bindgen in
/*) ;;
"") die "rebuilding $rel's Rust metadata needs bindgen, and dkms-make.sh found none owned by root (on PATH, in /root/.cargo/bin): apt install bindgen (Debian), or as root cargo install bindgen-cli" ;;
*) die "BINDGEN $bindgen is not an absolute path (dkms-make.sh passes the bindgen it vetted)" ;;
esac
case $rustc$bindgen in *[!"$alnum"/._+~-]*) die "the paths of rustc ($rustc) and bindgen ($bindgen) must be of digits, letters and / . _ + ~ - (they go into make's arguments)" ;; esac

out=$cache/$rel
lock=$cache/.$rel.lock
mkdir -p "$cache"
# dkms-make.sh holds this lock from here to the end of the module build, which reads what this
# makes: it opens the lock on fd 9, locks it, and this inherits that open file (locking it
# again is then a no-op; another open of the file would wait for itself). Run alone, this
# opens its own.
fd9=$(stat -L -c %d:%i /dev/fd/9 2>/dev/null || true)
if [ -z "$fd9" ] || [ "$fd9" != "$(stat -c %d:%i "$lock" 2>/dev/null || true)" ]; then
	exec 9>"$lock"
fi
flock 9 || die "cannot lock $lock"
key=$({
	echo "$hpkg $hver $spkg $sver"
	"$rustc" --version
	"$bindgen" --version 2>/dev/null || true
	cat "$headers/.config" "$headers/.kernelvariables" "$0"
} | sha256sum | cut -c1-16)
if [ -f "$out/.rdna1-key" ] && [ "$(cat "$out/.rdna1-key")" = "$key" ]; then
	say "Linux $rel: reusing its Rust metadata in $out"
	echo "$out"
	exit 0
fi

work=$(mktemp -d "$cache/.build-$rel.XXXXXX")
new=$(mktemp -d "$cache/.new-$rel.XXXXXX")
old=""
trap 'rm -rf "$work" "$new" ${old:+"$old"}' EXIT
say "Linux $rel: rebuilding the kernel's Rust metadata from $spkg $sver (a few minutes, once per kernel)"
tar -xf "$tarball" -C "$work" --strip-components=1
cp "$headers/.config" "$headers/.kernelvariables" "$work/"
mk() { make -s -C "$work" RUSTC="$rustc" BINDGEN="$bindgen" "$@" >"$work/.log" 2>&1 || {
	tail -n 30 "$work/.log" >&2
	die "make $* in $spkg failed (above)"
}; }
mk olddefconfig
# The metadata is only right for the configuration the kernel was built with: a toolchain that
# answers Kconfig's probes differently (gcc, openssl, pahole without a feature; no rust-src,
# bindgen or libclang, which turns RUST off) gives another one. The tools' version strings
# alone (CONFIG_*_VERSION, *_VERSION_TEXT) may differ: sid's gcc-16 moves on from the one that
# built the kernel, and rustc itself was matched exactly (dkms-make.sh).
cfg_sans_versions() { grep -vE '^CONFIG_[A-Z0-9_]*_VERSION(_TEXT)?=' "$1"; }
cfg_sans_versions "$headers/.config" >"$work/.config.theirs"
cfg_sans_versions "$work/.config" >"$work/.config.ours"
if ! cmp -s "$work/.config.theirs" "$work/.config.ours"; then
	diff "$work/.config.theirs" "$work/.config.ours" | head -n 20 >&2
	die "$spkg configured with $rel's .config gives a different configuration (above, < $rel, > here): install the tools $rel was built with (rust-src, bindgen and libclang for Rust; its compiler: $(sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' "$headers/.config"))"
fi
mk -j"$(nproc)" prepare

# The thin build dir: the headers' entries as links, its own Makefile (KBUILD_OUTPUT names
# it), scripts/ with the generated target.json added, and rust/.
mkdir -p "$new/rust" "$new/scripts"
for e in "$headers"/* "$headers"/.[!.]*; do
	[ -e "$e" ] || continue
	case ${e##*/} in Makefile | scripts) continue ;; esac
	ln -s "$e" "$new/${e##*/}"
done
for e in "$headers/scripts"/* "$headers/scripts"/.[!.]*; do
	[ -e "$e" ] || continue
	ln -s "$(readlink -f "$e")" "$new/scripts/${e##*/}"
done
cp "$work/scripts/target.json" "$new/scripts/"
sed "s|^KBUILD_OUTPUT=.*|KBUILD_OUTPUT=$out|" "$headers/Makefile" >"$new/Makefile"
cp "$work"/rust/*.rmeta "$work"/rust/*.so "$new/rust/"
echo "$key" >"$new/.rdna1-key"
chmod 755 "$new"
# The tree of an older key moves aside, then the new one takes its name (under the lock).
if [ -e "$out" ]; then
	old=$(mktemp -d "$cache/.old-$rel.XXXXXX")
	mv "$out" "$old/"
fi
mv "$new" "$out"
say "Linux $rel: Rust metadata in $out"
echo "$out"
