"""Kernel choices the search makes inside the program, beside MIOpen's bypass (routing.py):

RDNA1_SDPA_OFF="flash|efficient|cudnn": those scaled-dot-product-attention kernels off
(torch.backends.cuda.enable_*_sdp(False)); PyTorch then picks among the rest, and with all three
off runs the math kernel (plain GEMMs and softmax). On ROCm, flash and efficient attention are
AOTriton's or composable_kernel's kernels, which no gfx101x build is tested with.

RDNA1_BF16_AS="float16"|"float32": gfx10 has no bfloat16 arithmetic (unsloth #7682: PyTorch
still reports it, Triton dies on fdot2.bf16), so bfloat16 is emulated there. The program is
told the truth (torch.cuda.is_bf16_supported() answers False, which trainers read to choose
their precision) and an autocast to bfloat16 on the GPU becomes one to float16, or no autocast
(float32). Tensors the program itself makes bfloat16 stay as they are: the check's verdict names
them.

Each choice is written to the records (event "switches") so rdna1ctl credits only what was in
force. Nothing here raises into the program."""

SDPA = ("flash", "efficient", "cudnn")
BF16_AS = ("float16", "float32")


def parse_sdpa(text):
    """RDNA1_SDPA_OFF: kernel names separated by "|"."""
    kernels = tuple(k.strip() for k in (text or "").split("|") if k.strip())
    bad = [k for k in kernels if k not in SDPA]
    if bad:
        raise ValueError(f"RDNA1_SDPA_OFF={text!r}: give some of {'|'.join(SDPA)}")
    return kernels


def parse_bf16(text):
    """RDNA1_BF16_AS: float16, float32 or nothing."""
    if not text:
        return None
    if text not in BF16_AS:
        raise ValueError(f"RDNA1_BF16_AS={text!r}: give float16 or float32")
    return text


def install(torch, sdpa_off, bf16_as, sink):
    """Makes the choices asked for; records what took effect."""
    done = {"event": "switches", "sdpa_off": [], "bf16_as": None}
    for k in sdpa_off:
        try:
            getattr(torch.backends.cuda, f"enable_{'mem_efficient' if k == 'efficient' else k}_sdp")(False)
            done["sdpa_off"].append(k)
        except Exception as e:  # an older PyTorch without that kernel: nothing to turn off
            sink.write({"event": "check_error", "id": None,
                        "error": f"{k} attention could not be turned off: {e}"})
    if bf16_as:
        try:
            _bf16(torch, bf16_as)
            done["bf16_as"] = bf16_as
        except Exception as e:
            sink.write({"event": "check_error", "id": None,
                        "error": f"bfloat16 could not be answered with {bf16_as}: {e}"})
    if sdpa_off or bf16_as:
        sink.write(done)


def _bf16(torch, target):
    autocast = torch.amp.autocast_mode.autocast
    if getattr(autocast.__init__, "_rdna1_bf16", False):
        return
    inner = autocast.__init__
    bf16, half = torch.bfloat16, torch.float16

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if device_type == "cuda" and dtype == bf16:
            if target == "float16":
                dtype = half
            else:
                enabled = False
        inner(self, device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    __init__._rdna1_bf16 = True
    __init__.__wrapped__ = inner
    __init__.__doc__ = inner.__doc__
    autocast.__init__ = __init__

    def is_bf16_supported(*args, **kwargs):
        return False

    is_bf16_supported.__doc__ = torch.cuda.is_bf16_supported.__doc__
    torch.cuda.is_bf16_supported = is_bf16_supported
