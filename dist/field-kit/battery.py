#!/usr/bin/env python3
"""The workload `rdna1ctl report` and `search` run: the layers a training network is made of,
each on the GPU forward and backward, checked against float64 on the CPU.

MIOpen picks a kernel (a solver) per shape, direction, data type and layout, and the known
RDNA1 failures sit in different layers: BatchNorm training kernels that do not compile for
gfx101x, wrong 1x1 weight gradients, weight-gradient solvers that fault at some sizes, half
precision. So a pass here means each kind of layer below computed the right numbers on the
GPU, not only that one convolution did.

1. cases: each layer below, forward and backward (input, weight and bias gradients), in
   float32, then in float16 under autocast as a result of its own (an owner may train in
   float32 only); --channels-last adds each in channels_last. rdna1_check.py (beside this file,
   in python/) compares each with float64 on the CPU from the same inputs and records the
   backend that ran it (MIOpen, or PyTorch's own kernels) on which device.
2. speed: a small network trained with SGD, timed in REPEATS repeats of enough steps for
   REPEAT_S seconds each: the median steps/s and the spread.

It never runs on the CPU: no GPU, or any case not on the GPU, is a failure. With several GPUs
visible it runs on the first RDNA1 one (gcnArchName gfx101*). Prints one JSON line; exit 0
only if every float32 case passed on the GPU and the speed was measured.

--self-test-on-cpu runs the same code on the CPU (smaller batches, bfloat16 for the autocast
cases) to test this script without a GPU; it never passes. --wrong KIND:output|weight:FACTOR
makes the results of the layers whose kind contains KIND wrong by FACTOR, as a faulty backend
would, to show that the check catches them and names the layer; --raise NAME:TEXT raises TEXT
in the cases whose name contains NAME, as MIOpen's errors reach PyTorch (a kernel that does not
compile), to show the summary's words for it.
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import rdna1_check  # noqa: E402

# Seconds one timed repeat lasts at least, and how many repeats make the figure.
REPEAT_S = 0.25
REPEATS = 5

# (name, kind of layer, module, input shape, input needs a gradient). Shapes are those of a
# ResNet at 112-224 px (channels 64 to 256, 56 to 14 px), batch 8: small enough for a float64
# reference on the CPU in seconds, the shapes MIOpen chooses solvers for in real training.
CASES = [
    ("Conv2d 3x3, 64 channels", "conv", lambda nn: nn.Conv2d(64, 64, 3, padding=1), (8, 64, 56, 56), True),
    ("Conv2d 3x3, 128 channels", "conv", lambda nn: nn.Conv2d(128, 128, 3, padding=1), (8, 128, 28, 28), True),
    ("Conv2d 3x3, 256 channels", "conv", lambda nn: nn.Conv2d(256, 256, 3, padding=1), (8, 256, 14, 14), True),
    ("Conv2d 1x1, 64 to 256", "conv", lambda nn: nn.Conv2d(64, 256, 1), (8, 64, 28, 28), True),
    ("Conv2d 1x1, 256 to 64", "conv", lambda nn: nn.Conv2d(256, 64, 1, bias=False), (8, 256, 28, 28), True),
    ("Conv2d 3x3 stride 2", "conv", lambda nn: nn.Conv2d(64, 128, 3, stride=2, padding=1), (8, 64, 56, 56), True),
    ("Conv2d 7x7 stride 2 (stem)", "conv", lambda nn: nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), (8, 3, 112, 112), False),
    ("Conv2d 5x5", "conv", lambda nn: nn.Conv2d(32, 64, 5, padding=2), (8, 32, 28, 28), True),
    ("Conv2d 3x3 grouped (8 groups)", "conv", lambda nn: nn.Conv2d(128, 128, 3, padding=1, groups=8), (8, 128, 28, 28), True),
    ("Conv2d 3x3 depthwise", "conv", lambda nn: nn.Conv2d(128, 128, 3, padding=1, groups=128), (8, 128, 28, 28), True),
    ("ConvTranspose2d 4x4 stride 2", "conv", lambda nn: nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1), (8, 64, 14, 14), True),
    ("Conv2d 3x3, batch 64", "conv", lambda nn: nn.Conv2d(64, 64, 3, padding=1), (64, 64, 28, 28), True),
    ("BatchNorm2d training, 64 channels", "batchnorm", lambda nn: nn.BatchNorm2d(64), (8, 64, 56, 56), True),
    ("BatchNorm2d training, 256 channels", "batchnorm", lambda nn: nn.BatchNorm2d(256), (8, 256, 14, 14), True),
]

# What a case's error says, in the owner's words (the first that matches).
KNOWN = [
    (("Code object build failed", "build failed", "Failed to build", "compil"),
     "MIOpen kernel does not compile for {arch}"),
    (("invalid device function", "hipErrorInvalidDeviceFunction", "no kernel image"),
     "no code for {arch} in this build (wrong ISA: see doctor's HSA_OVERRIDE_GFX_VERSION and "
     "code-object checks)"),
    (("out of memory",), "out of GPU memory"),
    (("miopenStatus",), "MIOpen failed ({error})"),
]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--self-test-on-cpu", action="store_true",
                   help="run on the CPU to test this script; never a pass")
    p.add_argument("--wrong", metavar="KIND:output|weight:FACTOR",
                   help="make matching layers' results wrong (tests the check)")
    p.add_argument("--channels-last", action="store_true",
                   help="also run every case in channels_last")
    p.add_argument("--no-half", action="store_true",
                   help="float32 only (no float16 autocast cases)")
    p.add_argument("--raise", dest="raise_", metavar="NAME:TEXT",
                   help="raise TEXT in matching cases (tests the summary)")
    p.add_argument("--only", metavar="TEXT",
                   help="only the cases whose name contains TEXT")
    p.add_argument("--budget", type=float, default=420.0, metavar="S",
                   help="start no case after S seconds (default 420)")
    return p.parse_args()


def number(x):
    return float(f"{x:.3g}") if isinstance(x, (int, float)) and math.isfinite(x) else str(x)


def pick_gpu(torch):
    for i in range(torch.cuda.device_count()):
        arch = getattr(torch.cuda.get_device_properties(i), "gcnArchName", "") or ""
        if arch.startswith("gfx101"):
            return i
    return 0


def known_reason(error, arch):
    for needles, words in KNOWN:
        if any(n.lower() in error.lower() for n in needles):
            return words.format(arch=arch or "this GPU", error=error.splitlines()[0][:200])
    return None


LAYER_FAMILIES = ("convolution", "batch/instance norm")
# The results a layer's case is judged by; a batch norm's saved statistics and running
# averages are judged too where they come.
DIRECTIONS = ("forward", "input gradient", "weight gradient", "bias gradient")


def judge_case(records, want_input_grad, has_bias, dev_type):
    """A case's verdict from the check's records of its layer: its forward op (convolution,
    cudnn_batch_norm, ...) and its backward op (convolution_backward, ...), each with its
    results against float64."""
    ops = {r["id"]: dict(r, results=[], errors=[], unchecked=None)
           for r in records if r.get("event") == "op" and r.get("family") in LAYER_FAMILIES}
    for r in records:
        op = ops.get(r.get("id"))
        if op is None:
            continue
        if r["event"] == "result":
            op["results"].append(r)
        elif r["event"] == "check_error":
            op["errors"].append(r["error"])
        elif r["event"] == "unchecked":
            op["unchecked"] = r["why"]
    out = {"directions": {}, "backend": None, "device": None, "problems": []}
    if not ops:
        out["problems"].append("the check saw no call of this layer")
        return out
    forward = next((o for o in ops.values() if "backward" not in o["op"]),
                   next(iter(ops.values())))
    out["backend"] = forward.get("backend_family")
    out["backend_detail"] = forward.get("backend")
    out["device"] = f"{forward['device']} {forward['device_name']}".strip()
    for op in ops.values():
        for r in op["results"]:
            d = r["direction"]
            out["directions"][d] = {
                "rms_rel": r["rms_rel"], "max_rel": r["max_rel"], "ok": r["ok"],
                "tolerance_rms": r["tolerance_rms"], "tolerance_max": r["tolerance_max"],
                "math": r["math"], "op": op["op"], **({"note": r["note"]} if "note" in r else {})}
            if not r["ok"]:
                out["problems"].append(
                    f"{d} off by {r['max_rel']} of its largest value (RMS {r['rms_rel']}; "
                    f"allowed {r['tolerance_max']}, RMS {r['tolerance_rms']})")
        if op["unchecked"]:
            out["problems"].append(f"{op['op']} not checked: {op['unchecked']}")
        out["problems"].extend(f"the check failed: {e}" for e in op["errors"])
    want = ["forward", "weight gradient"] + (["input gradient"] if want_input_grad else [])
    if has_bias:
        want.append("bias gradient")
    for d in want:
        if d not in out["directions"]:
            out["problems"].append(f"{d} not checked")
    if forward["device"].split(":")[0] != dev_type:
        out["problems"].append(f"ran on {forward['device']}, not the GPU")
    return out


def main():
    args = parse_args()
    t_start = time.monotonic()
    result = {"ok": False, "stage": "import", "on_gpu": False, "cases": [],
              "tolerances": {k: {"rms_rel": v[0], "max_rel": v[1]}
                             for k, v in rdna1_check.TOLERANCES.items()},
              "tolerance_rule": "at most 10 times the CPU's own error in the same types, "
                                "at least these floors"}
    try:
        inject = rdna1_check.parse_inject(args.wrong)
        check = rdna1_check.active()
        if check is None:
            check = rdna1_check.install(rdna1_check.config.Settings(
                directory=os.environ.get("RDNA1_CHECK_DIR") or None))
        # Loaded by rdna1ctl (sitecustomize) or here: numerics on, every case's ops looked
        # at (a case is one call of its layer).
        check.ask(numerics=True, self_test_cpu=args.self_test_on_cpu, inject=inject,
                  steps_without_new=10 ** 9, max_steps=10 ** 9, calls_without_new=10 ** 9,
                  budget_s=10 ** 9)
        import torch

        check.on_torch(torch)
        result.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None),
                      cuda=getattr(torch.version, "cuda", None))
        result["stage"] = "device"
        if args.self_test_on_cpu:
            dev = torch.device("cpu")
            result["device"] = "cpu (self-test: never a pass)"
            arch = None
        else:
            if not torch.cuda.is_available():  # ROCm builds use the cuda namespace
                raise RuntimeError("PyTorch sees no GPU (torch.cuda.is_available() is False); "
                                   "this script never runs on the CPU")
            index = pick_gpu(torch)
            dev = torch.device(f"cuda:{index}")
            torch.cuda.set_device(index)
            props = torch.cuda.get_device_properties(index)
            arch = getattr(props, "gcnArchName", None)
            result.update(device=f"cuda:{index} {props.name}", gcn_arch=arch,
                          gpus_visible=torch.cuda.device_count())
        result["cudnn_enabled"] = bool(torch.backends.cudnn.enabled)
        result["tf32"] = bool(getattr(torch.version, "cuda", None)
                              and torch.backends.cudnn.allow_tf32)
        result["stage"] = "cases"
        run_cases(torch, args, check, dev, arch, result, t_start)
        result["stage"] = "speed"
        result["speed"] = speed(torch, dev, args)
        result["stage"] = "done"
        result["on_gpu"] = dev.type == "cuda"
        fp32 = [c for c in result["cases"] if c["dtype"] == "float32"]
        result["float32_ok"] = bool(fp32) and all(c["ok"] for c in fp32)
        half = [c for c in result["cases"] if c["dtype"] != "float32"]
        result["half_ok"] = all(c["ok"] for c in half) if half else None
        result["ok"] = (result["on_gpu"] and result["float32_ok"]
                        and result["speed"]["steps_per_s"] > 0)
    except Exception as e:  # report every failure, HIP/MIOpen errors included
        result["error"] = f"{type(e).__name__}: {e}"[:4000]
    result["summary"] = summary(result)
    result["seconds"] = round(time.monotonic() - t_start, 1)
    print(json.dumps(result, allow_nan=False))
    return 0 if result["ok"] else 1


def run_cases(torch, args, checker, dev, arch, result, t_start):
    nn = torch.nn
    half = torch.float16 if dev.type == "cuda" else torch.bfloat16
    layouts = ["contiguous"] + (["channels_last"] if args.channels_last else [])
    dtypes = [torch.float32] + ([] if args.no_half else [half])
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for layout in layouts:
        for dtype in dtypes:
            for i, (name, family, build, shape, input_grad) in enumerate(CASES):
                if args.only and args.only not in name:
                    continue
                dname = str(dtype).replace("torch.", "")
                case = {"name": name, "dtype": dname, "layout": layout, "ok": False}
                result["cases"].append(case)
                if time.monotonic() - t_start > args.budget:
                    case["error"] = f"not run: --budget {args.budget:g} s spent"
                    continue
                if args.self_test_on_cpu:
                    shape = (2 if shape[0] <= 8 else 4,) + tuple(shape[1:])
                checker.sink.write({"event": "case", "name": name, "dtype": dname,
                                    "layout": layout})
                checker.forget()
                mark = len(checker.sink.records)
                t0 = time.monotonic()
                try:
                    if args.raise_ and args.raise_.split(":", 1)[0] in name:
                        raise RuntimeError(args.raise_.split(":", 1)[1])
                    torch.manual_seed(1000 + i)
                    m = build(nn).to(dev)
                    x = torch.randn(shape, device=dev)
                    if layout == "channels_last":
                        m = m.to(memory_format=torch.channels_last)
                        x = x.contiguous(memory_format=torch.channels_last)
                    if family == "batchnorm" and dtype != torch.float32:
                        # As in a mixed-precision network: half activations, float32 parameters.
                        x = x.to(dtype)
                    x.requires_grad_(input_grad)
                    amp = torch.autocast(dev.type, dtype=dtype, enabled=dtype != torch.float32)
                    with amp:
                        y = m(x)
                    y.backward(torch.randn_like(y))
                    sync()
                    verdict = judge_case(checker.sink.records[mark:], input_grad,
                                         getattr(m, "bias", None) is not None, dev.type)
                    case.update(verdict)
                    case["ok"] = not verdict["problems"]
                except Exception as e:
                    case["error"] = f"{type(e).__name__}: {e}"[:2000]
                    reason = known_reason(case["error"], arch)
                    if reason:
                        case["reason"] = reason
                case["seconds"] = round(time.monotonic() - t0, 2)


def speed(torch, dev, args):
    """Median steps/s of a small network's SGD training, over REPEATS timed repeats."""
    nn = torch.nn
    torch.manual_seed(7)
    net = nn.Sequential(
        nn.Conv2d(3, 32, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 64, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(dev)
    batch = 4 if args.self_test_on_cpu else 32
    x = torch.randn(batch, 3, 64, 64, device=dev)
    target = torch.randint(0, 10, (batch,), device=dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def steps(n):
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(x), target)
            loss.backward()
            opt.step()
        return loss

    steps(3)  # warm-up: kernels chosen and compiled, the check's first calls
    sync()
    t0 = time.monotonic()
    steps(3)
    sync()
    per = max((time.monotonic() - t0) / 3, 1e-6)
    n = max(3, min(500, int(REPEAT_S / per) + 1))
    rates = []
    for _ in range(REPEATS):
        sync()
        t0 = time.monotonic()
        loss = steps(n)
        sync()
        rates.append(n / max(time.monotonic() - t0, 1e-9))
    if not math.isfinite(loss.item()):
        raise RuntimeError("training produced a non-finite loss")
    rates.sort()
    med = rates[len(rates) // 2]
    return {"steps_per_s": round(med, 2), "min": round(rates[0], 2), "max": round(rates[-1], 2),
            "spread": round((rates[-1] - rates[0]) / med, 3), "repeats": REPEATS,
            "steps_per_repeat": n, "batch": batch}


def summary(r):
    """One sentence: what passed, or which layers failed and why."""
    if "error" in r and not r["cases"]:
        return f"stopped at {r['stage']}: {r['error']}"
    bad = [c for c in r["cases"] if not c["ok"]]
    if r.get("error"):
        bad_text = f"; then {r['error']}"
    else:
        bad_text = ""
    if not bad:
        n = len(r["cases"])
        where = r.get("device", "?")
        return f"all {n} layer cases right on {where}{bad_text}"
    parts = []
    for c in bad:
        why = c.get("reason") or "; ".join(c.get("problems") or []) or c.get("error", "failed")
        parts.append(f"{c['name']} ({c['dtype']}{', channels_last' if c['layout'] != 'contiguous' else ''}): {why}")
    return f"{len(bad)} of {len(r['cases'])} layer cases failed: " + " | ".join(parts) + bad_text


if __name__ == "__main__":
    sys.exit(main())
