# rdna1_mtype loaded while amdgpu unloads, in the window between the end of amdgpu's GOING
# notifier chain and ftrace_release_mod(): rdna1_going_delay holds that chain, so the load
# blocks in register_module_notifier() until it ends, then races the rest of the unload. The
# module must not stay armed on the amdgpu that went (armed=N, nothing to hook), and the next
# amdgpu must be armed and rewritten. Regression cover, not proof: it passed on the code before
# the fix too (6 rounds, one and two CPUs), since the unload usually wins the race; case 10
# proves the init path's refusal deterministically.
# make soak only (an amdgpu reload per round): RDNA1_SOAK=1 runs 5 rounds, else 1.
# kernels: soak
rounds=1
[ "${RDNA1_SOAK:-0}" != 1 ] || rounds=5
mtype_down
harness_up
insmod /opt/rdna1/rdna1_going_delay.ko delay_ms=3000
# A failure must not leave amdgpu's GOING chain held for the cases after it.
trap 'if grep -q "^rdna1_going_delay " /proc/modules; then rmmod rdna1_going_delay; fi' EXIT
H=/sys/module/rdna1_going_delay/parameters/holding
i=0
while [ $i -lt $rounds ]; do
	rmmod rdna1_mtype_harness
	modprobe -r amdgpu &
	unload=$!
	# Until the GOING chain is held (amdgpu's own exit comes first: seconds under TCG).
	n=0
	while [ "$(cat $H)" != Y ]; do
		n=$((n + 1))
		[ $n -lt 1200 ] || fail "amdgpu's GOING chain was never held in 120 s (round $i)"
		sleep 0.1
	done
	modprobe rdna1_mtype mode=enforce
	wait $unload || fail "modprobe -r amdgpu (round $i)"
	grep -q '^amdgpu ' /proc/modules && fail "amdgpu still loaded (round $i)"
	eq "$(armed)" N "armed after loading during amdgpu's unload (round $i)"
	eq "$(cat "$PARAMS/arm_error")" "" "arm_error while waiting (round $i)"
	modprobe amdgpu
	eq "$(armed)" Y "armed on the next amdgpu (round $i)"
	insmod /opt/rdna1/rdna1_mtype_harness.ko
	eq "$(mcall "$REQ_WC" none "$IN")" NC "WC on the next amdgpu (round $i)"
	rmmod rdna1_mtype
	i=$((i + 1))
done
echo "going race: $rounds rounds, rdna1_mtype loaded while amdgpu's GOING chain was held; never left armed on a gone amdgpu"
