#!/usr/bin/env bash
# Host test of the field kit's orchestration on the fake-root fixtures (no GPU, no module
# device here): it records doctor and status, fails cleanly when it cannot set the policy
# (exit 1, saying why), still writes the one report file, and never runs the workload then.
# The whole path with the real module, verify and a workload runs in the VM (case 98).
# usage: tests/field-kit/run.sh RDNA1CTL_BINARY
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "field kit test: $*" >&2; exit 1; }
rc=0
(cd "$tmp" && RDNA1CTL=$bin RDNA1CTL_ROOT=$top/tests/fixtures/rdna1-enforce \
	WORKLOAD="touch $tmp/workload-ran" sh "$top/dist/field-kit/field-kit.sh" report.tar.gz) \
	>"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || die "exit $rc, want 1 (no control device): $(cat "$tmp/out")"
[ -s "$tmp/report.tar.gz" ] || die "no report file: $(cat "$tmp/out")"
[ ! -e "$tmp/workload-ran" ] || die "the workload ran although the policy could not be set"
tar -xzf "$tmp/report.tar.gz" -C "$tmp"
r=$tmp/rdna1-field-report
for f in summary.txt doctor.json status-before.json uname.txt rdna1ctl-version.txt; do
	[ -s "$r/$f" ] || die "report lacks $f"
done
python3 - "$r" <<'PY' || die "report JSON"
import json, sys
r = sys.argv[1]
d = json.load(open(f"{r}/doctor.json"))
assert d["command"] == "doctor" and d["checks"], d
s = json.load(open(f"{r}/status-before.json"))
assert s["command"] == "status" and s["module"]["mode"] == "enforce", s
PY
grep -q 'FAIL: set --mode off' "$r/summary.txt" || die "summary: $(cat "$r/summary.txt")"
grep -q 'run as root, with rdna1_mtype loaded' "$r/summary.txt" || die "no advice in: $(cat "$r/summary.txt")"
echo "field kit (fixture): exit 1, report with doctor/status and the reason, workload not run" >&2
