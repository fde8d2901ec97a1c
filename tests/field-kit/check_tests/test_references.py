"""references.py: the computations standing in for ops without a CPU kernel (attention's fused
kernels, cuDNN's and MIOpen's batch norm, dropout given its mask) agree with PyTorch's own on
the CPU in float64."""
import unittest

import torch

from . import helpers  # noqa: F401
from rdna1_check import references

F = torch.nn.functional


def _qkv(b=2, h=4, hk=4, lq=5, lk=7, e=8, grad=False):
    torch.manual_seed(0)
    q = torch.randn(b, h, lq, e, dtype=torch.float64, requires_grad=grad)
    k = torch.randn(b, hk, lk, e, dtype=torch.float64, requires_grad=grad)
    v = torch.randn(b, hk, lk, e, dtype=torch.float64, requires_grad=grad)
    return q, k, v


class Attention(unittest.TestCase):
    def test_forward_as_the_math_kernel(self):
        for causal in (False, True):
            for hk, lq in ((4, 5), (2, 7)):  # grouped-query attention too
                q, k, v = _qkv(hk=hk, lq=lq)
                n = {"query": q, "key": k, "value": v, "is_causal": causal, "scale": None,
                     "dropout_p": 0.0}
                got = references._flash(torch, n, None)[0]
                want = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                      enable_gqa=hk != 4)
                torch.testing.assert_close(got, want)

    def test_a_bias_mask(self):
        q, k, v = _qkv()
        bias = torch.randn(2, 1, 5, 7, dtype=torch.float64)
        n = {"query": q, "key": k, "value": v, "attn_bias": bias, "is_causal": False,
             "scale": 0.3, "dropout_p": 0.0}
        got = references._efficient(torch, n, None)[0]
        torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, bias, scale=0.3))

    def test_gradients_as_autograd_gives_them(self):
        for causal, hk in ((False, 4), (True, 2)):
            q, k, v = _qkv(hk=hk, grad=True)
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hk != 4)
            go = torch.randn_like(out)
            want = torch.autograd.grad(out, (q, k, v), go)
            n = {"grad_out": go, "query": q.detach(), "key": k.detach(), "value": v.detach(),
                 "is_causal": causal, "scale": None, "dropout_p": 0.0}
            got = references._flash_backward(torch, n, None)
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w)
        q, k, v = _qkv(grad=True)
        bias = torch.randn(2, 4, 5, 7, dtype=torch.float64, requires_grad=True)
        out = F.scaled_dot_product_attention(q, k, v, bias)
        go = torch.randn_like(out)
        want = torch.autograd.grad(out, (q, k, v, bias), go)
        n = {"grad_out_": go, "query": q.detach(), "key": k.detach(), "value": v.detach(),
             "attn_bias": bias.detach(), "is_causal": False, "scale": None, "dropout_p": 0.0}
        for g, w in zip(references._efficient_backward(torch, n, None), want):
            torch.testing.assert_close(g, w)

    def test_dropout_has_no_reference(self):
        q, k, v = _qkv()
        with self.assertRaises(references.NoReference):
            references._flash(torch, {"query": q, "key": k, "value": v, "is_causal": False,
                                      "dropout_p": 0.1}, None)


class Defaults(unittest.TestCase):
    def test_arguments_at_their_default_are_bound(self):
        # The dispatcher leaves them out: a non-causal flash attention comes without is_causal.
        from rdna1_check import calls
        q, k, v = _qkv()
        op = torch.ops.aten._scaled_dot_product_flash_attention.default
        named = calls.bind(op, (q, k, v), {})
        self.assertIs(named["is_causal"], False)
        self.assertEqual(named["dropout_p"], 0.0)
        got = references._flash(torch, named, None)[0]
        torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v))


class BatchNorm(unittest.TestCase):
    def test_cudnn_and_miopen_batch_norm_as_pytorchs_own(self):
        torch.manual_seed(0)
        x = torch.randn(4, 3, 5, 5, dtype=torch.float64)
        w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
        rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
        n = {"input": x, "weight": w, "bias": b, "running_mean": rm.clone(),
             "running_var": rv.clone(), "training": True, "exponential_average_factor": 0.1,
             "epsilon": 1e-5}
        out, mean, invstd, _ = references._batch_norm(torch, n, None)
        rm2, rv2 = rm.clone(), rv.clone()
        torch.testing.assert_close(out, F.batch_norm(x, rm2, rv2, w, b, True, 0.1, 1e-5))
        torch.testing.assert_close(n["running_mean"], rm2)
        torch.testing.assert_close(n["running_var"], rv2)
        go = torch.randn_like(x)
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))
        y = F.batch_norm(xg, None, None, wg, bg, True, 0.1, 1e-5)
        want = torch.autograd.grad(y, (xg, wg, bg), go)
        nb = {"input": x, "grad_output": go, "weight": w, "running_mean": None,
              "running_var": None, "save_mean": mean, "save_var": invstd, "epsilon": 1e-5}
        for g, w_ in zip(references._batch_norm_backward(torch, nb, None), want):
            torch.testing.assert_close(g, w_)


class Dropout(unittest.TestCase):
    def test_the_output_given_the_mask(self):
        torch.manual_seed(0)
        x = torch.randn(100, dtype=torch.float64)
        out, mask = torch.ops.aten.native_dropout.default(x, 0.25, True)
        ref = references._dropout(torch, {"input": x, "p": 0.25, "train": True}, [out, mask])[0]
        torch.testing.assert_close(ref, out)


class Generic(unittest.TestCase):
    def test_an_op_writes_its_arguments_as_on_the_gpu(self):
        a = torch.ones(3, dtype=torch.float64)
        named = {"self": a, "other": torch.full((3,), 2.0, dtype=torch.float64), "alpha": 1}
        references.run(torch, torch.ops.aten.add_.Tensor, "add_", named, [None])
        torch.testing.assert_close(named["self"], torch.full((3,), 3.0, dtype=torch.float64))

    def test_a_device_argument_names_the_cpu(self):
        n = {"size": [2], "fill_value": 1.5, "dtype": torch.float32,
             "device": torch.device("meta")}
        out = references.run(torch, torch.ops.aten.full.default, "full", n, [None])
        self.assertEqual(out[0].device.type, "cpu")


if __name__ == "__main__":
    unittest.main()
