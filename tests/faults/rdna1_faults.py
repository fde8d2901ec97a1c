"""Faults injected below torch, as a faulty solver or kernel would make them (tests only: the
CPU tests in make test and tests/device on a real GPU). Importing this module arms the faults
that RDNA1_FAULTS names; nothing else changes.

RDNA1_FAULTS: rules separated by ';', each fields KEY=VALUE separated by ',':
  op=NAME         an op of the dispatcher (mm, convolution_backward, cudnn_batch_norm, ...);
  compiled=forward|backward
                  instead of op: a graph Inductor compiled (its outputs, as a kernel writes
                  them);
  shape=AxB       only calls whose first tensor has this shape;
  result=N        only the op's Nth result (default: every floating result);
  action=wrong|zeros|raise
                  results times `factor` (default 1.01), zeros, or an error `message`
                  (as MIOpen's reach PyTorch); of an op that returns nothing (a foreach
                  update), the tensors it wrote;
  cudnn=1         only while torch.backends.cudnn.enabled is on (as a MIOpen solver: a
                  bypass cures it);
  unless=VAR=VALUE
                  not when the environment has VAR=VALUE (the cure a search should find,
                  e.g. unless=AMDGCN_USE_BUFFER_OPS=0).
Every fault made appends a line to RDNA1_FAULTS_LOG (if set): the rule's op and its action.

The op faults are a TorchDispatchMode at the bottom of the mode stack, below rdna1ctl's check
(which must see what the kernel gave): inserted under whatever is there when the program first
uses the GPU (after the check's own mode, which arms itself then too) or at once on the CPU."""

import os
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def parse(text):
    rules = []
    for part in (text or "").split(";"):
        part = part.strip()
        if not part:
            continue
        rule = {}
        for field in part.split(","):
            k, _, v = field.partition("=")
            if k == "unless":
                rule["unless"] = v  # VAR=VALUE: the rest of the field
            else:
                rule[k.strip()] = v.strip()
        if "op" not in rule and "compiled" not in rule:
            raise ValueError(f"RDNA1_FAULTS rule {part!r}: give op= or compiled=")
        if rule.get("action", "wrong") not in ("wrong", "zeros", "raise"):
            raise ValueError(f"RDNA1_FAULTS rule {part!r}: action is wrong, zeros or raise")
        rules.append(rule)
    return rules


def _applies(rule):
    unless = rule.get("unless")
    if unless:
        var, _, value = unless.partition("=")
        if os.environ.get(var) == value:
            return False
    if rule.get("cudnn") == "1" and not torch.backends.cudnn.enabled:
        return False
    return True


def _log(rule, what):
    path = os.environ.get("RDNA1_FAULTS_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{rule.get('op') or 'compiled ' + rule['compiled']} {what}\n")


def _damage(rule, results):
    """The results as the faulty kernel leaves them (in place: the caller's objects)."""
    action = rule.get("action", "wrong")
    only = rule.get("result")
    for i, t in enumerate(results):
        if only is not None and str(i) != only:
            continue
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            with torch.no_grad():
                if action == "zeros":
                    t.zero_()
                else:
                    t.mul_(float(rule.get("factor", "1.01")))
    _log(rule, action)


class Faults(TorchDispatchMode):
    def __init__(self, rules):
        super().__init__()
        self.rules = [r for r in rules if "op" in r]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name.split("::")[-1]
        rule = next((r for r in self.rules if r["op"] == name and _applies(r)
                     and _shape_matches(r, args)), None)
        if rule is not None and rule.get("action") == "raise":
            _log(rule, "raise")
            raise RuntimeError(rule.get("message", "miopenStatusUnknownError (injected)"))
        out = func(*args, **kwargs)
        if rule is not None:
            written = _written(func, args, kwargs) if out is None else None
            if written:  # an op that returns nothing (a foreach update): what it wrote
                _damage(rule, written)
            else:
                _damage(rule, list(out) if isinstance(out, (list, tuple)) else [out])
        return out


def _written(func, args, kwargs):
    """The tensors an in-place op writes (its schema's mutable arguments), lists flattened."""
    out = []
    for i, a in enumerate(func._schema.arguments):
        if a.alias_info is None or not a.alias_info.is_write:
            continue
        v = kwargs.get(a.name, args[i] if i < len(args) else None)
        out.extend(v if isinstance(v, (list, tuple)) else [v])
    return out


def _shape_matches(rule, args):
    want = rule.get("shape")
    if not want:
        return True
    first = next((a for a in args if isinstance(a, torch.Tensor)), None)
    return first is not None and "x".join(str(s) for s in first.shape) == want


def _insert_at_bottom(mode):
    """`mode` under every mode on the stack now (a check above it sees what it does)."""
    above = []
    while torch._C._len_torch_dispatch_stack() > 0:
        above.append(torch._C._pop_torch_dispatch_stack(None))
    torch._C._push_on_torch_dispatch_stack(mode)
    for m in reversed(above):
        torch._C._push_on_torch_dispatch_stack(m)


def _compiled(rules):
    """Compiled graphs' faults: Inductor's graph compiler wrapped, its graphs' callables
    damaging their outputs (below the check, which wraps compile_fx and looks the graph
    compiler up when it compiles)."""
    wanted = [r for r in rules if "compiled" in r]
    if not wanted:
        return
    import torch._inductor.compile_fx as cf

    real = cf.compile_fx_inner

    def compile_fx_inner(gm, example_inputs, *args, **kwargs):
        compiled = real(gm, example_inputs, *args, **kwargs)
        which = "backward" if kwargs.get("is_backward") else "forward"
        rule = next((r for r in wanted if r["compiled"] == which), None)
        if rule is None or not hasattr(compiled, "current_callable"):
            return compiled
        call = compiled.current_callable

        def faulty(args_):
            out = call(args_)
            if _applies(rule):
                _damage(rule, list(out) if isinstance(out, (list, tuple)) else [out])
            return out

        faulty._boxed_call = True
        compiled.current_callable = faulty
        return compiled

    cf.compile_fx_inner = compile_fx_inner


RULES = parse(os.environ.get("RDNA1_FAULTS"))
if any("op" in r for r in RULES):
    _mode = Faults(RULES)
    if torch.cuda.is_initialized() or not torch.cuda.is_available():
        _insert_at_bottom(_mode)
    else:
        torch.cuda._lazy_call(lambda: _insert_at_bottom(_mode))
_compiled(RULES)
sys.modules.setdefault("rdna1_faults", sys.modules[__name__])
