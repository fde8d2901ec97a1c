//! The gfx targets of the code objects the owner's PyTorch loads, per library:
//! torch's own kernels (`.hip_fatbin` of `torch/lib/libtorch_hip.so`), rocBLAS (Tensile files
//! in `rocblas/library`, named `..._gfx1010.co|.dat|.hsaco`), hipBLASLt (`hipblaslt/library`)
//! and MIOpen (`.hip_fatbin` of `libMIOpen.so*`).
//!
//! Layouts modelled: pytorch.org's ROCm wheels bundle everything in `torch/lib`
//! (`torch/lib/rocblas/library`, `torch/lib/libMIOpen.so`); ROCm/TheRock's wheels put the ROCm
//! libraries in sibling site-packages `_rocm_sdk_libraries_<family>/lib` (e.g.
//! `_rocm_sdk_libraries_gfx101X_dgpu`) and `_rocm_sdk_core/lib` (TheRock
//! build_tools/packaging/python, `libraries_test.py`: "the `rocm_sdk` and libraries module
//! must be siblings on disk"); a distribution's torch (Arch's python-pytorch-rocm) loads the
//! system ROCm, judged by `rocm.rocblas` / `rocm.miopen`.
//!
//! TheRock's multi-arch install (its index since 2026: `torch[device-gfx1010]`) puts the host
//! libraries in `_rocm_sdk_libraries/lib` and the GPU code in kernel packs beside them:
//! `_rocm_sdk_libraries/.kpack/blas_lib_<target>.kpack` (rocBLAS), `miopen_lib_<target>.kpack`,
//! and `torch/.kpack/torch_<target>.kpack` (torch's own kernels, whose `.hip_fatbin` is then
//! empty), one pack per device package installed (`kpack`).
//!
//! A target is satisfied by its own code objects or by those of its LLVM generic target
//! (gfx10-1-generic for gfx1010/1011/1012).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod kpack;

use super::python::{self, install_torch, PythonEnv, MULTI_ARCH_INDEX};
use super::rocm::{self, file_names, names_for};
use super::{codeobj, Check, Claim, Input};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Kernels,
    Rocblas,
    Hipblaslt,
    Miopen,
}

impl Kind {
    pub fn id(self) -> &'static str {
        match self {
            Kind::Kernels => "torch.kernels",
            Kind::Rocblas => "torch.rocblas",
            Kind::Hipblaslt => "torch.hipblaslt",
            Kind::Miopen => "torch.miopen",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Kernels => "torch's own GPU kernels",
            Kind::Rocblas => "rocBLAS",
            Kind::Hipblaslt => "hipBLASLt",
            Kind::Miopen => "MIOpen",
        }
    }
}

/// One library torch loads and the targets of its code objects.
#[derive(Debug)]
pub struct Lib {
    pub kind: Kind,
    /// The file or directory read (below the root).
    pub path: PathBuf,
    pub targets: BTreeSet<String>,
    /// Whether code objects were found at all (a library without `.hip_fatbin` has none).
    pub has_code: bool,
    pub errors: Vec<String>,
    /// Its code came from kernel packs (a multi-arch install): the targets of each pack.
    pub packs: Vec<String>,
}

/// The owner's Python, torch, and the libraries of a ROCm torch.
#[derive(Debug)]
pub struct Stack {
    pub python: PythonEnv,
    pub libs: Vec<Lib>,
}

impl Stack {
    pub fn gather(input: &Input) -> Stack {
        let python = python::locate(input);
        let libs = match &python.torch {
            Ok(t) if t.hip.is_some() => libraries(input, &t.dir),
            _ => Vec::new(),
        };
        Stack { python, libs }
    }

    pub fn lib(&self, kind: Kind) -> Option<&Lib> {
        self.libs.iter().find(|l| l.kind == kind)
    }

