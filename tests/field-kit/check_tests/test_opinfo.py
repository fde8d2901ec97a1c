"""PyTorch's own samples (OpInfo, ModuleInfo) of every family the check judges give the same
outputs, gradients, double-backward gradients and exceptions with the check as without it,
and the check finds none of them wrong (tests/field-kit/programs/samples.py)."""
import json
import unittest

from . import helpers


class Samples(unittest.TestCase):
    def test_the_same_with_the_check(self):
        plain = helpers.program("samples.py", check=False)
        self.assertEqual(plain.rc, 0, plain)
        checked = helpers.program("samples.py")
        self.assertEqual(checked.rc, 0, checked)
        a = json.loads(plain.out.strip().splitlines()[-1])
        b = json.loads(checked.out.strip().splitlines()[-1])
        self.assertGreater(len(a), 150)
        self.assertEqual(sorted(a), sorted(b))
        for k in a:
            self.assertEqual(a[k], b[k], k)
        self.assertEqual(checked.wrong(), [])
        self.assertEqual(checked.errors(), [])
        self.assertGreater(len(checked.events("result")), 1000)


if __name__ == "__main__":
    unittest.main()
