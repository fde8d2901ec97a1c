"""The CPU reference of one op: the same op (or, where it has no CPU kernel, the computation it
stands for) run on the CPU from the same inputs, in float64 and in the GPU's own types
(compare.py says why both). Inputs are what reached the dispatcher, so autocast's rounding is
already applied to them."""

import math

from . import calls


class NoReference(Exception):
    """The op has no CPU reference here: it is listed as unchecked, with this reason."""


def to_cpu(torch, value, f64):
    """`value` (a tensor, or a list or tuple of them, or anything else) on the CPU, floating
    tensors in float64 if `f64`. Always a copy: the reference may write into it."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if f64 and t.is_floating_point():
            return t.to("cpu", torch.float64, copy=True)
        if f64 and t.is_complex():
            return t.to("cpu", torch.complex128, copy=True)
        return t.to("cpu", copy=True)
    if isinstance(value, (list, tuple)):
        return type(value)(to_cpu(torch, v, f64) for v in value)
    return value


def on_cpu_kwargs(torch, named):
    """Arguments that name a device name the CPU instead."""
    out = dict(named)
    if "device" in out and out["device"] is not None:
        out["device"] = torch.device("cpu")
    if out.get("pin_memory"):
        out["pin_memory"] = False
    return out


def call(func, named):
    """Calls `func` with arguments by name: positional as the schema orders them up to the first
    one not given, the rest (and keyword-only ones) as keywords."""
    args, kwargs = [], {}
    positional = True
    for a in func._schema.arguments:
        if a.name not in named:
            positional = False
            continue
        if a.kwarg_only or not positional:
            kwargs[a.name] = named[a.name]
        else:
            args.append(named[a.name])
    return func(*args, **kwargs)


def results(torch, out):
    """An op's results as a list (a tensor, a tuple of them, None, a number)."""
    if isinstance(out, (list, tuple)):
        return list(out)
    return [out]


# -- ops without a CPU kernel, by what they compute ----------------------------------------------

def _batch_norm(torch, n, outs):
    """cudnn_batch_norm and miopen_batch_norm: PyTorch's own batch norm (their saved variance
    is the inverse standard deviation, as native_batch_norm's)."""
    out, mean, invstd = torch.ops.aten.native_batch_norm.default(
        n["input"], n["weight"], n.get("bias"), n.get("running_mean"), n.get("running_var"),
        bool(n["training"]), n["exponential_average_factor"], n["epsilon"])
    return [out, mean, invstd, None]


def _batch_norm_backward(torch, n, outs):
    return list(torch.ops.aten.native_batch_norm_backward.default(
        n["grad_output"], n["input"], n["weight"], n.get("running_mean"), n.get("running_var"),
        n.get("save_mean"), n.get("save_var"), True, n["epsilon"], [True, True, True]))


def _attention(torch, q, k, v, bias, causal, scale):
    """Attention's exact computation (the math kernel's), with what its backward needs."""
    if k.shape[-3] != q.shape[-3]:  # grouped-query attention: each key head serves a group
        rep = q.shape[-3] // k.shape[-3]
        k = k.repeat_interleave(rep, dim=-3)
        v = v.repeat_interleave(rep, dim=-3)
    scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    s = (q @ k.transpose(-2, -1)) * scale
    if causal:
        lq, lk = s.shape[-2], s.shape[-1]
        keep = torch.ones(lq, lk, dtype=torch.bool).tril(diagonal=0)  # as PyTorch: top left
        s = s.masked_fill(~keep, float("-inf"))
    if bias is not None:
        s = s + (bias if bias.dtype != torch.bool else
                 torch.zeros_like(bias, dtype=s.dtype).masked_fill(~bias, float("-inf")))
    p = torch.softmax(s, dim=-1)
    return p @ v, p, k, v, scale


def _attention_grads(torch, n, grad_out, q, k, v, bias, causal, scale):
    out, p, kk, vv, sc = _attention(torch, q, k, v, bias, causal, scale)
    dv = p.transpose(-2, -1) @ grad_out
    dp = grad_out @ vv.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
    dq = (ds @ kk) * sc
    dk = (ds.transpose(-2, -1) @ q) * sc
    if k.shape[-3] != q.shape[-3]:
        g = q.shape[-3] // k.shape[-3]
        dk = dk.unflatten(-3, (k.shape[-3], g)).sum(-3)
        dv = dv.unflatten(-3, (k.shape[-3], g)).sum(-3)
    return dq, dk, dv, ds