    /// Whether torch's kernels and rocBLAS both carry code for `target` (or its generic
    /// target), with the claims that says; `None` without a ROCm torch.
    pub fn has_code_for(&self, input: &Input, target: &str) -> Option<(bool, Vec<Claim>)> {
        let libs: Vec<&Lib> = [Kind::Kernels, Kind::Rocblas]
            .iter()
            .filter_map(|k| self.lib(*k))
            .collect();
        if libs.is_empty() {
            return None;
        }
        let claims: Vec<Claim> = libs.iter().map(|l| claim(input, l, target)).collect();
        Some((claims.iter().all(|c| c.present), claims))
    }
}

fn claim(input: &Input, lib: &Lib, target: &str) -> Claim {
    Claim {
        lib: input.show(&lib.path),
        target: target.to_owned(),
        present: covers(&lib.targets, target),
    }
}

/// `targets` has code for `target`: its own or its generic target's.
pub fn covers(targets: &BTreeSet<String>, target: &str) -> bool {
    names_for(target).iter().any(|n| targets.contains(n))
}

/// Where the ROCm libraries of a torch at `torch_dir` live: `torch/lib`, then TheRock's
/// sibling `_rocm_sdk_libraries_*/lib` and `_rocm_sdk_core/lib`.
fn lib_dirs(input: &Input, torch_dir: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![input.root.resolve(&torch_dir.join("lib"))];
    if let Some(site) = torch_dir.parent() {
        let mut sdk: Vec<PathBuf> = std::fs::read_dir(site)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("_rocm_sdk_libraries") || n == "_rocm_sdk_core"
            })
            .map(|e| input.root.resolve(&e.path().join("lib")))
            .filter(|p| p.is_dir())
            .collect();
        sdk.sort();
        dirs.extend(sdk);
    }
    dirs
}

fn libraries(input: &Input, torch_dir: &Path) -> Vec<Lib> {
    let dirs = lib_dirs(input, torch_dir);
    let mut libs = Vec::new();
    // A distribution's torch links its libraries from elsewhere (`-> /usr/lib/...`).
    let kernels = input.root.resolve(&torch_dir.join("lib/libtorch_hip.so"));
    if kernels.is_file() {
        libs.push(elf_lib(Kind::Kernels, kernels));
    }
    for (kind, sub) in [
        (Kind::Rocblas, "rocblas/library"),
        (Kind::Hipblaslt, "hipblaslt/library"),
    ] {
        if let Some(d) = dirs
            .iter()
            .map(|d| input.root.resolve(&d.join(sub)))
            .find(|d| d.is_dir())
        {
            let targets: BTreeSet<String> = file_names(&d)
                .iter()
                .filter(|n| [".co", ".dat", ".hsaco"].iter().any(|x| n.ends_with(x)))
                .flat_map(|n| targets_in_name(n))
                .collect();
            libs.push(Lib {
                kind,
                has_code: !targets.is_empty(),
                path: d,
                targets,
                errors: Vec::new(),
                packs: Vec::new(),
            });
        }
    }
    let miopen = dirs.iter().find_map(|d| {
        let mut v: Vec<String> = file_names(d)
            .into_iter()
            .filter(|n| n.starts_with("libMIOpen.so"))
            .collect();
        // The real file (libMIOpen.so.1.0.x) has the longest name; the others link to it.
        v.sort_by_key(|n| std::cmp::Reverse(n.len()));
        v.first().map(|n| input.root.resolve(&d.join(n)))
    });
    if let Some(m) = miopen {
        libs.push(elf_lib(Kind::Miopen, m));
    }
    let mut pack_dirs = vec![(
        Kind::Kernels,
        input.root.resolve(&torch_dir.join(".kpack")),
        "torch",
    )];
    if let Some(site) = torch_dir.parent() {
        let sdk = input.root.resolve(&site.join("_rocm_sdk_libraries/.kpack"));
        pack_dirs.push((Kind::Rocblas, sdk.clone(), "blas_lib"));
        pack_dirs.push((Kind::Miopen, sdk, "miopen_lib"));
    }
    for (kind, dir, group) in pack_dirs {
        add_packs(&mut libs, kind, &dir, group);
    }
    libs
}

