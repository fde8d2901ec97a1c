#!/usr/bin/env bash
# `make bench`: hook-mechanism benchmark in the test VM (QEMU/TCG: absolute figures are those of
# an emulated CPU; compare the rows of one run with each other, not with real hardware).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench
# The perf flavour: no KASAN/lockdep (they would dominate the figures). Built on first use.
kb=$("$top/tests/vm/prepare.sh" "$out" perf)
"$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" bench "$out/vm-bench.log" 1800
sed -n '/^RDNA1-VM: job/,/^RDNA1-VM-DONE/p' "$out/vm-bench.log" | grep -v '^\[ '
