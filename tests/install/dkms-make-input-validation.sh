#!/usr/bin/env bash
# What kmod/dkms-make.sh and kmod/dkms-rust-metadata.sh read (DKMS's kernelver, the headers'
# .config) is checked for its shape before anything uses it, and a kernel the module cannot
# hook is refused before any tool runs:
#  - a kernelver with sed's and the shell's metacharacters ("7.2.0|;e touch ...;#", which the
#    metadata rebuild's sed would run as a command): refused, by both scripts, the command not
#    run;
#  - a CONFIG_CLANG_VERSION that shell arithmetic would evaluate (bash runs the $(...) in the
#    subscript of PATH[...]; sh is bash on some distributions): refused, under sh and bash;
#  - a CONFIG_RUSTC_VERSION_TEXT that is no rustc version: refused naming it;
#  - amdgpu built in (CONFIG_DRM_AMDGPU=y, which dkms.conf's BUILD_EXCLUSIVE_CONFIG lets
#    through: it asks only for =y or =m): refused with the reason, no tool run.
# The tools are fakes that leave a marker when run; make is one too.
# usage: dkms-make-input-validation.sh WORK_DIR   (as root; WORK_DIR in directories only root
# can write, as make test's build/test: the fakes must be trusted, so that only the checks
# stop them)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/install/work-dir.sh"
work_dir dkms-make-input-validation.sh "$1" cwd
ran=$work/ran
pwned=$work/cwd/pwned
want="rustc 1.93.0 (abc 2026-01-01)"
bin=$work/bin
mkdir -p "$bin"
printf '#!/bin/sh\necho "$0" >>%s\necho "%s"\n' "$ran" "$want" >"$bin/rustc"
printf '#!/bin/sh\necho "$0" >>%s\necho "bindgen 0.99.0"\n' "$ran" >"$bin/bindgen"
# make: the kernel's (olddefconfig keeps the .config, prepare makes the metadata) or the
# module's (leaves the marker).
cat >"$bin/make" <<EOF2
#!/bin/sh
dir=""
prev=""
for a in "\$@"; do
	[ "\$prev" = -C ] && dir=\$a
	prev=\$a
done
case " \$* " in
*" olddefconfig "*) ;;
*" prepare "*)
	mkdir -p "\$dir/rust" "\$dir/scripts"
	echo meta >"\$dir/rust/libkernel.rmeta"
	echo so >"\$dir/rust/libmacros.so"
	echo '{}' >"\$dir/scripts/target.json"
	;;
*) echo "make \$*" >>$ran ;;
esac
EOF2
printf '#!/bin/sh\ncase $1 in\n-S) echo "linux-headers-test: $2" ;;\n-W) echo "1.0-1" ;;\n*) exit 1 ;;\nesac\n' >"$bin/dpkg-query"
chmod 755 "$bin"/*
path=$bin:/usr/sbin:/usr/bin:/sbin:/bin

# Headers that ship the Rust metadata, and Debian's (rebuilt from linux-source-7.2).
kernel=$work/kernel
mkdir -p "$kernel/rust"
touch "$kernel/rust/libkernel.rmeta"
config() { # config LINE...: the kernel's .config, a Rust kernel with amdgpu as a module, and LINEs
	{
		printf 'CONFIG_RUST=y\nCONFIG_RUSTC_VERSION_TEXT="%s"\nCONFIG_DRM_AMDGPU=m\n' "$want"
		printf '%s\n' "$@"
	} >"$kernel/.config"
}
debian_headers "$want"

run() { # run SHELL SCRIPT ARG...: SCRIPT under SHELL in $work/cwd, its output in $work/out
	local shell=$1 script=$2
	shift 2
	rm -rf "$ran" "$pwned" "$work/cache"
	rc=0
	(cd "$work/cwd" && env -i HOME=/root PATH="$path" RDNA1_KBUILD_CACHE="$work/cache" \
		RDNA1_SOURCE_DIR="$work/src" "$shell" "$top/kmod/$script" "$@") >"$work/out" 2>&1 || rc=$?
}
refused() { # refused WHAT MESSAGE: the last run stopped with MESSAGE, ran no fake, no command
	if [ -e "$pwned" ]; then
		bad "$1: a command in it ran (the marker is there)"
	elif [ -e "$ran" ]; then
		bad "$1: ran $(tr '\n' ' ' <"$ran")"
	elif [ $rc = 0 ] || ! grep -qF -- "$2" "$work/out"; then
		bad "$1: exit $rc, $(cat "$work/out")"
	else
		echo "ok   $1: refused"
	fi
}

evil='7.2.0|;e touch pwned;#'
run sh dkms-make.sh "$headers" "$evil"
refused "dkms-make.sh, kernelver $evil" "\"$evil\" is not a kernel release"
run sh dkms-rust-metadata.sh "$headers" "$evil" "$bin/rustc" "$bin/bindgen"
refused "dkms-rust-metadata.sh, kernelver $evil" "\"$evil\" is not a kernel release"
run sh dkms-make.sh "$headers" '7.2.0;s/x/y/e;#'
refused "dkms-make.sh, kernelver 7.2.0;s/x/y/e;#" "is not a kernel release"
run sh dkms-make.sh "$headers" '7.2.0/../../x'
refused "dkms-make.sh, kernelver 7.2.0/../../x" "is not a kernel release"

for shell in sh bash; do
	config 'CONFIG_CC_IS_CLANG=y' "CONFIG_CLANG_VERSION=PATH[\$(touch $pwned)]"
	run "$shell" dkms-make.sh "$kernel" 7.2.99
	refused "$shell dkms-make.sh, CONFIG_CLANG_VERSION=PATH[\$(touch ...)]" "CONFIG_CLANG_VERSION is \"PATH[\$(touch $pwned)]\", not a number"
done

config
sed -i "s/^CONFIG_RUSTC_VERSION_TEXT=.*/CONFIG_RUSTC_VERSION_TEXT=\"rustc 1.93.0 \$(touch pwned)\"/" "$kernel/.config"
run sh dkms-make.sh "$kernel" 7.2.99
refused "CONFIG_RUSTC_VERSION_TEXT with \$(...)" "CONFIG_RUSTC_VERSION_TEXT has characters no rustc version has"
config
sed -i 's/^CONFIG_RUSTC_VERSION_TEXT=.*/CONFIG_RUSTC_VERSION_TEXT="gcc 14"/' "$kernel/.config"
run sh dkms-make.sh "$kernel" 7.2.99
refused "CONFIG_RUSTC_VERSION_TEXT=\"gcc 14\"" "CONFIG_RUSTC_VERSION_TEXT is not a rustc version"

config 'CONFIG_DRM_AMDGPU=y'
sed -i '/^CONFIG_DRM_AMDGPU=m$/d' "$kernel/.config"
run sh dkms-make.sh "$kernel" 7.2.99
refused "CONFIG_DRM_AMDGPU=y" "rdna1-mtype: amdgpu is built into this kernel (CONFIG_DRM_AMDGPU=y): rdna1_mtype hooks it only as a module (its probe arms when the amdgpu module loads); use a kernel with CONFIG_DRM_AMDGPU=m"

# The same kernel with amdgpu as a module reaches make: the checks above refused for what they
# name, not for something else in these fixtures.
config
run sh dkms-make.sh "$kernel" 7.2.99
grep -q '^make ' "$ran" 2>/dev/null && echo "ok   the fixture kernel with amdgpu=m: built" ||
	bad "the fixture kernel with amdgpu=m did not reach make: exit $rc, $(cat "$work/out")"

[ $fails = 0 ] || { echo "$fails input check(s) failed" >&2; exit 1; }
