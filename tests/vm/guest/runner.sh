# In-VM test runner: runs every case in /opt/rdna1/cases in name order, each in its own
# shell, and prints "PASS name", "FAIL name" or "SKIP name" (exit 77: the kernel lacks what the
# case needs; it says what), the case's output indented below it, then the closing
# "N passed, N failed, N skipped" line the host (and CI) read.
passed=0 failed=0 skipped=0
for t in /opt/rdna1/cases/*.sh; do
	name=$(basename "$t" .sh)
	out=$(sh -c ". /opt/rdna1/guest/lib.sh; . $t" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS $name"
		passed=$((passed + 1))
	elif [ $rc -eq 77 ]; then
		echo "SKIP $name"
		skipped=$((skipped + 1))
	else
		echo "FAIL $name (exit $rc)"
		failed=$((failed + 1))
	fi
	[ -z "$out" ] || echo "$out" | sed 's/^/  /'
done
echo "$passed passed, $failed failed, $skipped skipped"
