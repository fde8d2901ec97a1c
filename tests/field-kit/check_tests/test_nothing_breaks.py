"""The check never changes or breaks the program it watches: tests/field-kit/programs/
behaviours.py (TorchScript, trace, FX, export, torch.func, forward AD, double backward,
checkpointing, inference mode, DataLoader workers, DDP, an expected error, autocast) gives the
same bits and the same exceptions without the check, with it, and under each MIOpen bypass."""
import json
import unittest

from . import helpers


def behaviours(check, env=None):
    r = helpers.program("behaviours.py", check=check, env=env)
    if r.rc != 0:
        raise AssertionError(f"behaviours.py failed: {r}")
    return json.loads(r.out.strip().splitlines()[-1]), r


class NothingBreaks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plain, _ = behaviours(check=False)

    def same(self, env):
        got, r = behaviours(check=True, env=env)
        self.assertEqual(sorted(got), sorted(self.plain))
        for name, want in self.plain.items():
            self.assertEqual(got[name], want, f"{name} ({env})")
        self.assertEqual(r.errors(), [], env)
        self.assertTrue(r.events("op"), "the check saw nothing: it was not loaded")
        return r

    def test_the_check(self):
        r = self.same({})
        self.assertFalse(r.wrong(), r.wrong()[:3])
        # The program's own exception is said, and raised as it was.
        raised = [e["error"] for e in r.events("raised")]
        self.assertTrue(any("cannot be multiplied" in e for e in raised), raised)

    def test_the_bypass(self):
        self.same({"RDNA1_MIOPEN_BYPASS": "1"})

    def test_the_bypass_of_some_layer_kinds(self):
        self.same({"RDNA1_MIOPEN_BYPASS_KINDS": "BatchNorm|Conv2d 3x3"})


if __name__ == "__main__":
    unittest.main()


COMPILES = r"""
import json, torch
from torch._dynamo.utils import counters
f = torch.compile(lambda x: (x.sin() * 2).sum(), backend="eager")
f(torch.randn(8))
f(torch.randn(8))
print(json.dumps({"graphs": counters["stats"]["unique_graphs"]}))
"""


class CompilesAsWithout(unittest.TestCase):
    def test_torch_compile_compiles_at_its_first_call_under_the_check(self):
        # Dynamo skips a frame first called under a dispatch mode that does not ignore
        # compilation; PyTorch before 2.12 never compiles that code again (seen on the device
        # with 2.11: a compiled fine-tune ran eager for its whole life under the check).
        plain = helpers.run(["-c", COMPILES], check=False)
        checked = helpers.run(["-c", COMPILES])
        self.assertEqual(checked.rc, 0, checked)
        self.assertEqual(json.loads(plain.out.splitlines()[-1]), {"graphs": 1}, plain)
        self.assertEqual(checked.out.splitlines()[-1], plain.out.splitlines()[-1], checked)
