#!/usr/bin/env bash
# prove.sh OUT [RDNA1CTL]: the layer battery and the in-process check on a real GPU, for
# docs/MEASUREMENTS.md (the device machine: an NVIDIA H100 with PyTorch's CUDA build, whose
# torch.cuda API ROCm builds share). Not part of make test: CI has no GPU. Writes its log and
# JSON results to OUT. Each step is its own process, as an owner's would be.
set -uo pipefail
out=$1
rdna1ctl=${2:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
fk=$top/dist/field-kit
net=$top/tests/device/resnet_train.py
rec=$(mktemp -d)
chmod 755 "$rec"
step() { echo "== $*" >&2; }
exec 2> >(tee -a "$out/log.txt" >&2)
nvidia-smi -L >&2
python3 -c 'import torch, torchvision, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), "cores", __import__("os").cpu_count())' >&2

step "battery: float32 with TF32 off (as RDNA1 computes it), float16 autocast, channels_last"
/usr/bin/time -f "battery-fp32: %e s wall, %U s user" python3 -c "
import runpy, sys, torch
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
sys.argv = ['battery.py', '--channels-last']
runpy.run_path('$fk/battery.py', run_name='__main__')" >"$out/battery-fp32.json"
step "battery: PyTorch's defaults (cuDNN's TF32 on)"
/usr/bin/time -f "battery-tf32: %e s wall" python3 "$fk/battery.py" >"$out/battery-tf32.json"
step "battery: MIOpen/cuDNN bypassed through rdna1ctl's sitecustomize"
mkdir -p "$rec/battery-bypass"
RDNA1_MIOPEN_BYPASS=1 RDNA1_CHECK_DIR=$rec/battery-bypass PYTHONPATH=$fk/python \
	/usr/bin/time -f "battery-bypass: %e s wall" python3 "$fk/battery.py" >"$out/battery-bypass.json"
step "battery: a 1x1 weight gradient made 1% wrong, float32 with TF32 off"
python3 -c "
import runpy, sys, torch
torch.backends.cudnn.allow_tf32 = False
sys.argv = ['battery.py', '--no-half', '--wrong', '1x1:weight:1.01']
runpy.run_path('$fk/battery.py', run_name='__main__')" | tail -n 1 >"$out/battery-wrong.json"
# What the check costs a step: tests/device/check-gpu.sh (check_cost.py), side by side.

# ResNet-18, side by side: no check, the check recording layers only, the numerics check.
for round in 1; do
	for mode in none observe numerics; do
		d=$rec/resnet-$mode-$round
		mkdir -p "$d"
		case $mode in
		none) env=() ;;
		observe) env=(PYTHONPATH="$fk/python" RDNA1_CHECK_DIR="$d") ;;
		numerics) env=(PYTHONPATH="$fk/python" RDNA1_CHECK_DIR="$d" RDNA1_CHECK=numerics) ;;
		esac
		step "resnet-18 fp32 ($mode, round $round)"
		env "${env[@]}" python3 "$net" --steps 20 --repeats 3 | sed "s/^/resnet fp32 $mode $round: /" >&2
	done
done
for amp in amp; do
	d=$rec/resnet-numerics-$amp
	mkdir -p "$d"
	step "resnet-18 float16 autocast, channels_last, numerics"
	PYTHONPATH=$fk/python RDNA1_CHECK_DIR=$d RDNA1_CHECK=numerics python3 "$net" --amp --channels-last --steps 20 | sed "s/^/resnet $amp numerics: /" >&2
done
step "resnet-18 float32 with TF32 off (NVIDIA_TF32_OVERRIDE=0: RDNA1 has no TF32), numerics"
mkdir -p "$rec/resnet-numerics-fp32"
NVIDIA_TF32_OVERRIDE=0 PYTHONPATH=$fk/python RDNA1_CHECK_DIR=$rec/resnet-numerics-fp32 RDNA1_CHECK=numerics \
	python3 "$net" --steps 2 --repeats 1 >&2
step "resnet-18: a 1x1 weight gradient made 1% wrong (RDNA1_CHECK_TEST_WRONG), TF32 off"
mkdir -p "$rec/resnet-wrong"
NVIDIA_TF32_OVERRIDE=0 PYTHONPATH=$fk/python RDNA1_CHECK_DIR=$rec/resnet-wrong RDNA1_CHECK=numerics RDNA1_CHECK_TEST_WRONG=1x1:weight:1.01 \
	python3 "$net" --steps 2 --repeats 1 >&2
step "bypass: in effect; python -I; code that turns cuDNN back on"
for v in plain isolated back-on; do
	mkdir -p "$rec/bypass-$v"
	case $v in
	plain) args=("$net") ;;
	isolated) args=(-I "$net") ;;
	back-on) args=("$net" --cudnn-back-on) ;;
	esac
	RDNA1_MIOPEN_BYPASS=1 PYTHONPATH=$fk/python RDNA1_CHECK_DIR=$rec/bypass-$v \
		python3 "${args[@]}" --steps 20 --repeats 3 | sed "s/^/bypass $v: /" >&2
done
if [ -n "$rdna1ctl" ]; then
	step "rdna1ctl run --check with a kept file that bypasses MIOpen"
	printf 'RDNA1_MIOPEN=bypassed\n' >"$rec/kept.env"
	chmod 644 "$rec/kept.env"
	"$rdna1ctl" run --user 65534 --check --env "$rec/kept.env" -- python3 "$net" --steps 3 --repeats 1 >&2 ||
		echo "rdna1ctl run: exit $?" >&2
	"$rdna1ctl" run --user 65534 --check --env "$rec/kept.env" -- python3 -I "$net" --steps 3 --repeats 1 >&2 ||
		echo "rdna1ctl run -I: exit $?" >&2
fi
python3 "$top/tests/device/summarize.py" "$rec"/* >"$out/check-summary.json"
tar -C "$rec" -czf "$out/records.tar.gz" .
step done
