"""What real training scripts do that the check must survive: a library asking whether torch is
there before the program imports it (transformers, accelerate); a validation pass under no_grad
before training; a loss scaler's first step, whose gradients are not finite by design; torch
never imported; python -I."""
import unittest

from . import helpers

OVERFLOW = r"""
import importlib.util, json
assert importlib.util.find_spec("torch") is not None
import torch
from torch import nn
conv = nn.Conv2d(3, 4, 1)
with torch.no_grad():
    conv(torch.randn(2, 3, 4, 4))
(conv(torch.randn(2, 3, 4, 4, requires_grad=True)) * float("inf")).sum().backward()
(conv(torch.randn(2, 3, 4, 4, requires_grad=True)) * 1.0).sum().backward()
print("done")
"""


class Edges(unittest.TestCase):
    def test_find_spec_no_grad_first_and_an_overflow_step(self):
        r = helpers.run(["-c", OVERFLOW])
        self.assertEqual(r.rc, 0, r)
        self.assertTrue(r.events("torch"), "a find_spec of torch used up the import hook")
        self.assertEqual(r.wrong(), [], "a loss scaler's overflow step judged wrong")
        ops = r.ops()
        skipped = [ops[(s["pid"], s["id"])]["op"] for s in r.events("skipped")]
        self.assertIn("convolution_backward", skipped)
        again = [o for o in r.events("op") if "again_for" in o]
        self.assertTrue(any(o["op"] == "convolution_backward" for o in again), again)
        grads = [res["direction"] for res in r.events("result")
                 if ops[(res["pid"], res["id"])]["op"] == "convolution_backward"]
        self.assertIn("weight gradient", grads)

    def test_torch_never_imported_is_said_and_nothing_is_imported(self):
        r = helpers.run(["-c", "import sys; print('torch' in sys.modules)"])
        self.assertEqual((r.rc, r.out.strip()), (0, "False"), r)
        self.assertEqual([e["event"] for e in r.records], ["start"])

    def test_an_isolated_interpreter_loads_nothing(self):
        r = helpers.run(["-I", "-c", "import torch; print(torch.backends.cudnn.enabled)"],
                        env={"RDNA1_MIOPEN_BYPASS": "1"})
        self.assertEqual((r.rc, r.out.strip(), r.records), (0, "True", []), r)


if __name__ == "__main__":
    unittest.main()