def _no_dropout(n, name="dropout_p"):
    if float(n.get(name, 0.0) or 0.0) != 0.0:
        raise NoReference("attention with dropout: its random mask cannot be reproduced")


def _flash(torch, n, outs):
    _no_dropout(n)
    out = _attention(torch, n["query"], n["key"], n["value"], None, bool(n["is_causal"]),
                     n.get("scale"))[0]
    return [out] + [None] * 8


def _flash_backward(torch, n, outs):
    _no_dropout(n)
    dq, dk, dv, _ = _attention_grads(torch, n, n["grad_out"], n["query"], n["key"], n["value"],
                                     None, bool(n["is_causal"]), n.get("scale"))
    return [dq, dk, dv]


def _efficient(torch, n, outs):
    _no_dropout(n)
    out = _attention(torch, n["query"], n["key"], n["value"], n.get("attn_bias"),
                     bool(n["is_causal"]), n.get("scale"))[0]
    return [out] + [None] * 8


def _efficient_backward(torch, n, outs):
    _no_dropout(n)
    dq, dk, dv, ds = _attention_grads(torch, n, n["grad_out_"], n["query"], n["key"],
                                      n["value"], n.get("attn_bias"), bool(n["is_causal"]),
                                      n.get("scale"))
    bias = n.get("attn_bias")
    dbias = None
    if bias is not None and bias.is_floating_point():
        dbias = ds
        while dbias.dim() > bias.dim():
            dbias = dbias.sum(0)
        for i, s in enumerate(bias.shape):
            if s == 1 and dbias.shape[i] != 1:
                dbias = dbias.sum(i, keepdim=True)
    return [dq, dk, dv, dbias]


def _cudnn_attention_backward(torch, n, outs):
    _no_dropout(n)
    dq, dk, dv, _ = _attention_grads(torch, n, n["grad_out"], n["query"], n["key"],
                                     n["value"], n.get("attn_bias"), bool(n["is_causal"]),
                                     n.get("scale"))
    return [dq, dk, dv]


def _dropout(torch, n, outs):
    """native_dropout: its mask is random, but given the GPU's mask the output is exact."""
    if not n.get("train", True):
        return [n["input"].clone(), None]
    mask = outs[1]
    if mask is None:
        raise NoReference("no mask to check the output against")
    p = float(n["p"])
    scale = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return [n["input"] * mask.to(n["input"].dtype) * scale, None]


MAPPED = {
    "cudnn_batch_norm": _batch_norm,
    "miopen_batch_norm": _batch_norm,
    "cudnn_batch_norm_backward": _batch_norm_backward,
    "miopen_batch_norm_backward": _batch_norm_backward,
    "_scaled_dot_product_flash_attention": _flash,
    "_scaled_dot_product_flash_attention_backward": _flash_backward,
    "_scaled_dot_product_efficient_attention": _efficient,
    "_scaled_dot_product_efficient_attention_backward": _efficient_backward,
    "_scaled_dot_product_cudnn_attention": _efficient,
    "_scaled_dot_product_cudnn_attention_backward": _cudnn_attention_backward,
    "native_dropout": _dropout,
}

# Arguments an op writes that its schema does not say it writes.
WRITES = {
    "cudnn_batch_norm": ("running_mean", "running_var"),
    "miopen_batch_norm": ("running_mean", "running_var"),
}


def writes(func, name, named):
    names = list(calls.written(func))
    for n in WRITES.get(name, ()):
        if named.get(n) is not None and named.get("training", True) and n not in names:
            names.append(n)
    return names


def run(torch, func, name, named_cpu, gpu_outs_cpu):
    """The op's results on the CPU from `named_cpu` (which it may write into, as the GPU's
    call wrote its arguments): a list aligned with the GPU's results."""
    mapped = MAPPED.get(name)
    n = on_cpu_kwargs(torch, named_cpu)
    if mapped is not None:
        return mapped(torch, n, gpu_outs_cpu)
    try:
        return results(torch, call(func, n))
    except NotImplementedError as e:
        raise NoReference(f"no CPU reference ({str(e).splitlines()[0][:200]})")
    except RuntimeError as e:
        text = str(e)
        if "not implemented for" in text or "Could not run" in text:
            raise NoReference(f"no CPU reference ({text.splitlines()[0][:200]})")
        raise
