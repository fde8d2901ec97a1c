"""torchvision's ResNet-18 through torch.jit.script, trained two SGD steps on the device given:
a program that works without rdna1ctl and must work the same with its check loaded (the check
once wrapped torch.nn.functional.conv2d, which TorchScript could not compile)."""
import argparse

import torch
import torchvision

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
p.add_argument("--steps", type=int, default=2)
args = p.parse_args()

torch.manual_seed(0)
net = torch.jit.script(torchvision.models.resnet18(num_classes=10)).to(args.device)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(2, 3, 32, 32, device=args.device)
y = torch.randint(0, 10, (2,), device=args.device)
for _ in range(args.steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
print(f"scripted resnet18: loss {loss.item():.4f}")
