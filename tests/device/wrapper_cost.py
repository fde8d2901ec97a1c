"""What the in-process check costs a training step once every layer was seen: ResNet-18's
step (batch 32, 224x224) with rdna1_check's wrappers in torch.nn.functional and with the
original functions, alternated in one process (ROUNDS rounds of STEPS steps each way), the
medians side by side. Then the calls themselves: a small conv2d, wrapped and not, per call.
Test tooling for docs/MEASUREMENTS.md; not part of make test."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../dist/field-kit/python"))
import rdna1_check  # noqa: E402

checker = rdna1_check.install(numerics=False)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402

ROUNDS, STEPS = 10, 20
wrapped = {op: getattr(F, op) for op in checker.originals}


def use(wrappers):
    for op, orig in checker.originals.items():
        setattr(F, op, wrapped[op] if wrappers else orig)


dev = torch.device("cuda")
torch.manual_seed(0)
net = torchvision.models.resnet18(num_classes=10).to(dev)
x = torch.randn(32, 3, 224, 224, device=dev)
y = torch.randint(0, 10, (32,), device=dev)
opt = torch.optim.SGD(net.parameters(), lr=0.01)


def steps(n):
    for _ in range(n):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    torch.cuda.synchronize()


use(True)
steps(3)  # every layer seen
times = {True: [], False: []}
for _ in range(ROUNDS):
    for w in (True, False):
        use(w)
        t0 = time.perf_counter()
        steps(STEPS)
        times[w].append((time.perf_counter() - t0) / STEPS * 1000)
med = {w: sorted(v)[len(v) // 2] for w, v in times.items()}

# Per call, on the CPU side only (a tiny conv, not synchronised): what the wrapper adds.
a = torch.randn(1, 8, 8, 8, device=dev)
k = torch.randn(8, 8, 3, 3, device=dev)
per_call = {}
for w in (True, False):
    use(w)
    for _ in range(100):
        F.conv2d(a, k, padding=1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20000):
        F.conv2d(a, k, padding=1)
    per_call[w] = (time.perf_counter() - t0) / 20000 * 1e6
    torch.cuda.synchronize()
use(True)
print(json.dumps({
    "resnet18_ms_per_step": {"wrapped": round(med[True], 3), "original": round(med[False], 3)},
    "resnet18_ranges_ms": {"wrapped": [round(min(times[True]), 3), round(max(times[True]), 3)],
                           "original": [round(min(times[False]), 3), round(max(times[False]), 3)]},
    "conv2d_call_us": {"wrapped": round(per_call[True], 2), "original": round(per_call[False], 2)},
    "layers_seen": len(checker.seen),
}))
