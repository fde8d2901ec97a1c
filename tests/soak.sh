#!/usr/bin/env bash
# `make soak`: issue 14's churn proof at its full counts, on the KASAN/lockdep/kmemleak test
# kernel, in two boots with rdna1.soak=1 (docs/TESTING.md, "Soak"):
#   two CPUs: case 64 (>= 100,000 random ioctls as root and as uid 65534, a million hooked
#     calls under policy flips, 100 load/unload cycles of rdna1_mtype), case 72 (5 rounds of
#     rdna1_mtype loaded while amdgpu's unload is held: the unload race, which needs a second
#     CPU), then 99 (kmemleak);
#   one CPU: case 70 (20 amdgpu unload/reload cycles under rdna1_mtype; an amdgpu load takes
#     about three times as long in the two-CPU boot), then 99.
# make test runs the same cases with small counts. The host fails a boot on any kernel report
# (tests/vm/boot.sh). The figures are printed at the end.
# RDNA1_SOAK_LIMIT: seconds each boot may take (default 3600).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/soak
rm -rf "$out"
mkdir -p "$out"
. "$top/tests/kernel/env.sh"
kb=$("$top/tests/vm/prepare.sh" "$out")
t0=$(date +%s)
rc=0
RDNA1_SMP=2 RDNA1_SOAK=1 RDNA1_CASES=64,72,99 "$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" \
	test "$out/vm-2cpu.log" "${RDNA1_SOAK_LIMIT:-3600}" || rc=1
RDNA1_SOAK=1 RDNA1_CASES=70,99 "$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" \
	test "$out/vm-1cpu.log" "${RDNA1_SOAK_LIMIT:-3600}" || rc=1
echo "soak figures ($(date -u +%Y-%m-%d), $(($(date +%s) - t0)) s, logs $out/vm-*.log):"
grep -hE '^# (churn|fuzz|flips|cycles|amdgpu|going|kmemleak|FAIL|assertion)|^# [0-9]+-[a-z0-9-]+: [0-9.]+ s$|^(not )?ok [0-9]+ ' \
	"$out/vm-2cpu.log" "$out/vm-1cpu.log" || true
if [ $rc = 0 ]; then echo "soak: passed, no kernel report"; else echo "soak: FAILED"; fi
exit $rc
