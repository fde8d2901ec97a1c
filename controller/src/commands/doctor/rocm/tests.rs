use super::*;
use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
use crate::commands::doctor::Status;

const ROCBLAS: &str = "opt/rocm/lib/rocblas/library";

/// An RX 5700 XT (gfx1010) and AMD's ROCm layout with rocBLAS files for `targets`.
fn tree(targets: &[&str]) -> Tree {
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x731f);
    t.write("opt/rocm-6.4.1/.info/version", "6.4.1-83\n");
    t.symlink("opt/rocm", "rocm-6.4.1");
    t.mkdir(&format!("{}/lib/rocblas/library", "opt/rocm-6.4.1"));
    for g in targets {
        t.write(&format!("{ROCBLAS}/TensileLibrary_lazy_{g}.dat"), "");
        t.write(&format!("{ROCBLAS}/Kernels.so-000-{g}.hsaco"), "");
    }
    t
}

fn check(t: &Tree, host: &FakeHost, id: &str) -> Check {
    run_check(t, host, checks, id)
}

fn no_env() -> FakeHost {
    FakeHost::default()
}

fn with_override(v: &str) -> FakeHost {
    FakeHost::default().with_var("HSA_OVERRIDE_GFX_VERSION", v)
}

#[test]
fn override_names() {
    assert_eq!(override_target("10.3.0").as_deref(), Some("gfx1030"));
    assert_eq!(override_target("10.1.0").as_deref(), Some("gfx1010"));
    assert_eq!(override_target("9.0.10").as_deref(), Some("gfx90a"));
    assert_eq!(override_target(" 11.0.0\n").as_deref(), Some("gfx1100"));
    for bad in ["", "10.3", "10.3.0.1", "gfx1030", "10.x.0"] {
        assert_eq!(override_target(bad), None, "{bad}");
    }
}

#[test]
fn target_names_are_whole_words() {
    assert!(names_target("TensileLibrary_lazy_gfx1010.dat", "gfx1010"));
    assert!(names_target("Kernels.so-000-gfx1010.hsaco", "gfx1010"));
    assert!(names_target(
        "Kernels.so-000-gfx10-1-generic.hsaco",
        "gfx1012"
    ));
    assert!(!names_target("TensileLibrary_lazy_gfx1012.dat", "gfx1010"));
    assert!(!names_target("TensileLibrary_gfx10100.co", "gfx1010"));
    assert!(!names_target(
        "Kernels.so-000-gfx10-3-generic.hsaco",
        "gfx1010"
    ));
}

#[test]
fn version_from_opt_rocm() {
    assert_check(
        &check(&tree(&[]), &no_env(), "rocm.version"),
        Status::Ok,
        &["6.4.1-83"],
    );
    let t = Tree::new();
    t.write("opt/rocm-6.2.0/.info/version", "6.2.0-66\n");
    assert_check(
        &check(&t, &no_env(), "rocm.version"),
        Status::Ok,
        &["6.2.0-66", "rocm-6.2.0"],
    );
    assert_check(
        &check(&Tree::new(), &no_env(), "rocm.version"),
        Status::Warn,
        &["no /opt/rocm"],
    );
}

#[test]
fn override_to_gfx1030_on_gfx1010_fails() {
    let t = tree(&["gfx1010", "gfx1030"]);
    let c = check(&t, &with_override("10.3.0"), "rocm.hsa_override");
    assert_check(
        &c,
        Status::Fail,
        &["gfx1030 code on a gfx1010", "different ISA"],
    );
    // Garbage fails too.
    let c = check(&t, &with_override("gfx1030"), "rocm.hsa_override");
    assert_check(&c, Status::Fail, &["not major.minor.stepping"]);
}

#[test]
fn override_to_gfx1030_names_the_code_already_there() {
    // The libraries have gfx1010 code: the fix is only to unset the override.
    let c = check(
        &tree(&["gfx1010", "gfx1030"]),
        &with_override("10.3.0"),
        "rocm.hsa_override",
    );
    assert_check(&c, Status::Fail, &["APERTURE_VIOLATION", "#2527"]);
    assert!(
        c.fix.as_deref().unwrap().contains("already have gfx1010"),
        "{c:?}"
    );
    // gfx1030-only libraries: unset it and install a gfx101X build; never "keep 10.3.0".
    let c = check(
        &tree(&["gfx1030"]),
        &with_override("10.3.0"),
        "rocm.hsa_override",
    );
    assert_check(&c, Status::Fail, &["gfx1030 code on a gfx1010"]);
    assert!(c.fix.as_deref().unwrap().contains("gfx101X"), "{c:?}");
    assert!(
        c.claims.iter().all(|c| !c.present && c.target == "gfx1010"),
        "{c:?}"
    );
}

