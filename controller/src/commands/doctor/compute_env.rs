//! Switches in the owner's environment that decide whether the GPU computes right on gfx101x,
//! beside the libraries' code objects (torch_libs.rs): Triton's AMD buffer ops, which write
//! zeros with no error on gfx1010 (unsloth #11614: the cure is `AMDGCN_USE_BUFFER_OPS=0` and
//! Triton and Inductor caches of their own, as a stale cache brings the broken kernels back),
//! and PyTorch's BLAS preference (`TORCH_BLAS_PREFER_HIPBLASLT`, aten Context.cpp), which must
//! not ask for hipBLASLt: TheRock builds none for gfx101X (cmake/therock_amdgpu_targets.cmake,
//! `EXCLUDE_TARGET_PROJECTS hipBLASLt`), and PyTorch's default on gfx10 is rocBLAS.

use super::python::Torch;
use super::{Check, Input};

pub fn checks(input: &Input) -> Vec<Check> {
    vec![triton_check(input), blas_check(input)]
}

/// The ROCm torch these checks are about, where there is one beside an RDNA1 card.
fn rocm_torch<'i>(input: &'i Input) -> Option<&'i Torch> {
    match &input.stack().python.torch {
        Ok(t) if t.hip.is_some() && !input.facts.rdna1().is_empty() => Some(t),
        _ => None,
    }
}

const NOT_CHECKED: &str =
    "not checked: no ROCm PyTorch beside an RDNA1 GPU (see python.torch, gpu.rdna1)";

fn triton_check(input: &Input) -> Check {
    let id = "torch.triton";
    let Some(torch) = rocm_torch(input) else {
        return Check::ok(id, NOT_CHECKED);
    };
    let triton = input.root.resolve(&torch.site().join("triton"));
    if !triton.is_dir() {
        return Check::ok(
            id,
            "no Triton beside torch: torch.compile cannot make Triton kernels",
        );
    }
    let at = input.show(&triton);
    let buffer_ops = input.host.var("AMDGCN_USE_BUFFER_OPS");
    let caches = ["TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR"]
        .iter()
        .all(|v| input.host.var(v).is_some_and(|d| !d.is_empty()));
    let fix = "export AMDGCN_USE_BUFFER_OPS=0 TRITON_CACHE_DIR=~/.cache/rdna1-mtype/triton-cache \
               TORCHINDUCTOR_CACHE_DIR=~/.cache/rdna1-mtype/inductor-cache in the shell you \
               train from (caches of their own: kernels cached before were built with the \
               buffer ops); or let `rdna1ctl search -- <your training command>` try it and \
               keep it";
    match buffer_ops.as_deref() {
        Some("0") if caches => Check::ok(
            id,
            format!("Triton at {at}: its AMD buffer ops are off (AMDGCN_USE_BUFFER_OPS=0) and Triton and Inductor have caches of their own"),
        ),
        Some("0") => Check::warn(
            id,
            format!("Triton at {at}: AMDGCN_USE_BUFFER_OPS=0, but Triton or Inductor still use their default caches, where kernels built with the buffer ops on can be reused (unsloth #11614)"),
            fix,
        ),
        _ => Check::warn(
            id,
            format!("Triton at {at} with its AMD buffer ops on{}: on gfx1010 they write zeros with no error, so compiled code (torch.compile, fused Triton kernels) \"trains and learns garbage\" (unsloth #11614; untested on hardware here)", buffer_ops.map(|v| format!(" (AMDGCN_USE_BUFFER_OPS={v})")).unwrap_or_default()),
            fix,
        ),
    }
}

fn blas_check(input: &Input) -> Check {
    let id = "torch.blas";
    if rocm_torch(input).is_none() {
        return Check::ok(id, NOT_CHECKED);
    }
    match input.host.var("TORCH_BLAS_PREFER_HIPBLASLT").as_deref() {
        Some(v) if v != "0" && !v.is_empty() => Check::warn(
            id,
            format!("TORCH_BLAS_PREFER_HIPBLASLT={v} asks PyTorch for hipBLASLt, which TheRock does not build for gfx101X (its GEMMs need rocBLAS there)"),
            "unset TORCH_BLAS_PREFER_HIPBLASLT (or set it to 0): PyTorch uses rocBLAS on gfx10",
        ),
        _ => Check::ok(id, "PyTorch's GEMMs go to rocBLAS (TORCH_BLAS_PREFER_HIPBLASLT is not asking for hipBLASLt)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    fn rocm_venv(triton: bool) -> Tree {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        let sp = "v/lib/python3.12/site-packages";
        t.write(
            "v/pyvenv.cfg",
            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
        );
        t.write("v/bin/python", "");
        t.write(&format!("{sp}/torch/__init__.py"), "");
        t.write(
            &format!("{sp}/torch/version.py"),
            "__version__ = '2.11.0+rocm7.15.0'\ncuda: Optional[str] = None\nhip: Optional[str] = '7.15.1'\n",
        );
        if triton {
            t.write(&format!("{sp}/triton/__init__.py"), "");
        }
        t
    }

    fn host() -> FakeHost {
        FakeHost::default().with_var("VIRTUAL_ENV", "/v")
    }

    #[test]
    fn triton_with_buffer_ops_on_is_said_with_the_cure() {
        let t = rocm_venv(true);
        let c = run_check(&t, &host(), checks, "torch.triton");
        assert_check(&c, Status::Warn, &["buffer ops on", "unsloth #11614"]);
        assert!(c
            .fix
            .unwrap()
            .contains("AMDGCN_USE_BUFFER_OPS=0 TRITON_CACHE_DIR="));
        let h = host().with_var("AMDGCN_USE_BUFFER_OPS", "0");
        let c = run_check(&t, &h, checks, "torch.triton");
        assert_check(&c, Status::Warn, &["default caches"]);
        let h = h
            .with_var("TRITON_CACHE_DIR", "/home/u/.cache/t")
            .with_var("TORCHINDUCTOR_CACHE_DIR", "/home/u/.cache/i");
        let c = run_check(&t, &h, checks, "torch.triton");
        assert_check(&c, Status::Ok, &["buffer ops are off"]);
        let c = run_check(&rocm_venv(false), &host(), checks, "torch.triton");
        assert_check(&c, Status::Ok, &["no Triton"]);
    }

    #[test]
    fn asking_for_hipblaslt_on_gfx101x_is_said() {
        let t = rocm_venv(false);
        let h = host().with_var("TORCH_BLAS_PREFER_HIPBLASLT", "1");
        let c = run_check(&t, &h, checks, "torch.blas");
        assert_check(
            &c,
            Status::Warn,
            &["TORCH_BLAS_PREFER_HIPBLASLT=1", "gfx101X"],
        );
        let c = run_check(&t, &host(), checks, "torch.blas");
        assert_check(&c, Status::Ok, &["rocBLAS"]);
    }
}
