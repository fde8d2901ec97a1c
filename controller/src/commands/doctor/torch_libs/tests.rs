use std::path::Path;

use super::*;
use crate::commands::doctor::codeobj::build;
use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
use crate::commands::doctor::Status;

/// The committed venv fixtures below `tests/fixtures/doctor-ok/home/owner/`, generated here:
/// `fixtures_are_up_to_date` compares them, and writes them when RDNA1CTL_WRITE_FIXTURES=1.
pub fn venv_fixtures() -> Vec<(String, Vec<u8>)> {
    let cfg = b"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n".to_vec();
    let version = |v: &str, hip: &str| {
        format!(
            "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n__version__ = '{v}'\ndebug = False\ncuda: Optional[str] = None\ngit_version = 'fixture'\nhip: Optional[str] = {hip}\nxpu: Optional[str] = None\n"
        )
        .into_bytes()
    };
    let sp = "lib/python3.12/site-packages";
    let mut f: Vec<(String, Vec<u8>)> = Vec::new();
    // TheRock-like gfx101X wheel: torch's kernels in torch/lib, ROCm's libraries beside it in
    // _rocm_sdk_libraries_gfx101X_dgpu (compressed bundles, as TheRock builds with
    // --offload-compress).
    let v = "venv-gfx101x";
    f.push((format!("{v}/pyvenv.cfg"), cfg.clone()));
    f.push((format!("{v}/bin/python"), Vec::new()));
    f.push((format!("{v}/{sp}/torch/__init__.py"), Vec::new()));
    f.push((
        format!("{v}/{sp}/torch/version.py"),
        version("2.9.1+rocm7.10.0a20260401", "'7.10.25475-therock'"),
    ));
    let mut fatbin = build::ccob(&["gfx1010", "gfx1011", "gfx1012"], 3, true);
    fatbin.extend(build::plain(&["gfx10-1-generic"]));
    f.push((
        format!("{v}/{sp}/torch/lib/libtorch_hip.so"),
        build::elf_with_fatbin(&fatbin),
    ));
    let sdk = format!("{v}/{sp}/_rocm_sdk_libraries_gfx101X_dgpu/lib");
    for n in [
        "TensileLibrary_lazy_gfx1010.dat",
        "TensileLibrary_lazy_gfx1012.dat",
        "Kernels.so-000-gfx1010.hsaco",
        "Kernels.so-000-gfx1012.hsaco",
    ] {
        f.push((format!("{sdk}/rocblas/library/{n}"), Vec::new()));
    }
    f.push((
        format!("{sdk}/libMIOpen.so.1.0.71000"),
        build::elf_with_fatbin(&build::ccob(&["gfx1010", "gfx1012"], 2, false)),
    ));
    f.push((format!("{v}/{sp}/_rocm_sdk_core/lib/.keep"), Vec::new()));
    // pytorch.org-like wheel built without gfx10.1: everything in torch/lib, no gfx101X.
    let v = "venv-gfx1030";
    f.push((format!("{v}/pyvenv.cfg"), cfg.clone()));
    f.push((format!("{v}/bin/python"), Vec::new()));
    f.push((format!("{v}/{sp}/torch/__init__.py"), Vec::new()));
    f.push((
        format!("{v}/{sp}/torch/version.py"),
        version("2.9.1+rocm6.4", "'6.4.43482-0f2d60242'"),
    ));
    f.push((
        format!("{v}/{sp}/torch/lib/libtorch_hip.so"),
        build::elf_with_fatbin(&build::ccob(&["gfx1030", "gfx1100", "gfx90a"], 3, true)),
    ));
    for n in [
        "TensileLibrary_lazy_gfx1030.dat",
        "TensileLibrary_lazy_gfx1100.dat",
        "Kernels.so-000-gfx1030.hsaco",
    ] {
        f.push((
            format!("{v}/{sp}/torch/lib/rocblas/library/{n}"),
            Vec::new(),
        ));
    }
    f.push((
        format!("{v}/{sp}/torch/lib/hipblaslt/library/TensileLibrary_lazy_gfx1100.dat"),
        Vec::new(),
    ));
    f.push((
        format!("{v}/{sp}/torch/lib/libMIOpen.so"),
        build::elf_with_fatbin(&build::plain(&["gfx1030", "gfx1100"])),
    ));
    // A CPU-only torch.
    let v = "venv-cpu";
    f.push((format!("{v}/pyvenv.cfg"), cfg));
    f.push((format!("{v}/bin/python"), Vec::new()));
    f.push((format!("{v}/{sp}/torch/__init__.py"), Vec::new()));
    f.push((
        format!("{v}/{sp}/torch/version.py"),
        version("2.9.1+cpu", "None"),
    ));
    f
}

