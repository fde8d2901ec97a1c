# Boot with the installed files: the modprobe.d file, unit and config exactly as `make install`
# staged them (tests/install/run.sh), kmod's real modprobe (busybox's ignores softdep), then
# what rdna1-mtype.service runs (its ExecStart, read from the installed unit). Shows that
# loading amdgpu pulls rdna1_mtype in first with the shipped options, that the hook is armed
# before amdgpu's init runs (the module notifier saw amdgpu COMING), and that the unit applies
# the installed config. First, rdna1_mtype loaded alone waits: not armed without amdgpu; nor
# when only another module defines the hooked function's name.
# (This case also holds what was once case 10, load before amdgpu: one amdgpu load instead of
# two; today's case 10 is the out-of-tree amdgpu.)
# must-pass
I=/opt/rdna1/installed
if [ -d "$I" ]; then
	echo "boot: with the files make install staged"
	conf=$I/usr/lib/modprobe.d/rdna1-mtype.conf
	cfg=$I/etc/rdna1-mtype/config.toml
	unit=$I/usr/lib/systemd/system/rdna1-mtype.service
else
	[ "${RDNA1_STRICT:-0}" != 1 ] || fail "make test boots with the staged install, but $I is missing: the install-tests stage did not make it (build/test/log/install-tests.log says why)"
	echo "boot: with the repository's files (this image has no staged install)"
	conf=/opt/rdna1/dist/modprobe.d/rdna1-mtype.conf
	cfg=/opt/rdna1/dist/config/config.toml
	unit=""
fi
mtype_down
if grep -q '^rdna1_mtype_harness ' /proc/modules; then rmmod rdna1_mtype_harness; fi
if grep -q '^amdgpu ' /proc/modules; then modprobe -r amdgpu; fi
grep -q '^amdgpu ' /proc/modules && fail "amdgpu still loaded"
modprobe rdna1_mtype mode=enforce
eq "$(armed)" N "armed with no amdgpu loaded"
rmmod rdna1_mtype
# A module that is not amdgpu but defines gmc_v10_0_get_vm_pte: the hook keeps only amdgpu's
# own site of that name, so it keeps waiting for amdgpu (case 31: with amdgpu loaded before the
# decoy, it arms on amdgpu's own).
insmod /opt/rdna1/rdna1_mtype_decoy.ko
modprobe rdna1_mtype mode=enforce
eq "$(armed)" N "armed on a decoy gmc_v10_0_get_vm_pte"
eq "$(cat $PARAMS/arm_error)" "" "arm_error while waiting for amdgpu"
rmmod rdna1_mtype
rmmod rdna1_mtype_decoy
# /usr/lib/modprobe.d is /lib/modprobe.d on merged-/usr systems (every distribution we target).
mkdir -p /lib/modprobe.d /etc/rdna1-mtype
cp "$conf" /lib/modprobe.d/rdna1-mtype.conf
# A changed scope shows below that the unit really applied this file.
sed 's/^scope = .*/scope = "gfx10"/' "$cfg" >/etc/rdna1-mtype/config.toml
# kmod resolves the softdep before loading anything: rdna1_mtype, with its options, first.
plan=$(/opt/kmod/modprobe --show-depends amdgpu)
first=$(echo "$plan" | grep -n 'rdna1_mtype.ko' | head -n1 | cut -d: -f1)
amd=$(echo "$plan" | grep -n '/amdgpu.ko' | head -n1 | cut -d: -f1)
[ -n "$first" ] && [ -n "$amd" ] && [ "$first" -lt "$amd" ] || fail "load plan: $plan"
echo "$plan" | grep 'rdna1_mtype.ko' | grep -q 'mode=enforce scope=rdna1 classes=coherent' ||
	fail "options not in the plan: $plan"
echo "rdna1-test: boot start" >/dev/kmsg
/opt/kmod/modprobe amdgpu
grep -q '^rdna1_mtype ' /proc/modules || fail "modprobe amdgpu did not load rdna1_mtype"
eq "$(armed)" Y armed
eq "$(cat $PARAMS/mode)" enforce mode
eq "$(cat $PARAMS/scope)" rdna1 scope
eq "$(cat $PARAMS/bo_layout_source)" builtin "layout source"
log=$(dmesg | sed -n '/rdna1-test: boot start/,$p')
ours=$(echo "$log" | grep -n 'rdna1_mtype: armed on amdgpu:gmc_v10_0_get_vm_pte' | head -n1 | cut -d: -f1)
theirs=$(echo "$log" | grep -n 'amdgpu' | grep -v rdna1_mtype | head -n1 | cut -d: -f1)
[ -n "$ours" ] || fail "no 'armed' line after modprobe amdgpu: $log"
[ -z "$theirs" ] || [ "$ours" -lt "$theirs" ] || fail "armed (line $ours) after amdgpu init (line $theirs)"
insmod /opt/rdna1/rdna1_mtype_harness.ko
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO, policy from modprobe.d"
# rdna1-mtype.service: its ExecStart, as installed.
if [ -n "$unit" ]; then
	cmd=$(sed -n 's/^ExecStart=//p' "$unit")
	[ -n "$cmd" ] || fail "no ExecStart in $unit"
	$cmd >/tmp/unit.out 2>&1 || fail "ExecStart '$cmd' failed: $(cat /tmp/unit.out)"
	eq "$(cat $PARAMS/scope)" gfx10 "scope after the unit applied the config"
	eq "$(cat $PARAMS/mode)" enforce "mode after the unit"
fi
rm -f /lib/modprobe.d/rdna1-mtype.conf /etc/rdna1-mtype/config.toml
rmmod rdna1_mtype
