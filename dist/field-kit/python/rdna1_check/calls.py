"""One call of an op at the dispatcher: its arguments by name, what makes it distinct (the key:
everything a backend chooses its kernel by), and its tensors mapped to the CPU."""


def bind(func, args, kwargs):
    """The call's arguments by their schema names, with the defaults of those not given (the
    dispatcher leaves out arguments at their default value)."""
    named = {}
    for a, v in zip(func._schema.arguments, args):
        named[a.name] = v
    named.update(kwargs)
    for a in func._schema.arguments:
        if a.name not in named:
            try:
                if a.has_default_value():
                    named[a.name] = a.default_value
            except Exception:
                pass
    return named


def written(func):
    """Names of the arguments the op writes (in place, out=)."""
    return [a.name for a in func._schema.arguments
            if a.alias_info is not None and a.alias_info.is_write]


def tensors_in(torch, value):
    """The tensors in an argument or result (a tensor, or a list or tuple of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


class Keys:
    """Keys of calls: op, each tensor's shape, strides, type and device, the other arguments
    (floats by type only: a learning rate that changes every step does not make a new op), and
    the settings that choose kernels (cuDNN/MIOpen on, TF32)."""

    def __init__(self, torch):
        self.torch = torch
        self.tensor = torch.Tensor
        c = torch._C
        cudnn = getattr(c, "_get_cudnn_enabled", lambda: True)
        cudnn_tf32 = getattr(c, "_get_cudnn_allow_tf32", lambda: False)
        blas_tf32 = getattr(c, "_get_cublas_allow_tf32", lambda: False)
        self.settings = lambda: (cudnn(), cudnn_tf32(), blas_tf32())

    def part(self, v):
        if isinstance(v, self.tensor):
            return (tuple(v.shape), v.stride() if v.layout == self.torch.strided else None,
                    v.dtype, v.device)
        t = type(v)
        if t is float:
            return float
        if t is list or t is tuple:
            return tuple(self.part(x) for x in v)
        return v

    def key(self, func, args, kwargs):
        parts = [func, self.settings()]
        for a in args:
            parts.append(self.part(a))
        for k in sorted(kwargs):
            parts.append((k, self.part(kwargs[k])))
        return tuple(parts)


def device_of(torch, named):
    """The device the call computes on: its first tensor's, else a `device` argument's."""
    for v in named.values():
        for t in tensors_in(torch, v):
            return t.device
    d = named.get("device")
    if d is not None:
        return torch.device(d)
    return None


def layout_word(torch, t):
    if t.layout != torch.strided:
        return str(t.layout).replace("torch.", "")
    if t.is_contiguous():
        return "contiguous"
    if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last):
        return "channels_last"
    if t.dim() == 5 and t.is_contiguous(memory_format=torch.channels_last_3d):
        return "channels_last_3d"
    return "strided"