const FIXTURE_HOME: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/doctor-ok/home/owner/"
);

#[test]
fn fixtures_are_up_to_date() {
    let write = std::env::var("RDNA1CTL_WRITE_FIXTURES").is_ok_and(|v| v == "1");
    for (rel, bytes) in venv_fixtures() {
        let p = Path::new(FIXTURE_HOME).join(&rel);
        if write {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, &bytes).unwrap();
        }
        let have = std::fs::read(&p).unwrap_or_else(|e| {
            panic!("{}: {e}; run RDNA1CTL_WRITE_FIXTURES=1 cargo test -p rdna1ctl fixtures_are_up_to_date", p.display())
        });
        assert!(
            have == bytes,
            "{} is stale: regenerate it (RDNA1CTL_WRITE_FIXTURES=1)",
            p.display()
        );
    }
}

fn tree_with(venv: &str) -> Tree {
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x731f);
    for (rel, bytes) in venv_fixtures() {
        if rel.starts_with(venv) {
            t.write_bytes(&format!("v/{}", &rel[venv.len() + 1..]), &bytes);
        }
    }
    t
}

fn host() -> FakeHost {
    FakeHost::default().with_var("VIRTUAL_ENV", "/v")
}

#[test]
fn therock_layout_has_gfx101x_everywhere() {
    let t = tree_with("venv-gfx101x");
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(
        &c,
        Status::Ok,
        &["gfx1010", "libtorch_hip.so", "gfx10-1-generic"],
    );
    let c = run_check(&t, &host(), checks, "torch.rocblas");
    assert_check(
        &c,
        Status::Ok,
        &["_rocm_sdk_libraries_gfx101X_dgpu/lib/rocblas/library"],
    );
    let c = run_check(&t, &host(), checks, "torch.miopen");
    assert_check(&c, Status::Ok, &["libMIOpen.so.1.0.71000"]);
    let c = run_check(&t, &host(), checks, "torch.hipblaslt");
    assert_check(&c, Status::Ok, &["bundles no hipBLASLt"]);
}

#[test]
fn gfx1030_only_wheel_fails_with_the_symptom() {
    let t = tree_with("venv-gfx1030");
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(
        &c,
        Status::Fail,
        &[
            "no gfx1010 code objects",
            "invalid device function",
            "gfx1030 gfx1100 gfx90a",
        ],
    );
    assert!(c.fix.unwrap().contains("gfx101X"));
    let c = run_check(&t, &host(), checks, "torch.rocblas");
    assert_check(&c, Status::Fail, &["Tensile"]);
    let c = run_check(&t, &host(), checks, "torch.miopen");
    assert_check(&c, Status::Fail, &["MIOpen"]);
    let c = run_check(&t, &host(), checks, "torch.hipblaslt");
    assert_check(&c, Status::Ok, &["uses rocBLAS on gfx10"]);
    // 10.3.0 does not make the gfx1030 code right: still judged for gfx1010.
    let h = host().with_var("HSA_OVERRIDE_GFX_VERSION", "10.3.0");
    let c = run_check(&t, &h, checks, "torch.kernels");
    assert_check(&c, Status::Fail, &["no gfx1010"]);
}

#[test]
fn cpu_torch_or_none_is_not_checked() {
    let t = tree_with("venv-cpu");
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(&c, Status::Warn, &["no ROCm PyTorch"]);
    assert_eq!(c.fix.as_deref(), Some("see python.torch"));
}

#[test]
fn a_gfx1012_accepts_the_generic_target_only() {
    let mut s = BTreeSet::new();
    s.insert("gfx10-1-generic".to_owned());
    assert!(covers(&s, "gfx1012"));
    assert!(!covers(&s, "gfx1030"));
    s.clear();
    s.insert("gfx1010".to_owned());
    assert!(
        !covers(&s, "gfx1012"),
        "gfx1010 code needs the 10.1.0 override on gfx1012"
    );
}

