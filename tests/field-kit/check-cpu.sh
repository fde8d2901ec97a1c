#!/usr/bin/env bash
# check-cpu.sh RDNA1CTL: the shipped battery and in-process check under a real PyTorch without a
# GPU (Debian's CPU build, tests/sid-tools), and rdna1ctl running a real training script with
# them (RDNA1CTL: the static binary, whose tree's dist/field-kit it finds).
# The battery (dist/field-kit/battery.py):
# - a plain run refuses the CPU: exit 1, stage "device", "never runs on the CPU";
# - --self-test-on-cpu: every case (14 layers, float32 and bfloat16 autocast) right against
#   float64, and still no pass (exit 1, "on_gpu": false), its speed measured;
# - --wrong 1x1:weight:1.01 with --raise on the batch norms (MIOpen's error for a kernel that
#   does not compile): exactly those four cases fail, the summary names "Conv2d 1x1 ...: weight
#   gradient off by" and "BatchNorm2d ...: MIOpen kernel does not compile"; --wrong
#   5x5:output:nan: numbers that are not finite are caught, and the line is still JSON.
# The check in a program's own process (dist/field-kit/python/sitecustomize.py on PYTHONPATH;
# its parts and whole programs have their own tests: check-python.sh):
# - torch is not imported before the program imports it, and the sitecustomize it shadows
#   still runs; RDNA1_MIOPEN_BYPASS=1 turns torch.backends.cudnn.enabled off; python -I loads
#   nothing, so it leaves no record.
# rdna1ctl search as root for uid 65534 on a fixture root whose KFD directory
# tests/field-kit/small_net.py enters as a ROCm program would (Debian's torch is a CPU-only
# build, so each search ends after its baseline, incomplete: exit 1, never "no configuration
# passed"; the baseline's own verdict is checked too):
# - a network that runs on the CPU is no pass ("ran on the CPU"), whatever its exit code;
# - a wrong 1x1 weight gradient (RDNA1_CHECK_TEST_WRONG) fails the run and is named;
# - a Python without torch (an empty venv): incomplete, with doctor's fixes.
# rdna1ctl run --check, as root for uid 65534 (tests/field-kit/programs; faults below torch
# from tests/faults, the CPU standing for the GPU where RDNA1_CHECK_SELF_TEST_CPU=1): a network
# on the CPU is said to be there; python -I is not credited with a bypass; a wrong torch.conv2d
# called directly, a wrong mm in a transformer step and a compiled graph writing zeros are
# named; an op without a CPU reference is listed as unchecked; ResNet-18 through
# torch.jit.script runs; --check-exit wrong exits 3 on wrong numbers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rdna1ctl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
case $rdna1ctl in
"$top"/*) bin=/mnt/${rdna1ctl#"$top"/} ;;
*) echo "check-cpu: $rdna1ctl is not in the tree $top" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cp -a "$top/tests/fixtures/rdna1-enforce" "$tmp/root"
mkdir -p "$tmp/root/dev" "$tmp/root/sys/class/kfd/kfd/proc" "$tmp/records" "$tmp/shadow"
: >"$tmp/root/dev/kmsg"
chmod 777 "$tmp/root/sys/class/kfd/kfd/proc" "$tmp/records"
echo 'import sys; sys.stderr.write("the shadowed sitecustomize ran\n")' >"$tmp/shadow/sitecustomize.py"
# in_root CMD...: in the sid tools root, the tree at /mnt (read-only), $tmp at /media.
in_root() { "$top/tests/sid-tools/run.sh" --bind "$top:/mnt" --rw "$tmp:/media" -- "$@"; }
fails=0
ok() { echo "ok $1"; }
bad() {
	echo "FAIL $1"
	fails=$((fails + 1))
}
# json_check NAME EXPECTED-EXIT PYTHON-ASSERTION(on r) CMD...: the last stdout line is JSON.
json_check() {
	local name=$1 want=$2 expr=$3 rc=0 out
	shift 3
	out=$(in_root "$@" 2>"$tmp/err") || rc=$?
	out=$(printf '%s\n' "$out" | tail -n 1)
	if [ "$rc" -ne "$want" ]; then
		bad "$name: exit $rc, expected $want: $(head -c 2000 <<<"$out") $(tail -n 5 "$tmp/err")"
	elif ! python3 -c 'import json,sys; r=json.loads(sys.argv[1], parse_constant=lambda c: sys.exit("not JSON: " + c)); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$out" "$expr"; then
		bad "$name: $expr does not hold for $(head -c 3000 <<<"$out")"
	else
		ok "$name"
	fi
}
battery() { json_check "$@"; }
py=/mnt/dist/field-kit/battery.py
battery refuses-the-cpu 1 \
	'not r["ok"] and r["stage"] == "device" and "never runs on the CPU" in r["error"] and r["hip"] is None' \
	python3 $py
battery self-test-right-but-no-pass 1 \
	'not r["ok"] and not r["on_gpu"] and r["stage"] == "done" and len(r["cases"]) == 28 and all(c["ok"] for c in r["cases"]) and {c["dtype"] for c in r["cases"]} == {"float32", "bfloat16"} and all(c["directions"]["forward"]["ok"] and "weight gradient" in c["directions"] for c in r["cases"]) and r["speed"]["steps_per_s"] > 0 and r["speed"]["min"] <= r["speed"]["steps_per_s"] <= r["speed"]["max"]' \
	python3 $py --self-test-on-cpu
battery a-wrong-layer-and-a-kernel-that-does-not-compile-are-named 1 \
	'[c["name"] for c in r["cases"] if not c["ok"]] == ["Conv2d 1x1, 64 to 256", "Conv2d 1x1, 256 to 64", "BatchNorm2d training, 64 channels", "BatchNorm2d training, 256 channels"] and "Conv2d 1x1, 64 to 256 (float32): weight gradient off by" in r["summary"] and "BatchNorm2d training, 64 channels (float32): MIOpen kernel does not compile for this GPU" in r["summary"] and all(c["directions"]["forward"]["ok"] for c in r["cases"] if c["ok"] or "1x1" in c["name"])' \
	python3 $py --self-test-on-cpu --no-half --wrong 1x1:weight:1.01 \
	--raise 'BatchNorm:miopenStatusUnknownError: Code object build failed. Source: MIOpenBatchNormFwdTrainSpatial.cl'
battery numbers-that-are-not-finite-are-caught 1 \
	'[c["name"] for c in r["cases"] if not c["ok"]] == ["Conv2d 5x5"] and r["cases"][0]["directions"]["forward"]["max_rel"] == "inf"' \
	python3 $py --self-test-on-cpu --no-half --only 5x5 --wrong 5x5:output:nan

# The check in a program's own process (its own tests: check-python.sh).
net=/mnt/tests/field-kit/small_net.py
out=$(RDNA1_ENV="PYTHONPATH=/mnt/dist/field-kit/python:/media/shadow RDNA1_CHECK_DIR=/media/records" \
	in_root python3 $net --device cpu --no-torch-import 2>&1) || true
if grep -q "torch imported before the script: False" <<<"$out" && grep -q "the shadowed sitecustomize ran" <<<"$out"; then
	ok "torch-is-not-imported-early-and-the-shadowed-sitecustomize-runs"
else
	bad "torch-is-not-imported-early-and-the-shadowed-sitecustomize-runs: $out"
fi
rm -f "$tmp"/records/*
out=$(RDNA1_ENV="PYTHONPATH=/mnt/dist/field-kit/python RDNA1_CHECK_DIR=/media/records RDNA1_MIOPEN_BYPASS=1" \
	in_root python3 $net --device cpu --steps 1 2>&1) || true
if grep -q "cudnn enabled: False" <<<"$out" && grep -q '"event": "torch".*"bypass": true' "$tmp"/records/check-*.jsonl; then
	ok "the-bypass-turns-cudnn-off-and-says-so"
else
	bad "the-bypass-turns-cudnn-off-and-says-so: $out $(cat "$tmp"/records/* 2>/dev/null | head -c 500)"
fi
rm -f "$tmp"/records/*
out=$(RDNA1_ENV="PYTHONPATH=/mnt/dist/field-kit/python RDNA1_CHECK_DIR=/media/records RDNA1_MIOPEN_BYPASS=1" \
	in_root python3 -I $net --device cpu --steps 1 2>&1) || true
if grep -q "cudnn enabled: True" <<<"$out" && [ -z "$(ls "$tmp/records")" ]; then
	ok "an-isolated-interpreter-loads-nothing"
else
	bad "an-isolated-interpreter-loads-nothing: $out $(ls "$tmp/records")"
fi

# rdna1ctl search on a real training script.
search() { # NAME EXPECTED-EXIT ASSERTION ENV-WORDS ARGS...
	local name=$1 want=$2 expr=$3 env=$4
	shift 4
	RDNA1_ENV="SUDO_UID=65534 SUDO_GID=65534 $env" json_check "$name" "$want" "$expr" \
		"$bin" --root /media/root --json search "$@"
}
kfd="--kfd /media/root/sys/class/kfd/kfd/proc"
cpu_only='"CPU-only build" in r["environment"] and r["verdict"].startswith("incomplete") and r["winner"] is None and "bug report" not in r["verdict"]'
search a-network-on-the-cpu-is-no-pass 1 \
	"$cpu_only"' and r["arms"][0]["outcome"] == "fail" and "ran on the CPU" in r["arms"][0]["failure"] and r["arms"][0]["gpu_work"]["kfd_processes"] and r["arms"][0]["check"]["op_count"] >= 5' \
	"" -- python3 $net --device cpu $kfd
search a-wrong-layer-is-named 1 \
	"$cpu_only"' and "wrong numbers: Conv2d 1x1 [convolution_backward] (float32): weight gradient off by" in r["arms"][0]["failure"]' \
	"RDNA1_CHECK_SELF_TEST_CPU=1 RDNA1_CHECK_TEST_WRONG=1x1:weight:1.02" -- python3 $net --device cpu $kfd
in_root sh -c 'python3 -m venv --without-pip /media/notorch' >/dev/null
search a-python-without-torch-is-incomplete 1 \
	'r["environment"] and "cannot import torch" in r["environment"] and r["verdict"].startswith("incomplete") and r["ended"] == "environment cannot run the workload" and [a["outcome"] for a in r["arms"] if a["outcome"] != "skipped"][0] == "fail" and all(a["outcome"] in ("skipped", "not_run") for a in r["arms"][1:]) and any(f.startswith("python.torch") for f in r["fixes"]) and "bug report" not in r["verdict"]' \
	"" --python /media/notorch/bin/python3

printf 'RDNA1_MIOPEN=bypassed\n' >"$tmp/kept.env"
printf '# nothing kept\n' >"$tmp/plain.env"
chmod 644 "$tmp/kept.env" "$tmp/plain.env"
# run_check NAME WANT-ON-STDERR WANT-EXIT KEPT ENV-WORDS PYTHON-ARGS...: rdna1ctl run "${flags[@]}"
# (--check) as root for uid 65534, tests/faults on the path (RDNA1_FAULTS in ENV-WORDS arms it).
flags=(--check)
run_check() {
	local name=$1 want=$2 code=$3 kept=$4 env=$5 err rc=0
	shift 5
	err=$(RDNA1_ENV="SUDO_UID=65534 SUDO_GID=65534 PYTHONPATH=/mnt/tests/faults $env" \
		in_root "$bin" --root /media/root run "${flags[@]}" --env "/media/$kept" -- python3 "$@" 2>&1 >/dev/null) || rc=$?
	if [ "$rc" != "$code" ]; then
		bad "$name: exit $rc, want $code: $err"
	elif grep -qF -- "$want" <<<"$err"; then
		ok "$name"
	else
		bad "$name: $err"
	fi
}
run_check run-says-a-network-on-the-cpu-ran-there \
	"rdna1ctl run: ran on the CPU: your program's" 0 kept.env "" $net --device cpu --steps 1
run_check run-says-an-isolated-interpreter-was-not-bypassed \
	"rdna1ctl run: MIOpen bypass not in effect: no Python process of the command loaded" 0 kept.env \
	"RDNA1_CHECK_SELF_TEST_CPU=1" -I $net --device cpu --steps 1
# Issue 45, each failed first: whatever calls an op, the check sees it (the CPU standing for
# the GPU, a fault below torch as a faulty kernel's); an op without a reference is listed, never
# right; a compiled graph is checked at its first call; TorchScript works under the check; and
# --check-exit makes a wrong result the exit status.
progs=/mnt/tests/field-kit/programs
self="RDNA1_CHECK_SELF_TEST_CPU=1"
run_check run-names-a-wrong-direct-torch-conv2d \
	"rdna1ctl run: wrong numbers: Conv2d 3x3 [convolution] (float32): forward off by" 0 plain.env \
	"$self RDNA1_FAULTS=op=convolution,action=wrong,factor=1.01" $progs/direct_conv.py --device cpu
run_check run-names-a-wrong-mm-in-a-transformer-step \
	"rdna1ctl run: wrong numbers: mm " 0 plain.env \
	"$self RDNA1_FAULTS=op=mm,action=wrong,factor=1.01" $progs/transformer_step.py --device cpu
run_check run-lists-an-op-without-a-cpu-reference-as-unchecked \
	"unchecked: scale2 (no CPU reference" 0 plain.env "$self" $progs/no_reference.py --device cpu
run_check run-names-a-compiled-graph-writing-zeros \
	"rdna1ctl run: wrong numbers: compiled forward" 0 plain.env \
	"$self RDNA1_FAULTS=compiled=forward,action=zeros" $progs/transformer_step.py --device cpu \
	--compile --steps 5 --dim 32
run_check run-keeps-torch-jit-script-of-resnet18-working \
	"rdna1ctl run: your program's" 0 plain.env "$self" $progs/script_resnet.py --device cpu
flags=(--check-exit wrong)
run_check run-check-exit-makes-wrong-numbers-the-exit-status \
	"(--check-exit wrong): the command exited 0, the check did not pass" 3 plain.env \
	"$self RDNA1_FAULTS=op=mm,action=wrong,factor=1.01" $progs/transformer_step.py --device cpu
[ "$fails" -eq 0 ]
