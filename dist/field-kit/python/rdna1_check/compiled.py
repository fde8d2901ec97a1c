"""Graphs compiled by torch.compile's Inductor, checked when they first run: the same graph
(the aten graph Inductor compiled, forward or backward) run eagerly on the CPU from the same
inputs, in float64 and in the program's own types, each result judged as an op's is
(compare.py: PyTorch's own rule for compiled graphs, the dynamo minifier's). A wrong graph is
named with the kernels Inductor generated for it (Triton's on a GPU), the case of Triton's AMD
buffer ops writing zeros on gfx101x (unsloth #11614).

Inductor's compile_fx takes the compiler of each graph as its `inner_compile` argument; the
check hands it the one it would have used (torch._inductor.compile_fx.compile_fx_inner, looked
up when it compiles) wrapped: the compiled graph is Inductor's own object, unchanged but for
its callable, which on its first call copies the inputs to the CPU before the graph runs and
compares after. Every later call goes straight to Inductor's callable. AOTAutograd's cache
would hand back a graph compiled in an earlier run without compiling it (or this wrapper) at
all: it is turned off in a checked process (torch._functorch.config.enable_autograd_cache;
Inductor's own FX graph cache, inside compile_fx_inner, still serves), which costs compile
time only."""

import copy
import itertools
import re
import threading
import time

from . import compare, families, references
from .sink import number, text

# The kernels of Inductor's generated module: `NAME = async_compile.triton('NAME', ...)`,
# `NAME = async_compile.cpp_pybinding([...], ...)` (the CPU's), and the extern calls.
_KERNEL = re.compile(r"^(\w+) = async_compile\.\w+\(", re.M)
_EXTERN = re.compile(r"\bextern_kernels\.(\w+)\(")
# Elements of a graph's inputs its CPU reference may take (about 2 GB in float64, twice).
GRAPH_ELEMENTS = 2.5e8


def install(torch, module, check):
    """Wraps `module.compile_fx` (torch._inductor.compile_fx) once."""
    orig = getattr(module, "compile_fx", None)
    if orig is None or getattr(orig, "_rdna1_check", False):
        return
    graphs = Graphs(torch, check)

    def compile_fx(model_, example_inputs_, *args, **kwargs):
        if args:  # inner_compile given by position: as a keyword, so it can be wrapped
            kwargs.setdefault("inner_compile", args[0])
            args = args[1:]
        inner = kwargs.get("inner_compile") or getattr(module, "compile_fx_inner")
        if not getattr(inner, "_rdna1_check", False):
            inner = graphs.wrap(inner)
        kwargs["inner_compile"] = inner
        return orig(model_, example_inputs_, *args, **kwargs)

    try:
        import torch._functorch.config as functorch_config

        functorch_config.enable_autograd_cache = False
    except Exception as e:
        check.sink.write({"event": "check_error", "id": None,
                          "error": f"AOTAutograd's cache stays on: {text(e)}"})
    compile_fx._rdna1_check = True
    compile_fx.__wrapped__ = orig
    compile_fx.__name__ = orig.__name__
    compile_fx.__doc__ = orig.__doc__
    module.compile_fx = compile_fx


