"""A network with an op the check has no CPU reference for: a custom op (as a library's own
GPU kernel would be) whose only kernel refuses float64, the type of the check's reference.
Its results must be listed as unchecked by name, never counted as right."""
import argparse

import torch
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
p.add_argument("--steps", type=int, default=2)
args = p.parse_args()

lib = torch.library.Library("rdna1test", "DEF")
lib.define("scale2(Tensor x) -> Tensor")


def scale2(x):
    if x.dtype == torch.float64:
        raise NotImplementedError("rdna1test::scale2: not implemented for 'Double'")
    return x * 2


lib.impl("scale2", scale2, "CompositeExplicitAutograd")

torch.manual_seed(0)
net = nn.Linear(16, 4).to(args.device)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(8, 16, device=args.device)
for _ in range(args.steps):
    opt.zero_grad()
    with torch.no_grad():
        y = torch.ops.rdna1test.scale2(x)
    loss = net(y).square().mean()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
