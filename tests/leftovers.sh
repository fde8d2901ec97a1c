#!/usr/bin/env bash
# leftovers.sh snapshot FILE | check FILE: what make test leaves on the machine outside the clone,
# its cache and temporary directories. `snapshot` lists every path of the root file system
# (after the host set-up, which installs packages); `check` lists them again and fails naming
# each new one (the top-most new directory of a new tree), so that no test can come to lean on
# what an earlier run left (as a test that passed only where an old rdna1ctl had made
# /nonexistent/.cache/... as root).
# Not listed: the clone and $RDNA1_CACHE; the directory the clone sits in, unless that is / or
# $HOME (other checkouts beside it change by hand while a run goes on, not by its tests); /tmp
# and /var/tmp (temporary by their nature: a test's own files there are its own); /proc, /sys,
# /dev, /run (not files); cargo's download cache ($CARGO_HOME/registry and git: cargo fetches
# what Cargo.lock names, checks it, and fetches again what is missing); /var/log (the system's
# own logs). Only the root file system is listed (-xdev).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/kernel/env.sh"
cargo_home=${CARGO_HOME:-$HOME/.cargo}
list() {
	local p prune=()
	local beside
	beside=$(dirname "$top")
	case $beside in / | "$HOME" | "$(realpath "$HOME")") beside=$top ;; esac
	for p in /proc /sys /dev /run /tmp /var/tmp /var/log "$beside" "$RDNA1_CACHE" \
		"$cargo_home/registry" "$cargo_home/git"; do
		[ -e "$p" ] || continue
		prune+=(-path "$(realpath "$p")" -o)
	done
	unset 'prune[${#prune[@]}-1]'
	find / -xdev \( "${prune[@]}" \) -prune -o -print 2>/dev/null | LC_ALL=C sort
}
case ${1:-} in
snapshot)
	list >"$2"
	echo "leftovers: $(wc -l <"$2") paths before the tests"
	;;
check)
	[ -s "$2" ] || die "leftovers: no snapshot $2"
	new=$(LC_ALL=C comm -13 "$2" <(list) | awk 'NR == 1 || index($0, last "/") != 1 { print; last = $0 }')
	if [ -n "$new" ]; then
		echo "the tests left these outside the clone, its cache and temporary directories:" >&2
		sed 's/^/  /' <<<"$new" >&2
		exit 1
	fi
	echo "leftovers: none ($(wc -l <"$2") paths before)"
	;;
*)
	echo "usage: $0 snapshot|check FILE" >&2
	exit 2
	;;
esac
