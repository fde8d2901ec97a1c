"""rdna1ctl's numerics check, inside a PyTorch program's own process.

Loaded by rdna1ctl's sitecustomize.py (beside this file, put on PYTHONPATH by `rdna1ctl search`,
`report` and `run`), or imported by battery.py. Nothing happens until the program imports torch
(an import hook, not an import here): then, as the environment asks,

- RDNA1_MIOPEN_BYPASS=1: torch.backends.cudnn.enabled = False (ROCm builds check it before
  MIOpen: ConvParams::use_miopen, aten/src/ATen/native/Convolution.cpp);
- RDNA1_MIOPEN_BYPASS_KINDS="BatchNorm2d training|Conv2d 1x1": the same for those layer kinds
  only (a layer matches when its kind starts with one): the flag is off while the call runs
  and, for a convolution, while its backward runs (convolution_backward reads the flag again;
  a batch norm's backward follows its forward's choice);
- always: every distinct convolution and batch-norm call (op, shapes, dtype, layout, device,
  the cudnn flag) is recorded once with the backend that runs it;
- RDNA1_CHECK=numerics: and checked once against float64 on the CPU from the same inputs: the
  forward output and the input gradient of the program's own call on a slice of the batch
  (a convolution's first SLICE samples, a batch norm's first channels over the whole batch),
  the weight and bias gradients from the program's own call where the batch is small
  (FULL_FLOPS) and else from a re-run on the slice.

Each process appends one JSON object a line to RDNA1_CHECK_DIR/check-PID.jsonl as it goes (a
process that dies still leaves what it did: a "layer" record without its results names the
layer that was running). Nothing here may break the program: every failure of the check
itself is recorded and the program goes on.

Errors are MIOpen's own measure (rms_range in MIOpen's tests: the RMS of the difference over
the largest magnitude) and the largest difference over the largest reference magnitude;
TOLERANCES says why each bound is what it is.
"""

import json
import os
import sys
import threading
import time

FORMAT = 1
# Samples of a convolution's batch the reference is computed on.
SLICE = 2
# Weight gradients are checked from the program's own call when the whole batch's reference
# costs at most this many multiply-adds on the CPU (else from a re-run on the slice).
FULL_FLOPS = 2e9
# A batch norm's reference covers the whole batch for as many channels as fit this many
# elements (at least one channel).
BN_ELEMENTS = 4_000_000
# Distinct calls recorded per process: a program that makes more is recorded up to here.
MAX_LAYERS = 400

# (rms_rel, max_rel) per arithmetic, both over the result's magnitude (errors() says which).
# rms_rel is MIOpen's own test measure (rms_range); MIOpen's solver tests accept 80 machine
# epsilons (test/gtest/conv_test_base.hpp: 9.5e-6 for float32, 7.8e-2 for half). float32 allows
# 10 times that for Winograd/FFT transforms and long reductions, and 1e-3 of the largest value
# for the worst element: a result 1% off fails, code for another ISA is off by O(1). TF32,
# float16 and bfloat16 round their inputs (to 10, 10 and 7 bits), so only gross errors can be
# told from rounding: the bounds are at least 4 times the largest error of a correct result
# measured on a real GPU (docs/MEASUREMENTS.md), bfloat16 8 times float16's (3 bits fewer), and
# below MIOpen's own half bound.
TOLERANCES = {
    "float32": (1e-4, 1e-3),
    "tf32": (2e-3, 2e-2),
    "float16": (2e-3, 2e-2),
    "bfloat16": (1.6e-2, 1.6e-1),
}
# The share of `bound` (the same computation on the inputs' magnitudes) below which a result
# is measured against the bound instead of itself: a sum cancelled to under 1% of its terms
# (a convolution's bias gradient under a batch norm is 0 in exact arithmetic) is rounding.
CANCELLED = 1e-2

CONV_OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d")


def _now():
    return round(time.time(), 3)


class Sink:
    """The records of one process: RDNA1_CHECK_DIR/check-PID.jsonl (the pid at each write, so a
    forked child writes its own file), and in memory for battery.py."""

    def __init__(self, directory):
        self.directory = directory
        self.records = []
        self.lock = threading.Lock()

    def write(self, rec):
        rec.setdefault("pid", os.getpid())
        rec.setdefault("t", _now())
        with self.lock:
            self.records.append(rec)
            if not self.directory:
                return
            try:
                path = os.path.join(self.directory, f"check-{os.getpid()}.jsonl")
                with open(path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec, allow_nan=False, default=str) + "\n")
            except (OSError, ValueError):
                pass


def _number(x):
    """x for JSON: a float with 3 significant digits, or "inf"/"nan"."""
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    return float(f"{x:.3g}")


