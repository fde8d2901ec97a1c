# `rdna1ctl report` (the field kit) end to end with the real module, the real tracefs and the
# real kernel log. The stand-in workload (no GPU here) runs as uid 65534 (SUDO_UID): it asks a
# root helper to map through the real gmc_v10_0_get_vm_pte and write one UC PTE update into
# verify's instance (TRACE_EVENT_INJECT) and, under off and audit, an amdgpu page-fault report
# into /dev/kmsg; it exits 1 under off and audit, 0 under enforce. The report must record
# doctor and status, run off, audit and enforce with verify around each (off: ok; enforce: the
# UC update is a violation), see the faults, conclude that the runs support the hypothesis,
# write one JSON file, put the mode back and run the command as uid 65534, never root. The
# stand-in shows GPU work as a ROCm process would, by an entry in KFD's process list (lib.sh,
# kfd_standin_on): without it no run would be a pass. Then a Python without torch (a stand-in
# python3 that answers rdna1ctl's question about itself as Python does, and fails to import
# torch): the report stops after the run under off, incomplete (exit 1), never not_mtype.
T=/sys/kernel/tracing
E=events/amdgpu/amdgpu_vm_update_ptes
mtype_down
# amdgpu's events exist once it is loaded (this case may run alone).
harness_up
kfd_standin_on
[ -e "$T/$E/inject" ] || { echo "kernel without CONFIG_TRACE_EVENT_INJECT"; exit 4; }
modprobe rdna1_mtype mode=audit
# The initramfs root is mktemp's 0700 directory: uid 65534 could not even reach /bin/sh.
chmod 755 /
S=/tmp/standin
rm -rf $S /tmp/report.json
mkdir -p $S
chmod 777 $S
cat >$S/workload.sh <<'WL'
mkdir /sys/class/kfd/kfd/proc/$$
mode=$(cat /sys/module/rdna1_mtype/parameters/mode)
id -u >/tmp/standin/uid-$mode
touch /tmp/standin/req-$mode
i=0
while [ ! -e /tmp/standin/ack-$mode ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "{\"ok\": $([ "$mode" = enforce ] && echo true || echo false), \"device\": \"none (VM stand-in)\"}"
rmdir /sys/class/kfd/kfd/proc/$$
[ "$mode" = enforce ]
WL
chmod 755 $S/workload.sh
# The root side of the stand-in: what an unprivileged process cannot write itself. It ends
# when the report has ended ($S/stop), done or not.
helper() {
	# This background shell's own pid ($$ is the case's): verify attributes the injected
	# update by the module's events, which name the process that made the call below.
	read -r me _ </proc/self/stat
	for mode in off audit enforce; do
		while [ ! -e $S/req-$mode ]; do
			[ ! -e $S/stop ] || exit 1
			sleep 0.2
		done
		call "$REQ_CC" plain "$IN" >/dev/null
		inst=$(ls -d $T/instances/rdna1ctl-verify-* | head -n1)
		echo "start=64 end=65 flags=$(((3 << 48) | 0x67)) nptes=1 incr=4096 pid=$me vm_ctx=9" \
			>"$inst/$E/inject"
		if [ $mode != enforce ]; then
			echo "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32769)" >/dev/kmsg
			echo "amdgpu 0000:03:00.0: amdgpu:   in page starting at address 0x00007f0000001000 from client 0x1b (UTCL2)" >/dev/kmsg
		fi
		touch $S/ack-$mode
	done
	touch $S/helped
}
helper &
hpid=$!
cd /tmp
rc=0
SUDO_UID=65534 SUDO_GID=65534 rdna1ctl report --timeout 120 --output /tmp/report.json \
	-- sh $S/workload.sh >/tmp/report.out 2>/tmp/report.err || rc=$?
touch $S/stop
wait $hpid || true
eq "$(cat $PARAMS/mode)" audit "mode restored"
ls $T/instances | grep -q rdna1ctl-verify && fail "verify instance left behind"
r=/tmp/report.json
[ "$(wc -l <$r)" = 1 ] || fail "report is not one JSON line: $(cat /tmp/report.out /tmp/report.err)"
# The documents kept whole (serde_json::Value: their keys sorted).
for want in '"command":"report"' '"command":"doctor"' '"command":"status"' '"policy_restored":true' \
	'"run_as":{"uid":65534,"gid":65534,"groups":\[65534\]' '"source":"SUDO_UID"'; do
	grep -q "$want" $r || fail "report lacks $want: $(head -c 2000 $r)"
done
# ls, not stat: the cases' lib.sh has a stat() of its own (the module's counters).
owner=$(ls -ln $r | awk '{print $3}')
[ "$owner" = 65534 ] || fail "the report file is owned by uid $owner, not the invoking user's 65534"
! grep -q '"spawn_error":"' $r || fail "the command could not start: $(grep -o '"spawn_error":"[^"]*"' $r | head -n1)"
[ "$rc" = 0 ] || fail "report exit $rc: $(cat /tmp/report.out /tmp/report.err)"
eq "$(grep -o '{"mode":"[a-z]*","policy"' $r | cut -d'"' -f4 | tr '\n' ' ')" "off audit enforce " "runs"
[ -e $S/helped ] || fail "the stand-in did not run under every mode: $(cat /tmp/report.out /tmp/report.err)"
for m in off audit enforce; do
	eq "$(cat $S/uid-$m)" 65534 "uid of the command under $m"
done
o=/tmp/report.out
grep -q '^off  *fail  exit 1, 1 GPU faults, .*verify ok$' $o || fail "off run: $(cat $o)"
grep -q '^audit  *fail  exit 1, 1 GPU faults, ' $o || fail "audit run: $(cat $o)"
grep -q '^enforce  *pass  exit 0, 0 GPU faults, .*verify violations ([0-9]*)$' $o || fail "enforce run: $(cat $o)"
grep -q '^policy:  put back (mode audit)$' $o || fail "policy line: $(cat $o)"
grep -q '^summary: fails under off (exit 1, 1 GPU fault) and audit, passes under enforce: supports the MTYPE hypothesis$' $o ||
	fail "summary: $(cat $o)"
grep -q '^note: .*not NC' $o || fail "no note on verify's violation: $(cat $o)"
grep -q '^rdna1ctl report: enforce: pass' /tmp/report.err || fail "progress: $(cat /tmp/report.err)"
for want in '"verdict":"supports_hypothesis"' '"address":"0x00007f0000001000"' \
	'"result":"violations"' '"stdout_tail":"{\\"ok\\": true'; do
	grep -q "$want" $r || fail "report lacks $want: $(head -c 2000 $r)"
done
# A Python without torch: no result about MTYPE.
cat >$S/python3 <<'PY'
#!/bin/sh
if [ "$1" = -c ]; then
	echo '{"python": "/usr/bin/python3", "version": "3.11.2", "error": "ModuleNotFoundError: No module named '"'"'torch'"'"'"}'
	exit 0
fi
echo "ModuleNotFoundError: No module named 'torch'" >&2
exit 1
PY
chmod 755 $S/python3
rm -f /tmp/report-notorch.json
rc=0
SUDO_UID=65534 SUDO_GID=65534 rdna1ctl report --timeout 60 --output /tmp/report-notorch.json \
	-- $S/python3 train.py >/tmp/report.out 2>/tmp/report.err || rc=$?
eq "$rc" 1 "exit of a report whose Python has no torch ($(cat /tmp/report.out /tmp/report.err))"
eq "$(cat $PARAMS/mode)" audit "mode restored after the report without torch"
r=/tmp/report-notorch.json
eq "$(grep -o '{"mode":"[a-z]*","policy"' $r | cut -d'"' -f4 | tr '\n' ' ')" "off " "runs without torch"
for want in '"verdict":"incomplete"' '"environment":"/usr/bin/python3 cannot import torch: ModuleNotFoundError'; do
	grep -q "$want" $r || fail "report without torch lacks $want: $(head -c 2000 $r)"
done
! grep -q '"verdict":"not_mtype"' $r || fail "a Python without torch was judged not_mtype"
grep -q '^summary: incomplete: the environment cannot run the workload' /tmp/report.out ||
	fail "summary without torch: $(cat /tmp/report.out)"
rm -rf $S /tmp/report-notorch.json
kfd_standin_off
rmmod rdna1_mtype
