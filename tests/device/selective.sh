#!/usr/bin/env bash
# selective.sh OUT [RDNA1CTL]: MIOpen (here cuDNN) bypassed for some layer kinds only, on a real GPU, for
# docs/MEASUREMENTS.md: which kernels a routed convolution's backward runs, which backend the
# check saw per layer kind, and ResNet-18's training speed side by side in one run (TF32 off, as
# RDNA1 computes): nothing routed, batch norm routed, 1x1 convolutions routed, everything
# bypassed. Not part of make test: CI has no GPU.
set -uo pipefail
out=$1
rdna1ctl=${2:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
fk=$top/dist/field-kit
net=$top/tests/device/resnet_train.py
rec=$(mktemp -d)
exec 2> >(tee -a "$out/selective.txt" >&2)
nvidia-smi -L >&2
if [ -z "${SELECTIVE_RUN_ONLY:-}" ]; then
echo "== a 1x1 convolution's kernels, forward and backward" >&2
for m in cudnn forward-only; do
	python3 "$top/tests/device/routing.py" $m >&2
done
mkdir -p "$rec/route"
RDNA1_MIOPEN_BYPASS_KINDS="Conv2d 1x1" RDNA1_CHECK_DIR=$rec/route PYTHONPATH=$fk/python \
	python3 "$top/tests/device/routing.py" as-loaded >&2
echo "== resnet-18 fp32, TF32 off: 2 rounds of each, 3 x 20 steps" >&2
for round in 1 2; do
	for v in none bn conv1x1 all; do
		d=$rec/resnet-$v-$round
		mkdir -p "$d"
		case $v in
		none) env=(PYTHONPATH="$fk/python" RDNA1_CHECK_DIR="$d") ;;
		bn) env=(PYTHONPATH="$fk/python" RDNA1_CHECK_DIR="$d" RDNA1_MIOPEN_BYPASS_KINDS="BatchNorm") ;;
		conv1x1) env=(PYTHONPATH="$fk/python" RDNA1_CHECK_DIR="$d" RDNA1_MIOPEN_BYPASS_KINDS="Conv2d 1x1") ;;
		all) env=(PYTHONPATH="$fk/python" RDNA1_CHECK_DIR="$d" RDNA1_MIOPEN_BYPASS=1) ;;
		esac
		env NVIDIA_TF32_OVERRIDE=0 "${env[@]}" python3 "$net" --steps 20 --repeats 3 | sed "s/^/resnet $v $round: /" >&2
		python3 - "$d" <<'PY' | sed "s/^/backends $v $round: /" >&2
import collections, glob, json, sys
seen = collections.Counter()
kinds = {}
for f in glob.glob(sys.argv[1] + "/check-*.jsonl"):
    for line in open(f):
        r = json.loads(line)
        if r.get("event") == "op" and r.get("family") in ("convolution", "batch/instance norm"):
            kind = r["kind"].split(" ")[0] + (" 1x1" if " 1x1" in r["kind"] else "")
            seen[(kind, r.get("backend"))] += 1
print(json.dumps({f"{k} on {b}": n for (k, b), n in sorted(seen.items())}))
PY
	done
done
fi
if [ -n "$rdna1ctl" ]; then
	echo "== rdna1ctl run --check with a kept file that bypasses MIOpen for batch norm only" >&2
	printf "RDNA1_MIOPEN_BYPASS_FOR='BatchNorm2d training'\n" >"$rec/kept.env"
	chmod 755 "$rec"
	chmod 644 "$rec/kept.env"
	NVIDIA_TF32_OVERRIDE=0 "$rdna1ctl" run --user 65534 --check --env "$rec/kept.env" -- python3 "$net" --steps 3 --repeats 1 >&2 ||
		echo "rdna1ctl run: exit $?" >&2
	echo "== the same, with a batch-norm result made 1% wrong on cuDNN (as a faulty MIOpen's): routed around" >&2
	NVIDIA_TF32_OVERRIDE=0 RDNA1_CHECK_TEST_WRONG=BatchNorm:output:0.99 "$rdna1ctl" run --user 65534 --check --env "$rec/kept.env" -- python3 "$net" --steps 3 --repeats 1 >&2 ||
		echo "rdna1ctl run: exit $?" >&2
	printf 'A=1\n' >"$rec/plain.env"
	chmod 644 "$rec/plain.env"
	NVIDIA_TF32_OVERRIDE=0 RDNA1_CHECK_TEST_WRONG=BatchNorm:output:0.99 "$rdna1ctl" run --user 65534 --check --env "$rec/plain.env" -- python3 "$net" --steps 3 --repeats 1 >&2 ||
		echo "rdna1ctl run (not routed): exit $?" >&2
fi
