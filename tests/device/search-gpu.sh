#!/usr/bin/env bash
# search-gpu.sh OUT RDNA1CTL [CASES]: the whole search on a real GPU (the device machine: an
# NVIDIA H100 with PyTorch's CUDA build), for docs/MEASUREMENTS.md. RDNA1CTL must be built with
# the test-only feature cuda-stands-for-rocm (controller/src/runner/stand_in.rs: the CUDA build
# stands for ROCm, cuDNN for MIOpen, the check's records for KFD's). Not part of make test: CI
# has no GPU. Faults are made below torch by tests/faults, each gated on an environment switch
# as a solver is; the search must find the switch and keep it, and `rdna1ctl run --check
# --check-exit wrong` with what it kept must then pass. CASES (default "bn compiled gemm"):
#  bn        ResNet-18 whose batch norm raises while cuDNN is on (MIOpen's BatchNorm training on
#            gfx101x): the kept cure must be the batch-norm routing; its cost is measured
#            against plain cuDNN (no fault) side by side;
#  compiled  a GPT-style fine-tune under torch.compile whose compiled forward writes zeros
#            unless AMDGCN_USE_BUFFER_OPS=0 (unsloth #11614);
#  gemm      the same fine-tune, eager, with mm 1% wrong unless TORCH_BLAS_PREFER_HIPBLASLT=0.
# The searches run as an ordinary user made here (as an owner would run them, without sudo:
# the module's arms are then skipped, as they must be where it is not loaded).
set -uo pipefail
out=$1
ctl=$2
cases=${3:-bn compiled gemm}
top=$(cd "$(dirname "$0")/../.." && pwd)
exec 2> >(tee -a "$out/search-gpu.txt" >&2)
# A world-readable copy of what the runs read, and a user with a home of its own.
work=$(mktemp -d)
chmod 755 "$work"
cp -r "$top/tests/faults" "$top/tests/field-kit/programs" "$top/tests/device" "$work/"
mkdir -p "$work/share" && cp -r "$top/dist/field-kit/." "$work/share/"
cp "$ctl" "$work/rdna1ctl"
chmod -R a+rX "$work"
mkdir -p "$work/home"
if id owner >/dev/null 2>&1 || useradd -M -d "$work/home" owner >&2; then
	uid=$(id -u owner) gid=$(id -g owner)
else
	uid=65534 gid=65534
fi
chown "$uid:$gid" "$work/home"
as_owner() { setpriv --reuid="$uid" --regid="$gid" --clear-groups env HOME="$work/home" USER=owner "$@"; }
py=$(command -v python3)
# search NAME FAULTS -- ARGS: a search under RDNA1_FAULTS, kept to NAME.env, then the kept
# configuration re-run through `rdna1ctl run --check --check-exit wrong`.
search() {
	local name=$1 faults=$2
	shift 3
	echo "== $name: RDNA1_FAULTS=$faults" >&2
	local t0=$SECONDS
	as_owner env RDNA1CTL_SHARE="$work/share" PYTHONPATH="$work/faults" RDNA1_FAULTS="$faults" \
		NVIDIA_TF32_OVERRIDE=0 "$work/rdna1ctl" search --max-runs 16 --timeout 240 \
		--keep "$work/home/$name.env" -- "$py" "$@" >"$out/search-$name.txt" 2>&1
	echo "$name: search exit $? in $((SECONDS - t0)) s" >&2
	tail -n 40 "$out/search-$name.txt" >&2
	cat "$work/home/$name.env" >&2 2>/dev/null || echo "$name: nothing kept" >&2
	cp "$work/home/$name.env" "$out/kept-$name.env" 2>/dev/null
	as_owner env RDNA1CTL_SHARE="$work/share" PYTHONPATH="$work/faults" RDNA1_FAULTS="$faults" \
		NVIDIA_TF32_OVERRIDE=0 "$work/rdna1ctl" run --env "$work/home/$name.env" --check \
		--check-exit wrong -- "$py" "$@" >&2
	echo "$name: re-run through rdna1ctl run --check --check-exit wrong: exit $?" >&2
}
for c in $cases; do
	case $c in
	bn)
		search bn "op=cudnn_batch_norm,action=raise,message=miopenStatusUnknownError: Code object build failed,cudnn=1" \
			-- "$work/device/resnet_train.py" --steps 3 --warmup 1 --repeats 1 --batch 16
		echo "== bn: the kept routing's cost, no fault, side by side (3 rounds)" >&2
		for r in 1 2 3; do
			as_owner env NVIDIA_TF32_OVERRIDE=0 "$py" "$work/device/resnet_train.py" | sed "s/^/plain $r: /" >&2
			as_owner env RDNA1CTL_SHARE="$work/share" NVIDIA_TF32_OVERRIDE=0 "$work/rdna1ctl" run \
				--env "$work/home/bn.env" -- "$py" "$work/device/resnet_train.py" 2>&1 | sed "s/^/kept $r: /" >&2
		done
		;;
	compiled)
		search compiled "compiled=forward,action=zeros,unless=AMDGCN_USE_BUFFER_OPS=0" \
			-- "$work/programs/transformer_step.py" --compile --steps 6 --dim 256
		;;
	gemm)
		search gemm "op=mm,action=wrong,factor=1.01,unless=TORCH_BLAS_PREFER_HIPBLASLT=0" \
			-- "$work/programs/transformer_step.py" --steps 6 --dim 256
		;;
	esac
done
echo "== done" >&2
