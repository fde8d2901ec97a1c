#!/usr/bin/env bash
# `make bench`: the hooked function's cost per hook mechanism and with rdna1_mtype's own hook in
# each mode, side by side in one boot of the perf flavour (tests/vm/guest/bench.sh), twice:
#  1. with QEMU's -icount (guest time counts instructions, 1 ns each): an instruction count,
#     the same whatever the host's load, and the figure to compare work by;
#  2. in wall-clock time under TCG (an emulated CPU: compare the rows of one run with each
#     other, not with real hardware; TCG figures move by up to 2x between boots).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench
# The perf flavour: no KASAN/lockdep (they would dominate the figures). Built on first use.
kb=$("$top/tests/vm/prepare.sh" "$out" perf)
# RDNA1_BENCH_CLOCKS=icount: only the instruction-count boot (a quicker look while changing code).
for clock in ${RDNA1_BENCH_CLOCKS:-icount wall}; do
	case $clock in
	icount) echo "#### -icount: every \"ns\" below is one guest instruction" ;;
	wall) echo "#### wall-clock time under TCG" ;;
	esac
	RDNA1_ICOUNT=$([ $clock = icount ] && echo 1 || echo 0) \
		"$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" bench "$out/vm-bench-$clock.log" 1800
	sed -n '/^RDNA1-VM: job/,/^RDNA1-VM-DONE/p' "$out/vm-bench-$clock.log" | grep -v '^\[ '
done