class Graphs:
    def __init__(self, torch, check):
        self.torch = torch
        self.check = check
        self.sink = check.sink
        self.count = itertools.count(1)
        self.lock = threading.Lock()

    def wrap(self, inner):
        graphs = self

        def inner_compile(gm, example_inputs, *args, **kwargs):
            try:
                saved = copy.deepcopy(gm)
            except Exception as e:  # never keep the program from compiling
                saved = e
            compiled = inner(gm, example_inputs, *args, **kwargs)
            try:
                graphs.attach(compiled, saved, bool(kwargs.get("is_backward", False)))
            except Exception as e:
                graphs.sink.write({"event": "check_error", "id": None,
                                   "error": f"compiled graph: {text(e)}"})
            return compiled

        inner_compile._rdna1_check = True
        inner_compile.__wrapped__ = inner
        return inner_compile

    def attach(self, compiled, gm, backward):
        """Replaces the compiled graph's callable with one that checks its first call."""
        ident = next(self.count)
        label = f"{'backward' if backward else 'forward'} {ident}"
        source = getattr(compiled, "source_code", None) or ""
        kernels = list(dict.fromkeys(_KERNEL.findall(source) + [
            f"extern {k}" for k in _EXTERN.findall(source)]))
        ops = []
        if not isinstance(gm, Exception):
            for node in gm.graph.nodes:
                if node.op == "call_function":
                    name = getattr(node.target, "_schema", None)
                    name = name.name.split("::")[-1] if name is not None else \
                        getattr(node.target, "__name__", str(node.target))
                    if name not in ops:
                        ops.append(name)
        self.sink.write({"event": "graph", "id": ident, "graph": label, "kernels": kernels[:64],
                         "ops": ops[:64]})
        if isinstance(gm, Exception):
            self.sink.write({"event": "graph_unchecked", "id": ident,
                             "why": f"its graph could not be copied: {text(gm)}"})
            return
        random = [o for o in ops if families._FAMILY.get(o) == "random"
                  or o in ("inductor_random", "inductor_seeds", "philox_rand")]
        if random:
            self.sink.write({"event": "graph_unchecked", "id": ident,
                             "why": f"random numbers in the graph ({', '.join(random[:3])})"})
            return
        holder, attr = _callable_of(compiled)
        if holder is None:
            self.sink.write({"event": "graph_unchecked", "id": ident,
                             "why": "this Inductor's compiled graph has no callable to wrap"})
            return
        real = getattr(holder, attr)
        boxed = getattr(real, "_boxed_call", attr == "current_callable")
        state = {"done": False}
        graphs = self

        def first(args):
            if state["done"]:
                return real(args) if boxed else real(*args)
            state["done"] = True
            # The copies and the CPU reference are the check's own ops: the mode, on the stack
            # while it looks (it ignores compilation, not the compiled code's run), lets them
            # pass; the graph's own run it sees as the program's.
            local = getattr(getattr(getattr(graphs.check, "life", None), "mode", None),
                            "local", None)
            mine = local is not None and not getattr(local, "busy", False)

            def own(on):
                if mine:
                    local.busy = on

            own(True)
            try:
                inputs = checkable(args)
            finally:
                own(False)
            out = real(args) if boxed else real(*args)
            own(True)
            try:
                judged(inputs, out)
            finally:
                own(False)
            # Inductor's own callable from now on.
            try:
                setattr(holder, attr, real)
            except Exception:
                pass
            return out

        def checkable(args):
            """CPU copies of the graph's inputs, or None where it is not checked."""
            inputs = None
            why = graphs.too_much(args)
            if why is not None:
                graphs.sink.write({"event": "graph_unchecked", "id": ident, "why": why})
            else:
                try:
                    inputs = [references.to_cpu(graphs.torch, a, False) for a in args]
                except Exception as e:
                    graphs.sink.write({"event": "graph_unchecked", "id": ident,
                                       "why": f"its inputs could not be copied: {text(e)}"})
            return inputs

        def judged(inputs, out):
            if inputs is None:
                return
            t0 = time.monotonic()
            try:
                graphs.judge(ident, gm, inputs, out)
            except Exception as e:
                graphs.sink.write({"event": "graph_unchecked", "id": ident,
                                   "why": f"its CPU reference failed: {text(e)}"})
            finally:
                graphs.check.checker and setattr(
                    graphs.check.checker, "spent",
                    graphs.check.checker.spent + time.monotonic() - t0)

        if boxed:
            wrapper = first
            wrapper._boxed_call = True
        else:
            def wrapper(*args):
                return first(list(args))
        setattr(holder, attr, wrapper)

    def too_much(self, args):
        """Why a graph is not checked before anything is copied: the check's time spent, or
        inputs too large for a reference on the CPU (a whole model's parameters and
        activations, twice, in float64)."""
        torch = self.torch
        checker = self.check.checker
        if checker is not None and checker.spent > checker.settings.budget_s:
            return (f"the check's {checker.settings.budget_s:g} s of CPU references were spent "
                    "before the graph first ran")
        total = sum(a.numel() for a in args if isinstance(a, torch.Tensor))
        if total > GRAPH_ELEMENTS:
            return (f"too large to run on the CPU ({total:.3g} elements of inputs, more than "
                    f"{GRAPH_ELEMENTS:.3g})")
        return None

    def judge(self, ident, gm, inputs, out):
        torch = self.torch
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        with torch.random.fork_rng(devices=[]):
            ref = _run_on_cpu(torch, gm, [references.to_cpu(torch, a, True) for a in inputs],
                              True)
            try:
                low = _run_on_cpu(torch, gm, inputs, False)
            except Exception:
                low = None
        refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
        lows = (list(low) if isinstance(low, (list, tuple)) else [low]) if low is not None \
            else [None] * len(refs)
        judged = 0
        for i, (g, r, lp) in enumerate(zip(outs, refs, lows)):
            if not isinstance(g, torch.Tensor) or not isinstance(r, torch.Tensor):
                continue
            if g.is_floating_point():
                v = compare.judge(torch, g, r, lp, compare.math_of(
                    str(g.dtype).replace("torch.", "")))
            else:
                v = compare.judge_exact(torch, g, r)
            rec = {"event": "graph_result", "id": ident, "direction": f"output {i}"}
            for k, x in v.items():
                rec[k] = number(x) if isinstance(x, float) else x
            self.sink.write(rec)
            judged += 1
        if not judged:
            self.sink.write({"event": "graph_unchecked", "id": ident,
                             "why": "no tensor result to compare"})


def _callable_of(compiled):
    """Where the compiled graph keeps what it calls: Inductor's CompiledFxGraph calls its
    `current_callable`; older ones are the callable."""
    if hasattr(compiled, "current_callable") and callable(compiled.current_callable):
        return compiled, "current_callable"
    return None, None


def _run_on_cpu(torch, gm, inputs, f64):
    """`gm` (a copy of the graph Inductor compiled) run eagerly on the CPU: its device
    arguments name the CPU, and with `f64` its floating-point types are float64 (as the
    minifier's cast_to_fp64 does)."""
    g = copy.deepcopy(gm)
    cpu = torch.device("cpu")
    floating = (torch.float16, torch.bfloat16, torch.float32)
    for node in g.graph.nodes:
        if node.op != "call_function":
            continue
        kw = dict(node.kwargs)
        changed = False
        if isinstance(kw.get("device"), torch.device) and kw["device"].type != "cpu":
            kw["device"] = cpu
            changed = True
        if f64 and kw.get("dtype") in floating:
            kw["dtype"] = torch.float64
            changed = True
        if changed:
            node.kwargs = kw
        if f64 and node.target is getattr(torch.ops.prims.convert_element_type, "default", None) \
                and len(node.args) > 1 and node.args[1] in floating:
            node.args = (node.args[0], torch.float64) + tuple(node.args[2:])
        if node.target is getattr(torch.ops.prims.device_put, "default", None):
            node.args = (node.args[0], cpu) + tuple(node.args[2:])
    g.recompile()
    g = g.to("cpu")
    if f64:
        g = g.to(torch.float64)
    with torch.no_grad():
        return g(*inputs)
