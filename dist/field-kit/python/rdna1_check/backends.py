"""Which library computes an op: for a convolution PyTorch's own choice for these tensors
(torch._C._select_conv_backend, the function at::_convolution calls); for a batch norm the op
itself says (cudnn_batch_norm, miopen_batch_norm, native_batch_norm); for a GEMM the BLAS
PyTorch prefers (rocBLAS or hipBLASLt on ROCm); for attention the kernel's op."""


def _conv(torch, n):
    select = getattr(torch._C, "_select_conv_backend", None)
    x, w = n.get("input"), n.get("weight")
    if select is None or not isinstance(x, torch.Tensor) or not isinstance(w, torch.Tensor):
        return None
    b = n.get("bias") if isinstance(n.get("bias"), torch.Tensor) else None
    nd = w.dim() - 2
    tup = lambda v, d=1: list(v) if isinstance(v, (list, tuple)) else [v if v is not None else d] * nd  # noqa: E731
    xs = x.narrow(0, 0, 1) if x.dim() == w.dim() else x.unsqueeze(0)
    res = select(xs, w, b, tup(n.get("stride")), tup(n.get("padding"), 0),
                 tup(n.get("dilation")), bool(n.get("transposed", False)),
                 tup(n.get("output_padding"), 0), int(n.get("groups") or 1))
    return getattr(res, "name", str(res).split(".")[-1])


_BN = {"cudnn_batch_norm": "Cudnn", "cudnn_batch_norm_backward": "Cudnn",
       "miopen_batch_norm": "Miopen", "miopen_batch_norm_backward": "Miopen"}


def of(torch, name, n):
    """The backend's own name, or None where it is not told apart."""
    try:
        if name in ("convolution", "convolution_backward"):
            return _conv(torch, n)
        if name in _BN:
            return f"{_BN[name]}BatchNorm"
        if name.startswith(("native_batch_norm", "_native_batch_norm", "batch_norm")):
            return "NativeBatchNorm"
        if name in ("mm", "addmm", "bmm", "baddbmm", "_addmm_activation", "addmv", "mv"):
            x = n.get("self") if isinstance(n.get("self"), torch.Tensor) else n.get("mat1")
            if isinstance(x, torch.Tensor) and x.device.type == "cuda":
                pref = getattr(torch.backends.cuda, "preferred_blas_library", None)
                lib = str(pref()) if pref is not None else "default"
                lib = lib.split(".")[-1].lower()
                hip = bool(getattr(torch.version, "hip", None))
                return {"cublas": "rocBLAS" if hip else "cuBLAS",
                        "cublaslt": "hipBLASLt" if hip else "cuBLASLt",
                        "ck": "composable_kernel"}.get(lib, lib)
            return None
        if "attention" in name:
            for k in ("flash", "efficient", "cudnn", "math"):
                if k in name:
                    return f"{k} attention"
    except Exception:
        return None
    return None


def family(name, device_type):
    """A backend's family as the owner reads it: MIOpen, cuDNN, PyTorch (its own GPU kernels),
    PyTorch (CPU)."""
    if name is None:
        return None
    if "Miopen" in name:
        return "MIOpen"
    if "Cudnn" in name:
        return "cuDNN"
    if device_type == "cpu":
        return "PyTorch (CPU)"
    if name in ("rocBLAS", "hipBLASLt", "cuBLAS", "cuBLASLt", "composable_kernel"):
        return name
    return "PyTorch"
