"""An owner's training script in miniature, for the tests of the in-process check: a ResNet-like
stem, a 3x3 and a 1x1 convolution with batch norms, trained a few SGD steps on random data, on
the device given (--device cpu where there is no GPU). It knows nothing of rdna1ctl.
--kfd DIR: as a ROCm process does, have an entry DIR/PID while it runs (the fixture's
/sys/class/kfd/kfd/proc, where KFD lists the processes that opened /dev/kfd)."""
import argparse
import os
import time

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
p.add_argument("--steps", type=int, default=3)
p.add_argument("--kfd", metavar="DIR")
p.add_argument("--no-torch-import", action="store_true",
               help="exit before importing torch (the check must not have imported it)")
args = p.parse_args()
entry = None
if args.kfd:
    entry = os.path.join(args.kfd, str(os.getpid()))
    os.makedirs(entry)
try:
    if args.no_torch_import:
        import sys
        print("torch imported before the script:", "torch" in sys.modules)
        raise SystemExit(0)
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 16, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 32, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
    ).to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(4, 3, 32, 32, device=args.device)
    y = torch.randint(0, 10, (4,), device=args.device)
    for _ in range(args.steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    print(f"loss {loss.item():.4f}, cudnn enabled: {torch.backends.cudnn.enabled}")
    time.sleep(0.2)  # long enough for KFD's sampler to see this process
finally:
    if entry:
        os.rmdir(entry)
