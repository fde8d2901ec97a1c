"""A transformer fine-tune in miniature: a 2-layer GPT-style decoder (attention through
scaled_dot_product_attention, layer norm, GELU MLP, tied embedding, cross entropy), trained a
few AdamW steps on random tokens, on the device given. With tests/faults on the path,
RDNA1_FAULTS can make an op wrong below torch (e.g. op=mm: a GEMM kernel off by 1%)."""
import argparse

import torch
from torch import nn

try:
    import rdna1_faults  # noqa: F401 - arms RDNA1_FAULTS (tests/faults), if on the path
except ImportError:
    pass

p = argparse.ArgumentParser()
p.add_argument("--device", default="cuda")
p.add_argument("--steps", type=int, default=4)
p.add_argument("--dim", type=int, default=64)
p.add_argument("--compile", action="store_true", help="torch.compile the model")
args = p.parse_args()


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=128, d=64, layers=2, heads=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, 32, d))
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[:, : idx.shape[1]]
        return self.ln(self.blocks(x)) @ self.emb.weight.t()


torch.manual_seed(0)
model = GPT(d=args.dim).to(args.device)
if args.compile:
    model = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 128, (4, 17), device=args.device)
for _ in range(args.steps):
    opt.zero_grad(set_to_none=True)
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 128), tokens[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
