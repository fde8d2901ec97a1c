"""A network with a layer that calls torch.conv2d itself (not torch.nn.functional.conv2d), on
the device given, a few SGD steps. With tests/faults on the path and RDNA1_FAULTS naming the
op, the convolution's results are wrong below torch, as from a faulty solver."""
import argparse

import torch
from torch import nn

try:
    import rdna1_faults  # noqa: F401 - arms RDNA1_FAULTS (tests/faults), if on the path
except ImportError:
    pass

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
p.add_argument("--steps", type=int, default=3)
args = p.parse_args()


class Direct(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 3, 3, 3) * 0.2)

    def forward(self, x):
        return torch.conv2d(x, self.weight, None, 1, 1)


torch.manual_seed(0)
net = nn.Sequential(Direct(), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                    nn.Linear(8 * 8 * 8, 10)).to(args.device)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(4, 3, 8, 8, device=args.device)
y = torch.randint(0, 10, (4,), device=args.device)
for _ in range(args.steps):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
