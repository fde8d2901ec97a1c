#!/bin/bash
# Wall time of `rdna1ctl status` as a fresh process (what a user or a script pays), on every
# fixture in tests/fixtures, human and --json, plus the largest fixture with this machine's
# full pci.ids (the fixtures carry excerpts; the real file is 1.3 MB, of which rdna1ctl reads
# up to the end of AMD's section, 154 KB in). Budget: 5 ms per run (docs/CLI.md (status)); exits
# 1 if any case is over.
#
# Uses hyperfine when installed (Debian: `sudo apt-get install hyperfine`): prints min, median
# and mean, and judges the median, because on a loaded machine a few runs that wait for a CPU
# drag the mean far above what the program costs. Without hyperfine, a plain loop timed with
# `date +%s%N` gives the mean only (judged; it includes bash's fork, so it reads a little high).
#
#   tests/bench/status-bench.sh            # RUNS=200 LIMIT_MS=5 by default
#   RUNS=500 tests/bench/status-bench.sh
#   NO_HYPERFINE=1 tests/bench/status-bench.sh   # the plain loop even where hyperfine is
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
runs=${RUNS:-200}
limit_ms=${LIMIT_MS:-5}
bin=$top/target/release/rdna1ctl
fixtures=$top/tests/fixtures

cargo build --release --quiet -p rdna1ctl --manifest-path "$top/Cargo.toml"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The largest fixture again, with the system's whole pci.ids in place of the excerpt.
cases=()
for d in "$fixtures"/*/; do
	cases+=("$(basename "$d"):$d")
done
for ids in /usr/share/hwdata/pci.ids /usr/share/misc/pci.ids; do
	if [ -f "$ids" ]; then
		cp -a "$fixtures/rdna1-plus-other" "$tmp/full-pciids"
		cp "$ids" "$tmp/full-pciids/usr/share/hwdata/pci.ids"
		cases+=("rdna1-plus-other+full-pci.ids:$tmp/full-pciids")
		break
	fi
done

have_hyperfine() { [ -z "${NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null; }

# stats ROOT ARGS...: "min median mean judged" wall ms of one run; without hyperfine min and
# median are "-" and the mean is judged.
stats() {
	local root=$1
	shift
	if have_hyperfine; then
		hyperfine -N --warmup 10 --runs "$runs" --export-json "$tmp/h.json" \
			"$bin --root $root $* status" >/dev/null 2>&1
		python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.2f %.2f %.2f %.2f" % (r["min"] * 1e3, r["median"] * 1e3, r["mean"] * 1e3, r["median"] * 1e3))' "$tmp/h.json"
	else
		for _ in 1 2 3 4 5 6 7 8 9 10; do "$bin" --root "$root" "$@" status >/dev/null; done
		local start end
		start=$(date +%s%N)
		for ((i = 0; i < runs; i++)); do "$bin" --root "$root" "$@" status >/dev/null; done
		end=$(date +%s%N)
		awk -v ns=$((end - start)) -v n="$runs" 'BEGIN { m = ns / n / 1e6; printf "- - %.2f %.2f\n", m, m }'
	fi
}

tool="loop (mean judged)"
have_hyperfine && tool="hyperfine $(hyperfine --version | awk '{print $2}'), median judged"
echo "rdna1ctl status: wall ms per fresh process, min / median / mean"
echo "($tool; $runs runs; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-30s %-20s %-20s\n' fixture human json
over=0
for c in "${cases[@]}"; do
	name=${c%%:*}
	root=${c#*:}
	read -r hmin hmed hmean hjudged < <(stats "$root")
	read -r jmin jmed jmean jjudged < <(stats "$root" --json)
	printf '%-30s %-20s %-20s\n' "$name" "$hmin / $hmed / $hmean" "$jmin / $jmed / $jmean"
	for v in "$hjudged" "$jjudged"; do
		if awk -v v="$v" -v l="$limit_ms" 'BEGIN { exit !(v > l) }'; then over=1; fi
	done
done
if [ $over = 1 ]; then
	echo "over the ${limit_ms} ms budget" >&2
	exit 1
fi
