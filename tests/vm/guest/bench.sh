# The bench job: every hook mechanism, then rdna1_mtype's own hook in each mode, in one boot.
B=/opt/rdna1/rdna1_mtype_bench.ko
R=/sys/kernel/debug/rdna1_mtype_bench/results
modprobe amdgpu || exit 1
run() { insmod $B "$@" && cat $R && rmmod rdna1_mtype_bench; }
echo "== hook mechanisms (each does the same work: save args, write NC after return)"
run calls=100000 rounds=5 mechanisms=all label=no_hook
for mode in off audit enforce; do
	echo "== rdna1_mtype's hook (fprobe, policy, stats, event log), mode $mode"
	modprobe rdna1_mtype mode=$mode
	run calls=100000 rounds=5 mechanisms=none label="rdna1_mtype_$mode"
	rmmod rdna1_mtype
done