#[test]
fn tensile_names() {
    assert_eq!(
        targets_in_name("TensileLibrary_lazy_gfx1010.dat"),
        ["gfx1010"]
    );
    assert_eq!(
        targets_in_name("Kernels.so-000-gfx10-1-generic.hsaco"),
        ["gfx10-1-generic"]
    );
    assert_eq!(
        targets_in_name(
            "TensileLibrary_Type_HH_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx90a-xnack+.co"
        ),
        ["gfx90a"]
    );
    assert!(targets_in_name("gfx.dat").is_empty());
    assert!(targets_in_name("gfxfoo.dat").is_empty());
}

#[test]
fn a_system_rocblas_without_gfx1010_only_warns_when_torch_brings_its_own() {
    let t = tree_with("venv-gfx101x");
    t.write(
        "opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat",
        "",
    );
    let group = crate::commands::doctor::rocm::checks;
    let c = run_check(&t, &host(), group, "rocm.rocblas");
    assert_check(&c, Status::Warn, &["brings its own (see torch.rocblas)"]);
    // Without a venv the same system rocBLAS is what torch would load: a failure.
    let c = run_check(&t, &FakeHost::default(), group, "rocm.rocblas");
    assert_check(&c, Status::Fail, &["no gfx1010"]);
}

#[test]
fn absolute_symlinks_resolve_inside_the_root() {
    // A distribution's torch links its libraries into /usr/lib: below --root, that link must
    // lead to the root's file, not the host's (where it does not exist).
    let t = tree_with("venv-gfx101x");
    let real = "usr/lib/x86_64-linux-gnu/libtorch_hip.so";
    std::fs::rename(
        t.path("v/lib/python3.12/site-packages/torch/lib/libtorch_hip.so"),
        {
            std::fs::create_dir_all(t.path("usr/lib/x86_64-linux-gnu")).unwrap();
            t.path(real)
        },
    )
    .unwrap();
    t.symlink(
        "v/lib/python3.12/site-packages/torch/lib/libtorch_hip.so",
        &format!("/{real}"),
    );
    assert!(!Path::new(&format!("/{real}")).exists(), "the host has it");
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(&c, Status::Ok, &["gfx10-1-generic"]);
    // The venv itself reached through an absolute link (/v -> /opt/venvs/v).
    std::fs::create_dir_all(t.path("opt/venvs")).unwrap();
    std::fs::rename(t.path("v"), t.path("opt/venvs/v")).unwrap();
    t.symlink("v", "/opt/venvs/v");
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(&c, Status::Ok, &["gfx10-1-generic"]);
}

#[test]
fn gfx1012_with_gfx1010_only_torch_is_judged_for_the_override_fix() {
    // A wheel with gfx1010 kernels and rocBLAS but none for gfx1012, on an RX 5500 XT:
    // rocm.hsa_override says set 10.1.0; the library checks judge gfx1010 and agree.
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x7340);
    let sp = "v/lib/python3.12/site-packages";
    for (rel, bytes) in venv_fixtures() {
        if let Some(r) = rel.strip_prefix("venv-gfx101x/") {
            t.write_bytes(&format!("v/{r}"), &bytes);
        }
    }
    t.write_bytes(
        &format!("{sp}/torch/lib/libtorch_hip.so"),
        &build::elf_with_fatbin(&build::plain(&["gfx1010", "gfx1030"])),
    );
    let lib = format!("{sp}/_rocm_sdk_libraries_gfx101X_dgpu/lib/rocblas/library");
    std::fs::remove_file(t.path(&format!("{lib}/TensileLibrary_lazy_gfx1012.dat"))).unwrap();
    std::fs::remove_file(t.path(&format!("{lib}/Kernels.so-000-gfx1012.hsaco"))).unwrap();
    let o = run_check(
        &t,
        &host(),
        crate::commands::doctor::rocm::checks,
        "rocm.hsa_override",
    );
    assert_check(&o, Status::Warn, &["no gfx1012 code objects but gfx1010's"]);
    for id in ["torch.kernels", "torch.rocblas"] {
        let c = run_check(&t, &host(), checks, id);
        assert_check(
            &c,
            Status::Ok,
            &["gfx1010", "HSA_OVERRIDE_GFX_VERSION=10.1.0"],
        );
    }
}

