"""slicing.py through the check: with a budget small enough that a convolution, a GEMM and a
batch norm are checked on slices, the program's own results are judged on the slice, sums over
it (a weight gradient) from a re-run on the slice, and a fault in either is still named."""
import unittest

from . import helpers

PROGRAM = r"""
import rdna1_check.slicing as slicing
slicing.BUDGET = 2e4      # multiply-adds: every product below is sliced
slicing.ELEMENTS = 2e3    # elements: so is the batch norm
import torch
from torch import nn
try:
    import rdna1_faults  # noqa: F401
except ImportError:
    pass
torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Flatten(),
                    nn.Linear(8 * 6 * 6, 16))
x = torch.randn(8, 3, 6, 6, requires_grad=True)
net(x).square().sum().backward()
print("done")
"""


def results(r, op):
    ops = r.ops()
    return [res for res in r.events("result") if ops[(res["pid"], res["id"])]["op"] == op]


class Slices(unittest.TestCase):
    def test_sliced_checks_are_right_and_say_so(self):
        r = helpers.run(["-c", PROGRAM])
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.wrong(), [])
        self.assertEqual(r.errors(), [])
        self.assertEqual(r.unchecked(), [])
        conv = {res["direction"]: res for res in results(r, "convolution")}
        self.assertIn("samples 0..", conv["forward"]["note"])
        back = {res["direction"]: res for res in results(r, "convolution_backward")}
        self.assertIn("samples 0..", back["input gradient"]["note"])
        self.assertIn("re-run on the GPU", back["weight gradient"]["note"])
        mm = [res for res in results(r, "addmm") + results(r, "mm") if res.get("note")]
        self.assertTrue(mm and all("rows 0.." in res["note"] for res in mm), mm)
        bn = [res for res in results(r, "native_batch_norm") if res.get("note")]
        self.assertTrue(bn and all("channels 0.." in res["note"] for res in bn), bn)

    def test_a_wrong_weight_gradient_is_found_by_the_re_run(self):
        r = helpers.run(["-c", PROGRAM],
                        faults="op=convolution_backward,result=1,action=wrong,factor=1.01")
        self.assertEqual(r.rc, 0, r)
        wrong = [(o["op"], res["direction"], res.get("note", "")) for o, res in r.wrong()]
        self.assertTrue(wrong, r)
        self.assertEqual(wrong[0][:2], ("convolution_backward", "weight gradient"), wrong)
        self.assertIn("re-run", wrong[0][2])


ADAMW = r"""
import rdna1_check.slicing as slicing
slicing.ELEMENTS = 2e3    # elements: AdamW's foreach updates over all parameters are sliced
import torch
from torch import nn
try:
    import rdna1_faults  # noqa: F401
except ImportError:
    pass
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 4))
opt = torch.optim.AdamW(net.parameters(), lr=1e-3, foreach=True)
for _ in range(2):
    opt.zero_grad()
    net(torch.randn(8, 16)).square().sum().backward()
    opt.step()
print("done")
"""


class ForeachSlices(unittest.TestCase):
    def test_an_optimizer_update_over_every_parameter_is_checked_on_its_first_tensors(self):
        # AdamW's foreach ops over a GPT's parameters were too large for the CPU, and no slice
        # was known: listed unchecked on the device (8.19e+07 elements).
        r = helpers.run(["-c", ADAMW])
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.errors(), [])
        foreach = [op for (op, why) in r.unchecked() if op["op"].startswith("_foreach_")]
        self.assertEqual(foreach, [], r.unchecked())
        notes = [res.get("note", "") for res in results(r, "_foreach_addcdiv_")]
        self.assertTrue(notes and all("tensors 0.." in n for n in notes), notes)

    def test_a_wrong_update_of_a_first_tensor_is_named(self):
        r = helpers.run(["-c", ADAMW], faults="op=_foreach_addcdiv_,action=wrong,factor=1.01")
        self.assertEqual(r.rc, 0, r)
        wrong = [o["op"] for o, _ in r.wrong()]
        self.assertIn("_foreach_addcdiv_", wrong, r)


if __name__ == "__main__":
    unittest.main()