#[test]
fn override_to_own_target_is_ok_and_gfx1010_on_navi14_depends_on_the_code() {
    let t = tree(&["gfx1010"]);
    assert_check(
        &check(&t, &with_override("10.1.0"), "rocm.hsa_override"),
        Status::Ok,
        &["own target"],
    );
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x7340); // RX 5500 XT, gfx1012
    t.write(
        "opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1010.dat",
        "",
    );
    assert_check(
        &check(&t, &with_override("10.1.0"), "rocm.hsa_override"),
        Status::Ok,
        &["gfx1010 code on gfx1012"],
    );
    // Unset on a gfx1012 with only gfx1010 code: set 10.1.0.
    let c = check(&t, &no_env(), "rocm.hsa_override");
    assert_check(&c, Status::Warn, &["no gfx1012 code objects but gfx1010's"]);
    assert!(c.fix.unwrap().contains("10.1.0"));
    // Its own code present: the override is not needed.
    t.write(
        "opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1012.dat",
        "",
    );
    assert_check(
        &check(&t, &with_override("10.1.0"), "rocm.hsa_override"),
        Status::Warn,
        &["gfx1012 code objects of their own"],
    );
}

#[test]
fn unset_override_is_ok_and_missing_code_is_the_library_checks_job() {
    assert_check(
        &check(&tree(&["gfx1010"]), &no_env(), "rocm.hsa_override"),
        Status::Ok,
        &["unset"],
    );
    let t = tree(&["gfx1030", "gfx1100"]);
    assert_check(
        &check(&t, &no_env(), "rocm.hsa_override"),
        Status::Ok,
        &["unset"],
    );
    assert_check(
        &check(&t, &no_env(), "rocm.rocblas"),
        Status::Fail,
        &["no gfx1010 code objects"],
    );
}

#[test]
fn rocblas_layouts() {
    assert_check(
        &check(&tree(&["gfx1010"]), &no_env(), "rocm.rocblas"),
        Status::Ok,
        &["gfx1010", "opt/rocm"],
    );
    let c = check(&tree(&["gfx1030"]), &no_env(), "rocm.rocblas");
    assert_check(&c, Status::Fail, &["no gfx1010 code objects"]);
    // A foreign override does not make gfx1030 files right: judged for the GPU's own target
    // (rocm.hsa_override fails and says to unset it), so the two checks agree.
    let c = check(
        &tree(&["gfx1030"]),
        &with_override("10.3.0"),
        "rocm.rocblas",
    );
    assert_check(&c, Status::Fail, &["no gfx1010"]);
    // Debian/Ubuntu librocblas0: /usr/lib/<triplet>/rocblas/<ver>/library.
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x731f);
    t.write(
        "usr/lib/x86_64-linux-gnu/rocblas/2.47.0/library/Kernels.so-000-gfx1010.hsaco",
        "",
    );
    assert_check(
        &check(&t, &no_env(), "rocm.rocblas"),
        Status::Ok,
        &["2.47.0"],
    );
    // ...and a second install without gfx1010: ambiguous.
    t.write(
        "usr/lib64/rocblas/library/TensileLibrary_lazy_gfx1100.dat",
        "",
    );
    assert_check(
        &check(&t, &no_env(), "rocm.rocblas"),
        Status::Warn,
        &["lib64"],
    );
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x731f);
    assert_check(
        &check(&t, &no_env(), "rocm.rocblas"),
        Status::Warn,
        &["no rocBLAS"],
    );
}

#[test]
fn rocblas_tensile_libpath_is_honoured() {
    let t = tree(&["gfx1030"]);
    t.write("home/u/rocblas/TensileLibrary_lazy_gfx1010.dat", "");
    let host = no_env().with_var("ROCBLAS_TENSILE_LIBPATH", "/home/u/rocblas");
    assert_check(
        &check(&t, &host, "rocm.rocblas"),
        Status::Warn,
        &["home/u/rocblas"],
    );
}

#[test]
fn miopen_dbs() {
    let t = tree(&["gfx1010"]);
    assert_check(
        &check(&t, &no_env(), "rocm.miopen"),
        Status::Warn,
        &["no libMIOpen"],
    );
    t.write("opt/rocm-6.4.1/lib/libMIOpen.so.1", "");
    t.write("opt/rocm-6.4.1/share/miopen/db/gfx1030_36.HIP.fdb.txt", "");
    assert_check(
        &check(&t, &no_env(), "rocm.miopen"),
        Status::Warn,
        &["compiles its kernels"],
    );
    t.write("opt/rocm-6.4.1/share/miopen/db/gfx1010_40.kdb", "");
    assert_check(
        &check(&t, &no_env(), "rocm.miopen"),
        Status::Ok,
        &["gfx1010_40.kdb"],
    );
}

#[test]
fn no_rdna1_means_not_checked() {
    let t = Tree::new();
    for id in ["rocm.hsa_override", "rocm.rocblas", "rocm.miopen"] {
        assert_check(&check(&t, &no_env(), id), Status::Warn, &["no RDNA1"]);
    }
}

const DEBIAN_OS_RELEASE: &str = "PRETTY_NAME=\"Debian GNU/Linux forky/sid\"\nNAME=\"Debian GNU/Linux\"\nVERSION_CODENAME=forky\nID=debian\n";