/// Kernel packs made by rocm-kpack's own writer (tests/fixtures/kpack/make.py).
fn kpack(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/kpack")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A multi-arch install (TheRock's index, `torch[device-<target>]`): host libraries whose GPU
/// code went into kernel packs, one per device package installed (`targets`).
fn multi_arch(targets: &[&str]) -> Tree {
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
        "__version__ = '2.11.0+rocm7.15.0a20260728'\ncuda: Optional[str] = None\nhip: Optional[str] = '7.15.1'\n",
    );
    // rocm-kpack empties the host library's .hip_fatbin.
    t.write_bytes(
        &format!("{sp}/torch/lib/libtorch_hip.so"),
        &build::elf_with_fatbin(&[]),
    );
    t.write(&format!("{sp}/_rocm_sdk_libraries/lib/librocblas.so.5"), "");
    t.write_bytes(
        &format!("{sp}/_rocm_sdk_libraries/lib/libMIOpen.so.1.0.71500"),
        &build::elf_with_fatbin(&[]),
    );
    for tg in targets {
        for (dir, group) in [
            ("torch/.kpack", "torch"),
            ("_rocm_sdk_libraries/.kpack", "blas_lib"),
            ("_rocm_sdk_libraries/.kpack", "miopen_lib"),
        ] {
            let name = format!("{group}_{tg}.kpack");
            let bytes = if group == "miopen_lib" {
                // One MIOpen pack was made (for gfx1010): the other target's is its blas pack
                // renamed, which carries that target all the same.
                kpack(&format!(
                    "{}_{tg}.kpack",
                    if *tg == "gfx1010" {
                        "miopen_lib"
                    } else {
                        "blas_lib"
                    }
                ))
            } else {
                kpack(&name)
            };
            t.write_bytes(&format!("{sp}/{dir}/{name}"), &bytes);
        }
    }
    t
}

#[test]
fn a_multi_arch_install_is_judged_by_its_kernel_packs() {
    let t = multi_arch(&["gfx1010"]);
    for (id, at) in [
        ("torch.kernels", "torch/.kpack"),
        ("torch.rocblas", "_rocm_sdk_libraries/.kpack"),
        ("torch.miopen", "_rocm_sdk_libraries/.kpack"),
    ] {
        let c = run_check(&t, &host(), checks, id);
        assert_check(&c, Status::Ok, &[at, "gfx1010"]);
    }
}

#[test]
fn a_multi_arch_install_without_gfx1010_packs_is_a_blocker_with_the_pip_line() {
    // The device package of another GPU (gfx1100) installed instead of gfx1010's.
    let t = multi_arch(&["gfx1100"]);
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(
        &c,
        Status::Fail,
        &[
            "no gfx1010 kernel pack",
            "packs for: gfx1100",
            "invalid device function",
        ],
    );
    let fix = c.fix.unwrap();
    assert!(
        fix.contains("/v/bin/python -m pip install --index-url https://rocm.nightlies.amd.com/whl-multi-arch/ \"torch[device-gfx1010]\""),
        "{fix}"
    );
    let c = run_check(&t, &host(), checks, "torch.rocblas");
    assert_check(&c, Status::Fail, &["no gfx1010 kernel pack"]);
}

#[test]
fn a_damaged_pack_is_said_not_taken_for_code() {
    let t = multi_arch(&["gfx1010"]);
    let sp = "v/lib/python3.12/site-packages";
    let mut bad = kpack("torch_gfx1010.kpack");
    bad[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    t.write_bytes(&format!("{sp}/torch/.kpack/torch_gfx1010.kpack"), &bad);
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(&c, Status::Warn, &["could not be read", "out of place"]);
    bad[..4].copy_from_slice(b"NOPE");
    t.write_bytes(&format!("{sp}/torch/.kpack/torch_gfx1010.kpack"), &bad);
    let c = run_check(&t, &host(), checks, "torch.kernels");
    assert_check(&c, Status::Warn, &["no KPAK magic"]);
}
