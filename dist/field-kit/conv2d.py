#!/usr/bin/env python3
"""The workload the field kit and `rdna1ctl report` run: PyTorch Conv2d training on the GPU,
checked for the right answer.

Conv2d is the operation that dies with HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on RDNA1
(MIOpen's convolution kernels). A pass means the GPU computed the right numbers, not only that
nothing crashed: code built for another ISA can return finite, wrong results.

1. check: the first training step's forward and backward of a Conv2d (3 -> 64 channels, 3x3,
   16 x 3 x 224 x 224: the problem MIOpen solves in training) on the GPU in float32, compared
   with the same computation in float64 on the CPU (the CPU only verifies). The largest error
   of the output and of the input, weight and bias gradients, relative to the largest reference
   value of each, must stay within TOLERANCE.
2. train: STEPS more SGD steps on the GPU, timed (steps/s), every result finite.

It never falls back to the CPU: no GPU, or any result not on the GPU, is a failure. With
several GPUs visible it runs on the first RDNA1 one (gcnArchName gfx101*), and says which.
Prints one JSON line with what happened; exit 0 only if both parts passed.

--self-test-on-cpu runs the same code on the CPU (batch 2) to test this script without a GPU;
it never passes (exit 1, "ok": false). --corrupt scale|nan (with it) makes the results 1% off or not
finite, to show that the check catches wrong numbers.
"""
import argparse
import json
import math
import sys
import time

# float32 against float64: a correct convolution stays orders of magnitude below this
# (round-off of sums of up to 2*224*224 terms); code for the wrong ISA is off by O(1).
TOLERANCE = 1e-3
STEPS = 5
BATCH = 16

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--self-test-on-cpu", action="store_true",
                    help="run on the CPU to test this script; never a pass")
parser.add_argument("--corrupt", choices=["scale", "nan"],
                    help="with --self-test-on-cpu: results 1%% off (scale) or not finite (nan)")
args = parser.parse_args()
if args.self_test_on_cpu:
    BATCH = 2  # the CPU only tests this script's logic: small, to stay quick

result = {"ok": False, "stage": "import", "on_gpu": False, "tolerance": TOLERANCE}


def rel_error(got, ref):
    """Largest |got - ref| relative to the largest |ref| (float64, on the CPU); inf when the
    result is not finite."""
    got = got.detach().to("cpu", dtype=ref.dtype)
    if not bool(torch.isfinite(got).all()):
        return float("inf")
    scale = ref.abs().max().item() or 1.0
    return (got - ref).abs().max().item() / scale


def number(x):
    """x for JSON: a finite float, else its name ("inf", "nan"): JSON has no such numbers."""
    return float(f"{x:.3g}") if math.isfinite(x) else str(x)


def pick_gpu():
    """The first RDNA1 GPU (gfx101*) when several are visible, else cuda:0."""
    n = torch.cuda.device_count()
    for i in range(n):
        arch = getattr(torch.cuda.get_device_properties(i), "gcnArchName", "") or ""
        if arch.startswith("gfx101"):
            return i
    return 0


try:
    import torch

    result.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None))
    result["stage"] = "device"
    if args.self_test_on_cpu:
        dev = torch.device("cpu")
        result["device"] = "cpu (self-test: never a pass)"
    else:
        if not torch.cuda.is_available():  # ROCm builds of PyTorch use the cuda namespace
            raise RuntimeError("PyTorch sees no GPU (torch.cuda.is_available() is False); "
                               "this script never runs on the CPU")
        index = pick_gpu()
        dev = torch.device(f"cuda:{index}")
        result["device"] = f"cuda:{index} {torch.cuda.get_device_name(index)}"
        props = torch.cuda.get_device_properties(index)
        result["gcn_arch"] = getattr(props, "gcnArchName", None)
        result["gpus_visible"] = torch.cuda.device_count()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def on_device(*tensors):
        return all(t.device.type == dev.type for t in tensors)

    # 1. check: the first training step
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 64, kernel_size=3, padding=1).to(dev)
    x = torch.randn(BATCH, 3, 224, 224, device=dev, requires_grad=True)
    result["stage"] = "forward"
    y = conv(x)
    sync()
    result["stage"] = "backward"
    y.pow(2).mean().backward()
    sync()
    got = {"output": y, "grad_input": x.grad, "grad_weight": conv.weight.grad,
           "grad_bias": conv.bias.grad}
    if not on_device(*got.values()):
        raise RuntimeError("a result is not on the GPU: "
                           + ", ".join(f"{k} on {v.device}" for k, v in got.items()))
    if args.self_test_on_cpu and args.corrupt == "scale":
        got = {k: v.detach() * 1.01 for k, v in got.items()}
    elif args.self_test_on_cpu and args.corrupt == "nan":
        got = {k: v.detach() * float("nan") for k, v in got.items()}
    result["stage"] = "verify"
    rx = x.detach().to("cpu", torch.float64).requires_grad_()
    rw = conv.weight.detach().to("cpu", torch.float64).requires_grad_()
    rb = conv.bias.detach().to("cpu", torch.float64).requires_grad_()
    ry = torch.nn.functional.conv2d(rx, rw, rb, padding=1)
    ry.pow(2).mean().backward()
    ref = {"output": ry.detach(), "grad_input": rx.grad, "grad_weight": rw.grad,
           "grad_bias": rb.grad}
    errors = {k: rel_error(got[k], ref[k]) for k in ref}
    result["max_rel_error"] = {k: number(v) for k, v in errors.items()}
    result["correct"] = all(e <= TOLERANCE for e in errors.values())
    if not result["correct"]:
        worst = max(errors, key=errors.get)
        raise RuntimeError(f"wrong results: {worst} is off by {errors[worst]:.3g} of its "
                           f"largest value (tolerance {TOLERANCE})")

    # 2. train: the same problem, more steps
    result["stage"] = "train"
    opt = torch.optim.SGD(conv.parameters(), lr=0.01)
    xb = x.detach()
    sync()
    t0 = time.monotonic()
    for _ in range(STEPS):
        opt.zero_grad()
        loss = conv(xb).pow(2).mean()
        loss.backward()
        opt.step()
    sync()
    seconds = time.monotonic() - t0
    finite = bool(torch.isfinite(loss).item()
                  and all(torch.isfinite(p).all() and torch.isfinite(p.grad).all()
                          for p in conv.parameters()))
    if not on_device(loss, *conv.parameters()):
        raise RuntimeError("a training result is not on the GPU")
    result.update(steps=STEPS, seconds=round(seconds, 3),
                  steps_per_s=round(STEPS / seconds, 2) if seconds > 0 else None, finite=finite)
    if not finite:
        raise RuntimeError("training produced non-finite values")
    result["stage"] = "done"
    result["on_gpu"] = dev.type == "cuda"
    result["ok"] = result["on_gpu"]
except Exception as e:  # report every failure, HIP/MIOpen errors included
    result["error"] = f"{type(e).__name__}: {e}"
print(json.dumps(result, allow_nan=False))
sys.exit(0 if result["ok"] else 1)
