# amdgpu unloaded under rdna1_mtype disarms it; amdgpu loaded again re-arms it, and it rewrites;
# fprobe's miss count (case 39) still reads 0 across the disarm and re-arm.
# Once here; RDNA1_SOAK=1 (`make soak`) repeats the cycle 20 times (issue 14's churn).
# kernels: test debian
reloads=1
[ "${RDNA1_SOAK:-0}" != 1 ] || reloads=20
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
eq "$(armed)" Y "armed"
read -r t0 _ </proc/uptime
i=0
while [ $i -lt $reloads ]; do
	# The harness calls amdgpu's function by address: out before amdgpu goes, in after.
	rmmod rdna1_mtype_harness
	modprobe -r amdgpu
	eq "$(armed)" N "armed after amdgpu unload $i"
	modprobe amdgpu
	eq "$(armed)" Y "armed after amdgpu reload $i"
	insmod /opt/rdna1/rdna1_mtype_harness.ko
	eq "$(mcall "$REQ_WC" none "$IN")" NC "WC after reload $i"
	eq "$(cat $PARAMS/missed)" 0 "missed across re-arming $i"
	i=$((i + 1))
done
read -r t1 _ </proc/uptime
echo "amdgpu: $reloads unload/reload cycles under rdna1_mtype, re-armed and rewriting after each, $((${t1%.*} - ${t0%.*})) s"
rmmod rdna1_mtype
