#!/usr/bin/env bash
# The shipped conv2d.py against a real PyTorch without a GPU (Debian's CPU build, in tests/sid-tools/root.sh):
# - a plain run refuses: exit 1, "ok": false, stage "device", "never runs on the CPU";
# - --self-test-on-cpu runs the whole check and training on the CPU: the float64 comparison
#   finds the results correct, and still the run is no pass (exit 1, "ok": false, "on_gpu": false);
# - --self-test-on-cpu --corrupt scale: the comparison catches results 1% off (stage "verify");
#   --corrupt nan: results that are not finite, still printed as valid JSON.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
in_root() { "$top/tests/sid-tools/run.sh" --bind "$top/dist/field-kit:/mnt" -- python3 /mnt/conv2d.py "$@"; }
fails=0
check() { # NAME EXPECTED-EXIT JSON-ASSERTION(python expression on r) [ARGS...]
	local name=$1 want=$2 expr=$3 rc=0 out
	shift 3
	out=$(in_root "$@") || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want: $out"
		fails=$((fails + 1))
	elif ! python3 -c 'import json,sys; r=json.loads(sys.argv[1], parse_constant=lambda c: sys.exit("not JSON: " + c)); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$out" "$expr"; then
		echo "FAIL $name: $expr does not hold for $out"
		fails=$((fails + 1))
	else
		echo "ok $name: $out"
	fi
}
check refuses-the-cpu 1 \
	'not r["ok"] and r["stage"] == "device" and "never runs on the CPU" in r["error"] and r["hip"] is None'
check self-test-correct-but-no-pass 1 \
	'not r["ok"] and not r["on_gpu"] and r["correct"] and r["stage"] == "done" and r["steps_per_s"] > 0 and max(r["max_rel_error"].values()) < r["tolerance"]' \
	--self-test-on-cpu
check self-test-catches-wrong-numbers 1 \
	'not r["ok"] and r["correct"] is False and r["stage"] == "verify" and "wrong results" in r["error"] and min(r["max_rel_error"].values()) > r["tolerance"]' \
	--self-test-on-cpu --corrupt scale
check self-test-catches-non-finite-numbers 1 \
	'not r["ok"] and r["correct"] is False and set(r["max_rel_error"].values()) == {"inf"}' \
	--self-test-on-cpu --corrupt nan
[ "$fails" -eq 0 ]
