"""How a GPU result is judged against float64 on the CPU.

The rule is PyTorch's own for compiled graphs (torch._dynamo.utils.same with an fp64 reference,
which the accuracy minifier uses): a result is right when its error against the float64
reference is at most a multiple of the error the same computation makes in the same precision
elsewhere. Here "elsewhere" is the CPU: the op run on the CPU in the GPU's own types gives the
rounding error an honest implementation makes with these very inputs (a sum that cancels, a
long reduction, a half-precision product), so no bound has to be guessed per op. A floor per
arithmetic keeps results that are exact on the CPU (copies, integer-valued sums) from being
judged against zero; it is a tenth of the bounds the earlier check used and measured on a real
GPU (docs/MEASUREMENTS.md). A result 1% off fails in float32 and float16; in bfloat16 (eight
bits of mantissa: its own rounding is 0.4%) one 5% off does (tests: test_compare.py).

Errors are MIOpen's own measure (rms_range in its tests: the RMS of the difference over the
largest magnitude) and the largest difference over the largest magnitude."""

# How many times the CPU's own rounding error in the same types a GPU result may have: GPU
# kernels sum in other orders and with other algorithms (Winograd, FFT, split-K GEMMs), whose
# errors run several times those of the CPU's direct sums (dynamo's rule allows 2 to 3 for two
# implementations of one graph).
MULTIPLE = 10.0
# (rms, max) floors per arithmetic, relative to the result's largest magnitude. TF32 has no
# CPU counterpart here (the CPU computes float32): its floor is the bound a TF32 result is
# judged by alone.
FLOORS = {
    "float64": (1e-12, 1e-10),
    "float32": (1e-5, 1e-4),
    "tf32": (2e-3, 2e-2),
    "float16": (2e-4, 2e-3),
    "bfloat16": (1.6e-3, 1.6e-2),
}


def math_of(dtype_name, tf32=False):
    """The arithmetic a result of this type was computed in."""
    if dtype_name == "float32" and tf32:
        return "tf32"
    return dtype_name if dtype_name in FLOORS else "float32"


def _measure(torch, x, ref, scale):
    diff = x - ref
    return (diff.pow(2).mean().sqrt().item() / scale, diff.abs().max().item() / scale)


def judge(torch, got, ref, lowp, math):
    """A dict: rms_rel and max_rel of `got` (the GPU's) against `ref` (float64, CPU, same
    shape), the CPU's own (lowp_rms_rel, lowp_max_rel) where `lowp` (the same op on the CPU in
    the GPU's types) is given, the bounds applied and ok. Non-finite results fail unless the
    reference is non-finite at the same places (an overflow of the program's own numbers)."""
    if got.is_complex():  # both parts judged
        got = torch.view_as_real(got.detach().resolve_conj())
        ref = torch.view_as_real(ref.detach().resolve_conj()) if ref.is_complex() else ref
        lowp = torch.view_as_real(lowp.detach().resolve_conj()) \
            if lowp is not None and lowp.is_complex() else lowp
    limit = torch.finfo(got.dtype).max if got.dtype.is_floating_point else float("inf")
    got = got.detach().to("cpu", torch.float64)
    ref = ref.detach().to("cpu", torch.float64)
    # Where the exact result is beyond the type's range, the type's inf is the right answer.
    ref = torch.where(ref.abs() > limit, ref.sign() * float("inf"), ref)
    floor_rms, floor_max = FLOORS.get(math, FLOORS["float32"])
    out = {"math": math}
    if got.shape != ref.shape:
        out.update(rms_rel=float("inf"), max_rel=float("inf"), tolerance_rms=floor_rms,
                   tolerance_max=floor_max, ok=False, why=f"shape {list(got.shape)}, "
                   f"expected {list(ref.shape)}")
        return out
    if got.numel() == 0:
        out.update(rms_rel=0.0, max_rel=0.0, tolerance_rms=floor_rms, tolerance_max=floor_max,
                   ok=True)
        return out
    finite_ref = torch.isfinite(ref)
    finite_got = torch.isfinite(got)
    both_not = ~finite_got & ~finite_ref
    if bool((~finite_got & finite_ref).any()) or not bool(
            ((got[both_not] == ref[both_not])
             | (torch.isnan(got[both_not]) & torch.isnan(ref[both_not]))).all()):
        out.update(rms_rel=float("inf"), max_rel=float("inf"), tolerance_rms=floor_rms,
                   tolerance_max=floor_max, ok=False, why="not finite where the exact result "
                   "is, or another non-finite value")
        return out
    # The same overflow as the exact result's is right; where the exact result is not finite
    # and the GPU's is (a row of attention masked whole: 0/0), an implementation's convention
    # decides: those places are not judged. The rest is.
    keep = finite_got & finite_ref
    if not bool(keep.all()):
        got, ref = got[keep], ref[keep]
        if lowp is not None:
            lowp = lowp.detach().to("cpu", torch.float64)
            lowp = lowp[keep] if lowp.shape == keep.shape else None
        if got.numel() == 0:
            out.update(rms_rel=0.0, max_rel=0.0, tolerance_rms=floor_rms,
                       tolerance_max=floor_max, ok=True)
            return out
    scale = max(ref.abs().max().item(), got.abs().max().item()) or 1.0
    rms, mx = _measure(torch, got, ref, scale)
    allowed_rms, allowed_max = floor_rms, floor_max
    if lowp is not None:
        lowp = lowp.detach().to("cpu", torch.float64)
        if lowp.shape == ref.shape and bool(torch.isfinite(lowp).all()):
            lrms, lmax = _measure(torch, lowp, ref, scale)
            out.update(lowp_rms_rel=lrms, lowp_max_rel=lmax)
            allowed_rms = max(allowed_rms, MULTIPLE * lrms)
            allowed_max = max(allowed_max, MULTIPLE * lmax)
    out.update(rms_rel=rms, max_rel=mx, tolerance_rms=allowed_rms, tolerance_max=allowed_max,
               ok=rms <= allowed_rms and mx <= allowed_max)
    return out


def judge_exact(torch, got, ref):
    """Integer and boolean results: the same values, or wrong."""
    got = got.detach().to("cpu")
    ref = ref.detach().to("cpu")
    same = got.shape == ref.shape and bool((got == ref.to(got.dtype)).all())
    return {"math": "exact", "rms_rel": 0.0 if same else float("inf"),
            "max_rel": 0.0 if same else float("inf"), "tolerance_rms": 0.0,
            "tolerance_max": 0.0, "ok": same}
