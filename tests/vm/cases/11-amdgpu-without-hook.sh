# A module named amdgpu that has no gmc_v10_0_get_vm_pte
# (tests/modules/harness/rdna1_fake_amdgpu.c): rdna1_mtype cannot arm and says so in arm_error
# (status shows it), whether that amdgpu was there first or came later; "waiting" is only for
# no amdgpu at all.
# kernels: test debian
mtype_down
if grep -q '^rdna1_mtype_harness ' /proc/modules; then rmmod rdna1_mtype_harness; fi
if grep -q '^amdgpu ' /proc/modules; then modprobe -r amdgpu; fi
insmod /opt/rdna1/amdgpu.ko
modprobe rdna1_mtype mode=enforce
eq "$(armed)" N "armed without the function"
eq "$(cat "$PARAMS/arm_error")" "amdgpu is loaded but has no traceable gmc_v10_0_get_vm_pte" \
	"arm_error, amdgpu there first"
rdna1ctl status | grep -q 'amdgpu is loaded but has no traceable' || fail "status: $(rdna1ctl status)"
rmmod rdna1_mtype
rmmod amdgpu
modprobe rdna1_mtype mode=enforce
eq "$(cat "$PARAMS/arm_error")" "" "arm_error with no amdgpu (waiting)"
insmod /opt/rdna1/amdgpu.ko
eq "$(armed)" N "armed without the function"
eq "$(cat "$PARAMS/arm_error")" "amdgpu has no traceable gmc_v10_0_get_vm_pte" "arm_error, amdgpu came later"
rmmod rdna1_mtype
rmmod amdgpu
