#!/usr/bin/env bash
# check-python.sh: the in-process check's own tests (tests/field-kit/check_tests: compare,
# families, references, routing, edges; whole programs with faults below torch; PyTorch's
# OpInfo/ModuleInfo samples and behaviours.py with and without the check) under Debian's CPU
# PyTorch in the sid tools root, the tree read-only at /mnt. Each test module runs in a
# process of its own and prints its time.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
for t in "$top"/tests/field-kit/check_tests/test_*.py; do
	m=check_tests.$(basename "$t" .py)
	s=$(date +%s)
	if "$top/tests/sid-tools/run.sh" --bind "$top:/mnt" -- \
		sh -c 'cd /mnt/tests/field-kit && exec python3 -B -m unittest -v "$1"' sh "$m" 2>&1; then
		echo "ok $m ($(($(date +%s) - s)) s)"
	else
		echo "FAIL $m ($(($(date +%s) - s)) s)"
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ]
