#!/bin/sh
# rdna1-mtype field kit: one command for RDNA1 owners, one report file for the bug.
#   sudo dist/field-kit/field-kit.sh [REPORT.tar.gz]
# Records `rdna1ctl doctor` and `status`, then runs the workload (a PyTorch Conv2d forward +
# backward on the GPU: conv2d.py) twice, with the policy off and then enforce, each while
# `rdna1ctl verify` watches the live PTE updates, and puts everything in one .tar.gz. The
# policy in force before is put back at the end, whatever happens.
# Environment: RDNA1CTL (rdna1ctl), WORKLOAD (default: python3 conv2d.py beside this script),
# RDNA1CTL_ROOT (rdna1ctl's fake-root override, for tests).
# Exit: 0 both runs recorded; 1 the kit could not do its job (the report says why). The
# workload's own success or failure is a result, recorded in the report, not the exit code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
RDNA1CTL=${RDNA1CTL:-rdna1ctl}
WORKLOAD=${WORKLOAD:-python3 $here/conv2d.py}
report=${1:-rdna1-field-report-$(date +%Y%m%d-%H%M%S).tar.gz}
case $report in /*) ;; *) report=$(pwd)/$report ;; esac
dir=$(mktemp -d)
work=$dir/rdna1-field-report
mkdir -p "$work"
summary=$work/summary.txt
note() { echo "$*" | tee -a "$summary" >&2; }
restore=""
finish() {
	if [ -n "$restore" ]; then
		# shellcheck disable=SC2086 # restore is a list of options
		"$RDNA1CTL" set $restore >"$work/restore.txt" 2>&1 || note "could not restore the policy ($restore): $(cat "$work/restore.txt")"
	fi
	(cd "$dir" && tar -czf "$report" rdna1-field-report) && echo "report: $report" >&2
	rm -rf "$dir"
}
trap finish EXIT
trap 'exit 1' INT TERM

note "rdna1-mtype field kit, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -r)"
"$RDNA1CTL" --version >"$work/rdna1ctl-version.txt" 2>&1 || { note "FAIL: $RDNA1CTL does not run: $(cat "$work/rdna1ctl-version.txt")"; exit 1; }
# doctor and status exit non-zero when they find problems: recorded, not fatal.
"$RDNA1CTL" --json doctor >"$work/doctor.json" 2>"$work/doctor.err"
note "doctor: exit $?"
"$RDNA1CTL" --json status >"$work/status-before.json" 2>"$work/status-before.err"
note "status: exit $?"
uname -a >"$work/uname.txt"
[ -r /proc/cmdline ] && cat /proc/cmdline >"$work/cmdline.txt"

# The mode to put back afterwards (only the mode is changed).
prev_mode=$(sed -n 's/.*"mode":"\([a-z]*\)".*/\1/p' "$work/status-before.json" | head -n1)

for mode in off enforce; do
	if ! "$RDNA1CTL" --json set --mode "$mode" >"$work/$mode-policy.json" 2>"$work/$mode-set.err"; then
		note "FAIL: set --mode $mode: $(cat "$work/$mode-set.err")"
		note "(run as root, with rdna1_mtype loaded; the report still has doctor and status)"
		exit 1
	fi
	[ -n "$restore" ] || restore="--mode ${prev_mode:-off}"
	"$RDNA1CTL" --json verify --until-interrupt >"$work/$mode-verify.json" 2>"$work/$mode-verify.err" &
	vpid=$!
	# Start the workload only once verify's tracefs instance traces (at most 30 s).
	inst=${RDNA1CTL_ROOT:-}/sys/kernel/tracing/instances/rdna1ctl-verify-$vpid
	i=0
	while [ "$(cat "$inst/events/amdgpu/amdgpu_vm_update_ptes/enable" 2>/dev/null)" != 1 ] &&
		kill -0 "$vpid" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	t0=$(date +%s)
	sh -c "$WORKLOAD" >"$work/$mode-workload.out" 2>"$work/$mode-workload.err"
	wrc=$?
	# TERM, not INT: a non-interactive shell starts background jobs with SIGINT ignored.
	kill -TERM "$vpid" 2>/dev/null
	wait "$vpid"
	vrc=$?
	note "$mode: workload exit $wrc in $(($(date +%s) - t0)) s; verify exit $vrc ($(sed -n 's/.*"result":"\([a-z]*\)".*/\1/p' "$work/$mode-verify.json"))"
	"$RDNA1CTL" --json status >"$work/$mode-status-after.json" 2>&1
done
"$RDNA1CTL" --json events >"$work/events.json" 2>"$work/events.err"
note "done: attach $report to your report (it holds no file contents, only the above)"
