//! The command-line contract of docs/CLI.md, run as a process against fake roots: odd sysfs
//! content, `--root` checks, exit codes, errors, PCI address forms.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rdna1ctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(args)
        .env_remove("RDNA1CTL_ROOT")
        .output()
        .expect("run rdna1ctl")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdna1ctl-contract-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A root with one AMD display function at 0000:03:00.0 whose `class` holds `class`.
fn root_with_class(name: &str, class: &[u8]) -> PathBuf {
    let root = scratch(name);
    let dev = root.join("sys/bus/pci/devices/0000:03:00.0");
    std::fs::create_dir_all(&dev).unwrap();
    std::fs::write(dev.join("vendor"), "0x1002\n").unwrap();
    std::fs::write(dev.join("device"), "0x731f\n").unwrap();
    std::fs::write(dev.join("class"), class).unwrap();
    root
}

#[test]
fn status_survives_a_short_empty_or_garbage_class() {
    for (i, class) in [&b""[..], b"0", b"0x", b"garbage\n", b"\xff"]
        .iter()
        .enumerate()
    {
        let root = root_with_class(&format!("class{i}"), class);
        let o = rdna1ctl(&["--root", root.to_str().unwrap(), "status"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{class:?}: {err}");
        assert!(!err.contains("panicked"), "{class:?}: {err}");
        assert!(
            err.contains("0000:03:00.0/class") && err.contains("device skipped"),
            "{class:?}: the warning names the file: {err}"
        );
        assert!(
            text(&o.stdout).contains("no AMD GPU found"),
            "{}",
            text(&o.stdout)
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
    // A short well-formed class is simply no display controller: nothing to warn about.
    let root = root_with_class("class-short", b"0x03\n");
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "--json", "status"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["gpus"], serde_json::json!([]));
    std::fs::remove_dir_all(&root).unwrap();
}
