#!/usr/bin/env bash
# check-gpu.sh OUT: the in-process check on a real GPU (the device machine: an NVIDIA H100 with
# PyTorch's CUDA build, whose torch.cuda API ROCm builds share; cuDNN stands for MIOpen), for
# docs/MEASUREMENTS.md. Not part of make test: CI has no GPU. Faults are made below torch by
# tests/faults (a dispatch mode under the check's, as a faulty kernel or solver would make
# them; a compiled graph's outputs zeroed as Triton's buffer ops do on gfx101x). Each case is
# a process of its own; the check's records are summed up by summarize.py into OUT.
#  1. faults named: a wrong direct torch.conv2d (only while cuDNN is on, as a solver), a wrong
#     GEMM in a transformer step, a batch norm that raises, a compiled forward graph writing
#     zeros (unless AMDGCN_USE_BUFFER_OPS=0, the cure unsloth #11614 names);
#  2. nothing breaks: behaviours.py and PyTorch's OpInfo/ModuleInfo samples with and without
#     the check (on the CPU: the same programs as make test's; here their CUDA kernels);
#  3. cost: check_cost.py's GPT-style and ResNet-18 steps, a plain process and one with the
#     check alternated, three rounds each.
# Needs torchvision and expecttest (carried as wheels: the device README says how).
# usage: check-gpu.sh OUT [SECTIONS]   (SECTIONS: digits of the parts to run, default 123, so
# that one device call stays inside its 10 minutes)
set -uo pipefail
out=$1
sections=${2:-123}
top=$(cd "$(dirname "$0")/../.." && pwd)
progs=$top/tests/field-kit/programs
rec=$(mktemp -d)
chmod 755 "$rec"
exec 2> >(tee -a "$out/check-gpu.txt" >&2)
nvidia-smi -L >&2
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' >&2
# checked NAME ENV... -- ARGS: a process with the check (numerics), records in $rec/NAME.
checked() {
	local name=$1
	shift
	mkdir -p "$rec/$name"
	env PYTHONPATH="$top/dist/field-kit/python:$top/tests/faults${PYTHONPATH:+:$PYTHONPATH}" RDNA1_CHECK_DIR="$rec/$name" \
		RDNA1_CHECK=numerics NVIDIA_TF32_OVERRIDE=0 "$@"
}
summary() { python3 "$top/tests/device/summarize.py" "$rec"/*/ >"$out/check-gpu-summary.json"; }
if [[ $sections == *1* ]]; then
echo "== 1. faults named" >&2
checked direct-conv RDNA1_FAULTS=op=convolution,action=wrong,factor=1.01,cudnn=1 \
	python3 "$progs/direct_conv.py" >&2
checked direct-conv-bypassed RDNA1_MIOPEN_BYPASS=1 RDNA1_FAULTS=op=convolution,action=wrong,factor=1.01,cudnn=1 \
	python3 "$progs/direct_conv.py" >&2
checked gpt-mm RDNA1_FAULTS=op=mm,action=wrong,factor=1.01 python3 "$progs/transformer_step.py" --dim 256 >&2
checked bn-raises "RDNA1_FAULTS=op=cudnn_batch_norm,action=raise,message=miopenStatusUnknownError: Code object build failed,cudnn=1" \
	python3 "$progs/direct_conv.py" >&2 || echo "bn-raises: exit $? (expected)" >&2
checked compiled-zeros RDNA1_FAULTS=compiled=forward,action=zeros,unless=AMDGCN_USE_BUFFER_OPS=0 \
	python3 "$progs/transformer_step.py" --compile --steps 6 --dim 256 >&2
checked compiled-cured AMDGCN_USE_BUFFER_OPS=0 RDNA1_FAULTS=compiled=forward,action=zeros,unless=AMDGCN_USE_BUFFER_OPS=0 \
	python3 "$progs/transformer_step.py" --compile --steps 6 --dim 256 >&2
summary
fi
if [[ $sections == *2* ]]; then
echo "== 2. nothing breaks" >&2
for p in behaviours samples; do
	env PYTHONPATH="$top/tests/faults${PYTHONPATH:+:$PYTHONPATH}" CUBLAS_WORKSPACE_CONFIG=:4096:8 python3 "$progs/$p.py" cuda >"$rec/$p-plain.json" 2>>"$out/check-gpu.txt"
	checked "$p" CUBLAS_WORKSPACE_CONFIG=:4096:8 python3 "$progs/$p.py" cuda >"$rec/$p-check.json" 2>>"$out/check-gpu.txt"
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); d=[k for k in a if a[k]!=b.get(k)]; print(sys.argv[3], len(a), "cases,", len(d), "differ:", d[:5])' \
		"$rec/$p-plain.json" "$rec/$p-check.json" "$p" >&2
done
fi
if [[ $sections == *3* ]]; then
echo "== 3. cost, side by side" >&2
for round in 1 2 3; do
	for m in gpt resnet; do
		python3 "$top/tests/device/check_cost.py" $m 12 | sed "s/^/plain $round: /" >&2
		checked "cost-$m-$round" python3 "$top/tests/device/check_cost.py" $m 12 | sed "s/^/check $round: /" >&2
	done
done
fi
summary
tar -C "$rec" -czf "$out/check-gpu-records.tar.gz" .
echo "== done" >&2
