# The shipped modprobe.d file with kmod's real modprobe: `modprobe amdgpu` loads rdna1_mtype
# first (softdep) with the shipped options, and the policy is armed before amdgpu's init runs.
mtype_down
if grep -q '^rdna1_mtype_harness ' /proc/modules; then rmmod rdna1_mtype_harness; fi
if grep -q '^amdgpu ' /proc/modules; then modprobe -r amdgpu; fi
grep -q '^amdgpu ' /proc/modules && fail "amdgpu still loaded"
mkdir -p /etc/modprobe.d
cp /opt/rdna1/dist/modprobe.d/rdna1-mtype.conf /etc/modprobe.d/
# kmod resolves the softdep before loading anything: rdna1_mtype, with its options, first.
plan=$(/opt/kmod/modprobe --show-depends amdgpu)
first=$(echo "$plan" | grep -n 'rdna1_mtype.ko' | head -n1 | cut -d: -f1)
amd=$(echo "$plan" | grep -n '/amdgpu.ko' | head -n1 | cut -d: -f1)
[ -n "$first" ] && [ -n "$amd" ] && [ "$first" -lt "$amd" ] || fail "load plan: $plan"
echo "$plan" | grep 'rdna1_mtype.ko' | grep -q 'mode=enforce scope=rdna1 classes=coherent' ||
	fail "options not in the plan: $plan"
echo "rdna1-test: softdep start" >/dev/kmsg
/opt/kmod/modprobe amdgpu
grep -q '^rdna1_mtype ' /proc/modules || fail "modprobe amdgpu did not load rdna1_mtype"
eq "$(armed)" Y armed
eq "$(cat $PARAMS/mode)" enforce mode
eq "$(cat $PARAMS/scope)" rdna1 scope
eq "$(cat $PARAMS/bo_layout_source)" builtin "layout source"
log=$(dmesg | sed -n '/rdna1-test: softdep start/,$p')
ours=$(echo "$log" | grep -n 'rdna1_mtype: armed on amdgpu:gmc_v10_0_get_vm_pte' | head -n1 | cut -d: -f1)
theirs=$(echo "$log" | grep -n 'amdgpu' | grep -v rdna1_mtype | head -n1 | cut -d: -f1)
[ -n "$ours" ] || fail "no 'armed' line after modprobe amdgpu: $log"
[ -z "$theirs" ] || [ "$ours" -lt "$theirs" ] || fail "armed (line $ours) after amdgpu init (line $theirs)"
insmod /opt/rdna1/rdna1_mtype_harness.ko
eq "$(mtype_name "$(call "$(req CC)" plain "$IN")")" NC "memory BO, policy from modprobe.d"
rm /etc/modprobe.d/rdna1-mtype.conf
rmmod rdna1_mtype
