#!/usr/bin/env bash
# Host test of `rdna1ctl report` (the field kit) on the fake-root fixtures (no GPU, no module
# device here): it records doctor and status, stops cleanly when there is no control device
# (exit 5, saying why), still writes the one report file, and never runs the workload then;
# dist/field-kit/field-kit.sh, which only calls it, does the same. The whole path with the
# real module, verify and a workload runs in the VM (case 98).
# usage: tests/field-kit/run.sh RDNA1CTL_BINARY
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
die() { echo "field kit test: $*" >&2; exit 1; }
fixture=$top/tests/fixtures/rdna1-enforce
if [ "$(id -u)" != 0 ]; then
	# Without root, report refuses before anything (exit 4), writing nothing.
	rc=0
	(cd "$tmp" && RDNA1CTL_ROOT=$fixture "$bin" report -- touch "$tmp/workload-ran") >"$tmp/out" 2>&1 || rc=$?
	[ "$rc" = 4 ] || die "as non-root: exit $rc, want 4: $(cat "$tmp/out")"
	[ -z "$(ls "$tmp" | grep -v '^out$')" ] || die "as non-root it wrote: $(ls "$tmp")"
	echo "field kit (fixture, not root): exit 4, nothing written, workload not run" >&2
	exit 0
fi
check() { # check REPORT.json OUT: the report of a run without a control device
	python3 - "$1" <<'PY' || die "report JSON: $(head -c 600 "$1") / $(cat "$2")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["command"] == "report" and r["exit_code"] == 5, r
assert r["doctor"]["document"]["command"] == "doctor" and r["doctor"]["document"]["checks"], r["doctor"]
s = r["status"]["document"]
assert s["command"] == "status" and s["module"]["mode"] == "enforce", s
assert r["runs"] == [] and r["policy_restored"] is None, r
assert "modprobe rdna1_mtype" in r["error"], r["error"]
assert r["verdict"] == "incomplete", r["verdict"]
assert r["run_as"]["uid"] == 65534, r["run_as"]
PY
}
# The invoking user as sudo would name it.
export SUDO_UID=65534 SUDO_GID=65534
rc=0
(cd "$tmp" && RDNA1CTL_ROOT=$fixture "$bin" report --output report.json -- touch "$tmp/workload-ran") \
	>"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 5 ] || die "exit $rc, want 5 (no control device): $(cat "$tmp/out")"
[ -s "$tmp/report.json" ] || die "no report file: $(cat "$tmp/out")"
[ ! -e "$tmp/workload-ran" ] || die "the workload ran although the module cannot be reached"
check "$tmp/report.json" "$tmp/out"
grep -q '^summary: incomplete' "$tmp/out" || die "no summary line: $(cat "$tmp/out")"
grep -q 'modprobe rdna1_mtype' "$tmp/out" || die "no advice in: $(cat "$tmp/out")"
[ "$(stat -c %u "$tmp/report.json")" = 65534 ] || die "the report is not the invoking user's"
# The default name, and the wrapper.
rc=0
(cd "$tmp" && RDNA1CTL=$bin RDNA1CTL_ROOT=$fixture WORKLOAD="touch $tmp/workload-ran" \
	sh "$top/dist/field-kit/field-kit.sh") >"$tmp/out2" 2>&1 || rc=$?
[ "$rc" = 5 ] || die "field-kit.sh: exit $rc, want 5: $(cat "$tmp/out2")"
[ ! -e "$tmp/workload-ran" ] || die "field-kit.sh ran the workload"
set -- "$tmp"/rdna1-report-*.json
[ -s "$1" ] || die "field-kit.sh wrote no rdna1-report-DATE.json: $(ls "$tmp")"
check "$1" "$tmp/out2"
# Without WORKLOAD, the wrapper names the battery beside it: a script that is not there would be
# refused first (exit 2), before the missing module (5).
rc=0
(cd "$tmp" && RDNA1CTL=$bin RDNA1CTL_ROOT=$fixture sh "$top/dist/field-kit/field-kit.sh" \
	"$tmp/default.json") >"$tmp/out3" 2>&1 || rc=$?
[ "$rc" = 5 ] || die "field-kit.sh without WORKLOAD: exit $rc, want 5: $(cat "$tmp/out3")"
grep -q '"argv":\["python3","[^"]*/dist/field-kit/battery.py"\]' "$tmp/default.json" ||
	die "field-kit.sh without WORKLOAD does not run the battery: $(head -c 600 "$tmp/default.json")"
echo "field kit (fixture): exit 5, report with doctor/status and the reason, workload not run" >&2
