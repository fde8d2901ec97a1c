"""What real training scripts do that the in-process check must survive (tests/field-kit/
check-cpu.sh, on the CPU with the check's self-test): a library asking whether torch is there
(`importlib.util.find_spec("torch")`, as transformers and accelerate do) before the program
imports it; a validation pass under no_grad before training; a loss scaler's first step, whose
incoming gradients are not finite by design. Exit 0 when the check handled each."""
import importlib.util
import os
import sys

sys.path.insert(0, os.environ["RDNA1_CHECK_PYTHON_DIR"])
import rdna1_check  # noqa: E402

c = rdna1_check.install(numerics=True, self_test_cpu=True)
assert importlib.util.find_spec("torch") is not None
import torch  # noqa: E402
from torch import nn  # noqa: E402

assert c.torch is not None, "a find_spec of torch used up the import hook: nothing checked"
net = nn.Sequential(nn.Conv2d(3, 4, 3, padding="same"), nn.BatchNorm2d(4))
x = torch.randn(2, 3, 8, 8)
with torch.no_grad():
    net(x)
net(x.requires_grad_()).sum().backward()
grads = {r["direction"] for r in c.sink.records if r["event"] == "result"}
assert "weight gradient" in grads, f"a layer first met under no_grad: its gradients unchecked {grads}"
start = len(c.sink.records)
conv = nn.Conv2d(3, 4, 1)
(conv(torch.randn(2, 3, 4, 4, requires_grad=True)) * float("inf")).sum().backward()
conv(torch.randn(2, 3, 4, 4, requires_grad=True)).sum().backward()
new = c.sink.records[start:]
wrong = [r for r in new if r["event"] == "result" and not r["ok"]]
assert not wrong, f"a loss scaler's overflow step judged wrong: {wrong}"
assert any(r["event"] == "skipped" for r in new), "the overflow step was not said to be skipped"
assert any(r["event"] == "layer" and "again_for" in r for r in new), "not checked again"
assert any(r["event"] == "result" and r["direction"] == "weight gradient" for r in new)
print("ok")
