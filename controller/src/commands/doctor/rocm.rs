//! ROCm userspace: version, HSA_OVERRIDE_GFX_VERSION, and whether rocBLAS and MIOpen ship
//! code for the GPU's target.
//!
//! Layouts looked at (see docs/CLI.md (doctor) for sources): AMD's packages under
//! `/opt/rocm[-X.Y.Z]` (`.info/version`, `lib/rocblas/library/TensileLibrary_lazy_gfx1010.dat`,
//! `Kernels.so-000-gfx1010.hsaco`, `lib/libMIOpen.so*`, `share/miopen/db/gfx1030_36.*`);
//! Debian/Ubuntu (`/usr/lib/<triplet>/rocblas/<ver>/library`, `/usr/share/miopen/db`); Fedora
//! (`/usr/lib64/rocblas/library`). PyTorch wheels bundle their own rocBLAS and MIOpen inside
//! `torch/lib` or TheRock's `_rocm_sdk_libraries_*`: those are judged by `torch_libs`, and the
//! override is judged against the code objects torch loads when there is a ROCm torch.
//!
//! Every check judges the target the GPU runs once `rocm.hsa_override` is satisfied
//! ([`planned`]), so no check says ok about a target another says is wrong, and no two fixes
//! pull different ways (a gfx1012 with only gfx1010 code: set 10.1.0, never "install another
//! rocBLAS"). Symbolic links are followed inside `--root` (`/opt/rocm` is an absolute link
//! through `/etc/alternatives` on AMD's packages).

use std::path::{Path, PathBuf};

use rdna1_mtype_shared::devices::Rdna1Chip;

use super::python::install_torch;
use super::torch_libs::{self, Kind};
use super::{Check, Claim, Input};

/// ROCm roots: `/opt/rocm` (a symlink to the default release) first, then `/opt/rocm-*`.
fn rocm_roots(input: &Input) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let main = input.root.resolve(&input.root.path("/opt/rocm"));
    if main.is_dir() {
        roots.push(main);
    }
    let mut versioned: Vec<PathBuf> = std::fs::read_dir(input.root.path("/opt"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("rocm-"))
        .map(|e| input.root.resolve(&e.path()))
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

/// The names in `dir` (none if it cannot be read).
pub(super) fn file_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Names a code object for `target` may carry: the target, and LLVM's generic target of its
/// family (gfx10-1-generic runs on gfx1010..gfx1013, gfx10-3-generic on gfx1030..gfx1036).
pub fn names_for(target: &str) -> Vec<String> {
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
pub fn override_target(value: &str) -> Option<String> {
    let mut parts = value.trim().split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    let stepping: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || minor > 15 || stepping > 15 {
        return None;
    }
    Some(format!("gfx{major}{minor}{stepping:x}"))
}

/// rocBLAS library directories: ROCBLAS_TENSILE_LIBPATH (rocBLAS's own override) if set,
/// then the distribution layouts.
fn rocblas_dirs(input: &Input) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = input.host.var("ROCBLAS_TENSILE_LIBPATH") {
        dirs.push(input.root.resolve(&input.root.path(&p)));
    }
    for r in rocm_roots(input) {
        dirs.push(r.join("lib/rocblas/library"));
    }
    for triplet in children_with(&input.root.path("/usr/lib"), "rocblas") {
        dirs.extend(children_with(&triplet, "library"));
    }
    dirs.push(input.root.path("/usr/lib64/rocblas/library"));
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| input.root.resolve(d)).collect();
    let mut dirs = dirs;
    dirs.retain(|d| d.is_dir());
    dedup_canonical(&mut dirs);
    dirs
}

/// The target a GPU's code objects are judged for, and why.
pub struct Planned {
    pub target: String,
    /// gfx1010 because HSA_OVERRIDE_GFX_VERSION=10.1.0 is what `rocm.hsa_override` asks for
    /// (a gfx1011/gfx1012 whose libraries have gfx1010 code and none of its own).
    pub by_fix: bool,
}

/// The target ROCm runs on a GPU whose own target is `own` once `rocm.hsa_override` is
/// satisfied: the override's when it is `own` or gfx1010 (the one override that suits
/// RDNA1); else gfx1010 when the code objects in use have gfx1010's and not `own`'s (that
/// check then asks for 10.1.0); else `own` (any other override is to be unset).
pub fn planned(input: &Input, own: &str) -> Planned {
    let over = input
        .host
        .var("HSA_OVERRIDE_GFX_VERSION")
        .and_then(|v| override_target(&v));
    match over {
        Some(t) if t == own || t == "gfx1010" => Planned {
            target: t,
            by_fix: false,
        },
        _ => Planned {
            by_fix: needs_gfx1010(input, own, &rocblas_dirs(input)).is_some(),
            target: own.to_owned(),
        }
        .gfx1010_if_by_fix(),
    }
}

