# rdna1ctl status reports what the module and the machine really are.
# kernels: test debian
# boot: 2cpu
mtype_down
out=$(rdna1ctl status)
echo "$out" | grep -q 'rdna1_mtype is not loaded' || fail "not-loaded: $out"
echo "$out" | grep -q 'no AMD GPU found' || fail "gpus: $out"
# The hook arms only with amdgpu loaded (an earlier case may have loaded it, or not).
harness_up
modprobe rdna1_mtype mode=enforce
out=$(rdna1ctl status)
echo "$out" | grep -q "rdna1_mtype $(cat /sys/module/rdna1_mtype/version) loaded" || fail "version: $out"
echo "$out" | grep -q 'mode:    enforce' || fail "mode: $out"
echo "$out" | grep -q 'scope:   rdna1' || fail "scope: $out"
echo "$out" | grep -q 'hook:    armed' || fail "hook: $out"
rmmod rdna1_mtype
# The layout: status tells it is missing and how to fix it; on a kernel without module BTF,
# `rdna1ctl layout` shows the module's own layout, says it cannot be checked against the
# kernel (exit 0), and `layout --apply` refuses (exit 1) (with BTF: case 85). amdgpu and the
# harness are still up (harness_up above): the BTF message is the loaded-amdgpu one.
modprobe rdna1_mtype mode=enforce bo_layout=none
rdna1ctl status | grep -q 'layout:  unset: no BO is modified' || fail "layout unset: $(rdna1ctl status)"
truth=$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)
if [ ! -e /sys/kernel/btf/amdgpu ]; then
	rc=0
	out=$(rdna1ctl layout 2>&1) || rc=$?
	eq "$rc" 0 "layout exit without BTF ($out)"
	echo "$out" | grep -q '^amdgpu_bo layout from BTF: none: .* does not exist although amdgpu is loaded: this kernel was built without module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)$' || fail "layout without BTF: $out"
	echo "$out" | grep -q "^module's layout: *none (unset, set)$" || fail "module's unset layout: $out"
	echo "$out" | grep -q "^warning: not checked: without amdgpu's module BTF" || fail "unchecked warning: $out"
	json=$(rdna1ctl --json layout) || fail "layout --json exit: $json"
	echo "$json" | grep -q '"btf":null,"btf_unavailable":"[^"]* does not exist although amdgpu is loaded: this kernel was built without module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)","module":{"value":null,"status":"unset","source":"set"},"matches":null,"applied":null}$' ||
		fail "layout --json without BTF: $json"
	rc=0
	out=$(rdna1ctl layout --apply 2>&1) || rc=$?
	eq "$rc" 1 "layout --apply exit without BTF ($out)"
	echo "$out" | grep -q '^rdna1ctl: layout --apply: no layout to apply: .*CONFIG_DEBUG_INFO_BTF_MODULES' || fail "layout --apply without BTF: $out"
	eq "$(cat $PARAMS/bo_layout)" none "module layout after a refused --apply"
fi
layout_set
rdna1ctl status | grep -q "layout:  amdgpu_bo $truth" || fail "layout set: $(rdna1ctl status)"
if [ ! -e /sys/kernel/btf/amdgpu ]; then
	out=$(rdna1ctl layout) || fail "layout exit: $out"
	echo "$out" | grep -q "^module's layout: *$truth (ok, set)$" || fail "module's layout: $out"
fi
rmmod rdna1_mtype
