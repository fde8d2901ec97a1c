//! `rdna1ctl status` run as a process against the fake /sys trees in tests/fixtures.

use std::process::Command;

fn status(fixture: &str) -> (bool, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/");
    status_at(&format!("{root}{fixture}"))
}

fn status_at(root: &str) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(["--root", root, "status"])
        .output()
        .expect("run rdna1ctl");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn rdna1_machine_in_enforce() {
    let (ok, out, err) = status("rdna1-enforce");
    assert!(ok, "{err}");
    assert!(out.contains("rdna1_mtype 0.1.0 loaded"), "{out}");
    assert!(out.contains("mode:    enforce"), "{out}");
    assert!(out.contains("hook:    armed"), "{out}");
    assert!(
        out.contains("layout:  amdgpu_bo size=1336 preferred_domains=0 tbo=56 flags=1240"),
        "{out}"
    );
    assert!(
        out.contains("0000:03:00.0 [1002:731f] RDNA1 navi10 gfx1010, driver amdgpu"),
        "{out}"
    );
    assert!(
        !out.contains("03:00.1"),
        "the audio function is not a GPU: {out}"
    );
}

#[test]
fn machine_without_amd_gpu_or_module() {
    let (ok, out, err) = status("no-amd");
    assert!(ok, "{err}");
    assert!(out.contains("rdna1_mtype is not loaded"), "{out}");
    assert!(out.contains("no AMD GPU found"), "{out}");
}

#[test]
fn unknown_mode_is_an_error_that_names_the_file() {
    let dir = std::env::temp_dir().join(format!("rdna1ctl-badmode-{}", std::process::id()));
    let params = dir.join("sys/module/rdna1_mtype/parameters");
    std::fs::create_dir_all(&params).unwrap();
    std::fs::write(dir.join("sys/module/rdna1_mtype/version"), "9.9.9\n").unwrap();
    std::fs::write(params.join("mode"), "turbo\n").unwrap();
    std::fs::write(params.join("armed"), "Y\n").unwrap();
    std::fs::write(params.join("scope"), "rdna1\n").unwrap();
    std::fs::write(params.join("classes"), "coherent\n").unwrap();
    std::fs::write(params.join("bo_layout"), "none\n").unwrap();
    std::fs::write(params.join("bo_layout_status"), "unset\n").unwrap();
    let (ok, _, err) = status_at(dir.to_str().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok);
    assert!(err.contains("unknown mode \"turbo\""), "{err}");
}