impl Planned {
    fn gfx1010_if_by_fix(self) -> Planned {
        if self.by_fix {
            Planned {
                target: "gfx1010".into(),
                by_fix: true,
            }
        } else {
            self
        }
    }
}

/// For a gfx1011/gfx1012 `own`: the claims showing the code in use lacks `own` and has
/// gfx1010's, when that is so.
fn needs_gfx1010(input: &Input, own: &str, rocblas: &[PathBuf]) -> Option<Vec<Claim>> {
    if own == "gfx1010" {
        return None;
    }
    match (
        code_for(input, own, rocblas),
        code_for(input, "gfx1010", rocblas),
    ) {
        (Some((false, mut c1)), Some((true, c2))) => {
            c1.extend(c2);
            Some(c1)
        }
        _ => None,
    }
}

/// The targets for messages, saying when they come from the override or its fix.
pub fn describe(input: &Input, targets: &[String]) -> String {
    let list = targets.join("/");
    let over = input
        .host
        .var("HSA_OVERRIDE_GFX_VERSION")
        .and_then(|v| override_target(&v));
    let by_fix = input
        .facts
        .rdna1()
        .iter()
        .any(|(_, c)| planned(input, c.gfx_target()).by_fix);
    if by_fix {
        format!("{list} (what the GPU runs with HSA_OVERRIDE_GFX_VERSION=10.1.0, as rocm.hsa_override says)")
    } else if over.is_some_and(|o| targets.contains(&o)) {
        format!("{list} (the HSA_OVERRIDE_GFX_VERSION target)")
    } else {
        list
    }
}

pub fn checks(input: &Input) -> Vec<Check> {
    let targets = torch_libs::wanted_all(input);
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
    // A distribution's ROCm has no .info/version: its HIP runtime's file name carries the
    // version (Debian's libamdhip64.so.7.2.53211, Fedora's in /usr/lib64).
    if let Some((dir, version)) = distribution_hip(input) {
        let by = match input.distro() {
            super::distro::Distro::Debian => " (Debian's packages)",
            super::distro::Distro::Ubuntu => " (Ubuntu's packages)",
            super::distro::Distro::Fedora => " (Fedora's packages)",
            super::distro::Distro::Arch => " (Arch's packages)",
            super::distro::Distro::Other => "",
        };
        return Check::ok(
            id,
            format!(
                "the distribution's ROCm{by}: HIP runtime libamdhip64.so.{version} in {}",
                input.show(&dir)
            ),
        );
    }
    Check::warn(
        id,
        "no ROCm found: no /opt/rocm*/.info/version (AMD's packages) and no libamdhip64.so in /usr/lib/*, /usr/lib64 (a distribution's); a PyTorch wheel brings its own",
        "nothing to install if you train with a ROCm PyTorch wheel (see python.torch); other ROCm programs need ROCm (amdgpu-install, or your distribution's HIP runtime: Debian libamdhip64-6, Fedora hip-runtime-amd, Arch hip-runtime-amd)",
    )
}

/// The directory and version of a distribution's HIP runtime: the longest-named
/// `libamdhip64.so.X.Y.Z` in /usr/lib/<triplet> or /usr/lib64.
fn distribution_hip(input: &Input) -> Option<(PathBuf, String)> {
    let mut dirs = children_with(&input.root.path("/usr/lib"), "");
    dirs.push(input.root.path("/usr/lib64"));
    dirs.iter().find_map(|d| {
        let mut v: Vec<String> = file_names(d)
            .into_iter()
            .filter_map(|n| n.strip_prefix("libamdhip64.so.").map(str::to_owned))
            .filter(|v| v.split('.').all(|p| p.parse::<u64>().is_ok()))
            .collect();
        v.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let found = v.into_iter().next()?;
        // Without the trailing slash children_with's "" left, for messages.
        Some((d.components().collect::<PathBuf>(), found))
    })
}

/// Whether the code objects ROCm will load for this user carry `target`: torch's kernels and
/// rocBLAS when there is a ROCm torch, else the system rocBLAS (any of its directories);
/// `None` when there is nothing to look at.
fn code_for(input: &Input, target: &str, rocblas: &[PathBuf]) -> Option<(bool, Vec<Claim>)> {
    if let Some(r) = input.stack().has_code_for(input, target) {
        return Some(r);
    }
    if rocblas.is_empty() {
        return None;
    }
    let claims: Vec<Claim> = rocblas
        .iter()
        .map(|d| Claim {
            lib: input.show(d),
            target: target.to_owned(),
            present: file_names(d).iter().any(|n| names_target(n, target)),
        })
        .collect();
    Some((claims.iter().any(|c| c.present), claims))
}

