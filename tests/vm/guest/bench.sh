# The bench job: every hook mechanism and rdna1_mtype's own hook in each mode, side by side in
# one boot: each round runs every row once, rounds repeat, and each row's median round is
# reported. The call is the one rdna1_mtype has most to do for (tests/modules/bench/).
B=/opt/rdna1/rdna1_mtype_bench.ko
R=/sys/kernel/debug/rdna1_mtype_bench/results
P=/sys/module/rdna1_mtype/parameters
ROUNDS=5
CALLS=100000
modprobe amdgpu || exit 1
# One round of the rows the arguments select: "LABEL NS" lines.
one() {
	insmod $B calls=$CALLS rounds=1 "$@" || return 1
	awk 'NR > 1 && !/^\(/ { print $1, $2 }' $R
	rmmod rdna1_mtype_bench
}
: >/tmp/rows
missed=0
r=0
while [ $r -lt $ROUNDS ]; do
	one mechanisms=all label=no_hook >>/tmp/rows || exit 1
	modprobe rdna1_mtype mode=off || exit 1
	[ "$(cat $P/armed)" = Y ] || { echo "rdna1_mtype did not arm"; exit 1; }
	for mode in off audit enforce; do
		echo $mode >$P/mode
		# The hook must have done what its mode says: NC in enforce, amdgpu's CC otherwise.
		case $mode in enforce) want=nc ;; *) want=cc ;; esac
		one mechanisms=none label=rdna1_mtype_$mode expect=$want >>/tmp/rows || exit 1
	done
	# What the audit row is made of: a graphics VM (the VM's kind read, nothing logged), no BO
	# (the kind read, the decision logged, no BO read).
	echo audit >$P/mode
	one mechanisms=none label=audit_graphics_vm vm=graphics expect=cc >>/tmp/rows || exit 1
	one mechanisms=none label=audit_no_bo bo=none expect=cc >>/tmp/rows || exit 1
	missed=$((missed + $(cat $P/missed)))
	rmmod rdna1_mtype
	r=$((r + 1))
done
echo "== ns per call of gmc_v10_0_get_vm_pte: median of $ROUNDS interleaved rounds of $CALLS calls"
echo "== (every mechanism does the same work: save the arguments, write MTYPE_NC after return;"
echo "==  rdna1_mtype_MODE: its fprobe, decision, counters and event log, in that mode)"
sort -k1,1 -k2,2n /tmp/rows | awk -v rounds=$ROUNDS -v missed=$missed '
	{ v[$1, ++n[$1]] = $2 }
	END {
		order = "no_hook kretprobe fprobe redirect rdna1_mtype_off rdna1_mtype_audit rdna1_mtype_enforce audit_graphics_vm audit_no_bo"
		k = split(order, rows, " ")
		for (i = 1; i <= k; i++) {
			if (n[rows[i]] != rounds) { print "missing rounds of " rows[i]; bad = 1; continue }
			med[rows[i]] = v[rows[i], int((rounds + 1) / 2)]
		}
		if (bad) exit 1
		printf "%-22s %8s %12s\n", "row", "ns/call", "overhead ns"
		for (i = 1; i <= k; i++)
			printf "%-22s %8d %12d\n", rows[i], med[rows[i]], med[rows[i]] - med["no_hook"]
		fp = med["fprobe"] - med["no_hook"]
		print "rdna1_mtype'"'"'s own work on top of the fprobe mechanism (fprobe overhead " fp " ns):"
		for (i = 5; i <= k; i++) {
			d = med[rows[i]] - med["fprobe"]
			name = rows[i]; sub(/^rdna1_mtype_/, "", name)
			printf "  %-18s %+6d ns = %5.1f%%\n", name, d, 100 * d / fp
		}
		print "fprobe misses (rdna1_mtype parameters/missed, summed over the rounds): " missed
	}' || exit 1
