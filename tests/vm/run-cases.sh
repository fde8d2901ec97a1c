#!/usr/bin/env bash
# Quick iteration: build what the VM needs and run only some cases.
# usage: tests/vm/run-cases.sh 80,95   (case number prefixes, comma-separated)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# One directory per run: runs may overlap (the log is $out/vm.log).
out=$top/build/cases/$(date +%Y%m%d-%H%M%S)-$$
. "$top/tests/kernel/env.sh"
kb=$("$top/tests/vm/prepare.sh" "$out")
RDNA1_CASES=$1 "$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" test "$out/vm.log" "${RDNA1_LIMIT:-3600}"