fn override_check(input: &Input, rocblas: &[PathBuf]) -> Check {
    let id = "rocm.hsa_override";
    let chips: Vec<Rdna1Chip> = input.facts.rdna1().iter().map(|(_, c)| *c).collect();
    if chips.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let Some(value) = input.host.var("HSA_OVERRIDE_GFX_VERSION") else {
        // gfx1011/gfx1012 without their own code objects but with gfx1010's: 10.1.0 helps.
        for chip in &chips {
            let own = chip.gfx_target();
            if let Some(c1) = needs_gfx1010(input, own, rocblas) {
                return Check::warn(
                    id,
                    format!("HSA_OVERRIDE_GFX_VERSION unset, and the libraries have no {own} code objects but gfx1010's"),
                    format!("export HSA_OVERRIDE_GFX_VERSION=10.1.0 (gfx1010 code runs on {own}: a subset of its ISA)"),
                )
                .claiming(c1);
            }
        }
        return Check::ok(
            id,
            "HSA_OVERRIDE_GFX_VERSION unset: ROCm loads code for the GPU's own target",
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
            match code_for(input, own, rocblas) {
                Some((true, claims)) => Check::warn(
                    id,
                    format!("HSA_OVERRIDE_GFX_VERSION={value} runs gfx1010 code on {own}, yet the libraries have {own} code objects of their own"),
                    "unset HSA_OVERRIDE_GFX_VERSION (not needed here)",
                )
                .claiming(claims),
                _ => Check::ok(
                    id,
                    format!("HSA_OVERRIDE_GFX_VERSION={value} runs gfx1010 code on {own} (a subset of its ISA): the libraries are judged for gfx1010"),
                ),
            }
        } else {
            let (fix, claims) = match (
                needs_gfx1010(input, own, rocblas),
                code_for(input, own, rocblas),
            ) {
                (Some(claims), _) => (
                    format!("set HSA_OVERRIDE_GFX_VERSION=10.1.0 instead: the libraries in use have gfx1010 code objects and none of {own}'s, and gfx1010 code runs on {own} (a subset of its ISA)"),
                    claims,
                ),
                (None, Some((true, claims))) => (
                    format!("unset HSA_OVERRIDE_GFX_VERSION: the libraries in use already have {own} code objects"),
                    claims,
                ),
                (None, Some((false, claims))) => (
                    format!("unset HSA_OVERRIDE_GFX_VERSION and {}", install_torch(input)),
                    claims,
                ),
                (None, None) => (
                    format!("unset HSA_OVERRIDE_GFX_VERSION and {}", install_torch(input)),
                    Vec::new(),
                ),
            };
            Check::fail(
                id,
                format!("HSA_OVERRIDE_GFX_VERSION={value} makes ROCm load {target} code on a {own}, a different ISA: the known cause of HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on RDNA1 (ROCm #2527, #887; MIOpen #3540), whatever the MTYPE, which also spoils any test of rdna1_mtype"),
                fix,
            )
            .claiming(claims)
        };
        if worst.as_ref().is_none_or(|w| c.status > w.status) {
            worst = Some(c);
        }
    }
    worst.unwrap_or_else(|| Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1"))
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
            format!("{} if PyTorch does not bring its own", input.distro().rocblas_package()),
        );
    }
    let want = describe(input, targets);
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
    let claims: Vec<Claim> = dirs
        .iter()
        .flat_map(|d| {
            let names = file_names(d);
            targets.iter().map(move |t| Claim {
                lib: input.show(d),
                target: t.clone(),
                present: names.iter().any(|n| names_target(n, t)),
            })
        })
        .collect();
    let torch_own = input.stack().lib(Kind::Rocblas).is_some();
    let c = if without.is_empty() {
        Check::ok(
            id,
            format!("rocBLAS has {want} code objects in {}", list(&with)),
        )
    } else if with.is_empty() && torch_own {
        Check::warn(
            id,
            format!("the system rocBLAS in {} has no {want} code objects; your torch brings its own (see torch.rocblas), but other ROCm programs fail", list(&without)),
            format!("for programs other than torch, a rocBLAS built for gfx1010: {}", input.distro().rocblas_package()),
        )
    } else if with.is_empty() {
        Check::fail(
            id,
            format!("rocBLAS in {} has no {want} code objects: it fails with \"Cannot read TensileLibrary\" or hipErrorNoBinaryForGpu", list(&without)),
            format!("a rocBLAS built for gfx1010: {} (or build rocBLAS with -DAMDGPU_TARGETS=gfx1010)", input.distro().rocblas_package()),
        )
    } else {
        Check::warn(
            id,
            format!("rocBLAS in {} has {want} code objects, in {} not: which one runs depends on the library path", list(&with), list(&without)),
            "make sure your programs load the rocBLAS with gfx1010 code (LD_LIBRARY_PATH, ROCBLAS_TENSILE_LIBPATH)",
        )
    };
    c.claiming(claims)
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
            format!("{} if PyTorch does not bring its own", input.distro().miopen_package()),
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
    let want = describe(input, targets);
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
