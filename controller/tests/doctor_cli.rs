//! `rdna1ctl doctor` run as a process against tests/fixtures/doctor-*: the table, the JSON
//! document and the exit code. The child's environment is set explicitly (PATH to a fixture
//! `rustc`, HSA_OVERRIDE_GFX_VERSION), so the host running the tests does not leak in.

use std::process::{Command, Output};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/");

/// Runs doctor on `fixture` with `rustc` from tests/fixtures/doctor-bin/`rustc_dir` and
/// the given HSA_OVERRIDE_GFX_VERSION.
fn doctor(fixture: &str, rustc_dir: &str, hsa_override: Option<&str>, json: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"));
    cmd.args(["--root", &format!("{FIXTURES}{fixture}")])
        .arg("doctor")
        .env_clear()
        .env(
            "PATH",
            format!("{FIXTURES}doctor-bin/{rustc_dir}:/usr/bin:/bin"),
        );
    if json {
        cmd.arg("--json");
    }
    if let Some(v) = hsa_override {
        cmd.env("HSA_OVERRIDE_GFX_VERSION", v);
    }
    cmd.output().expect("run rdna1ctl")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The table line of check `id`.
fn line<'a>(out: &'a str, id: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(id))
        .unwrap_or_else(|| panic!("no line for {id} in:\n{out}"))
}

fn status_of<'a>(out: &'a str, id: &str) -> &'a str {
    line(out, id).split_whitespace().nth(1).unwrap()
}

#[test]
fn healthy_machine_exits_0() {
    let o = doctor("doctor-ok", "ok", None, false);
    let out = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A root other than / is named first, then the table.
    assert!(
        out.starts_with("root: ") && out.contains("(not this machine)\nID "),
        "{out}"
    );
    for id in [
        "kernel.release",
        "kconfig.rust",
        "kconfig.fprobe",
        "boot.module_signing",
        "dkms.module",
        "toolchain.rustc",
        "gpu.rdna1",
        "module.loaded",
        "kfd.atomics",
        "rocm.hsa_override",
        "rocm.rocblas",
    ] {
        assert_eq!(status_of(&out, id), "ok", "{id}:\n{out}");
    }
    // AMD ships no MIOpen databases for gfx1010: a warning, which does not fail the run.
    assert_eq!(status_of(&out, "rocm.miopen"), "warn", "{out}");
    assert!(
        line(&out, "dkms.module").contains("/lib/modules/7.2.13-amd64/updates/dkms/rdna1_mtype.ko"),
        "paths are shown as on the machine, without --root: {out}"
    );
    assert!(
        out.ends_with("0 fail: no failures, see the warnings\n"),
        "{out}"
    );
}

#[test]
fn rustc_other_than_the_kernels_fails_only_that_check() {
    // The module is already built there, so a wrong rustc is a warning.
    let o = doctor("doctor-ok", "other", None, false);
    let out = stdout(&o);
    assert_eq!(status_of(&out, "toolchain.rustc"), "warn", "{out}");
    assert!(line(&out, "toolchain.rustc").contains("1.96.0"), "{out}");
    assert_eq!(o.status.code(), Some(0), "{out}");
}

#[test]
fn override_to_gfx1030_fails_a_healthy_machine() {
    let o = doctor("doctor-ok", "ok", Some("10.3.0"), false);
    let out = stdout(&o);
    assert_eq!(status_of(&out, "rocm.hsa_override"), "fail", "{out}");
    assert!(
        line(&out, "rocm.hsa_override").contains("gfx1030 code on a gfx1010"),
        "{out}"
    );
    assert_eq!(o.status.code(), Some(3), "{out}");
}

#[test]
fn broken_machine_exits_3_with_fixes() {
    let o = doctor("doctor-bad", "other", Some("10.3.0"), false);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    for id in [
        "kernel.release",
        "kconfig.rust",
        "kconfig.fprobe",
        "dkms.module",
        "module.loaded",
        "kfd.atomics",
        "rocm.hsa_override",
    ] {
        assert_eq!(status_of(&out, id), "fail", "{id}:\n{out}");
    }
    for id in [
        "boot.lockdown",
        "boot.module_signing",
        "amdgpu.noretry",
        "amdgpu.mtype_local",
    ] {
        assert_eq!(status_of(&out, id), "warn", "{id}:\n{out}");
    }
    assert!(
        line(&out, "kernel.release").contains("predates 6.18"),
        "{out}"
    );
    assert!(out.contains("fix: boot Linux 6.18 or later"), "{out}");
    assert!(out.contains("mokutil --import"), "{out}");
    assert!(out.trim_end().ends_with("fail: problems found"), "{out}");
}

#[test]
fn json_document_lists_every_check() {
    let o = doctor("doctor-bad", "other", Some("10.3.0"), true);
    assert_eq!(o.status.code(), Some(3));
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1, "one document on one line: {text}");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["command"], "doctor");
    let checks = doc["checks"].as_array().unwrap();
    assert!(checks.len() >= 20, "{text}");
    for c in checks {
        let status = c["status"].as_str().unwrap();
        assert!(["ok", "warn", "fail"].contains(&status), "{c}");
        assert!(c["id"].as_str().is_some_and(|s| !s.is_empty()), "{c}");
        assert!(c["message"].as_str().is_some_and(|s| !s.is_empty()), "{c}");
        // A fix exactly when there is something to do.
        assert_eq!(c["fix"].is_string(), status != "ok", "{c}");
    }
    let release = checks.iter().find(|c| c["id"] == "kernel.release").unwrap();
    assert_eq!(release["status"], "fail");

    let o = doctor("doctor-ok", "ok", None, true);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fails = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .count();
    assert_eq!(fails, 0, "{doc}");
}

