# The field kit end to end with the real module and the real tracefs: the workload stands in
# for PyTorch (no GPU here): it maps through the real gmc_v10_0_get_vm_pte and writes one UC
# PTE update into verify's instance (TRACE_EVENT_INJECT). The kit must record doctor and
# status, run the workload under mode off and enforce with verify around each (off: ok;
# enforce: the UC update is a violation), write one report, and put the mode back.
T=/sys/kernel/tracing
E=events/amdgpu/amdgpu_vm_update_ptes
[ -e "$T/$E/inject" ] || { echo "kernel without CONFIG_TRACE_EVENT_INJECT"; exit 4; }
mtype_down
harness_up
modprobe rdna1_mtype mode=audit
cat >/tmp/workload.sh <<'WL'
. /opt/rdna1/guest/lib.sh
call "$REQ_CC" plain "$IN" >/dev/null
inst=$(ls -d /sys/kernel/tracing/instances/rdna1ctl-verify-* | head -n1)
echo "start=64 end=65 flags=$(((3 << 48) | 0x67)) nptes=1 incr=4096 pid=$$ vm_ctx=9" \
	>"$inst/events/amdgpu/amdgpu_vm_update_ptes/inject"
echo '{"ok": true, "stage": "done", "device": "none (VM stand-in)"}'
WL
cd /tmp
rc=0
WORKLOAD="sh /tmp/workload.sh" sh /opt/rdna1/dist/field-kit/field-kit.sh /tmp/report.tar.gz >/tmp/kit.out 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "kit exit $rc: $(cat /tmp/kit.out)"
eq "$(cat $PARAMS/mode)" audit "mode restored"
rm -rf /tmp/rdna1-field-report
tar -xzf /tmp/report.tar.gz -C /tmp
r=/tmp/rdna1-field-report
for f in summary.txt doctor.json status-before.json off-verify.json enforce-verify.json \
	off-workload.out enforce-workload.out off-status-after.json enforce-status-after.json events.json; do
	[ -s "$r/$f" ] || fail "report lacks $f: $(ls $r)"
done
grep -q '^off: workload exit 0 .*verify exit 0 (ok)' $r/summary.txt || fail "off run: $(cat $r/summary.txt)"
grep -q '^enforce: workload exit 0 .*verify exit 3 (violations)' $r/summary.txt || fail "enforce run: $(cat $r/summary.txt)"
grep -q '"mode":"enforce"' $r/enforce-verify.json || fail "enforce verify policy: $(cat $r/enforce-verify.json)"
grep -q '"command":"doctor"' $r/doctor.json || fail "doctor.json: $(head -c 300 $r/doctor.json)"
ls /sys/kernel/tracing/instances | grep -q rdna1ctl-verify && fail "verify instance left behind"
rmmod rdna1_mtype
