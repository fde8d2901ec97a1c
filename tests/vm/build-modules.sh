#!/usr/bin/env bash
# The kernel modules a VM run loads, built against a kernel build dir: rdna1_mtype.ko (with
# CLIPPY=1, so the kernel's own Rust lints apply; any warning fails) and the test-only
# harness and bench modules, and an out-of-tree amdgpu (case 13).
# usage: build-modules.sh KBUILD_DIR LOG_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kb=$1 out=$2
mkdir -p "$out"
. "$top/tests/kernel/env.sh"
grep -q '^CONFIG_CC_IS_CLANG=y' "$kb/.config" || KMAKE_LLVM=()

log "building rdna1_mtype.ko and the test harness against $(cat "$kb/include/config/kernel.release")"
# rdna1_mtype.ko (mostly one rustc) beside the C test modules: both CPUs busy.
make -s -C "$top/kmod" KDIR="$kb" "${KMAKE_LLVM[@]}" CLIPPY=1 >"$out/kmod-build.log" 2>&1 &
kmod_job=$!
for m in harness bench oot-amdgpu slow-amdgpu; do
	make -s -C "$kb" M="$top/tests/modules/$m" "${KMAKE_LLVM[@]}" modules >"$out/$m-build.log" 2>&1 ||
		{ cat "$out/$m-build.log" >&2; wait "$kmod_job" || :; die "tests/modules/$m did not build"; }
done
wait "$kmod_job" || { cat "$out/kmod-build.log" >&2; die "rdna1_mtype.ko did not build"; }
if grep -E 'warning|error' "$out/kmod-build.log" >&2; then die "rdna1_mtype.ko built with warnings"; fi