/// A library's kernel packs in `dir` (`<group>_<target>.kpack`), their targets added to its
/// entry (made if its host library was not found): the pack directory is then what is shown.
fn add_packs(libs: &mut Vec<Lib>, kind: Kind, dir: &Path, group: &str) {
    let files = kpack::packs(dir, group);
    if files.is_empty() {
        return;
    }
    let i = match libs.iter().position(|l| l.kind == kind) {
        Some(i) => i,
        None => {
            libs.push(Lib {
                kind,
                path: dir.to_path_buf(),
                targets: BTreeSet::new(),
                has_code: false,
                errors: Vec::new(),
                packs: Vec::new(),
            });
            libs.len() - 1
        }
    };
    let lib = &mut libs[i];
    lib.path = dir.to_path_buf();
    for f in files {
        match kpack::read(&f) {
            Ok(p) => {
                // A target with features (gfx942:xnack+) carries the target's code.
                let arches: Vec<String> = p
                    .arches
                    .iter()
                    .map(|a| a.split(':').next().unwrap_or(a).to_owned())
                    .collect();
                lib.has_code |= p.entries > 0;
                lib.targets.extend(arches.iter().cloned());
                lib.packs.extend(arches);
            }
            Err(e) => lib.errors.push(e),
        }
    }
    lib.packs.sort();
    lib.packs.dedup();
}

fn elf_lib(kind: Kind, path: PathBuf) -> Lib {
    match codeobj::scan_elf(&path) {
        Ok(Some(s)) => Lib {
            kind,
            has_code: s.bundles > 0,
            targets: s.targets,
            errors: s.errors,
            path,
            packs: Vec::new(),
        },
        Ok(None) => Lib {
            kind,
            has_code: false,
            targets: BTreeSet::new(),
            errors: Vec::new(),
            path,
            packs: Vec::new(),
        },
        Err(e) => Lib {
            kind,
            has_code: false,
            targets: BTreeSet::new(),
            errors: vec![e],
            path,
            packs: Vec::new(),
        },
    }
}

/// The gfx targets a Tensile file name carries: `TensileLibrary_lazy_gfx1010.dat` is gfx1010,
/// `Kernels.so-000-gfx10-1-generic.hsaco` gfx10-1-generic.
pub fn targets_in_name(name: &str) -> Vec<String> {
    name.match_indices("gfx")
        .filter_map(|(i, _)| {
            let tail = &name[i..];
            let end = tail
                .char_indices()
                .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '-'))
                .map_or(tail.len(), |(k, _)| k);
            let t = tail[..end].trim_end_matches('-');
            let t = t
                .strip_suffix("-xnack")
                .or_else(|| t.strip_suffix("-sramecc"))
                .unwrap_or(t);
            (t.len() > 3 && t[3..].starts_with(|c: char| c.is_ascii_digit())).then(|| t.to_owned())
        })
        .collect()
}

/// The wanted targets of every RDNA1 GPU, deduplicated: the target each runs once
/// `rocm.hsa_override` is satisfied ([`rocm::planned`]).
pub fn wanted_all(input: &Input) -> Vec<String> {
    let mut v: Vec<String> = input
        .facts
        .rdna1()
        .iter()
        .map(|(_, c)| rocm::planned(input, c.gfx_target()).target)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The pip line that adds the device packages of `targets` to a multi-arch install, with the
/// owner's own interpreter.
fn add_device_packages(input: &Input, targets: &[&str]) -> String {
    let py = match &input.stack().python.python {
        Some((p, _)) => input.show(p),
        None => "python3".into(),
    };
    let extras = targets
        .iter()
        .map(|t| format!("device-{t}"))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "{py} -m pip install --index-url {MULTI_ARCH_INDEX} \"torch[{extras}]\" \"torchvision[{extras}]\": \
         adds the device packages (rocm-sdk-device-*, amd-torch-device-*) whose kernel packs carry \
         {} code to this multi-arch install",
        targets.join("/")
    )
}

fn list(t: &BTreeSet<String>) -> String {
    if t.is_empty() {
        "none".into()
    } else {
        t.iter().cloned().collect::<Vec<_>>().join(" ")
    }
}

