"""What PyTorch programs do beside plain eager training, each run and reduced to exact digests
(the bits of every output and gradient) or the exception it raised, printed as one JSON line:
the check must leave every one exactly as it is without it (tests/field-kit/check_tests/
test_nothing_breaks.py runs this with and without it, and under each MIOpen bypass)."""
import json
import os
import struct
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch import nn

# usage: behaviours.py [DEVICE]: cpu in make test; cuda on the device (tests/device), where the
# tensors and modules each case makes are put on the GPU (the default device).
DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cpu"
if DEVICE != "cpu":
    torch.set_default_device(DEVICE)
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
RESULTS = {}


def digest(x):
    """The exact bits of every tensor in x (tensors, lists, tuples, dicts)."""
    if isinstance(x, torch.Tensor):
        t = x.detach().to("cpu").contiguous()
        if t.is_floating_point():
            t = t.double()
        return [list(t.shape), str(x.dtype), struct.pack("<d", float(t.double().sum())).hex(),
                struct.pack("<d", float((t.double() * torch.arange(t.numel(), dtype=torch.float64).reshape(t.shape).sin()).sum())).hex()
                if t.numel() else ""]
    if isinstance(x, (list, tuple)):
        return [digest(v) for v in x]
    if isinstance(x, dict):
        return {k: digest(v) for k, v in sorted(x.items())}
    return repr(x)


def case(name):
    def wrap(fn):
        try:
            RESULTS[name] = digest(fn())
        except Exception as e:  # the exception itself is the behaviour
            RESULTS[name] = f"raised {type(e).__name__}: {str(e).splitlines()[0][:300]}"
        return fn
    return wrap


def small():
    torch.manual_seed(1)
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Flatten(), nn.Linear(4 * 8 * 8, 5))


X = torch.randn(2, 3, 8, 8)


@case("jit.script resnet18")
def _():
    import torchvision
    torch.manual_seed(2)
    net = torch.jit.script(torchvision.models.resnet18(num_classes=3))
    y = net(torch.randn(2, 3, 32, 32))
    y.sum().backward()
    return [y, [p.grad for p in net.parameters()][:4]]


@case("jit.trace")
def _():
    net = small()
    t = torch.jit.trace(net, X)
    return [t(X), t.graph.str().count("aten::")]


@case("fx symbolic_trace")
def _():
    net = small()
    gm = torch.fx.symbolic_trace(net)
    return [gm(X), [n.op for n in gm.graph.nodes]]


@case("torch.export")
def _():
    net = small().eval()
    ep = torch.export.export(net, (X,))
    return [ep.module()(X), sorted(str(n.target) for n in ep.graph.nodes
                                   if n.op == "call_function")]


@case("torch.func vmap, jacrev, jvp")
def _():
    w = torch.randn(5, 4)

    def f(x):
        return torch.tanh(x @ w.t()).sum(-1)
    xs = torch.randn(3, 4)
    jac = torch.func.jacrev(lambda x: torch.tanh(x @ w.t()))(xs[0])
    out, tangent = torch.func.jvp(f, (xs[0],), (torch.ones(4),))
    return [torch.func.vmap(f)(xs), jac, out, tangent,
            torch.func.vmap(torch.func.grad(f))(xs)]


@case("forward AD")
def _():
    import torch.autograd.forward_ad as fwAD
    net = small()
    with fwAD.dual_level():
        d = fwAD.make_dual(X, torch.ones_like(X))
        y = net.eval()(d)
        return list(fwAD.unpack_dual(y))


@case("double backward (gradient penalty)")
def _():
    net = small()
    x = X.clone().requires_grad_()
    y = net(x).pow(2).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    penalty = g.pow(2).sum()
    penalty.backward()
    return [penalty, [p.grad for p in net.parameters()]]


@case("checkpoint (reentrant and not)")
def _():
    from torch.utils.checkpoint import checkpoint
    out = []
    for reentrant in (True, False):
        net = small()
        x = X.clone().requires_grad_()
        y = checkpoint(net, x, use_reentrant=reentrant).sum()
        y.backward()
        out.append([y, x.grad, [p.grad for p in net.parameters()]])
    return out


@case("inference mode")
def _():
    net = small()
    with torch.inference_mode():
        y = net(X)
    return [y, y.is_inference()]


@case("DataLoader workers (fork)")
def _():
    class Squares(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return torch.full((3,), float(i)).pow(2) + torch.arange(3.0)
    ctx = torch.multiprocessing.get_context("fork")
    dl = torch.utils.data.DataLoader(Squares(), batch_size=4, num_workers=2,
                                     multiprocessing_context=ctx)
    return [b for b in dl]


@case("DDP, one process")
def _():
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    with tempfile.TemporaryDirectory() as d:
        dist.init_process_group("gloo", init_method=f"file://{os.path.join(d, 'store')}",
                                rank=0, world_size=1)
        try:
            net = DDP(small())
            y = net(X).sum()
            y.backward()
            return [y, [p.grad for p in net.parameters()]]
        finally:
            dist.destroy_process_group()


@case("a higher-order op (torch.cond), eager")
def _():
    x = torch.randn(4)
    return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))


@case("the random streams after a training step")
def _():
    net = small()
    net(X).sum().backward()
    return [torch.rand(4), torch.randn(3), torch.randint(0, 100, (3,))]


@case("an error the program expects")
def _():
    return torch.randn(3, 4) @ torch.randn(5, 6)


@case("SyncBatchNorm, empty batch, bf16 autocast")
def _():
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    e = net(torch.randn(0, 3, 8, 8))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = net(X)
    return [e, y]


print(json.dumps(RESULTS, sort_keys=True))
sys.stdout.flush()
