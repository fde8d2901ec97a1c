"""MIOpen bypassed, for everything or for some layer kinds only.

RDNA1_MIOPEN_BYPASS=1: torch.backends.cudnn.enabled = False (ROCm builds check it before
MIOpen: ConvParams::use_miopen in aten/src/ATen/native/Convolution.cpp; its batch norm is gated
the same way): PyTorch's own GPU kernels run instead.

RDNA1_MIOPEN_BYPASS_KINDS="BatchNorm2d training|Conv2d 1x1": the same for those layer kinds
only. The choice of backend is made above the dispatcher (at::_convolution,
_batch_norm_impl_index), so it is made here, around torch.nn.functional's convolutions, batch
norm and instance norm (which reaches MIOpen's batch norm): the flag is off while a matching
call runs and, for a convolution, while its backward runs (convolution_backward reads the flag
again; a batch norm's backward follows its forward's choice). TorchScript compiles these
functions as the builtins they stand for (registered here: it would otherwise try to read a
wrapper's source), so scripted code runs unrouted, as the check's records then show."""

from . import families

CONV = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d")
ROUTED = CONV + ("batch_norm", "instance_norm")


def kind_is(kind, kinds):
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


def _arg(args, kwargs, i, name, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[i] if len(args) > i else default


def kind_of_call(torch, op, args, kwargs):
    """The layer kind of a torch.nn.functional call, in the check's words."""
    x = _arg(args, kwargs, 0, "input")
    shape = list(x.shape) if isinstance(x, torch.Tensor) else []
    if op == "batch_norm":
        return families.bn_kind(shape, bool(_arg(args, kwargs, 5, "training", False)))
    if op == "instance_norm":
        # Reaches the dispatcher as a batch norm of one sample with N x C channels.
        return families.bn_kind(shape, bool(_arg(args, kwargs, 5, "use_input_stats", True)))
    w = _arg(args, kwargs, 1, "weight")
    transposed = op.startswith("conv_transpose")
    stride = _arg(args, kwargs, 3, "stride", 1)
    groups = _arg(args, kwargs, 6, "groups", 1)
    dilation = _arg(args, kwargs, 7 if transposed else 5, "dilation", 1)
    in_shape = shape if not isinstance(w, torch.Tensor) or x is None or x.dim() == w.dim() \
        else [1] + shape
    return families.conv_kind(in_shape, list(w.shape) if isinstance(w, torch.Tensor) else [],
                              stride, dilation, groups, transposed)


def install(torch, bypass, kinds, sink):
    """Applies what was asked: the flag off, or the wrappers for `kinds`."""
    if bypass:
        torch.backends.cudnn.enabled = False
        return
    if not kinds:
        return
    import torch.nn.functional as F

    get = getattr(torch._C, "_get_cudnn_enabled", lambda: torch.backends.cudnn.enabled)
    set_raw = getattr(torch._C, "_set_cudnn_enabled", None)

    def flag(v):
        if set_raw is not None:
            set_raw(v)
        else:
            torch.backends.cudnn.enabled = v

    compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or \
        (lambda: False)
    for op in ROUTED:
        orig = getattr(F, op, None)
        if orig is None or getattr(orig, "_rdna1_routed", False):
            continue
        wrapped = _route(torch, op, orig, kinds, get, flag, compiling)
        setattr(F, op, wrapped)
        builtin = _builtin(torch, orig)
        if builtin is not None:
            try:
                torch.jit._builtins._register_builtin(wrapped, builtin)
            except Exception as e:
                sink.write({"event": "check_error", "id": None,
                            "error": f"TorchScript cannot take the routed {op}: {e}"})


def _builtin(torch, fn):
    """The aten op TorchScript compiles `fn` as, if it is a builtin."""
    try:
        return torch.jit._builtins._find_builtin(fn)
    except Exception:
        return None


def _route(torch, op, inner, kinds, get, flag, compiling):
    import types

    from .calls import Keys

    decided = {}
    is_conv = op in CONV
    keys = Keys(torch)
    # Everything the wrapper uses is a closure variable, none a global: for a Python function
    # (batch_norm, instance_norm) the wrapper is made with the original's globals, so that
    # TorchScript, which compiles the original's source (__wrapped__), resolves its names
    # where the original does.
    matches = kind_is
    kind_of = kind_of_call

    def routed(*args, **kwargs):
        if compiling():  # traced, not run: torch.compile's graph decides its backends
            return inner(*args, **kwargs)
        try:
            key = (tuple(keys.part(a) for a in args),
                   tuple((k, keys.part(v)) for k, v in sorted(kwargs.items())))
            route = decided.get(key)
            if route is None:
                route = decided[key] = matches(kind_of(torch, op, args, kwargs), kinds)
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

            try:
                # The hook that puts the flag back first: a pre-hook alone would leave it off.
                handle = node.register_hook(post)
                try:
                    node.register_prehook(pre)
                except Exception:
                    handle.remove()
                    raise
            except Exception:  # never the program's failure: its backward runs unrouted
                pass
        return out

    python_function = _builtin(torch, inner) is None and hasattr(inner, "__globals__")
    if python_function:
        routed = types.FunctionType(routed.__code__, inner.__globals__, routed.__name__,
                                    routed.__defaults__, routed.__closure__)
    routed._rdna1_routed = True
    routed.__name__ = getattr(inner, "__name__", op)
    routed.__qualname__ = getattr(inner, "__qualname__", op)
    routed.__doc__ = getattr(inner, "__doc__", None)
    routed.__module__ = getattr(inner, "__module__", None)
    if python_function:
        # TorchScript and inspect read the original's source.
        routed.__wrapped__ = inner
    return routed
