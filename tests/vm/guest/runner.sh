# In-VM test runner: runs every case in /opt/rdna1/cases in name order, each in its own
# shell, and prints "PASS name", "FAIL name" or "SKIP name" (exit 77: the kernel lacks what the
# case needs; it says what), the case's output indented below it, then the closing
# "N passed, N failed, N skipped" line the host (and CI) read.
# RDNA1_CASES (kernel command line rdna1.cases=10,80): only the cases with these number
# prefixes, for quick iteration; make test always runs them all.
passed=0 failed=0 skipped=0
for t in /opt/rdna1/cases/*.sh; do
	name=$(basename "$t" .sh)
	if [ -n "${RDNA1_CASES:-}" ]; then
		case ",$RDNA1_CASES," in *",${name%%-*},"*) ;; *) continue ;; esac
	fi
	t0=$(date +%s)
	out=$(sh -c ". /opt/rdna1/guest/lib.sh; . $t" 2>&1)
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		echo "PASS $name (${secs}s)"
		passed=$((passed + 1))
	elif [ $rc -eq 77 ]; then
		echo "SKIP $name (${secs}s)"
		skipped=$((skipped + 1))
	else
		echo "FAIL $name (exit $rc, ${secs}s)"
		failed=$((failed + 1))
	fi
	[ -z "$out" ] || echo "$out" | sed 's/^/  /'
done
echo "$passed passed, $failed failed, $skipped skipped"
