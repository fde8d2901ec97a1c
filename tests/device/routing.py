"""Which kernels a convolution's backward runs when MIOpen (cuDNN on this CUDA build) is bypassed
for that layer only: PyTorch's convolution_backward reads torch.backends.cudnn.enabled again when
the backward runs, so turning the flag off around the forward alone is not enough. Modes:
  cudnn          nothing routed
  forward-only   the flag off around the forward only (what a naive routing does)
  as-loaded      through rdna1ctl's sitecustomize, as the environment asks
                 (RDNA1_MIOPEN_BYPASS_KINDS="Conv2d 1x1": the flag off in forward and backward)
Prints one JSON line: the CUDA kernels of one forward+backward, and how many look like cuDNN's."""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
mode = sys.argv[1]
dev = torch.device("cuda")
conv = torch.nn.Conv2d(64, 128, 1).to(dev)
x = torch.randn(32, 64, 56, 56, device=dev, requires_grad=True)


def step():
    if mode == "forward-only":
        with torch.backends.cudnn.flags(enabled=False):
            out = conv(x)
    else:
        out = conv(x)
    out.sum().backward()


step()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as p:
    step()
    torch.cuda.synchronize()
names = [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
marks = ("cudnn", "xmma", "implicit_convolve", "engine", "convolve_", "sm90_", "sm80_", "cutlass")
cudnn = sorted({n for n in names if any(m in n.lower() for m in marks)})
print(json.dumps({"mode": mode, "kernels": len(names), "cudnn_like": cudnn[:12],
                  "other": sorted({n[:80] for n in names if n not in cudnn})[:12]}))
