//! ROCm userspace: version, HSA_OVERRIDE_GFX_VERSION, and whether rocBLAS and MIOpen ship
//! code for the GPU's target.
//!
//! Layouts looked at (see docs/CLI.md (doctor) for sources): AMD's packages under
//! `/opt/rocm[-X.Y.Z]` (`.info/version`, `lib/rocblas/library/TensileLibrary_lazy_gfx1010.dat`,
//! `Kernels.so-000-gfx1010.hsaco`, `lib/libMIOpen.so*`, `share/miopen/db/gfx1030_36.*`);
//! Debian/Ubuntu (`/usr/lib/<triplet>/rocblas/<ver>/library`, `/usr/share/miopen/db`); Fedora
//! (`/usr/lib64/rocblas/library`). PyTorch wheels bundle their own rocBLAS and MIOpen inside
//! `torch/lib`, which doctor does not search.

use std::path::{Path, PathBuf};

use rdna1_mtype_shared::devices::Rdna1Chip;

use super::{Check, Input};

/// ROCm roots: `/opt/rocm` (a symlink to the default release) first, then `/opt/rocm-*`.
fn rocm_roots(input: &Input) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let main = input.root.path("/opt/rocm");
    if main.is_dir() {
        roots.push(main);
    }
    let mut versioned: Vec<PathBuf> = std::fs::read_dir(input.root.path("/opt"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("rocm-"))
        .map(|e| e.path())
        .collect();
    versioned.sort();
    versioned.reverse();
    roots.extend(versioned);
    dedup_canonical(&mut roots);
    roots
}

/// Drops paths that resolve to one already listed (/opt/rocm is a symlink to /opt/rocm-X).
fn dedup_canonical(paths: &mut Vec<PathBuf>) {
    let mut seen = Vec::new();
    paths.retain(|p| {
        let c = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let new = !seen.contains(&c);
        seen.push(c);
        new
    });
}

/// `dir/*/tail` for every entry of `dir`.
fn children_with(dir: &Path, tail: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path().join(tail))
        .filter(|p| p.exists())
        .collect();
    v.sort();
    v
}

fn file_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Names a code object for `target` may carry: the target, and LLVM's generic target of its
/// family (gfx10-1-generic runs on gfx1010..gfx1013, gfx10-3-generic on gfx1030..gfx1036).
fn names_for(target: &str) -> Vec<String> {
    let mut v = vec![target.to_owned()];
    if let Some(family) = target.strip_prefix("gfx10").and_then(|r| r.chars().next())
        && target.len() == 7
        && matches!(family, '1' | '3')
    {
        v.push(format!("gfx10-{family}-generic"));
    }
    v
}

