# rdna1_mtype loaded while amdgpu loads, after amdgpu's COMING notification (before
# rdna1_mtype's notifier existed) and before amdgpu's sysfs set-up: the amdgpu of
# tests/modules/slow-amdgpu (in tree, with the function) sleeps there while its parameters are
# parsed. rdna1_mtype finds amdgpu's function but no /sys/module/amdgpu: it must wait for
# amdgpu's LIVE and arm then. Before round 3 it took the missing initstate for an amdgpu
# unloading, waited for a COMING that had passed, and never armed (armed N, arm_error empty).
# Then the same from the other side: loaded first, rdna1_mtype arms at that amdgpu's COMING and
# its LIVE changes nothing.
# kernels: test
mtype_down
if grep -q '^rdna1_mtype_harness ' /proc/modules; then rmmod rdna1_mtype_harness; fi
if grep -q '^amdgpu ' /proc/modules; then modprobe -r amdgpu; fi
# A failure must not leave this amdgpu to the cases after it (they would find no real one).
trap 'mtype_down; if grep -q "^amdgpu " /proc/modules; then rmmod amdgpu; fi' EXIT
echo "rdna1-test: case 71 start" >/dev/kmsg
insmod /opt/rdna1/slow/amdgpu.ko hold_ms=8000 &
load=$!
n=0
until dmesg | sed -n '/rdna1-test: case 71 start/,$p' | grep -q 'holding its load'; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "the slow amdgpu's load was never held in 30 s"
	sleep 0.1
done
[ -e /sys/module/amdgpu/initstate ] && fail "amdgpu's sysfs is set up while its load is held"
read -r t0 _ </proc/uptime
modprobe rdna1_mtype mode=enforce
read -r t1 _ </proc/uptime
[ -e /sys/module/amdgpu/initstate ] && fail "the hold ended before rdna1_mtype had loaded: raise hold_ms"
eq "$(armed)" N "armed on an amdgpu still loading, before its sysfs"
eq "$(cat "$PARAMS/arm_error")" "" "arm_error while amdgpu is loading"
wait $load || fail "insmod of the slow amdgpu"
eq "$(armed)" Y "armed at amdgpu's LIVE, loaded while amdgpu was loading"
eq "$(cat "$PARAMS/arm_error")" "" "arm_error once armed"
log=$(dmesg | sed -n '/rdna1-test: case 71 start/,$p')
echo "$log" | grep -q 'rdna1_mtype: waiting for amdgpu to finish loading' ||
	fail "no wait in the log: $(echo "$log" | grep rdna1_mtype)"
rmmod rdna1_mtype
rmmod amdgpu
modprobe rdna1_mtype mode=enforce
insmod /opt/rdna1/slow/amdgpu.ko
eq "$(armed)" Y "armed at the COMING of an amdgpu loaded after rdna1_mtype"
rmmod amdgpu
eq "$(armed)" N "armed after that amdgpu went"
rmmod rdna1_mtype
echo "coming window: loaded between amdgpu's COMING and its sysfs set-up (rdna1_mtype loaded from $t0 to $t1 s of uptime, within the 8 s hold), armed at its LIVE"
