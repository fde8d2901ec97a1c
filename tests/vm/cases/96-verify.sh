# rdna1ctl verify against the real amdgpu_vm_update_ptes tracepoint, in its own tracefs
# instance, with updates injected there (CONFIG_TRACE_EVENT_INJECT; dst cannot be injected,
# nptes can): NC updates pass (exit 0) and are counted; a UC update of an in-scope pid is a
# violation (exit 3) with its details; a UC update the module logged as kept is explained;
# audit reports would-violate only; --pid filters; SIGTERM ends the window cleanly; a stale
# instance of a dead pid is removed; the instance never survives a run, the top-level event
# stays disabled; a non-root run fails with exit 4.
mtype_down
harness_up
modprobe rdna1_mtype
T=/sys/kernel/tracing
E=events/amdgpu/amdgpu_vm_update_ptes
[ -e "$T/$E/format" ] || { echo "no amdgpu_vm_update_ptes tracepoint"; exit 4; }
[ -e "$T/$E/inject" ] || { echo "kernel without CONFIG_TRACE_EVENT_INJECT"; exit 4; }
rdna1ctl set --mode enforce --scope rdna1 >/dev/null
layout_set
# This shell maps on the RDNA1 fake (logged: rewrite); an RDNA2 call (out of scope: counted,
# not logged) puts a second device in the stats, so $$ can only be attributed by the log.
call "$REQ_CC" none "$IN" >/dev/null
call "$REQ_CC" none "$IN" rdna2 >/dev/null
mkdir "$T/instances/rdna1ctl-verify-999999" # a crashed run's instance (no such pid)
UC=$(((3 << 48) | 0x67))

# verify_bg ARGS: rdna1ctl verify in the background (output in /tmp/v.out), returns once its
# instance has the event enabled; sets VPID and INST.
verify_bg() {
	rdna1ctl "$@" >/tmp/v.out 2>/tmp/v.err &
	VPID=$!
	INST=$T/instances/rdna1ctl-verify-$VPID
	i=0
	until [ "$(cat "$INST/$E/enable" 2>/dev/null)" = 1 ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "instance $INST never enabled: $(cat /tmp/v.err)"
		sleep 0.1
	done
}
inject() { echo "$1" >"$INST/$E/inject" || fail "inject '$1': verify said: $(cat /tmp/v.out /tmp/v.err)"; }
# verify_end WANT_RC: waits for verify, checks its exit code and that it cleaned up.
verify_end() {
	rc=0
	wait "$VPID" || rc=$?
	[ "$rc" = "$1" ] || fail "verify exit $rc, want $1: $(cat /tmp/v.out /tmp/v.err)"
	[ ! -e "$INST" ] || fail "instance $INST left behind"
	eq "$(cat "$T/$E/enable")" 0 "top-level amdgpu_vm_update_ptes/enable"
}
has() { grep -qF -- "$1" /tmp/v.out || fail "no '$1' in: $(cat /tmp/v.out)"; }

# 1. NC updates: counted (4 + 2 PTEs of 2 updates), no violation, stale instance removed.
verify_bg --json verify --duration 4
inject "start=256 end=260 flags=0x67 nptes=4 incr=4096 pid=$$ vm_ctx=7"
inject "start=300 end=302 flags=0x67 nptes=2 incr=4096 pid=$$ vm_ctx=7"
verify_end 0
has "\"pci_addresses\":[\"0000:03:00.0\"],\"attribution\":\"module_events\",\"in_scope\":true,\"pid\":$$,\"comm\":\"sh\",\"updates\":2,\"ptes\":{\"nc\":6,\"wc\":0,\"cc\":0,\"uc\":0,\"reserved\":0}"
has "\"stale_removed\":[\"rdna1ctl-verify-999999\"]"
has '"violations":0,'
has '"result":"ok"'
[ ! -e "$T/instances/rdna1ctl-verify-999999" ] || fail "stale instance kept"

# 2. A UC update of this (in-scope, attributed) shell: a violation, listed, exit 3.
verify_bg --json verify --duration 4
inject "start=512 end=513 flags=$UC nptes=1 incr=4096 pid=$$ vm_ctx=9"
verify_end 3
has "\"listed\":[{\"pid\":$$,\"comm\":\"sh\",\"pci_addresses\":[\"0000:03:00.0\"],\"vm_ctx\":9,\"start\":512,\"end\":513,\"ptes\":1,\"flags\":\"0x3000000000067\",\"mtype\":\"uc\"}]"
has '"violations":1,'
has '"result":"violations"'

# 3. The module keeps a doorbell-like BO UC for this shell meanwhile: the UC update is
# explained, exit 0 (text output).
verify_bg verify --duration 4
call "$REQ_UC" sg_coherent "$IN" >/dev/null
inject "start=600 end=601 flags=$UC nptes=1 incr=4096 pid=$$ vm_ctx=9"
verify_end 0
has "1 kept: coherent_sg"
sed 's/^/verify> /' /tmp/v.out # the text report, for the log
has "result: ok, no violation"

# 4. Audit: the same UC update would violate; nothing is a violation.
rdna1ctl set --mode audit >/dev/null
verify_bg --json verify --duration 4
inject "start=700 end=701 flags=$UC nptes=1 incr=4096 pid=$$ vm_ctx=9"
verify_end 0
has '"violations":0,"would_violate":1,'
rdna1ctl set --mode enforce >/dev/null

# 5. --pid and SIGTERM: another pid's UC update is not counted; the window ends on the signal,
# the report is printed, the instance removed.
verify_bg --json verify --until-interrupt --pid $$
inject "start=800 end=801 flags=$UC nptes=1 incr=4096 pid=1 vm_ctx=9"
inject "start=900 end=904 flags=0x67 nptes=4 incr=4096 pid=$$ vm_ctx=7"
sleep 1
kill -TERM "$VPID"
verify_end 0
has '"ended_by":"signal"'
has "\"pid_filter\":$$"
has "\"pid\":$$,\"comm\":\"sh\",\"updates\":1,\"ptes\":{\"nc\":4,"
grep -q '"pid":1,' /tmp/v.out && fail "pid 1 counted despite --pid: $(cat /tmp/v.out)"

# 6. Not root: exit 4, and nothing left behind. (The initramfs root is 0700: open it for
# nobody for this step.)
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
# (command: lib.sh has a stat helper of its own)
rootmode=$(command stat -c %a /)
[ ${#rootmode} -eq 3 ] || fail "mode of /: '$rootmode'"
chmod 755 /
rc=0
su -s /bin/sh nobody -c "rdna1ctl verify --duration 1" >/tmp/v.out 2>&1 || rc=$?
chmod "$rootmode" /
eq "$rc" 4 "non-root verify exit ($(cat /tmp/v.out))"
grep -q 'root' /tmp/v.out || fail "non-root message: $(cat /tmp/v.out)"
[ -z "$(ls "$T/instances" | grep '^rdna1ctl-verify-')" ] || fail "instances left: $(ls "$T/instances")"
eq "$(cat "$T/$E/enable")" 0 "top-level enable after all runs"
rmmod rdna1_mtype
