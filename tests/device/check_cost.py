"""What the in-process check costs a training step, on a real GPU: a GPT-style AdamW step
(6 layers, d=512, batch 8 x 256 tokens) or torchvision's ResNet-18 SGD step (batch 32, 224x224),
float32 with TF32 off (RDNA1 has none). Prints one JSON line: each step's wall time (the GPU
synchronised), so the driver (check-gpu.sh) can set a plain process and one with the check side
by side: the first steps (the check looking), and the steps after it stepped aside.
usage: check_cost.py gpt|resnet STEPS"""
import json
import sys
import time

import torch
from torch import nn

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
which, steps = sys.argv[1], int(sys.argv[2])
dev = torch.device("cuda")
torch.manual_seed(0)
if which == "gpt":
    layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True,
                                       norm_first=True)
    body = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
    emb, head = nn.Embedding(8192, 512), nn.Linear(512, 8192)
    model = nn.ModuleDict({"emb": emb, "body": body, "head": head}).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, 8192, (8, 257), device=dev)
    mask = nn.Transformer.generate_square_subsequent_mask(256, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        h = model["body"](model["emb"](tokens[:, :-1]), mask=mask, is_causal=True)
        loss = nn.functional.cross_entropy(model["head"](h).flatten(0, 1), tokens[:, 1:].flatten())
        loss.backward()
        opt.step()
else:
    import torchvision
    model = torchvision.models.resnet18(num_classes=10).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(32, 3, 224, 224, device=dev)
    y = torch.randint(0, 10, (32,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
times = []
for _ in range(steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    times.append(round((time.perf_counter() - t0) * 1000, 2))
print(json.dumps({"model": which, "step_ms": times}))
