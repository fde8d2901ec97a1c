//! Doctor's fixes for an environment that cannot run the workload (no torch, a CUDA or CPU
//! build, no GPU visible): doctor is run as rdna1ctl's own entry point would run it (in this
//! process, `--json`), for the interpreter the runs used, and its checks of the Python, ROCm,
//! the GPU and access to it that are not ok are kept with their one-line fixes.

use std::path::Path;

use serde_json::Value;

use crate::sysroot::SysRoot;

/// The checks that bear on running PyTorch on the GPU.
const PREFIXES: [&str; 6] = [
    "python.",
    "access.",
    "rocm.",
    "gpu.",
    "kfd.",
    "amdgpu.loaded",
];

/// Doctor's document for `python`, as `rdna1ctl --json doctor --python PYTHON` prints it.
pub fn doctor(root: &SysRoot, python: Option<&Path>) -> Option<Value> {
    let mut argv: Vec<std::ffi::OsString> = vec![
        "rdna1ctl".into(),
        "--json".into(),
        "--root".into(),
        root.base().into(),
        "doctor".into(),
    ];
    if let Some(p) = python {
        argv.push("--python".into());
        argv.push(p.into());
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    crate::run(argv, &mut out, &mut err, crate::Colors::default(), |_| {});
    String::from_utf8_lossy(&out)
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
}

/// `python.torch: no torch in the venv /home/u/venv — fix: install …`, for each relevant check
/// of `doc` that is not ok.
pub fn fixes(doc: &Value) -> Vec<String> {
    doc.get("checks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("status").and_then(Value::as_str) != Some("ok"))
        .filter_map(|c| {
            let id = c.get("id")?.as_str()?;
            PREFIXES.iter().any(|p| id.starts_with(p)).then(|| {
                let msg = c.get("message").and_then(Value::as_str).unwrap_or("");
                match c.get("fix").and_then(Value::as_str) {
                    Some(fix) => format!("{id}: {msg}; fix: {fix}"),
                    None => format!("{id}: {msg}"),
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_what_bears_on_pytorch_and_is_not_ok() {
        let doc = json!({"checks": [
            {"id": "python.torch", "status": "fail", "message": "no torch", "fix": "install it"},
            {"id": "kconfig.rust", "status": "fail", "message": "no Rust", "fix": "rebuild"},
            {"id": "access.devices", "status": "ok", "message": "fine", "fix": null},
            {"id": "rocm.visible_devices", "status": "warn", "message": "hidden", "fix": null},
        ]});
        assert_eq!(
            fixes(&doc),
            [
                "python.torch: no torch; fix: install it",
                "rocm.visible_devices: hidden"
            ]
        );
    }

    #[test]
    fn doctor_runs_in_this_process_on_a_fixture() {
        let root = SysRoot::new(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/doctor-bad"),
        );
        let doc = doctor(&root, Some(Path::new("/nonexistent/python3"))).unwrap();
        assert_eq!(doc["command"], "doctor");
        assert!(
            fixes(&doc).iter().any(|f| f.starts_with("python.torch")),
            "{:?}",
            fixes(&doc)
        );
    }
}