/// `name` holds `target` as a whole word (not followed by a letter or digit).
fn names_target(name: &str, target: &str) -> bool {
    names_for(target).iter().any(|t| {
        name.match_indices(t.as_str()).any(|(i, _)| {
            !name[i + t.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// The gfx target `HSA_OVERRIDE_GFX_VERSION` names: "major.minor.stepping", stepping in hex
/// digits in the name (ROCr's convention: 9.0.10 is gfx90a).
fn override_target(value: &str) -> Option<String> {
    let mut parts = value.trim().split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    let stepping: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || minor > 15 || stepping > 15 {
        return None;
    }
    Some(format!("gfx{major}{minor}{stepping:x}"))
}

/// The targets ROCm will load code for, per RDNA1 GPU: the override if set, else the chip's.
fn effective_targets(input: &Input) -> Vec<String> {
    let over = input
        .host
        .var("HSA_OVERRIDE_GFX_VERSION")
        .and_then(|v| override_target(&v));
    let mut t: Vec<String> = input
        .facts
        .rdna1()
        .iter()
        .map(|(_, c)| over.clone().unwrap_or_else(|| c.gfx_target().to_owned()))
        .collect();
    t.sort();
    t.dedup();
    t
}

/// rocBLAS library directories: ROCBLAS_TENSILE_LIBPATH (rocBLAS's own override) if set,
/// then the distribution layouts.
fn rocblas_dirs(input: &Input) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = input.host.var("ROCBLAS_TENSILE_LIBPATH") {
        dirs.push(input.root.path(&p));
    }
    for r in rocm_roots(input) {
        dirs.push(r.join("lib/rocblas/library"));
    }
    for triplet in children_with(&input.root.path("/usr/lib"), "rocblas") {
        dirs.extend(children_with(&triplet, "library"));
    }
    dirs.push(input.root.path("/usr/lib64/rocblas/library"));
    dirs.retain(|d| d.is_dir());
    dedup_canonical(&mut dirs);
    dirs
}

/// The targets for messages, saying when they come from the override.
fn wanted(input: &Input, targets: &[String]) -> String {
    let list = targets.join("/");
    if input.host.var("HSA_OVERRIDE_GFX_VERSION").is_some() {
        format!("{list} (the HSA_OVERRIDE_GFX_VERSION target)")
    } else {
        list
    }
}

pub fn checks(input: &Input) -> Vec<Check> {
    let targets = effective_targets(input);
    let rocblas = rocblas_dirs(input);
    vec![
        version_check(input),
        override_check(input, &rocblas),
        rocblas_check(input, &targets, &rocblas),
        miopen_check(input, &targets),
    ]
}

fn version_check(input: &Input) -> Check {
    let id = "rocm.version";
    for r in rocm_roots(input) {
        if let Ok(Some(v)) = input.root.read_attr(&r.join(".info/version")) {
            return Check::ok(id, format!("ROCm {v} in {}", input.show(&r)));
        }
    }
    Check::warn(
        id,
        "no /opt/rocm*/.info/version: no ROCm from AMD's packages (a distribution's ROCm or a PyTorch wheel's bundled one may still be in use)",
        "install ROCm (amdgpu-install or your distribution's rocm packages) unless PyTorch brings its own",
    )
}

fn override_check(input: &Input, rocblas: &[PathBuf]) -> Check {
    let id = "rocm.hsa_override";
    let chips: Vec<Rdna1Chip> = input.facts.rdna1().iter().map(|(_, c)| *c).collect();
    if chips.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let Some(value) = input.host.var("HSA_OVERRIDE_GFX_VERSION") else {
        let missing: Vec<&str> = chips
            .iter()
            .map(|c| c.gfx_target())
            .filter(|t| {
                !rocblas.is_empty()
                    && !rocblas
                        .iter()
                        .any(|d| file_names(d).iter().any(|n| names_target(n, t)))
            })
            .collect();
        if missing.is_empty() {
            return Check::ok(
                id,
                "HSA_OVERRIDE_GFX_VERSION unset: ROCm loads code for the GPU's own target",
            );
        }
        return Check::fail(
            id,
            format!("HSA_OVERRIDE_GFX_VERSION unset and the installed rocBLAS has no {} code objects: ROCm has nothing to run on this GPU", missing.join("/")),
            "install a ROCm built for gfx1010 (AMD's rocBLAS packages ship gfx1010 and gfx1012; so do Debian/Ubuntu/Fedora) or, on gfx1011/gfx1012 only, set HSA_OVERRIDE_GFX_VERSION=10.1.0",
        );
    };
    let Some(target) = override_target(&value) else {
        return Check::fail(
            id,
            format!("HSA_OVERRIDE_GFX_VERSION={value:?} is not major.minor.stepping"),
            "unset it, or set 10.1.0 on gfx1011/gfx1012",
        );
    };
    let mut worst: Option<Check> = None;
    for chip in chips {
        let own = chip.gfx_target();
        let c = if target == own {
            Check::ok(
                id,
                format!(
                    "HSA_OVERRIDE_GFX_VERSION={value} is {own}, the GPU's own target (no effect)"
                ),
            )
        } else if target == "gfx1010" {
            // LLVM: gfx1011 and gfx1012 are gfx1010 plus dot-product instructions, so gfx1010
            // code runs on them; assumed from the ISA, not tested on hardware.
            Check::warn(
                id,
                format!("HSA_OVERRIDE_GFX_VERSION={value} runs gfx1010 code on {own}: a subset of its ISA, expected to work"),
                format!("fine if your ROCm has no {own} code objects; otherwise unset it"),
            )
        } else {
            Check::fail(
                id,
                format!("HSA_OVERRIDE_GFX_VERSION={value} makes ROCm load {target} code on a {own}, a different ISA: kernels can fault (e.g. HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION) whatever the MTYPE, which also spoils any test of rdna1_mtype"),
                format!("unset HSA_OVERRIDE_GFX_VERSION and use a ROCm with {own} code objects (see rocm.rocblas)"),
            )
        };
        if worst.as_ref().is_none_or(|w| c.status > w.status) {
            worst = Some(c);
        }
    }
    worst.expect("at least one chip")
}

fn rocblas_check(input: &Input, targets: &[String], dirs: &[PathBuf]) -> Check {
    let id = "rocm.rocblas";
    if targets.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    if dirs.is_empty() {
        return Check::warn(
            id,
            "no rocBLAS library directory found (/opt/rocm*/lib/rocblas/library, /usr/lib/*/rocblas/*/library, /usr/lib64/rocblas/library); PyTorch wheels bundle their own in torch/lib/rocblas/library, not checked",
            "install rocBLAS (rocblas / librocblas0) if PyTorch does not bring its own",
        );
    }
    let want = wanted(input, targets);
    let (with, without): (Vec<&PathBuf>, Vec<&PathBuf>) = dirs.iter().partition(|d| {
        let names = file_names(d);
        targets
            .iter()
            .all(|t| names.iter().any(|n| names_target(n, t)))
    });
    let list = |v: &[&PathBuf]| {
        v.iter()
            .map(|p| input.show(p))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if without.is_empty() {
        Check::ok(
            id,
            format!("rocBLAS has {want} code objects in {}", list(&with)),
        )
    } else if with.is_empty() {
        Check::fail(
            id,
            format!("rocBLAS in {} has no {want} code objects: it fails with \"Cannot read TensileLibrary\" or hipErrorNoBinaryForGpu", list(&without)),
            "install a rocBLAS built for gfx1010/gfx1012 (AMD's packages, Debian/Ubuntu librocblas0, Fedora rocblas) or build it with -DAMDGPU_TARGETS=gfx1010",
        )
    } else {
        Check::warn(
            id,
            format!("rocBLAS in {} has {want} code objects, in {} not: which one runs depends on the library path", list(&with), list(&without)),
            "make sure your programs load the rocBLAS with gfx1010 code (LD_LIBRARY_PATH, ROCBLAS_TENSILE_LIBPATH)",
        )
    }
}

fn miopen_check(input: &Input, targets: &[String]) -> Check {
    let id = "rocm.miopen";
    if targets.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let roots = rocm_roots(input);
    let mut lib_dirs: Vec<PathBuf> = roots.iter().map(|r| r.join("lib")).collect();
    lib_dirs.extend(children_with(&input.root.path("/usr/lib"), ""));
    lib_dirs.push(input.root.path("/usr/lib64"));
    let has_lib = lib_dirs
        .iter()
        .any(|d| file_names(d).iter().any(|n| n.starts_with("libMIOpen.so")));
    if !has_lib {
        return Check::warn(
            id,
            "no libMIOpen.so in /opt/rocm*/lib, /usr/lib/*, /usr/lib64; PyTorch wheels bundle their own MIOpen in torch/lib, not checked",
            "install MIOpen (miopen-hip / libmiopen) if PyTorch does not bring its own",
        );
    }
    let mut db_dirs: Vec<PathBuf> = roots.iter().map(|r| r.join("share/miopen/db")).collect();
    db_dirs.push(input.root.path("/usr/share/miopen/db"));
    // MIOpen names its databases <target>[_]<CUs>.{HIP.fdb.txt,db.txt,kdb}.
    let found: Vec<String> = db_dirs
        .iter()
        .flat_map(|d| file_names(d))
        .filter(|n| targets.iter().any(|t| n.starts_with(t.as_str())))
        .collect();
    let want = wanted(input, targets);
    if found.is_empty() {
        Check::warn(
            id,
            format!("MIOpen is installed without find-db or precompiled kernels (.kdb) for {want}: it compiles its kernels at first use (slow first run, cached in ~/.cache/miopen) and picks solvers untuned"),
            "nothing to install (AMD ships databases only for supported targets); expect a slow first epoch",
        )
    } else {
        Check::ok(
            id,
            format!("MIOpen databases for {want}: {}", found.join(", ")),
        )
    }
}

#[cfg(test)]
mod tests;