/// An RX 5500 XT (gfx1012) on Debian sid with experimental's librocblas5, whose code objects
/// are gfx1010's (no gfx1012 of its own), as issue 25 found it; no torch.
fn navi14_debian() -> Tree {
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x7340);
    t.write("etc/os-release", DEBIAN_OS_RELEASE);
    let lib = "usr/lib/x86_64-linux-gnu/rocblas/5/library";
    for n in [
        "TensileLibrary_lazy_gfx1010.dat",
        "TensileLibrary_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx1010.co",
        "Kernels.so-000-gfx1010.hsaco",
        "TensileLibrary_lazy_gfx1030.dat",
    ] {
        t.write(&format!("{lib}/{n}"), "");
    }
    t
}

#[test]
fn gfx1012_with_gfx1010_code_gets_one_answer_set_10_1_0() {
    let t = navi14_debian();
    // Unset: set 10.1.0, and rocBLAS is judged for the gfx1010 code the GPU then runs.
    let o = check(&t, &no_env(), "rocm.hsa_override");
    assert_check(&o, Status::Warn, &["no gfx1012 code objects but gfx1010's"]);
    assert!(o
        .fix
        .as_deref()
        .unwrap()
        .contains("HSA_OVERRIDE_GFX_VERSION=10.1.0"));
    let r = check(&t, &no_env(), "rocm.rocblas");
    assert_check(
        &r,
        Status::Ok,
        &["gfx1010", "HSA_OVERRIDE_GFX_VERSION=10.1.0"],
    );
    // 10.3.0 set: the fix is to set 10.1.0 instead, not to unset it and install another.
    let o = check(&t, &with_override("10.3.0"), "rocm.hsa_override");
    assert_check(&o, Status::Fail, &["gfx1030 code on a gfx1012"]);
    let fix = o.fix.as_deref().unwrap();
    assert!(fix.contains("HSA_OVERRIDE_GFX_VERSION=10.1.0"), "{fix}");
    assert!(!fix.contains("install"), "{fix}");
    assert_check(
        &check(&t, &with_override("10.3.0"), "rocm.rocblas"),
        Status::Ok,
        &["gfx1010"],
    );
    // 10.1.0 set: everything agrees.
    assert_check(
        &check(&t, &with_override("10.1.0"), "rocm.hsa_override"),
        Status::Ok,
        &["gfx1010 code on gfx1012"],
    );
}

#[test]
fn package_names_are_the_ones_the_distribution_has() {
    // Debian sid has librocblas4 (experimental librocblas5), never librocblas0.
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x731f);
    t.write("etc/os-release", DEBIAN_OS_RELEASE);
    t.write(
        "usr/lib/x86_64-linux-gnu/rocblas/5/library/TensileLibrary_lazy_gfx1100.dat",
        "",
    );
    let c = check(&t, &no_env(), "rocm.rocblas");
    assert_check(&c, Status::Fail, &["no gfx1010 code objects"]);
    let fix = c.fix.unwrap();
    assert!(
        fix.contains("librocblas4") && fix.contains("librocblas5"),
        "{fix}"
    );
    assert!(!fix.contains("librocblas0"), "{fix}");
    // No rocBLAS at all, and MIOpen's package, on Debian.
    let t = Tree::new();
    t.gpu("0000:03:00.0", 0x731f);
    t.write("etc/os-release", DEBIAN_OS_RELEASE);
    let c = check(&t, &no_env(), "rocm.rocblas");
    assert!(!c.fix.unwrap().contains("librocblas0"));
    let c = check(&t, &no_env(), "rocm.miopen");
    assert!(c.fix.as_deref().unwrap().contains("libmiopen1"), "{c:?}");
    // Elsewhere no Debian name is given.
    let t = tree(&["gfx1100"]);
    let fix = check(&t, &no_env(), "rocm.rocblas").fix.unwrap();
    assert!(!fix.contains("librocblas"), "{fix}");
}

#[test]
fn a_distributions_rocm_is_a_rocm() {
    let t = Tree::new();
    t.write("etc/os-release", DEBIAN_OS_RELEASE);
    t.write("usr/lib/x86_64-linux-gnu/libamdhip64.so.7.2.53211", "");
    t.symlink(
        "usr/lib/x86_64-linux-gnu/libamdhip64.so.7",
        "libamdhip64.so.7.2.53211",
    );
    assert_check(
        &check(&t, &no_env(), "rocm.version"),
        Status::Ok,
        &["7.2.53211", "/usr/lib/x86_64-linux-gnu", "Debian"],
    );
    // Fedora's lib64.
    let t = Tree::new();
    t.write("usr/lib64/libamdhip64.so.6.4.43484", "");
    assert_check(
        &check(&t, &no_env(), "rocm.version"),
        Status::Ok,
        &["6.4.43484", "/usr/lib64"],
    );
    // None at all: the fix names no package that does not exist.
    let c = check(&Tree::new(), &no_env(), "rocm.version");
    assert_check(&c, Status::Warn, &["no ROCm"]);
}
