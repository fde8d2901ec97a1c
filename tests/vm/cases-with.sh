#!/usr/bin/env bash
# The VM cases whose header declares something, for the hosts that pick cases (tests/run.sh,
# tests/debian/run.sh): prints their numbers comma-separated (what RDNA1_CASES takes), in order.
# usage: cases-with.sh [-v] HEADER_LINE   (an extended regex for the whole line after "# ";
#                                          -v: the cases whose header has no such line)
#   cases-with.sh 'needs: cpus=2'               the cases for make test's two-CPU boot
#   cases-with.sh 'kernels: (.* )?debian(-7\.3)?( .*)?'   the cases for Debian's 7.3 (tests/debian/run.sh)
# A case's header is its leading run of comment lines (docs/TESTING.md, "Adding a case").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
want=0
[ "$1" != -v ] || { want=1; shift; }
for f in "$here"/cases/[0-9]*.sh; do
	rc=0
	awk '!/^#/ { exit } { print }' "$f" | grep -qE "^# ($1)$" || rc=$?
	[ $rc -le 1 ] || exit $rc
	if [ $rc = $want ]; then
		n=$(basename "$f")
		echo "${n%%-*}"
	fi
done | paste -sd, -
