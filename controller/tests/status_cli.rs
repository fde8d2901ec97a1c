//! `rdna1ctl status` run as a process against the fake /sys trees in tests/fixtures, in human
//! and JSON form. The fixtures have no /dev/rdna1_mtype, so counters are always unavailable.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

/// Runs `rdna1ctl --root ROOT [--json] status`; returns success, stdout, stderr.
fn run(root: &Path, json: bool) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"));
    cmd.arg("--root").arg(root);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.arg("status").output().expect("run rdna1ctl");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn human(name: &str) -> String {
    let (ok, out, err) = run(&fixture(name), false);
    assert!(ok, "{name}: {err}");
    out
}

fn json(name: &str) -> Value {
    let (ok, out, err) = run(&fixture(name), true);
    assert!(ok, "{name}: {err}");
    assert_eq!(out.lines().count(), 1, "one document on one line: {out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["command"], "status");
    v
}

/// The GPU block (name line, facts line, verdict line) of `addr`.
fn block<'a>(out: &'a str, addr: &str) -> Vec<&'a str> {
    let start = format!("GPU:     {addr} ");
    let lines: Vec<&str> = out.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no GPU {addr} in:\n{out}"));
    lines[i..i + 3].iter().map(|l| l.trim()).collect()
}

#[test]
fn rdna1_machine_in_enforce() {
    let out = human("rdna1-enforce");
    assert!(out.contains("module:  rdna1_mtype 0.1.0 loaded\n"), "{out}");
    assert!(out.contains("mode:    enforce"), "{out}");
    assert!(
        out.contains(
            "vm scope: compute (only VMs KFD acquired: ROCm/HIP; graphics clients untouched)\n"
        ),
        "{out}"
    );
    assert!(out.contains("hook:    armed"), "{out}");
    assert!(
        out.contains(
            "layout:  amdgpu_bo size=1336 preferred_domains=0 tbo=56 flags=1240 (set by root)"
        ),
        "{out}"
    );
    assert_eq!(
        block(&out, "0000:03:00.0"),
        [
            "GPU:     0000:03:00.0 Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]",
            "[1002:731f], board [1da2:e411], gfx1010, RDNA1 navi10, driver amdgpu, in scope",
            "protected (compute VMs)",
        ]
    );
    assert!(
        !out.contains("03:00.1"),
        "the audio function is not a GPU: {out}"
    );
    assert!(
        out.contains("stats:   unavailable: ") && out.contains("devtmpfs"),
        "{out}"
    );

    let v = json("rdna1-enforce");
    let m = &v["module"];
    assert_eq!(m["loaded"], true);
    assert_eq!(m["version"], "0.1.0");
    assert!(m["abi_version"].is_null(), "no device, no ABI version");
    assert_eq!(m["mode"], "enforce");
    assert_eq!(m["scope"], "rdna1");
    assert_eq!(m["classes"], "coherent");
    assert_eq!(m["vm_scope"], "compute");
    assert_eq!(m["predates_vm_scope"], false);
    assert_eq!(m["armed"], true);
    assert_eq!(m["layout"]["source"], "set");
    assert_eq!(m["layout"]["status"], "ok");
    assert_eq!(
        m["layout"]["value"],
        "size=1336 preferred_domains=0 tbo=56 flags=1240"
    );
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1);
    let g = &gpus[0];
    assert_eq!(g["pci_address"], "0000:03:00.0");
    assert_eq!(
        g["name"],
        "Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]"
    );
    assert_eq!(g["vendor_id"], "0x1002");
    assert_eq!(g["device_id"], "0x731f");
    assert_eq!(g["subsystem_vendor_id"], "0x1da2");
    assert_eq!(g["subsystem_device_id"], "0xe411");
    assert_eq!(g["gfx_target"], "gfx1010");
    assert_eq!(g["rdna1"], true);
    assert_eq!(g["driver"], "amdgpu");
    assert_eq!(g["in_scope"], true);
    assert_eq!(g["protected"], true);
    assert_eq!(g["protected_vms"], "compute");
    assert!(g["reason"].is_null());
    assert!(g["stats"].is_null());
    assert_eq!(v["stats"]["status"], "unavailable");
}

