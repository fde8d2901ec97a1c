#!/usr/bin/env bash
# kmod/Kbuild takes the build's RDNA1_* settings (the amdgpu BTF id and layout dkms-make.sh read
# with rdna1ctl check-kernel) only from make's command line: make takes every environment
# variable as a variable too, and a stray RDNA1_AMDGPU_BTF_ID in root's environment would be
# compiled into the module. Kbuild's variable logic alone, without a kernel: a makefile that
# includes kmod/Kbuild as the kernel's Makefile.build does and prints the flags it sets, run
# directly and from a sub-make (the kernel's build is make within make, with the command line's
# variables passed down in MAKEFLAGS).
# usage: kbuild-command-line-only.sh WORK_DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
rm -rf "$work" && mkdir -p "$work"
cat >"$work/flags.mk" <<EOF2
src := $top/kmod
include $top/kmod/Kbuild
flags: ; @echo '\$(ccflags-y)'
sub: ; @\$(MAKE) -s -f $work/flags.mk flags
EOF2
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
flags() { # flags TARGET ARG...: the flags Kbuild sets, make run with ARGs from an environment with RDNA1_*
	local target=$1
	shift
	env RDNA1_AMDGPU_BTF_ID=0xe0e0e0e0e0e0e0e0 RDNA1_BTF_BO_LAYOUT=1,2,3,4 RDNA1_BTF_TTM_BO_SIZE=5 \
		RDNA1_BTF_TTM_BO_TYPE=6 RDNA1_BTF_VM_COMPUTE=7 RDNA1_BTF_VM_TASK_INFO=8 \
		RDNA1_BTF_TASK_INFO_TGID=9 RDNA1_BTF_TASK_INFO_NAME=10 \
		make -s --no-print-directory -f "$work/flags.mk" "$target" "$@"
}
for target in flags sub; do
	f=$(flags "$target")
	[[ $f != *RDNA1_BTF* && $f != *RDNA1_AMDGPU* ]] && echo "ok   $target: the environment's RDNA1_* not used" ||
		bad "$target: the environment's RDNA1_* reached the flags: $f"
	f=$(flags "$target" RDNA1_AMDGPU_BTF_ID=0x0123456789abcdef RDNA1_BTF_VM_COMPUTE=40)
	[[ $f == *-DRDNA1_AMDGPU_BTF_ID=0x0123456789abcdefULL* && $f == *-DRDNA1_BTF_VM_COMPUTE=40* &&
		$f != *e0e0e0* && $f != *RDNA1_BTF_BO_LAYOUT* && $f != *RDNA1_BTF_VM_TASK_INFO* ]] &&
		echo "ok   $target: the command line's RDNA1_* used, and only those" ||
		bad "$target: the command line's RDNA1_* not used alone: $f"
done
[ $fails = 0 ] || { echo "$fails Kbuild check(s) failed" >&2; exit 1; }
