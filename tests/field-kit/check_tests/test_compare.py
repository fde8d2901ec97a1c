"""compare.py: a result's error against float64 judged against the CPU's own error in the
same types, with a floor per arithmetic."""
import unittest

import torch

from . import helpers  # noqa: F401 - the check's package on the path
from rdna1_check import compare


def _cases(dtype):
    torch.manual_seed(0)
    a = torch.randn(64, 128, dtype=torch.float64)
    b = torch.randn(128, 32, dtype=torch.float64)
    ref = a @ b
    low = (a.to(dtype) @ b.to(dtype)).double()
    return a, b, ref, low


class Judge(unittest.TestCase):
    def test_rounding_of_the_types_own_arithmetic_passes(self):
        for dtype, math in ((torch.float32, "float32"), (torch.bfloat16, "bfloat16"),
                            (torch.float16, "float16")):
            a, b, ref, low = _cases(dtype)
            # Another implementation summing in another order: the same rounding, elsewhere.
            got = (a.to(dtype).t().contiguous().t() @ b.to(dtype)).to(dtype)
            v = compare.judge(torch, got, ref, low, math)
            self.assertTrue(v["ok"], (math, v))

    def test_a_result_off_by_a_few_of_its_units_fails(self):
        # float32 and float16 1% (float16's own rounding is 0.05%), bfloat16 5% (its own is
        # 0.4%: 2% is within ten times the CPU's error in bfloat16).
        for dtype, math, factor in ((torch.float32, "float32", 1.01),
                                    (torch.float16, "float16", 1.01),
                                    (torch.bfloat16, "bfloat16", 1.05)):
            a, b, ref, low = _cases(dtype)
            got = ((a.to(dtype) @ b.to(dtype)) * factor).to(dtype)
            v = compare.judge(torch, got, ref, low, math)
            self.assertFalse(v["ok"], (math, v))

    def test_a_few_elements_wrong_fail_by_the_largest_difference(self):
        a, b, ref, low = _cases(torch.float32)
        got = (a @ b).float()
        got[3, 4:8] = 0.0  # one tile not written
        v = compare.judge(torch, got, ref, low, "float32")
        self.assertFalse(v["ok"], v)
        self.assertGreater(v["max_rel"], 1e-3)

    def test_a_sum_that_cancels_is_judged_by_the_cpus_own_error(self):
        # Terms of 1e4 summing to about 1: float32's rounding is large next to the result,
        # and the CPU makes the same error; a fixed bound on the result would call it wrong.
        torch.manual_seed(1)
        x = torch.randn(4096, dtype=torch.float64) * 1e4
        x = torch.cat([x, -x + torch.randn(4096, dtype=torch.float64) * 1e-3])
        ref = x.sum().reshape(1)
        low = x.float().sum().double().reshape(1)
        got = x.float().flip(0).sum().reshape(1)
        self.assertTrue(compare.judge(torch, got, ref, low, "float32")["ok"])
        self.assertFalse(compare.judge(torch, got, ref, None, "float32")["ok"],
                         "without the CPU's own error only the floor judges: it should fail")

    def test_not_finite_results(self):
        ref = torch.tensor([1.0, 2.0], dtype=torch.float64)
        got = torch.tensor([1.0, float("nan")])
        self.assertFalse(compare.judge(torch, got, ref, None, "float32")["ok"])
        # Beyond the type's range the type's inf is right.
        ref = torch.tensor([1.0, 1e6], dtype=torch.float64)
        got = torch.tensor([1.0, float("inf")], dtype=torch.float16)
        self.assertTrue(compare.judge(torch, got, ref, None, "float16")["ok"])

    def test_where_the_exact_result_is_not_finite_the_implementation_decides(self):
        # A row of attention masked whole: the exact softmax is 0/0, a fused kernel writes 0.
        ref = torch.tensor([[float("nan"), float("nan")], [0.25, 0.75]], dtype=torch.float64)
        got = torch.tensor([[0.0, 0.0], [0.25, 0.75]])
        self.assertTrue(compare.judge(torch, got, ref, None, "float32")["ok"])
        got[1, 0] = 0.3
        self.assertFalse(compare.judge(torch, got, ref, None, "float32")["ok"])

    def test_complex_results_are_judged_in_both_parts(self):
        torch.manual_seed(0)
        ref = torch.randn(64, dtype=torch.complex128)
        got = (ref.real + 1j * ref.imag * 1.02).to(torch.complex64)
        self.assertFalse(compare.judge(torch, got, ref, None, "float32")["ok"])
        self.assertTrue(compare.judge(torch, ref.to(torch.complex64), ref, None, "float32")["ok"])

    def test_exact_results(self):
        self.assertTrue(compare.judge_exact(torch, torch.tensor([1, 2]), torch.tensor([1, 2]))["ok"])
        self.assertFalse(compare.judge_exact(torch, torch.tensor([1, 2]), torch.tensor([1, 3]))["ok"])


if __name__ == "__main__":
    unittest.main()