#[test]
fn rdna2_in_audit_under_gfx10() {
    let out = human("rdna2");
    assert!(out.contains("mode:    audit"), "{out}");
    assert!(out.contains("scope:   gfx10"), "{out}");
    assert!(out.contains("layout:  unset: no BO is modified"), "{out}");
    let b = block(&out, "0000:0c:00.0");
    assert_eq!(
        b[0],
        "GPU:     0000:0c:00.0 Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]"
    );
    assert_eq!(
        b[1],
        "[1002:73bf], board [1da2:440e], gfx1030, not RDNA1, driver amdgpu, in scope"
    );
    assert!(b[2].starts_with("NOT protected: mode is audit"), "{b:?}");
    assert!(b[2].contains("; amdgpu_bo layout unset"), "{b:?}");
    assert!(!out.contains("0c:00.1"), "audio function listed: {out}");

    let v = json("rdna2");
    assert_eq!(v["module"]["mode"], "audit");
    assert_eq!(v["module"]["layout"]["status"], "unset");
    assert!(v["module"]["layout"]["value"].is_null());
    let g = &v["gpus"][0];
    assert_eq!(g["device_id"], "0x73bf");
    assert_eq!(g["gfx_target"], "gfx1030", "from KFD topology");
    assert_eq!(g["rdna1"], false);
    assert!(g["chip"].is_null());
    assert_eq!(g["in_scope"], true, "gfx10 covers RDNA2");
    assert_eq!(g["protected"], false);
    assert_eq!(
        g["reason_codes"],
        serde_json::json!(["mode_audit", "layout_unset"])
    );
    assert!(g["reason"].as_str().unwrap().starts_with("mode is audit"));
}