def errors(got, ref, bound=None):
    """(rms_rel, max_rel) of `got` against the float64 reference `ref` (same shape): the RMS
    and the largest absolute difference, each over the largest magnitude of `ref` and `got`
    (MIOpen's rms_range), or over CANCELLED of `bound`'s where that is more: `bound` is the
    same computation on the magnitudes of its inputs, and a sum whose terms cancel to nearly
    nothing (the gradient of a convolution's bias under a batch norm) has only rounding left,
    which is no error. inf when `got` is not finite."""
    import torch

    got = got.detach().to("cpu", torch.float64)
    if got.shape != ref.shape:
        return float("inf"), float("inf")
    if not bool(torch.isfinite(got).all()):
        return float("inf"), float("inf")
    if got.numel() == 0:
        return 0.0, 0.0
    diff = got - ref
    mag = max(ref.abs().max().item(), got.abs().max().item())
    if bound is not None and bound.numel():
        mag = max(mag, CANCELLED * bound.abs().max().item())
    mag = mag or 1.0
    rms = diff.pow(2).mean().sqrt().item() / mag
    return rms, diff.abs().max().item() / mag


def backend_family(name, device_type):
    """PyTorch's ConvBackend name, or a batch-norm grad_fn's, as the owner reads it."""
    if name is None:
        return None
    if "Miopen" in name:
        return "MIOpen"
    if "Cudnn" in name:
        return "cuDNN"
    if device_type == "cpu":
        return "PyTorch (CPU)"
    return "PyTorch"


