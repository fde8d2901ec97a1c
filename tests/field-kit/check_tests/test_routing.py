"""routing.py: MIOpen bypassed for some layer kinds only, wherever the layer is called from
torch.nn.functional; TorchScript compiles the routed functions as it compiles the originals."""
import json
import unittest

from . import helpers

PROGRAM = r"""
import json, torch
from torch import nn
seen = []
class Spy(torch.utils._python_dispatch.TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name.split("::")[-1]
        if name in ("convolution", "native_batch_norm", "_native_batch_norm_legit"):
            seen.append([name, torch.backends.cudnn.enabled])
        return func(*args, **(kwargs or {}))
net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Conv2d(4, 4, 1),
                    nn.InstanceNorm2d(4, affine=True))
x = torch.randn(2, 3, 8, 8)
with Spy():
    net(x)
scripted = torch.jit.script(net)
print(json.dumps({"seen": seen, "after": torch.backends.cudnn.enabled,
                  "scripted": bool(torch.equal(scripted(x), net(x)))}))
"""


class Routing(unittest.TestCase):
    def test_only_the_kinds_asked_are_routed_and_the_flag_is_put_back(self):
        r = helpers.run(["-c", PROGRAM], env={"RDNA1_MIOPEN_BYPASS_KINDS": "BatchNorm"})
        self.assertEqual(r.rc, 0, r)
        got = json.loads(r.out.strip().splitlines()[-1])
        # The batch norm and the instance norm (MIOpen's batch norm too) with the flag off,
        # the convolutions with it on, and on again after.
        flags = [f for _, f in got["seen"]]
        names = [n for n, _ in got["seen"]]
        self.assertEqual(names[0], "convolution")
        self.assertEqual(flags, [True, False, True, False], got)
        self.assertTrue(got["after"])
        self.assertTrue(got["scripted"], "TorchScript of the routed layers differs")
        # The check's records show it too; the scripted module's calls (TorchScript runs the
        # builtins, unrouted) show the flag on.
        bn = [o["cudnn_enabled"] for o in r.events("op") if o["family"] == "batch/instance norm"]
        self.assertEqual(bn, [False, False, True, True], bn)

    def test_a_convolution_kind_is_routed_forward_and_backward(self):
        code = PROGRAM.replace("with Spy():\n    net(x)",
                               "with Spy():\n    net(x.requires_grad_()).sum().backward()")
        code = code.replace('("convolution", "native_batch_norm", "_native_batch_norm_legit")',
                            '("convolution", "convolution_backward")')
        r = helpers.run(["-c", code], env={"RDNA1_MIOPEN_BYPASS_KINDS": "Conv2d 1x1"})
        self.assertEqual(r.rc, 0, r)
        got = json.loads(r.out.strip().splitlines()[-1])
        # 3x3 forward on, 1x1 forward off, 1x1 backward off, 3x3 backward on.
        self.assertEqual(got["seen"], [["convolution", True], ["convolution", False],
                                       ["convolution_backward", False],
                                       ["convolution_backward", True]], got)


if __name__ == "__main__":
    unittest.main()
