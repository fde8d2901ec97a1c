# rdna1_mtype loaded while amdgpu unloads, in the window between the end of amdgpu's GOING
# notifier chain and ftrace_release_mod(), made to happen every time: rdna1_going_delay holds
# that chain (the load blocks in register_module_notifier() until it ends) and then holds
# ftrace_release_mod() for amdgpu with another CPU spinning, so the load's fprobe registration
# lands on the amdgpu that is going (the module's comment says how). The module must not stay
# armed on it (armed=N with no amdgpu: the init path saw initstate "going"), and the next
# amdgpu must be judged anew, never taken as "already armed" (COMING drops a stale arming):
# a module named amdgpu without the function (case 11's) must leave it unarmed with the
# reason, and the real amdgpu after it armed and rewritten. The later amdgpus are checked
# before the first answer is judged, so each of the two fixes shows on its own. Before them
# the load stayed armed (Y), and so it stayed on the amdgpu without the function.
# `make soak` only (5 rounds in its two-CPU boot: an amdgpu reload per round, about 90 s of
# make test's two-CPU boot each); RDNA1_CASES=72 RDNA1_SMP=2 runs one round.
# kernels: soak
# needs: cpus=2
rounds=1
[ "${RDNA1_SOAK:-0}" != 1 ] || rounds=5
mtype_down
harness_up
# A failure must not leave amdgpu's unload held for the cases after it.
trap 'if grep -q "^rdna1_going_delay " /proc/modules; then rmmod rdna1_going_delay; fi' EXIT
P=/sys/module/rdna1_going_delay/parameters
i=0
while [ $i -lt $rounds ]; do
	insmod /opt/rdna1/rdna1_going_delay.ko delay_ms=3000 release_delay_ms=4000
	rmmod rdna1_mtype_harness
	modprobe -r amdgpu &
	unload=$!
	# Until the GOING chain is held (amdgpu's own exit comes first: seconds under TCG).
	n=0
	while [ "$(cat $P/holding)" != Y ]; do
		n=$((n + 1))
		[ $n -lt 1200 ] || fail "amdgpu's GOING chain was never held in 120 s (round $i)"
		sleep 0.1
	done
	modprobe rdna1_mtype mode=enforce
	wait $unload || fail "modprobe -r amdgpu (round $i)"
	eq "$(cat $P/released)" Y "ftrace_release_mod held for amdgpu (round $i)"
	rmmod rdna1_going_delay
	grep -q '^amdgpu ' /proc/modules && fail "amdgpu still loaded (round $i)"
	left=$(armed)
	left_error=$(cat "$PARAMS/arm_error")
	# A module named amdgpu without the function comes next (case 11's): an arming left from
	# the amdgpu that went must be dropped at its COMING, never taken as "already armed".
	insmod /opt/rdna1/amdgpu.ko
	fake=$(armed)
	fake_error=$(cat "$PARAMS/arm_error")
	rmmod amdgpu
	modprobe amdgpu
	eq "$(armed)" Y "armed on the next amdgpu (round $i)"
	insmod /opt/rdna1/rdna1_mtype_harness.ko
	eq "$(mcall "$REQ_WC" none "$IN")" NC "WC on the next amdgpu (round $i)"
	eq "$fake" N "armed on an amdgpu without the function, the next after the race (round $i)"
	eq "$fake_error" "amdgpu has no traceable gmc_v10_0_get_vm_pte" "arm_error on that amdgpu (round $i)"
	eq "$left" N "armed, with no amdgpu, after loading during amdgpu's unload (round $i)"
	eq "$left_error" "" "arm_error while waiting (round $i)"
	rmmod rdna1_mtype
	i=$((i + 1))
done
echo "going race: $rounds rounds, rdna1_mtype loaded while amdgpu's GOING chain and ftrace_release_mod were held; never left armed on a gone amdgpu"
