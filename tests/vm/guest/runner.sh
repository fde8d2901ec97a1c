# In-VM test runner: runs the cases in /opt/rdna1/cases in name order, each in its own shell,
# and reports in KTAP (Documentation/dev-tools/ktap.rst, as kselftest's ktap_helpers.sh):
#   # running NAME        before a case (the host names it if the boot times out)
#   # ...                 the case's output, streamed as it runs
#   # NAME: S.SS s        its duration
#   ok N NAME | not ok N NAME | ok N NAME # SKIP reason
# then kselftest's "# Totals:" line and the plain "N passed, N failed, N skipped" the host reads.
# A case exits 0 (pass), 4 (skip, kselftest's KSFT_SKIP: the kernel lacks what it needs, and it
# says what) or anything else (fail).
# Case headers declare what a case needs (read here, and on the host by tests/vm/cases-with.sh):
#   # needs: cpus=2   skipped with fewer online CPUs (make test runs those cases in a second boot)
#   # must-pass       under rdna1.strict=1 (make test) a skip counts as a failure
#   # kernels: test debian   the kernels make test boots it on (host only; without it: test;
#                           debian: every Debian release, debian-7.2: that one only)
# RDNA1_CASES (kernel command line rdna1.cases=10,80): only the cases with these number prefixes.
KSFT_SKIP=4
# Under TCG + KASAN + lockdep each new process costs about 0.6 s, so the runner starts two per
# case (the case's shell and the sed that prefixes its output) and uses the shell's builtins
# for the rest.
set -o pipefail
cases=""
for t in /opt/rdna1/cases/*.sh; do
	name=${t##*/}
	name=${name%.sh}
	if [ -n "${RDNA1_CASES:-}" ]; then
		case ",$RDNA1_CASES," in *",${name%%-*},"*) ;; *) continue ;; esac
	fi
	cases="$cases $t"
done
set -- $cases
echo "KTAP version 1"
echo "1..$#"
cpus=0
while read -r key _; do [ "$key" != processor ] || cpus=$((cpus + 1)); done </proc/cpuinfo
uptime_cs() { read -r up _ </proc/uptime; cs=${up%.*}${up#*.}; }
n=0 passed=0 failed=0 skipped=0
for t in "$@"; do
	n=$((n + 1))
	name=${t##*/}
	name=${name%.sh}
	need="" must=0
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		"# needs: cpus="*) [ -n "$need" ] || { need=${line#"# needs: cpus="}; need=${need%%[!0-9]*}; } ;;
		"# must-pass"*) must=1 ;;
		esac
	done <"$t"
	echo "# running $name"
	uptime_cs
	t0=$cs
	if [ -n "$need" ] && [ "$cpus" -lt "$need" ]; then
		reason="needs $need CPUs, this boot has $cpus"
		rc=$KSFT_SKIP
	else
		# The case's output streams prefixed; sed keeps its last line, the skip reason.
		sh -c ". /opt/rdna1/guest/lib.sh; . $t" 2>&1 | sed -e 's/^/# /' -e '$w /tmp/case.last'
		rc=$?
		reason=""
		read -r reason </tmp/case.last || true
		reason=${reason#"# "}
	fi
	uptime_cs
	cs=$((cs - t0))
	printf '# %s: %d.%02d s\n' "$name" $((cs / 100)) $((cs % 100))
	if [ "$rc" -eq "$KSFT_SKIP" ] && [ "$must" -gt 0 ] && [ "${RDNA1_STRICT:-0}" = 1 ]; then
		echo "# $name must pass in this run, but skipped"
		rc=1
	fi
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $name"
		passed=$((passed + 1))
	elif [ "$rc" -eq "$KSFT_SKIP" ]; then
		echo "ok $n $name # SKIP $reason"
		skipped=$((skipped + 1))
	else
		echo "not ok $n $name # exit $rc"
		failed=$((failed + 1))
	fi
done
echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
echo "$passed passed, $failed failed, $skipped skipped"
