#!/usr/bin/env python3
"""The workload the field kit runs: a PyTorch Conv2d forward and backward on the GPU.

This is the operation that dies with HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on RDNA1
(MIOpen's convolution kernels). It never falls back to the CPU: no GPU means a failed run.
Prints one JSON line with what happened; exit 0 only if forward and backward completed and
gave finite results.
"""
import json
import sys
import time

result = {"ok": False, "stage": "import"}
try:
    import torch

    result.update(torch=torch.__version__, hip=getattr(torch.version, "hip", None))
    result["stage"] = "device"
    if not torch.cuda.is_available():  # ROCm builds of PyTorch use the cuda namespace
        raise RuntimeError("PyTorch sees no GPU (torch.cuda.is_available() is False)")
    dev = torch.device("cuda:0")
    result["device"] = torch.cuda.get_device_name(0)
    props = torch.cuda.get_device_properties(0)
    result["gcn_arch"] = getattr(props, "gcnArchName", None)
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 64, kernel_size=3, padding=1).to(dev)
    x = torch.randn(16, 3, 224, 224, device=dev, requires_grad=True)
    t0 = time.monotonic()
    result["stage"] = "forward"
    y = conv(x)
    torch.cuda.synchronize()
    result["stage"] = "backward"
    y.float().pow(2).mean().backward()
    torch.cuda.synchronize()
    result["seconds"] = round(time.monotonic() - t0, 3)
    finite = bool(torch.isfinite(y).all() and torch.isfinite(x.grad).all())
    result.update(stage="done", ok=finite, finite=finite)
except Exception as e:  # report every failure, HIP/MIOpen errors included
    result["error"] = f"{type(e).__name__}: {e}"
print(json.dumps(result))
sys.exit(0 if result["ok"] else 1)
