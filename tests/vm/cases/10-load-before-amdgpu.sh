# rdna1_mtype loaded before amdgpu waits, then arms from the module notifier when amdgpu
# arrives, before amdgpu's own init runs; the first call through the real function is rewritten.
grep -q '^amdgpu ' /proc/modules && fail "amdgpu must not be loaded yet"
modprobe rdna1_mtype mode=enforce
eq "$(armed)" N "armed before amdgpu"
modprobe amdgpu
eq "$(armed)" Y "armed after amdgpu"
# The notifier ran at MODULE_STATE_COMING: our line precedes amdgpu's first init message.
log=$(dmesg)
ours=$(echo "$log" | grep -n 'rdna1_mtype: armed on amdgpu:gmc_v10_0_get_vm_pte' | head -n1 | cut -d: -f1)
theirs=$(echo "$log" | grep -n 'amdgpu' | grep -v rdna1_mtype | head -n1 | cut -d: -f1)
[ -n "$ours" ] || fail "no 'armed' line in dmesg"
[ -z "$theirs" ] || [ "$ours" -lt "$theirs" ] || fail "armed (line $ours) after amdgpu init (line $theirs)"
insmod /opt/rdna1/rdna1_mtype_harness.ko
out=$(call "$(req CC)" none "$IN")
eq "$(mtype_name "$out")" NC "CC request with rdna1_mtype loaded first"
rmmod rdna1_mtype