class Checker:
    """Wraps torch.nn.functional's convolutions and batch_norm (the functions torch.nn's
    modules call) with a recorder, and with the numerics check if asked."""

    def __init__(self, sink, numerics=False, bypass=False, self_test_cpu=False, inject=None,
                 bypass_kinds=()):
        self.sink = sink
        self.numerics = numerics
        self.bypass = bypass
        self.bypass_kinds = tuple(k for k in bypass_kinds if k) if not bypass else ()
        self.self_test_cpu = self_test_cpu
        # (kind substring, direction, factor): results of matching layers made wrong on
        # purpose, as a faulty backend would (RDNA1_CHECK_TEST_WRONG; tests only).
        self.inject = inject
        self.seen = {}
        self.next_id = 1
        self.lock = threading.Lock()
        self.local = threading.local()
        self.originals = {}
        self.torch = None
        self.device_names = {}
        self.overflow = False

    # -- installing --------------------------------------------------------------------------

    def on_torch(self, torch):
        """Called once torch is imported."""
        self.torch = torch
        import torch.nn.functional as F

        self.tensor = torch.Tensor
        self.cudnn_enabled = getattr(torch._C, "_get_cudnn_enabled",
                                     lambda: torch.backends.cudnn.enabled)
        self.amp_state = _amp_state_function(torch)
        inference = getattr(torch, "is_inference_mode_enabled", lambda: False)
        grad = torch.is_grad_enabled
        self.grad_mode = lambda: (grad(), inference())
        self.pending = {}

        if self.bypass:
            torch.backends.cudnn.enabled = False
        for op in CONV_OPS + ("batch_norm",):
            orig = getattr(F, op, None)
            if orig is None or getattr(orig, "_rdna1_check", False):
                continue
            self.originals[op] = orig
            wrapped = self._wrap(op, orig)
            if self.bypass_kinds:
                wrapped = self._route(op, wrapped)
            setattr(F, op, wrapped)
        self.sink.write({
            "event": "torch", "format": FORMAT, "torch": getattr(torch, "__version__", None),
            "hip": getattr(torch.version, "hip", None), "cuda": getattr(torch.version, "cuda", None),
            "bypass": self.bypass, "bypass_kinds": list(self.bypass_kinds),
            "numerics": self.numerics,
            "cudnn_enabled": bool(torch.backends.cudnn.enabled),
        })
        return self

    def _wrap(self, op, orig):
        checker = self
        local = self.local
        compiling = _compiling_function(self.torch)
        seen = self.seen
        key_of = self._fast_key

        def wrapper(*args, **kwargs):
            # Under torch.compile (traced, not run) the wrapper steps aside first of all.
            if compiling() or getattr(local, "busy", False):
                return orig(*args, **kwargs)
            try:
                key = key_of(op, args, kwargs)
                new = key not in seen
            except Exception:  # an argument that cannot be a key: never break the program
                return orig(*args, **kwargs)
            if not new:
                return orig(*args, **kwargs)
            return checker._first_call(op, orig, key, args, kwargs)

        wrapper._rdna1_check = True
        wrapper.__wrapped__ = orig
        wrapper.__name__ = getattr(orig, "__name__", op)
        wrapper.__doc__ = getattr(orig, "__doc__", None)
        return wrapper

    def _route(self, op, inner):
        """`inner` with MIOpen bypassed for the layer kinds asked (RDNA1_MIOPEN_BYPASS_KINDS):
        the cudnn flag off while the call runs and, for a convolution, while its backward
        node runs (pre- and post-hooks on the node). Which calls match is decided once per
        distinct call."""
        torch = self.torch
        get = self.cudnn_enabled
        set_flag = getattr(torch._C, "_set_cudnn_enabled", None)
        kinds = self.bypass_kinds
        decided = {}
        key_of = self._fast_key
        is_conv = op != "batch_norm"

        def flag(v):
            if set_flag is not None:
                set_flag(v)
            else:
                torch.backends.cudnn.enabled = v

        compiling = _compiling_function(torch)

        def routed(*args, **kwargs):
            if compiling():  # traced, not run: torch.compile's graph decides its backends
                return inner(*args, **kwargs)
            try:
                key = key_of(op, args, kwargs)
                route = decided.get(key)
                if route is None:
                    params = _bind(op, args, kwargs)
                    info = self._info(op, params)
                    route = decided[key] = _kind_is(_kind(op, info), kinds)
            except Exception:  # an argument that cannot be a key: never break the program
                route = False
            if not route:
                return inner(*args, **kwargs)
            before = get()
            flag(False)
            try:
                out = inner(*args, **kwargs)
            finally:
                flag(before)
            node = getattr(out, "grad_fn", None)
            if is_conv and node is not None and hasattr(node, "register_prehook"):
                saved = []

                def pre(grad_outputs):
                    saved.append(get())
                    flag(False)

                def post(grad_inputs, grad_outputs):
                    flag(saved.pop() if saved else True)

                node.register_prehook(pre)
                node.register_hook(post)
            return out

        routed._rdna1_check = True
        routed.__wrapped__ = inner
        routed.__name__ = getattr(inner, "__name__", op)
        routed.__doc__ = getattr(inner, "__doc__", None)
        return routed

    def _fast_key(self, op, args, kwargs):
        """What makes a call distinct, cheaply (every call computes it, a few microseconds):
        the arguments with tensors as shape, dtype, device, whether they need gradients and
        are contiguous; the cudnn flag, autocast's state and the grad and inference modes."""
        tensor = self.tensor
        # A layer first met under no_grad (a validation pass before training) is met again
        # with gradients as another call: its backward is checked then.
        key = [op, self.cudnn_enabled(), self.amp_state(), self.grad_mode()]
        for a in args:
            if isinstance(a, tensor):
                key.append((a.shape, a.dtype, a.device, a.requires_grad, a.is_contiguous()))
            else:
                key.append(tuple(a) if type(a) is list else a)
        if kwargs:
            for n in sorted(kwargs):
                a = kwargs[n]
                if isinstance(a, tensor):
                    a = (a.shape, a.dtype, a.device, a.requires_grad, a.is_contiguous())
                key.append((n, tuple(a) if type(a) is list else a))
        return tuple(key)

    def _info(self, op, params):
        """The call in words and numbers, for its record."""
        torch = self.torch
        x = params["input"]
        w = params.get("weight")
        layout = "contiguous"
        if x.dim() in (4, 5) and not x.is_contiguous():
            fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
            layout = "channels_last" if x.is_contiguous(memory_format=fmt) else "strided"
        shape = lambda t: list(t.shape) if isinstance(t, torch.Tensor) else None  # noqa: E731
        info = {
            "op": op, "input": shape(x), "weight": shape(w),
            "dtype": str(x.dtype).replace("torch.", ""),
            "autocast": _autocast(torch, "cuda" if x.device.type == "cuda" else "cpu"),
            "layout": layout, "device": str(x.device),
            "cudnn_enabled": bool(torch.backends.cudnn.enabled),
            "bias": params.get("bias") is not None,
        }
        if op == "batch_norm":
            info["training"] = bool(params.get("training", False))
        else:
            for p in ("stride", "padding", "dilation", "groups", "output_padding"):
                if p in params:
                    v = params[p]
                    info[p] = list(v) if isinstance(v, (tuple, list)) else v
        return info

    def _first_call(self, op, orig, key, args, kwargs):
        try:
            prepared = self._announce(op, key, args, kwargs)
        except Exception as e:  # the check's own failure, never the program's
            self.sink.write({"event": "check_error", "id": None, "error": _text(e)})
            prepared = None
        if prepared is None:
            return orig(*args, **kwargs)
        ident, rec, params, checking = prepared
        raw = orig(*args, **kwargs)
        out = self._injected(rec, "output", raw)
        self.local.busy = True
        try:
            x = params["input"]
            backend = self._backend(op, params, raw)
            self.sink.write({"event": "backend", "id": ident, "backend": backend,
                             "family": backend_family(backend, x.device.type),
                             "backward": getattr(raw, "grad_fn", None) is not None})
            if checking:
                # The program's output as it gets it; the gradients at the op's own node.
                self._check_forward(ident, key, op, rec, params, out,
                                    getattr(raw, "grad_fn", None))
        except Exception as e:  # the check's own failure, never the program's
            self.sink.write({"event": "check_error", "id": ident, "error": _text(e)})
        finally:
            self.local.busy = False
        return out

    def _announce(self, op, key, args, kwargs):
        """Claims `key` and writes its layer record before the call (if the process dies in
        it, this is the layer it died in): (id, record, arguments by name, checking), or None
        for a call to leave alone."""
        with self.lock:
            if key in self.seen:
                return None
            again = self.pending.pop(key, None)
            ident = self.next_id if self.next_id <= MAX_LAYERS else 0
            self.seen[key] = ident
            self.next_id += 1
        if not ident:
            if not self.overflow:
                self.overflow = True
                self.sink.write({"event": "overflow", "max_layers": MAX_LAYERS})
            return None
        params = _bind(op, args, kwargs)
        x = params["input"]
        if not isinstance(x, self.torch.Tensor):
            return None
        info = self._info(op, params)
        rec = dict(info, event="layer", id=ident, kind=_kind(op, info),
                   device_name=self._device_name(x.device))
        if again is not None:
            rec["again_for"] = again
        w = params.get("weight")
        # An unbatched convolution (C, H, W) is left unchecked: its slices are not samples.
        batched = op == "batch_norm" or (isinstance(w, self.torch.Tensor) and x.dim() == w.dim())
        checking = self.numerics and batched and (x.device.type == "cuda" or self.self_test_cpu)
        rec["checked"] = checking
        self.sink.write(rec)
        return ident, rec, params, checking

    def _again(self, ident, key, why):
        """The backward of layer `ident` could not be judged this time (`why`): its next call is
        checked as a new one (its record says `again_for`)."""
        self.sink.write({"event": "skipped", "id": ident, "why": why})
        with self.lock:
            if self.seen.get(key) == ident:
                del self.seen[key]
                self.pending[key] = ident

    def _device_name(self, device):
        if device.type != "cuda":
            return device.type
        if device not in self.device_names:
            try:
                i = device.index if device.index is not None else self.torch.cuda.current_device()
                props = self.torch.cuda.get_device_properties(i)
                arch = getattr(props, "gcnArchName", "") or ""
                self.device_names[device] = f"{props.name}{' (' + arch + ')' if arch else ''}"
            except Exception:
                self.device_names[device] = "cuda"
        return self.device_names[device]

    def _backend(self, op, p, out):
        """The backend PyTorch runs: for a convolution, its own choice for these tensors
        (torch._C._select_conv_backend, the function at::_convolution calls); for a batch norm,
        the grad_fn that ran it (CudnnBatchNormBackward0, MiopenBatchNormBackward0, ...)."""
        torch = self.torch
        if op == "batch_norm":
            fn = getattr(out, "grad_fn", None)
            return type(fn).__name__ if fn is not None else None
        select = getattr(torch._C, "_select_conv_backend", None)
        if select is None:
            return None
        x, w, b = p["input"], p["weight"], p.get("bias")
        dt = out.dtype
        xs = (x[:1] if x.dim() == w.dim() else x.unsqueeze(0)).to(dt)
        ws = w.to(dt)
        bs = b.to(dt) if b is not None else None
        transposed = op.startswith("conv_transpose")
        n = x.dim() - 2
        tup = lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * n  # noqa: E731
        padding = p.get("padding", 0)
        if padding == "valid":
            padding = 0
        elif padding == "same":  # the selection does not depend on the exact split
            padding = [d * (k - 1) // 2 for d, k in zip(tup(p.get("dilation", 1)), w.shape[2:])]
        res = select(xs, ws, bs, tup(p.get("stride", 1)), tup(padding), tup(p.get("dilation", 1)),
                     transposed, tup(p.get("output_padding", 0)), p.get("groups", 1))
        return getattr(res, "name", str(res).split(".")[-1])

    # -- the numerics --------------------------------------------------------------------------

    def _effective(self, t, out_dtype):
        """`t` as the op computed with it: under autocast, rounded to the output's type."""
        torch = self.torch
        if t is None:
            return None
        if t.dtype != out_dtype and out_dtype in (torch.float16, torch.bfloat16):
            t = t.to(out_dtype)
        return t.detach()

    def _math(self, out, device_type):
        torch = self.torch
        name = str(out.dtype).replace("torch.", "")
        # cuDNN's TF32 (CUDA builds' default for convolutions, off where the driver is told
        # NVIDIA_TF32_OVERRIDE=0); ROCm builds have none for them.
        if (name == "float32" and device_type == "cuda" and getattr(torch.version, "cuda", None)
                and torch.backends.cudnn.allow_tf32 and torch.backends.cudnn.enabled
                and os.environ.get("NVIDIA_TF32_OVERRIDE") != "0"):
            return "tf32"
        return name

    def _result(self, ident, direction, got, ref, math, note=None, bound=None):
        torch = self.torch
        if (got.dtype.is_floating_point and not bool(torch.isfinite(got).all())
                and ref.abs().max().item() > torch.finfo(got.dtype).max):
            # The exact result is beyond the type's range: an overflow of the network's own
            # numbers in that type, which no backend could have got right.
            self.sink.write({"event": "skipped", "id": ident, "direction": direction,
                             "why": f"the exact result exceeds {got.dtype}'s range"})
            return
        rms, mx = errors(got, ref, bound)
        tol_rms, tol_max = TOLERANCES.get(math, TOLERANCES["float32"])
        rec = {"event": "result", "id": ident, "direction": direction, "math": math,
               "rms_rel": _number(rms), "max_rel": _number(mx), "tolerance_rms": tol_rms,
               "tolerance_max": tol_max, "ok": rms <= tol_rms and mx <= tol_max}
        if note:
            rec["note"] = note
        self.sink.write(rec)

    def _check_forward(self, ident, key, op, rec, p, out, fn):
        torch = self.torch
        orig = self.originals[op]
        math = self._math(out, p["input"].device.type)
        if op == "batch_norm":
            return self._check_bn(ident, key, rec, p, out, math, orig, fn)
        x = self._effective(p["input"], out.dtype)
        w = self._effective(p["weight"], out.dtype)
        b = self._effective(p.get("bias"), out.dtype)
        n = x.shape[0]
        k = min(SLICE, n) if x.dim() > 2 else n
        rest = {name: v for name, v in p.items() if name not in ("input", "weight", "bias")}
        f64 = lambda t: t.to("cpu", torch.float64)  # noqa: E731
        want_input = bool(p["input"].requires_grad)

        def graph(xs):
            """The float64 reference on `xs` and, from the inputs' magnitudes, the bound of
            every result (the op is linear in each input)."""
            with torch.enable_grad():
                leaves = [f64(xs).requires_grad_(want_input), f64(w).requires_grad_()]
                leaves.append(f64(b).requires_grad_() if b is not None else None)
                bounds = [t.detach().abs().requires_grad_(t.requires_grad) if t is not None
                          else None for t in leaves]
                return leaves, orig(*leaves, **rest), bounds, orig(*bounds, **rest)

        (rx, rw, rb), ry, (bx, bw, bb), by = graph(x[:k])
        self._result(ident, "forward", out[:k], ry.detach(), math, bound=by.detach())
        if fn is None:
            return
        flops = 2.0 * out[:1].numel() * w[0].numel() * n
        own_weight_grad = k == n or flops <= FULL_FLOPS
        full = graph(x) if own_weight_grad and k < n else None
        wrong = self._wrong_grad(rec)
        shapes = {"input": x.shape, "weight": w.shape, "bias": b.shape if b is not None else None}

        def grads_of(y, leaves, g):
            live = [t for t in leaves if t is not None and t.requires_grad]
            got = torch.autograd.grad(y, live, g, retain_graph=True)
            found = dict(zip([id(t) for t in live], got))
            return [found.get(id(t)) if t is not None else None for t in leaves]

        def compare(grads, go):
            gk = f64(go[:k])
            if want_input and grads.get("input") is not None:
                (ref,) = grads_of(ry, [rx], gk)
                (bound,) = grads_of(by, [bx], gk.abs())
                self._result(ident, "input gradient", grads["input"][:k], ref, math,
                             bound=bound)
            if grads.get("weight") is None:
                return
            note = None
            if full is not None:
                (_, fw, fb), fy, (_, fbw, fbb), fby = full
                g = f64(go)
                ref = grads_of(fy, [fw, fb], g)
                bound = grads_of(fby, [fbw, fbb], g.abs())
                got = [grads["weight"], grads.get("bias")]
            elif own_weight_grad:
                ref = grads_of(ry, [rw, rb], gk)
                bound = grads_of(by, [bw, bb], gk.abs())
                got = [grads["weight"], grads.get("bias")]
            else:
                # The whole batch's reference would cost too much on the CPU: the same op's
                # weight gradient on the slice, re-run on the GPU, is checked instead.
                note = f"from a re-run on {k} of {n} samples"
                ref = grads_of(ry, [rw, rb], gk)
                bound = grads_of(by, [bw, bb], gk.abs())
                with torch.enable_grad():
                    wk = w.detach().requires_grad_()
                    bk = b.detach().requires_grad_() if b is not None else None
                    yk = orig(x[:k].detach(), wk, bk, **rest)
                    got = grads_of(yk, [wk, bk], go[:k])
            self._result(ident, "weight gradient", got[0], ref[0], math, note, bound[0])
            if got[1] is not None and ref[1] is not None:
                self._result(ident, "bias gradient", got[1], ref[1], math, note, bound[1])

        self._hook(ident, key, fn, shapes, wrong, compare)

    def _check_bn(self, ident, key, rec, p, out, math, orig, fn):
        torch = self.torch
        x = p["input"].detach()
        w, b = p.get("weight"), p.get("bias")
        training = bool(p.get("training", False))
        per_channel = max(1, x.numel() // max(1, x.shape[1]))
        c = max(1, min(x.shape[1], BN_ELEMENTS // per_channel))
        f64 = lambda t: t[:c].detach().to("cpu", torch.float64) if t is not None else None  # noqa: E731
        rm = p.get("running_mean")
        rv = p.get("running_var")
        with torch.enable_grad():
            rx = x[:, :c].to("cpu", torch.float64).requires_grad_(p["input"].requires_grad)
            rw = f64(w).requires_grad_() if w is not None else None
            rb = f64(b).requires_grad_() if b is not None else None
            if training:
                ry = orig(rx, None, None, rw, rb, True, 0.1, p.get("eps", 1e-5))
            else:
                # The running statistics as they were for this call (eval does not change them).
                ry = orig(rx, f64(rm), f64(rv), rw, rb, False, 0.1, p.get("eps", 1e-5))
        note = None if c == x.shape[1] else f"channels 0..{c - 1} of {x.shape[1]}, whole batch"
        # Magnitude bounds (errors() says why): x̂ = (x - mean) / σ per channel, with the
        # batch's statistics in training and the running ones in eval.
        eps = p.get("eps", 1e-5)
        xs = rx.detach()
        dims = [0] + list(range(2, xs.dim()))
        shape = [1, c] + [1] * (xs.dim() - 2)
        if training:
            mean = xs.mean(dim=dims, keepdim=True)
            var = xs.var(dim=dims, unbiased=False, keepdim=True)
        else:
            mean = f64(rm).view(shape) if rm is not None else torch.zeros(shape, dtype=xs.dtype)
            var = f64(rv).view(shape) if rv is not None else torch.ones(shape, dtype=xs.dtype)
        sigma = (var + eps).sqrt()
        xhat = ((xs - mean) / sigma).abs()
        aw = rw.detach().abs().view(shape) if rw is not None else torch.ones(shape, dtype=xs.dtype)
        ab = rb.detach().abs().view(shape) if rb is not None else 0.0
        self._result(ident, "forward", out[:, :c], ry.detach(), math, note,
                     bound=xhat * aw + ab)
        if fn is None:
            return
        wrong = self._wrong_grad(rec)
        shapes = {"input": x.shape, "weight": w.shape if w is not None else None,
                  "bias": b.shape if b is not None else None}

        def compare(grads, go):
            want = [("input gradient", rx, grads.get("input")),
                    ("weight gradient", rw, grads.get("weight")),
                    ("bias gradient", rb, grads.get("bias"))]
            want = [(d, r, g) for d, r, g in want
                    if r is not None and r.requires_grad and g is not None]
            if not want:
                return
            g64 = go[:, :c].to("cpu", torch.float64)
            ref = torch.autograd.grad(ry, [r for _, r, _ in want], g64)
            ag = g64.abs()
            agx = ag * xhat
            bounds = {
                "bias gradient": ag.sum(dim=dims),
                "weight gradient": agx.sum(dim=dims),
                "input gradient": aw / sigma * (
                    ag + (ag.mean(dim=dims, keepdim=True)
                          + xhat * agx.mean(dim=dims, keepdim=True) if training else 0.0)),
            }
            for (d, _, g), r in zip(want, ref):
                self._result(ident, d, g[:, :c] if d == "input gradient" else g[:c], r,
                             math, note, bounds[d])

        self._hook(ident, key, fn, shapes, wrong, compare)

    def _hook(self, ident, key, fn, shapes, wrong, compare):
        """Registers on the op's own autograd node a hook that hands `compare` the node's
        gradients, by what they are for (`shapes`), and its output's gradient. An incoming
        gradient that is not finite (a loss scaler's first steps overflow on purpose) is not
        judged: the layer's next call is checked instead. With `wrong` (tests), the program
        gets those gradients made wrong, as from a faulty backend."""

        def hook(grad_inputs, grad_outputs):
            self.local.busy = True
            try:
                go = grad_outputs[0]
                if go is not None:
                    grads = _by_position(grad_inputs, shapes)
                    if wrong is not None:
                        grad_inputs = wrong(grad_inputs, grads)
                        grads = _by_position(grad_inputs, shapes)
                    if bool(self.torch.isfinite(go).all()):
                        compare(grads, go)
                    else:
                        self._again(ident, key, "the incoming gradient is not finite (a loss "
                                                "scaler's overflow step)")
            except Exception as e:  # the check's own failure, never the program's
                self.sink.write({"event": "check_error", "id": ident, "error": _text(e)})
            finally:
                self.local.busy = False
            return grad_inputs if wrong is not None else None

        fn.register_hook(hook)

    # -- wrong results on purpose (tests) ------------------------------------------------------

    def _matches(self, rec, direction):
        if not self.inject:
            return None
        kind, where, factor = self.inject
        # As a faulty MIOpen would: a layer routed around it (the cudnn flag off) is right.
        if not rec.get("cudnn_enabled", True):
            return None
        if where == direction and kind.lower() in rec["kind"].lower():
            return factor
        return None

    def _injected(self, rec, direction, out):
        factor = self._matches(rec, direction)
        if factor is None:
            return out
        self.sink.write({"event": "test_wrong", "id": rec["id"], "direction": "forward",
                         "factor": factor})
        # The program gets the wrong output too, as from a faulty backend.
        return out * factor

    def _wrong_grad(self, rec):
        factor = self._matches(rec, "weight")
        if factor is None:
            return None
        self.sink.write({"event": "test_wrong", "id": rec["id"], "direction": "weight gradient",
                         "factor": factor})

        def wrong(grad_inputs, grads):
            gw = grads.get("weight")
            return tuple(g * factor if g is not None and g is gw else g for g in grad_inputs)

        return wrong


def _bind(op, args, kwargs):
    """The call's arguments by name, as torch.nn.functional's signatures order them."""
    names = {
        "batch_norm": ("input", "running_mean", "running_var", "weight", "bias", "training",
                       "momentum", "eps"),
    }.get(op) or (
        ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
        if op.startswith("conv_transpose")
        else ("input", "weight", "bias", "stride", "padding", "dilation", "groups"))
    p = dict(zip(names, args))
    p.update(kwargs)
    return p


def _by_position(grads, shapes):
    """A node's gradients by what they are for: convolution and batch-norm nodes take input,
    weight and bias in that order (None where one needs no gradient); a gradient of another
    shape than its input's is not taken."""
    out = {}
    for (name, shape), g in zip(shapes.items(), grads):
        if shape is not None and g is not None and tuple(g.shape) == tuple(shape):
            out[name] = g
    return out


def _kind(op, info):
    """The layer in words: "Conv2d 3x3 stride 2", "Conv2d 3x3 depthwise", "BatchNorm2d
    training"."""
    x = info.get("input") or []
    if op == "batch_norm":
        d = max(1, len(x) - 2)
        return f"BatchNorm{d}d {'training' if info.get('training') else 'eval'}"
    d = max(1, len(x) - 2)
    w = info.get("weight") or []
    kernel = "x".join(str(s) for s in w[2:]) or "?"
    name = f"ConvTranspose{d}d" if op.startswith("conv_transpose") else f"Conv{d}d"
    words = [name, kernel]
    stride = info.get("stride", 1)
    s = stride if isinstance(stride, list) else [stride]
    if any(v != 1 for v in s):
        words.append("stride " + "x".join(str(v) for v in s) if len(set(s)) > 1
                     else f"stride {s[0]}")
    dil = info.get("dilation", 1)
    dl = dil if isinstance(dil, list) else [dil]
    if any(v != 1 for v in dl):
        words.append("dilated")
    groups = info.get("groups", 1) or 1
    cin = x[1] if len(x) > 1 else None
    if groups > 1:
        words.append("depthwise" if groups == cin else f"grouped ({groups} groups)")
    return " ".join(words)


def _kind_is(kind, kinds):
    """Whether layer kind `kind` is one of `kinds`: the same, or one followed by more words,
    or a name followed by its dimensions ("Conv2d 1x1 stride 2" is a "Conv2d 1x1",
    "BatchNorm2d training" a "BatchNorm"; "Conv2d 1x11" is no "Conv2d 1x1"); as check.rs's
    kind_is."""
    for k in kinds:
        if kind == k or kind.startswith(k + " "):
            return True
        rest = kind[len(k):] if kind.startswith(k) else ""
        if k[-1:].isalpha() and rest[:1].isdigit():
            return True
    return False


def _autocast(torch, device_type="cuda"):
    """Autocast's type in force now for `device_type` (cuda: ROCm too), or None."""
    try:
        if torch.is_autocast_enabled(device_type):
            return str(torch.get_autocast_dtype(device_type)).replace("torch.", "")
        return None
    except TypeError:  # before torch 2.4: no device argument
        on = torch.is_autocast_enabled() if device_type == "cuda" else \
            torch.is_autocast_cpu_enabled()
        if not on:
            return None
        t = torch.get_autocast_gpu_dtype() if device_type == "cuda" else \
            torch.get_autocast_cpu_dtype()
        return str(t).replace("torch.", "")


def _amp_state_function(torch):
    """A function of no arguments giving autocast's state (CUDA's and the CPU's: off, or its
    type), cheap enough for every call."""
    try:
        torch.is_autocast_enabled("cuda")
        on, dtype = torch.is_autocast_enabled, torch.get_autocast_dtype
        return lambda: (on("cuda") and dtype("cuda"), on("cpu") and dtype("cpu"))
    except TypeError:  # before torch 2.4
        return lambda: (torch.is_autocast_enabled() and torch.get_autocast_gpu_dtype(),
                        torch.is_autocast_cpu_enabled() and torch.get_autocast_cpu_dtype())


def _compiling_function(torch):
    """torch.compiler.is_compiling, or a function that says no where it is missing: under
    torch.compile the wrappers step aside."""
    f = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return f if callable(f) else (lambda: False)


def _text(e):
    return f"{type(e).__name__}: {e}"[:2000]


# -- loading from the environment (sitecustomize.py) -----------------------------------------

_active = None


def active():
    """The Checker installed in this process, if any."""
    return _active


def parse_inject(text):
    """RDNA1_CHECK_TEST_WRONG: KIND:DIRECTION:FACTOR, e.g. "1x1:weight:1.01" (weight gradients
    of layers whose kind contains "1x1" made 1% off) or "BatchNorm:output:0.99"."""
    if not text:
        return None
    try:
        kind, where, factor = text.rsplit(":", 2)
        if where not in ("output", "weight"):
            raise ValueError(where)
        return kind, where, float(factor)
    except ValueError:
        raise ValueError(f"RDNA1_CHECK_TEST_WRONG={text!r}: give KIND:output|weight:FACTOR")


def install(numerics=False, bypass=False, directory=None, self_test_cpu=False, inject=None,
            bypass_kinds=()):
    """Installs the check (once per process): now if torch is imported, else when it is."""
    global _active
    if _active is not None:
        return _active
    sink = Sink(directory)
    _active = Checker(sink, numerics=numerics, bypass=bypass, self_test_cpu=self_test_cpu,
                      inject=inject, bypass_kinds=bypass_kinds)
    sink.write({"event": "start", "format": FORMAT, "python": sys.executable,
                "version": sys.version.split()[0], "argv": [str(a) for a in sys.argv[:8]]})
    if "torch" in sys.modules and hasattr(sys.modules["torch"], "nn"):
        _active.on_torch(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchFinder(_active))
    _record_missing_torch(_active)
    return _active


def install_from_environment():
    """What rdna1ctl asked for: RDNA1_CHECK_DIR, RDNA1_CHECK=numerics, RDNA1_MIOPEN_BYPASS=1,
    RDNA1_CHECK_SELF_TEST_CPU=1, RDNA1_CHECK_TEST_WRONG."""
    env = os.environ
    kinds = tuple(k.strip() for k in env.get("RDNA1_MIOPEN_BYPASS_KINDS", "").split("|")
                  if k.strip())
    if not (env.get("RDNA1_CHECK_DIR") or env.get("RDNA1_MIOPEN_BYPASS") == "1" or kinds):
        return None
    return install(numerics=env.get("RDNA1_CHECK") == "numerics",
                   bypass=env.get("RDNA1_MIOPEN_BYPASS") == "1",
                   directory=env.get("RDNA1_CHECK_DIR") or None,
                   self_test_cpu=env.get("RDNA1_CHECK_SELF_TEST_CPU") == "1",
                   inject=parse_inject(env.get("RDNA1_CHECK_TEST_WRONG")),
                   bypass_kinds=kinds)


class _TorchFinder:
    """A meta-path finder that lets the real import of torch run, then installs the checker:
    torch is never imported here, only where the program imports it. It stays in place until
    torch has been executed: a library asking `importlib.util.find_spec("torch")` (whether
    torch is there) gets the same answer and leaves it armed."""

    def __init__(self, checker):
        self.checker = checker
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.busy:
            return None
        import importlib.util

        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        finally:
            self.busy = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, self.checker, self)
        return spec


def _record_missing_torch(checker):
    """Records, when the program ends on `ModuleNotFoundError: No module named 'torch'`, that
    this interpreter has no torch (then chains to the hook in place)."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        try:
            if isinstance(value, ModuleNotFoundError) and getattr(value, "name", "") == "torch":
                checker.sink.write({"event": "torch_missing", "python": sys.executable,
                                    "path": [str(p) for p in sys.path[:12]]})
        except Exception:
            pass
        previous(kind, value, tb)

    sys.excepthook = hook


class _Loader:
    def __init__(self, real, checker, finder):
        self.real = real
        self.checker = checker
        self.finder = finder

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        self.real.exec_module(module)
        try:
            if self.finder in sys.meta_path:
                sys.meta_path.remove(self.finder)
            self.checker.on_torch(module)
        except Exception as e:
            self.checker.sink.write({"event": "check_error", "id": None, "error": _text(e)})

    def __getattr__(self, name):
        return getattr(self.real, name)