#[test]
fn empty_root_reports_instead_of_crashing() {
    let dir = std::env::temp_dir().join(format!("rdna1ctl-doctor-empty-{}", std::process::id()));
    // An empty sys/: a root without it is refused (docs/CLI.md, `--root`).
    std::fs::create_dir_all(dir.join("sys")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(["--root", dir.to_str().unwrap(), "doctor"])
        .env_clear()
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(line(&out, "kernel.release").contains("osrelease"), "{out}");
    assert!(
        line(&out, "gpu.rdna1").contains("nothing to do on this machine"),
        "{out}"
    );
}

/// Runs doctor on doctor-ok with `--python` pointing at one of its venvs and `override`.
fn doctor_venv(venv: &str, hsa_override: Option<&str>) -> (Output, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"));
    cmd.args(["--root", &format!("{FIXTURES}doctor-ok")])
        .args([
            "doctor",
            "--python",
            &format!("/home/owner/{venv}/bin/python"),
        ])
        .env_clear()
        .env("PATH", format!("{FIXTURES}doctor-bin/ok:/usr/bin:/bin"));
    if let Some(v) = hsa_override {
        cmd.env("HSA_OVERRIDE_GFX_VERSION", v);
    }
    let o = cmd.output().expect("run rdna1ctl");
    let out = stdout(&o);
    (o, out)
}

#[test]
fn therock_gfx101x_venv_is_healthy() {
    let (o, out) = doctor_venv("venv-gfx101x", None);
    assert_eq!(o.status.code(), Some(0), "{out}");
    for id in [
        "python.torch",
        "torch.kernels",
        "torch.rocblas",
        "torch.miopen",
        "access.devices",
        "amdgpu.noretry",
        "gpu.faults",
        "rocm.visible_devices",
    ] {
        assert_eq!(status_of(&out, id), "ok", "{id}:\n{out}");
    }
    assert!(
        line(&out, "torch.rocblas").contains("_rocm_sdk_libraries_gfx101X_dgpu"),
        "{out}"
    );
}

#[test]
fn override_10_3_0_with_gfx101x_code_says_unset_it() {
    let (o, out) = doctor_venv("venv-gfx101x", Some("10.3.0"));
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert_eq!(status_of(&out, "rocm.hsa_override"), "fail", "{out}");
    assert!(out.contains("APERTURE_VIOLATION"), "{out}");
    assert!(out.contains("already have gfx1010 code objects"), "{out}");
    // The library checks agree: they have gfx1010 code.
    assert_eq!(status_of(&out, "torch.kernels"), "ok", "{out}");
}

#[test]
fn gfx1030_only_venv_fails_and_never_suggests_the_cpu() {
    let (o, out) = doctor_venv("venv-gfx1030", None);
    assert_eq!(o.status.code(), Some(3), "{out}");
    for id in ["torch.kernels", "torch.rocblas", "torch.miopen"] {
        assert_eq!(status_of(&out, id), "fail", "{id}:\n{out}");
    }
    assert_eq!(status_of(&out, "python.torch"), "ok", "{out}");
    assert!(
        out.contains("\"torch[device-gfx1010]\""),
        "the fix names the multi-arch install with gfx1010's device extra: {out}"
    );
    assert!(!out.to_lowercase().contains("use the cpu"), "{out}");
}

#[test]
fn cpu_torch_venv_fails_python_torch() {
    let (o, out) = doctor_venv("venv-cpu", None);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert_eq!(status_of(&out, "python.torch"), "fail", "{out}");
    assert!(line(&out, "python.torch").contains("CPU-only"), "{out}");
    assert_eq!(status_of(&out, "torch.kernels"), "warn", "{out}");
}

#[test]
fn the_bad_machine_shows_its_last_gpu_fault() {
    let o = doctor("doctor-bad", "other", None, false);
    let out = stdout(&o);
    assert_eq!(status_of(&out, "gpu.faults"), "warn", "{out}");
    let l = line(&out, "gpu.faults");
    assert!(
        l.contains("permission fault") && l.contains("python3 (pid 4242, pasid 32773)"),
        "{out}"
    );
    // 6.12 predates the GFX 10.1 noretry default; noretry=0 is set there anyway.
    assert_eq!(status_of(&out, "amdgpu.noretry"), "warn", "{out}");
}

#[test]
fn visible_devices_out_of_range_fails_in_json_too() {
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args([
            "--root",
            &format!("{FIXTURES}doctor-ok"),
            "doctor",
            "--json",
        ])
        .env_clear()
        .env("PATH", format!("{FIXTURES}doctor-bin/ok:/usr/bin:/bin"))
        .env("HIP_VISIBLE_DEVICES", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "rocm.visible_devices")
        .unwrap()
        .clone();
    assert_eq!(c["status"], "fail", "{c}");
    assert!(
        c["message"].as_str().unwrap().contains("names GPU 1"),
        "{c}"
    );
    assert!(c.get("claims").is_none(), "claims are internal: {c}");
}
