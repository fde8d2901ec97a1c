#!/usr/bin/env bash
# make test and make demo refuse, first of all, a clone or cache path kbuild cannot build in
# (white space or ':'; tests/kernel/env.sh, buildable_paths): exit 2 with the reason, nothing
# built or removed. The scripts are copied into such a path (as a clone there would hold them);
# the refusal comes before anything else they do, so nothing more is needed.
# usage: tests/paths/unbuildable.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# place DIR: the scripts a refusal needs, laid out as in the clone, under DIR.
place() {
	mkdir -p "$1/tests/kernel" "$1/tests/vm"
	cp "$top/tests/run.sh" "$top/tests/demo.sh" "$1/tests/"
	cp "$top/tests/kernel/env.sh" "$1/tests/kernel/"
	cp "$top/tests/vm/prepare.sh" "$1/tests/vm/"
}
# refused WHAT DIR CACHE SCRIPT: SCRIPT of the clone DIR, with RDNA1_CACHE=CACHE, exits 2 at
# once naming the path, and makes nothing.
refused() {
	local what=$1 dir=$2 cache=$3 script=$4 rc=0 out
	out=$(cd / && RDNA1_CACHE=$cache timeout 20 bash "$dir/tests/$script" 2>&1) || rc=$?
	if [ $rc != 2 ]; then
		bad "$what, $script: exit $rc, want 2: $out"
	elif [[ $out != *"which kbuild (make) cannot build in"* ]]; then
		bad "$what, $script: the message does not say why: $out"
	elif [ -e "$dir/build" ] || [ -e "$cache" ]; then
		bad "$what, $script: made $(ls -d "$dir/build" "$cache" 2>/dev/null)"
	else
		echo "ok: $what, $script: $out"
	fi
}
for name in "with space" "with:colon" $'with\ttab'; do
	d="$tmp/$name/rdna1-mtype"
	place "$d"
	for s in run.sh demo.sh; do refused "a clone under '$name'" "$d" "$tmp/cache" "$s"; done
done
d=$tmp/plain/rdna1-mtype
place "$d"
refused "a cache under 'a b'" "$d" "$tmp/a b/cache" run.sh
[ "$fails" = 0 ] || exit 1
echo "clone and cache paths kbuild cannot build in: refused first"
