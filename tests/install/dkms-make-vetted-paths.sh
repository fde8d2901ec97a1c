#!/usr/bin/env bash
# kmod/dkms-make.sh hands make the tools it vetted by their paths, so that nothing it passes is
# looked up on PATH again, and hands them over one argument each:
#  - a clang kernel: LLVM=DIR/ (Kbuild runs DIR/clang, DIR/ld.lld, ...), DIR holding every LLVM
#    tool, each root's; not LLVM=1 or LLVM=-NN, which Kbuild resolves through PATH; a DIR with
#    one tool that is a user's file is refused;
#  - rustc and bindgen by absolute paths; with no bindgen owned by root, a metadata rebuild is
#    refused instead of running the bindgen PATH finds (a user's, here);
#  - the arguments are not split: a kernel build dir with a space is one KDIR=.
# The tools are fakes that answer --version and leave a marker when run; make is a fake that
# writes its arguments, one a line.
# usage: dkms-make-vetted-paths.sh WORK_DIR   (as root; WORK_DIR in directories only root can
# write, as make test's build/test: the fakes must be trusted for what they are, not refused
# for where they are)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/install/work-dir.sh"
work_dir dkms-make-vetted-paths.sh "$1"
marker=$work/ran
want="rustc 1.93.0 (abc 2026-01-01)"
tool() { # tool PATH VERSION-LINE: a fake that leaves the marker and prints VERSION-LINE
	mkdir -p "$(dirname "$1")"
	printf '#!/bin/sh\necho "$0 $*" >>%s\necho "%s"\n' "$marker" "$2" >"$1"
	chmod 755 "$1"
}
bin=$work/bin
tool "$bin/rustc" "$want"
tool "$bin/bindgen" "bindgen 0.99.0"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >%s\n' "$work/make.args" >"$bin/make"
chmod 755 "$bin/make"
# clang 77, as Debian lays it out: the tools in one directory, multi-call ones as links.
llvm=$work/llvm-77/bin
tool "$llvm/clang" "Debian clang version 77.1.2"
for t in lld llvm-ar llvm-nm llvm-objcopy llvm-objdump llvm-readobj llvm-link; do tool "$llvm/$t" "LLVM version 77.1.2"; done
ln -s lld "$llvm/ld.lld"
ln -s llvm-readobj "$llvm/llvm-readelf"
ln -s llvm-objcopy "$llvm/llvm-strip"
ln -s clang "$llvm/clang++"
ln -s ../llvm-77/bin/clang "$bin/clang-77"
ln -s ../llvm-77/bin/ld.lld "$bin/ld.lld-77"

kernel() { # kernel DIR: a clang 77 kernel whose headers ship the Rust metadata
	mkdir -p "$1/rust"
	printf 'CONFIG_RUST=y\nCONFIG_RUSTC_VERSION_TEXT="%s"\nCONFIG_BINDGEN_VERSION_TEXT="bindgen 0.99.0"\nCONFIG_CC_IS_CLANG=y\nCONFIG_CLANG_VERSION=770102\nCONFIG_DRM_AMDGPU=m\n' "$want" >"$1/.config"
	touch "$1/rust/libkernel.rmeta"
}
path=$bin:/usr/sbin:/usr/bin:/sbin:/bin
run() { # run KDIR ENV...: dkms-make.sh for KDIR, its output in $work/out, make's arguments in $work/make.args
	local k=$1
	shift
	rm -f "$marker" "$work/make.args"
	rc=0
	env -i HOME=/root PATH="$path" "$@" sh "$top/kmod/dkms-make.sh" "$k" 7.2.99 >"$work/out" 2>&1 || rc=$?
}
has() { grep -qxF -- "$1" "$work/make.args"; }

kernel "$work/kernel"
run "$work/kernel"
if [ $rc != 0 ] || [ ! -f "$work/make.args" ]; then
	bad "the build did not reach make: exit $rc, $(cat "$work/out")"
else
	has "LLVM=$llvm/" && [ "$(grep -c '^LLVM=' "$work/make.args")" = 1 ] &&
		echo "ok   LLVM=$llvm/: the vetted directory" || bad "LLVM is not the vetted directory: $(tr '\n' ' ' <"$work/make.args")"
	has "RUSTC=$bin/rustc" && has "BINDGEN=$bin/bindgen" &&
		echo "ok   RUSTC= and BINDGEN= by their vetted paths" || bad "rustc or bindgen not by its path: $(tr '\n' ' ' <"$work/make.args")"
fi

# One tool of that directory is a link to a user's file: the directory is refused, that tool
# never run.
mkdir -p "$work/home"
tool "$work/home/llvm-objdump" "LLVM version 77.1.2"
chown -R 65534:65534 "$work/home"
mv "$llvm/llvm-objdump" "$llvm/llvm-objdump.orig"
ln -s "$work/home/llvm-objdump" "$llvm/llvm-objdump"
run "$work/kernel"
if [ -f "$work/make.args" ]; then
	bad "built with a user's llvm-objdump in the LLVM directory: $(tr '\n' ' ' <"$work/make.args")"
elif grep -q "$work/home" "$marker" 2>/dev/null; then
	bad "ran the user's llvm-objdump"
elif [ $rc = 0 ] || ! grep -q 'built with clang 77: install clang-77, lld-77 and llvm-77' "$work/out"; then
	bad "a user's llvm-objdump: exit $rc, $(cat "$work/out")"
else
	echo "ok   an LLVM directory with a user's tool: refused"
fi
rm "$llvm/llvm-objdump" && mv "$llvm/llvm-objdump.orig" "$llvm/llvm-objdump"

# A kernel build dir with a space: one argument.
kernel "$work/kernel tree"
run "$work/kernel tree"
if [ -f "$work/make.args" ] && has "KDIR=$work/kernel tree" && ! has tree; then
	echo "ok   KDIR with a space: one argument"
else
	bad "KDIR with a space: exit $rc, make got: $(tr '\n' '|' <"$work/make.args" 2>/dev/null) $(cat "$work/out")"
fi

# No bindgen of root's and no Rust metadata in the headers (a Debian tree, rebuilt from its
# linux-source): the bindgen on PATH, a user's, is not run.
debian_headers "$want"
printf '#!/bin/sh\ncase $1 in\n-S) echo "linux-headers-test: $2" ;;\n-W) echo "1.0-1" ;;\n*) exit 1 ;;\nesac\n' >"$bin/dpkg-query"
chmod 755 "$bin/dpkg-query"
mv "$bin/bindgen" "$work/bindgen.root"
tool "$work/home/bin/bindgen" "bindgen 0.99.0"
chown -R 65534:65534 "$work/home"
path=$work/home/bin:$path
run "$headers" RDNA1_KBUILD_CACHE="$work/cache" RDNA1_SOURCE_DIR="$work/src"
if grep -q "$work/home/bin/bindgen" "$marker" 2>/dev/null; then
	bad "the metadata rebuild ran the user's bindgen from PATH"
elif [ $rc = 0 ] || ! grep -q 'needs bindgen, and dkms-make.sh found none owned by root' "$work/out"; then
	bad "no root's bindgen: exit $rc, $(cat "$work/out")"
else
	echo "ok   no root's bindgen: the metadata rebuild refused, PATH's not run"
fi

[ $fails = 0 ] || { echo "$fails vetted-path check(s) failed" >&2; exit 1; }
