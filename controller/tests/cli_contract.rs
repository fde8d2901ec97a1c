//! The command-line contract of docs/CLI.md, run as a process against fake roots: odd sysfs
//! content, `--root` checks, exit codes, errors, PCI address forms.

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{rdna1ctl, text};

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
        assert!(!err.contains('\x1b'), "no colour off a terminal: {err:?}");
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

fn fixture(name: &str) -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/").to_owned() + name
}

#[test]
fn root_that_does_not_exist_or_has_no_sys_is_refused_with_exit_2() {
    let empty = scratch("nosys");
    let empty = empty.to_str().unwrap();
    for (root, what) in [
        ("/nonexistent-root", "does not exist"),
        (empty, "has no sys/ directory"),
    ] {
        for cmd in [
            &["status"][..],
            &["doctor"],
            &["apply"],
            &["set"],
            &["check-kernel"],
        ] {
            let mut args = vec!["--root", root];
            args.extend_from_slice(cmd);
            let o = rdna1ctl(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            let err = text(&o.stderr);
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(err.starts_with("rdna1ctl: --root: "), "{err}");
            assert!(err.contains(what), "{err}");
            assert!(err.contains("leave --root out"), "{err}");
            assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
        }
    }
    // Under --json the refusal is an error document.
    let o = rdna1ctl(&["--root", "/nonexistent-root", "--json", "status"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["command"], "error");
    assert_eq!(v["exit_code"], 2);
    assert!(
        v["message"].as_str().unwrap().contains("does not exist"),
        "{v}"
    );
    // Completions and the man page read no root.
    let o = rdna1ctl(&["--root", "/nonexistent-root", "man"]);
    assert_eq!(o.status.code(), Some(0));
    // An installed kernel's files and a config file are read from trees without sys/ (an
    // unpacked kernel package, a staged install); they must exist all the same.
    let o = rdna1ctl(&["--root", empty, "check-kernel", "6.99.0"]);
    assert_ne!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let o = rdna1ctl(&["--root", empty, "apply", "--dry-run"]);
    assert!(
        text(&o.stderr).contains("config.toml"),
        "{}",
        text(&o.stderr)
    );
    for cmd in [&["check-kernel", "6.99.0"][..], &["apply", "--dry-run"]] {
        let mut args = vec!["--root", "/nonexistent-root"];
        args.extend_from_slice(cmd);
        assert_eq!(rdna1ctl(&args).status.code(), Some(2), "{cmd:?}");
    }
}

#[test]
fn stale_rdna1ctl_root_is_named_in_the_refusal() {
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .arg("status")
        .env("RDNA1CTL_ROOT", "/nonexistent-root")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("rdna1ctl: RDNA1CTL_ROOT: /nonexistent-root does not exist")
            && err.contains("unset RDNA1CTL_ROOT"),
        "{err}"
    );
    // An empty one is unset: this machine, no error about a missing --root value.
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .arg("status")
        .env("RDNA1CTL_ROOT", "")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).starts_with("root:"), "{}", text(&o.stdout));
    // --root wins over the variable.
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(["--root", &fixture("rdna1-enforce"), "status"])
        .env("RDNA1CTL_ROOT", "/nonexistent-root")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // And a good one is used like --root, and said.
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .arg("status")
        .env("RDNA1CTL_ROOT", fixture("rdna1-enforce"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let first = text(&o.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        first,
        format!("root: {} (not this machine)", fixture("rdna1-enforce"))
    );
}

#[test]
fn output_says_when_the_root_is_not_this_machine() {
    let root = fixture("rdna1-enforce");
    let o = rdna1ctl(&["--root", &root, "status"]);
    let out = text(&o.stdout);
    assert_eq!(
        out.lines().next(),
        Some(format!("root: {root} (not this machine)").as_str()),
        "{out}"
    );
    let o = rdna1ctl(&["--root", &root, "--json", "status"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["root"], root.as_str());
    // `/` is this machine: no line, no field (the rest of the output depends on the host).
    let o = rdna1ctl(&["--root", "/", "--json", "completions", "bash"]);
    assert!(!text(&o.stdout).starts_with("root:"));
}

#[test]
fn an_error_is_one_line_with_its_errno_once_and_a_json_document() {
    // /dev/rdna1_mtype as a directory: opening it fails with EISDIR, which the context quotes.
    let root = scratch("eisdir");
    std::fs::create_dir_all(root.join("sys")).unwrap();
    std::fs::create_dir_all(root.join("dev/rdna1_mtype")).unwrap();
    let r = root.to_str().unwrap();
    let o = rdna1ctl(&["--root", r, "set", "--mode", "audit"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("os error 21").count(), 1, "{err}");
    assert_eq!(err.matches("Is a directory").count(), 1, "{err}");
    let o = rdna1ctl(&["--root", r, "--json", "set", "--mode", "audit"]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["command"], "error");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["root"], r);
    let stderr_line = text(&o.stderr);
    assert_eq!(
        Some(v["message"].as_str().unwrap()),
        stderr_line.trim_end().strip_prefix("rdna1ctl: ")
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn usage_errors_under_json_are_documents_and_help_is_not_an_error() {
    let o = rdna1ctl(&["--json", "set", "--mode", "turbo"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["command"], "error");
    assert_eq!(v["exit_code"], 2);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("use off, audit or enforce"),
        "{v}"
    );
    let o = rdna1ctl(&["--json", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("Usage:"));
    assert!(!text(&o.stdout).contains('\x1b'), "no colour into a pipe");
}

#[test]
fn status_check_exits_0_only_when_every_in_scope_rdna1_gpu_is_protected() {
    for (name, code, line) in [
        (
            "rdna1-enforce",
            0,
            "check:   passed: the RDNA1 GPU in scope is protected",
        ),
        (
            "rdna1-plus-other",
            3,
            "check:   FAILED: NOT protected: 0000:08:00.0 (reasons above)",
        ),
        (
            "rdna2",
            3,
            "check:   FAILED: no RDNA1 GPU found, only other AMD GPUs (1): nothing to protect",
        ),
        (
            "no-amd",
            3,
            "check:   FAILED: no AMD GPU found: nothing to protect",
        ),
    ] {
        let root = fixture(name);
        let o = rdna1ctl(&["--root", &root, "status", "--check"]);
        assert_eq!(o.status.code(), Some(code), "{name}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert_eq!(out.lines().last(), Some(line), "{name}: {out}");
        // Without --check status reports and exits 0 whatever it found.
        let o = rdna1ctl(&["--root", &root, "status"]);
        assert_eq!(o.status.code(), Some(0), "{name}");
        assert!(!text(&o.stdout).contains("check:"));
        let o = rdna1ctl(&["--root", &root, "--json", "status", "--check"]);
        assert_eq!(o.status.code(), Some(code), "{name}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["check"]["passed"], code == 0, "{name}: {v}");
        let o = rdna1ctl(&["--root", &root, "--json", "status"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["check"].is_null(), "{name}: {v}");
    }
    let o = rdna1ctl(&[
        "--root",
        &fixture("rdna1-plus-other"),
        "--json",
        "status",
        "--check",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["check"]["unprotected"],
        serde_json::json!(["0000:08:00.0"])
    );
}

#[test]
fn relative_config_is_read_from_the_current_directory() {
    let cwd = scratch("cwd");
    std::fs::create_dir_all(cwd.join("conf")).unwrap();
    std::fs::write(
        cwd.join("conf/mine.toml"),
        "schema = 1\nmode = \"audit\"\nlayout = \"builtin\"\n",
    )
    .unwrap();
    let root = fixture("rdna1-enforce");
    let o = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(["--root", &root, "--json", "apply", "--dry-run"])
        .args(["--config", "conf/mine.toml"])
        .current_dir(&cwd)
        .env_remove("RDNA1CTL_ROOT")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["policy"]["mode"], "audit");
    assert_eq!(
        v["config"],
        cwd.join("conf/mine.toml").to_str().unwrap(),
        "{v}"
    );
    // An absolute one stays below the root: the fixture has no /etc/rdna1-mtype.
    let abs = cwd.join("conf/mine.toml");
    let o = rdna1ctl(&[
        "--root",
        &root,
        "apply",
        "--dry-run",
        "--config",
        abs.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains(&format!("{root}{}", abs.display())),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn scope_lists_take_lspci_short_and_upper_case_addresses_once() {
    let root = scratch("scope");
    std::fs::create_dir_all(root.join("sys")).unwrap();
    std::fs::create_dir_all(root.join("etc/rdna1-mtype")).unwrap();
    std::fs::write(
        root.join("etc/rdna1-mtype/config.toml"),
        "schema = 1\nmode = \"enforce\"\nlayout = \"keep\"\n\
         scope = [\"03:00.0\", \"0000:0A:00.0\", \"0000:03:00.0\"]\n",
    )
    .unwrap();
    let r = root.to_str().unwrap();
    let o = rdna1ctl(&["--root", r, "--json", "apply", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["policy"]["scope"], "0000:03:00.0,0000:0a:00.0");
    // On the command line the value passes clap (exit 5 is the missing module, not usage).
    for scope in ["03:00.0", "0000:0A:00.0,03:00.0,0000:03:00.0"] {
        let o = rdna1ctl(&["--root", r, "set", "--scope", scope]);
        assert_eq!(o.status.code(), Some(5), "{scope}: {}", text(&o.stderr));
    }
    let o = rdna1ctl(&["--root", r, "set", "--scope", "3:00.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("lspci's form"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn install_sh_installs_a_man_page_for_every_subcommand() {
    use clap::CommandFactory;
    let install =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../install.sh")).unwrap();
    let listed: Vec<&str> = install
        .lines()
        .find_map(|l| l.strip_prefix("commands=\""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("install.sh has a commands=\"...\" line")
        .split(' ')
        .collect();
    let cli = rdna1ctl::cli::Cli::command();
    let real: Vec<&str> = cli
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|n| *n != "help")
        .collect();
    assert_eq!(
        listed, real,
        "install.sh's commands= and rdna1ctl's subcommands differ"
    );
    for c in real {
        let o = rdna1ctl(&["man", c]);
        assert_eq!(o.status.code(), Some(0), "man {c}");
        assert!(
            text(&o.stdout).contains(&format!(".TH rdna1ctl-{c} 8")),
            "man {c}"
        );
    }
}
