# End to end with module BTF: rdna1ctl derives struct amdgpu_bo's layout from the running
# kernel's /sys/kernel/btf/{vmlinux,amdgpu}; it must equal what the harness, compiled against
# amdgpu's headers, knows (offsetof/sizeof); --apply gives it to the module, which then
# classifies BOs.
# kernels: test debian
mtype_down
harness_up
if [ ! -e /sys/kernel/btf/amdgpu ]; then
	echo "this kernel has no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)"
	exit 4
fi
truth=$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)
echo "amdgpu_bo layout (harness offsetof): $truth"
rdna1ctl layout | grep -q "^amdgpu_bo layout from BTF: $truth$" || fail "BTF layout: $(rdna1ctl layout) vs $truth"
# Without a layout no BO is classified: a memory BO keeps its CC until --apply gives one.
modprobe rdna1_mtype mode=enforce bo_layout=none
eq "$(mcall "$REQ_CC" plain "$IN")" CC "memory BO before --apply"
rdna1ctl layout --apply | grep -q '^applied; module now reads: .* (ok)$' || fail "apply: $(rdna1ctl layout --apply)"
eq "$(cat $PARAMS/bo_layout)" "$truth" "module layout"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO after --apply"
eq "$(mcall "$REQ_DEFAULT" sg_coherent "$IN")" UC "doorbell-like BO after --apply"
rmmod rdna1_mtype
