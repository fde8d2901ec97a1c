"""An owner's training script: torchvision's ResNet-18 on random 224x224 images, SGD, on the
GPU. Knows nothing of rdna1ctl. Prints one JSON line: the median seconds per step over REPEATS
timed repeats of --steps steps each (after --warmup steps), and the loss.
--amp: float16 autocast. --channels-last. --cudnn-back-on: turn torch.backends.cudnn.enabled
back on after import, as code that undoes a bypass would. With tests/faults on the path,
RDNA1_FAULTS can make an op fail below torch, as a faulty solver would (tests/device/search-gpu.sh)."""
import argparse
import json
import time

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--repeats", type=int, default=3)
p.add_argument("--batch", type=int, default=32)
p.add_argument("--amp", action="store_true")
p.add_argument("--channels-last", action="store_true")
p.add_argument("--cudnn-back-on", action="store_true")
args = p.parse_args()
t_import = time.monotonic()
import torch  # noqa: E402
import torchvision  # noqa: E402

try:
    import rdna1_faults  # noqa: F401 - arms RDNA1_FAULTS (tests/faults), if on the path
except ImportError:
    pass

t_import = time.monotonic() - t_import
if args.cudnn_back_on:
    torch.backends.cudnn.enabled = True
torch.manual_seed(0)
dev = torch.device("cuda")
net = torchvision.models.resnet18(num_classes=10).to(dev)
x = torch.randn(args.batch, 3, 224, 224, device=dev)
if args.channels_last:
    net = net.to(memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
y = torch.randint(0, 10, (args.batch,), device=dev)
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
scaler = torch.amp.GradScaler("cuda", enabled=args.amp)


def steps(n):
    for _ in range(n):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            loss = torch.nn.functional.cross_entropy(net(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return loss


t0 = time.monotonic()
steps(args.warmup)
torch.cuda.synchronize()
warmup_s = time.monotonic() - t0
per = []
for _ in range(args.repeats):
    torch.cuda.synchronize()
    t0 = time.monotonic()
    loss = steps(args.steps)
    torch.cuda.synchronize()
    per.append((time.monotonic() - t0) / args.steps)
per.sort()
print(json.dumps({"import_s": round(t_import, 2), "warmup_s": round(warmup_s, 3),
                  "ms_per_step": round(per[len(per) // 2] * 1000, 2),
                  "ms_per_step_range": [round(per[0] * 1000, 2), round(per[-1] * 1000, 2)],
                  "loss": round(loss.item(), 4), "amp": args.amp,
                  "channels_last": args.channels_last,
                  "cudnn_enabled": torch.backends.cudnn.enabled}))