#[test]
fn rdna1_next_to_other_gpus() {
    let out = human("rdna1-plus-other");
    assert!(
        !out.contains("01:00.0"),
        "the NVIDIA GPU is not AMD's: {out}"
    );
    assert_eq!(block(&out, "0000:03:00.0")[2], "protected (compute VMs)");
    let vfio = block(&out, "0000:08:00.0");
    assert!(
        vfio[1].contains("gfx1012, RDNA1 navi14, driver vfio-pci, in scope"),
        "{vfio:?}"
    );
    assert_eq!(
        vfio[2],
        "NOT protected: bound to vfio-pci, not amdgpu: the hook only sees amdgpu's mappings"
    );
    let other = block(&out, "0000:0b:00.0");
    assert_eq!(
        other[0],
        "GPU:     0000:0b:00.0 Navi 23 [Radeon RX 6600/6600 XT/6600M]"
    );
    assert!(
        other[1].contains("gfx1032, not RDNA1, driver amdgpu, out of scope"),
        "{other:?}"
    );
    // Left alone by design, which "NOT protected" made sound like a fault.
    assert_eq!(
        other[2], "left alone: not RDNA1 and out of scope rdna1: rdna1_mtype never modifies it",
        "{other:?}"
    );

    let v = json("rdna1-plus-other");
    let gpus = v["gpus"].as_array().unwrap();
    let summary: Vec<(&str, bool, bool)> = gpus
        .iter()
        .map(|g| {
            (
                g["pci_address"].as_str().unwrap(),
                g["in_scope"].as_bool().unwrap(),
                g["protected"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("0000:03:00.0", true, true),
            ("0000:08:00.0", true, false),
            ("0000:0b:00.0", false, false),
        ]
    );
    assert_eq!(
        gpus[0]["subsystem_device_id"], "0x0b36",
        "ids below 0x1000 keep 4 digits"
    );
    assert_eq!(
        gpus[1]["reason_codes"],
        serde_json::json!(["not_on_amdgpu"])
    );
    assert_eq!(gpus[2]["reason_codes"], serde_json::json!(["out_of_scope"]));
    assert_eq!(
        gpus[2]["name"], "Navi 23 [Radeon RX 6600/6600 XT/6600M]",
        "hwdata path"
    );
}

#[test]
fn machine_without_amd_gpu_or_module() {
    let out = human("no-amd");
    assert!(out.contains("rdna1_mtype is not loaded"), "{out}");
    assert!(out.contains("no AMD GPU found"), "{out}");
    assert!(!out.contains("stats:"), "{out}");

    let v = json("no-amd");
    assert_eq!(v["module"]["loaded"], false);
    assert!(v["module"]["mode"].is_null() && v["module"]["abi_version"].is_null());
    assert_eq!(v["gpus"], serde_json::json!([]));
    assert_eq!(v["stats"]["status"], "no_module");
}

/// A temporary root, removed on drop.
struct TempRoot(PathBuf);

impl TempRoot {
    fn new(tag: &str) -> TempRoot {
        let dir = std::env::temp_dir().join(format!("rdna1ctl-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempRoot(dir)
    }

    fn write(&self, path: &str, text: &str) {
        let p = self.0.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn without_pci_ids_the_chip_name_stands_in_and_unbound_is_said() {
    let root = TempRoot::new("nopciids");
    for (f, v) in [
        ("vendor", "0x1002"),
        ("device", "0x7340"),
        ("class", "0x030000"),
    ] {
        root.write(
            &format!("sys/bus/pci/devices/0000:05:00.0/{f}"),
            &format!("{v}\n"),
        );
    }
    let (ok, out, err) = run(&root.0, false);
    assert!(ok, "{err}");
    assert_eq!(
        block(&out, "0000:05:00.0"),
        [
            "GPU:     0000:05:00.0 navi14",
            "[1002:7340], gfx1012, RDNA1 navi14, driver none",
            "NOT protected: rdna1_mtype is not loaded (sudo modprobe rdna1_mtype mode=enforce); \
             no driver bound: the hook only sees amdgpu's mappings",
        ]
    );
    let (ok, out, _) = run(&root.0, true);
    assert!(ok);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["gpus"][0]["name"], "navi14");
    assert!(v["gpus"][0]["driver"].is_null() && v["gpus"][0]["subsystem_vendor_id"].is_null());
    assert!(v["gpus"][0]["subsystem_device_id"].is_null());
    assert!(v["gpus"][0]["in_scope"].is_null(), "no module, no scope");
}

/// A loaded rdna1_mtype in `root` with these parameters (name, value).
fn module_params(root: &TempRoot, version: &str, params: &[(&str, &str)]) {
    let m = "sys/module/rdna1_mtype";
    root.write(&format!("{m}/version"), &format!("{version}\n"));
    for (p, v) in params {
        root.write(&format!("{m}/parameters/{p}"), &format!("{v}\n"));
    }
}

/// Every parameter but `mode`, as a module of this version has them; the first six are
/// those of the oldest module rdna1ctl reads.
const PARAMS: [(&str, &str); 9] = [
    ("armed", "Y"),
    ("scope", "rdna1"),
    ("classes", "coherent"),
    ("bo_layout", "none"),
    ("bo_layout_status", "unset"),
    ("bo_layout_source", "set"),
    ("arm_error", ""),
    ("rejected", "0"),
    ("vm_scope", "compute"),
];

#[test]
fn unknown_mode_is_an_error_that_names_the_file() {
    let root = TempRoot::new("badmode");
    module_params(&root, "9.9.9", &[("mode", "turbo")]);
    module_params(&root, "9.9.9", &PARAMS);
    for json in [false, true] {
        let (ok, out, err) = run(&root.0, json);
        assert!(!ok);
        if json {
            // The error is the one document on stdout, nothing half-written before it.
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["command"], "error", "{out}");
            assert!(v["message"].as_str().unwrap().contains("turbo"), "{out}");
        } else {
            let only_root = format!("root: {} (not this machine)\n", root.0.display());
            assert_eq!(out, only_root, "nothing half-written on stdout");
        }
        assert!(err.contains("unknown mode \"turbo\""), "{err}");
        // The file, and what to do: the message named neither.
        assert!(
            err.contains("/sys/module/rdna1_mtype/parameters/mode reads it"),
            "{err}"
        );
        assert!(
            err.contains("install the rdna1ctl of rdna1-mtype 9.9.9"),
            "{err}"
        );
    }
}

/// A module loaded before rdna1ctl was upgraded has no `arm_error` or `rejected`: status (and
/// the unit's `apply`) must still read it.
#[test]
fn module_without_the_guard_parameters_still_reads() {
    let root = TempRoot::new("oldmodule");
    module_params(&root, "0.1.0", &[("mode", "enforce")]);
    module_params(&root, "0.1.0", &PARAMS[..6]);
    let (ok, out, err) = run(&root.0, true);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["module"]["armed"], true);
    assert!(v["module"]["arm_error"].is_null());
    assert_eq!(v["module"]["rejected"], 0);
    // Without vm_scope (ABI 1): shown as what it does, every VM and requested UC rewritten.
    assert_eq!(v["module"]["vm_scope"], "all");
    assert_eq!(v["module"]["predates_vm_scope"], true);
    assert_eq!(v["module"]["classes"], "coherent,uc_request");
    let (ok, out, err) = run(&root.0, false);
    assert!(ok, "{err}");
    assert!(
        out.contains("vm scope: all (this module predates the VM scope: it changes every VM"),
        "{out}"
    );
}

#[test]
fn unknown_vm_scope_is_a_version_skew() {
    let root = TempRoot::new("badvmscope");
    module_params(&root, "0.1.0", &[("mode", "enforce")]);
    module_params(&root, "0.1.0", &PARAMS);
    module_params(&root, "0.1.0", &[("vm_scope", "render")]);
    let (ok, _, err) = run(&root.0, false);
    assert!(!ok);
    assert!(
        err.contains("unknown vm_scope \"render\": rdna1ctl and the module differ in version"),
        "{err}"
    );
}