pub fn checks(input: &Input) -> Vec<Check> {
    [Kind::Kernels, Kind::Rocblas, Kind::Miopen, Kind::Hipblaslt]
        .iter()
        .map(|k| lib_check(input, *k))
        .collect()
}

fn lib_check(input: &Input, kind: Kind) -> Check {
    let id = kind.id();
    let stack = input.stack();
    let rocm_torch = matches!(&stack.python.torch, Ok(t) if t.hip.is_some());
    if !rocm_torch {
        return Check::warn(id, "not checked: no ROCm PyTorch found", "see python.torch");
    }
    let targets = wanted_all(input);
    if targets.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let Some(lib) = stack.lib(kind) else {
        return match kind {
            Kind::Kernels => Check::fail(
                id,
                "torch/lib/libtorch_hip.so not found: this torch has no HIP kernels of its own",
                install_torch(input),
            ),
            Kind::Rocblas | Kind::Miopen => Check::ok(
                id,
                format!(
                    "torch bundles no {}: it loads the system's (see rocm.{})",
                    kind.name(),
                    if kind == Kind::Rocblas {
                        "rocblas"
                    } else {
                        "miopen"
                    }
                ),
            ),
            Kind::Hipblaslt => {
                Check::ok(id, "torch bundles no hipBLASLt (it is not used on gfx10)")
            }
        };
    };
    let at = input.show(&lib.path);
    let claims: Vec<Claim> = targets.iter().map(|t| claim(input, lib, t)).collect();
    let missing: Vec<&str> = claims
        .iter()
        .filter(|c| !c.present)
        .map(|c| c.target.as_str())
        .collect();
    let want = rocm::describe(input, &targets);
    let have = list(&lib.targets);
    let errors = if lib.errors.is_empty() {
        String::new()
    } else {
        format!(" (unreadable parts: {})", lib.errors.join("; "))
    };
    if !lib.has_code && lib.errors.is_empty() {
        let c = match kind {
            Kind::Miopen => Check::ok(
                id,
                format!("MIOpen at {at} carries no precompiled HIP kernels: it compiles its kernels for the GPU at first use (cached in ~/.cache/miopen)"),
            ),
            _ => Check::fail(
                id,
                format!("{} at {at} has no code objects at all", kind.name()),
                install_torch(input),
            ),
        };
        return c;
    }
    if !lib.has_code {
        return Check::warn(
            id,
            format!("{} at {at} could not be read{errors}", kind.name()),
            format!("reinstall the torch wheel if {at} is damaged"),
        );
    }
    let c = if missing.is_empty() {
        Check::ok(
            id,
            format!(
                "{} at {at} has code objects for {want} (targets: {have}){errors}",
                kind.name()
            ),
        )
    } else if kind == Kind::Hipblaslt {
        // PyTorch uses hipBLASLt only on GPUs it supports (gfx90a, gfx94x, gfx11, gfx12) and
        // rocBLAS elsewhere: no gfx10 code in it is expected.
        Check::ok(
            id,
            format!("hipBLASLt at {at} has no {} code objects (targets: {have}): PyTorch uses rocBLAS on gfx10 instead", missing.join("/")),
        )
    } else {
        let symptom = match kind {
            Kind::Kernels => "every torch op on the GPU fails with \"HIP error: invalid device function\" (hipErrorNoBinaryForGpu)",
            Kind::Rocblas => "matrix products fail with \"Cannot read TensileLibrary\" / rocBLAS error",
            _ => "convolutions fail with miopenStatusUnknownError or a missing kernel",
        };
        let fix = if lib.packs.is_empty() {
            install_torch(input)
        } else {
            add_device_packages(input, &missing)
        };
        let what = if lib.packs.is_empty() {
            "code objects".to_owned()
        } else {
            format!("kernel pack (packs for: {})", lib.packs.join(" "))
        };
        Check::fail(
            id,
            format!("{} at {at} has no {} {what} (targets: {have}): {symptom}; HSA_OVERRIDE_GFX_VERSION=10.3.0 is not a way around it (aperture violations on gfx101X)", kind.name(), missing.join("/")),
            fix,
        )
    };
    c.claiming(claims)
}

#[cfg(test)]
mod tests;
