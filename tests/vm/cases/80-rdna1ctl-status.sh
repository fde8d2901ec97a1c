# rdna1ctl status reports what the module and the machine really are.
# kernels: test debian
mtype_down
out=$(rdna1ctl status)
echo "$out" | grep -q 'rdna1_mtype is not loaded' || fail "not-loaded: $out"
echo "$out" | grep -q 'no AMD GPU found' || fail "gpus: $out"
modprobe rdna1_mtype mode=enforce
out=$(rdna1ctl status)
echo "$out" | grep -q "rdna1_mtype $(cat /sys/module/rdna1_mtype/version) loaded" || fail "version: $out"
echo "$out" | grep -q 'mode:    enforce' || fail "mode: $out"
echo "$out" | grep -q 'scope:   rdna1' || fail "scope: $out"
echo "$out" | grep -q 'hook:    armed' || fail "hook: $out"
rmmod rdna1_mtype
# The layout: status tells it is missing and how to fix it; on a kernel without module BTF,
# `rdna1ctl layout` fails and says why (with BTF: case 85).
harness_up
modprobe rdna1_mtype mode=enforce bo_layout=none
rdna1ctl status | grep -q 'layout:  unset: no BO is modified' || fail "layout unset: $(rdna1ctl status)"
if [ ! -e /sys/kernel/btf/amdgpu ]; then
	if out=$(rdna1ctl layout 2>&1); then fail "rdna1ctl layout succeeded without BTF: $out"; fi
	echo "$out" | grep -q 'CONFIG_DEBUG_INFO_BTF_MODULES' || fail "layout error: $out"
fi
layout_set
rdna1ctl status | grep -q "layout:  amdgpu_bo $(cat /sys/kernel/debug/rdna1_mtype_harness/layout)" || fail "layout set: $(rdna1ctl status)"
rmmod rdna1_mtype
