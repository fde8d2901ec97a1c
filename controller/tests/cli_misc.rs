//! Command-line behaviour that needs no module: completions, man page, usage errors, and
//! `apply` against fake roots.

use std::path::PathBuf;

mod common;
use common::{rdna1ctl, text};

/// A fresh fake root with `/etc/rdna1-mtype/config.toml` holding `config`.
fn root_with_config(name: &str, config: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdna1ctl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("etc/rdna1-mtype")).unwrap();
    // A root needs sys/ to be taken for a system tree (docs/CLI.md, `--root`).
    std::fs::create_dir_all(dir.join("sys")).unwrap();
    std::fs::write(dir.join("etc/rdna1-mtype/config.toml"), config).unwrap();
    dir
}

#[test]
fn completions_cover_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let o = rdna1ctl(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o.stderr));
        let s = text(&o.stdout);
        for cmd in ["status", "enable", "verify", "doctor", "apply", "events"] {
            assert!(s.contains(cmd), "{shell} completion lacks {cmd}");
        }
    }
}

#[test]
fn man_page_is_roff_for_section_8() {
    let o = rdna1ctl(&["man"]);
    assert!(o.status.success());
    let s = text(&o.stdout);
    assert!(s.contains(".TH rdna1ctl 8"), "{s}");
    assert!(
        s.contains("Exit codes"),
        "exit codes missing from the man page"
    );
}

#[test]
fn usage_errors_exit_2() {
    let o = rdna1ctl(&["set", "--mode", "turbo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("use off, audit or enforce"));
    let o = rdna1ctl(&["verify", "--duration", "1", "--until-interrupt"]);
    assert_eq!(o.status.code(), Some(2));
    let o = rdna1ctl(&["set", "--vm-scope", "graphics"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not a VM scope: use compute or all"));
    let o = rdna1ctl(&["enable", "--classes", "coherent,uc_request,coherent"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("coherent, uncached and uc_request"));
}

#[test]
fn apply_dry_run_prints_the_policy_and_touches_nothing() {
    let root = root_with_config(
        "dry",
        "schema = 1\nmode = \"audit\"\nscope = [\"0000:03:00.0\"]\nlayout = \"builtin\"\n",
    );
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "apply", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("would set"), "{s}");
    assert!(s.contains("mode:    audit"), "{s}");
    assert!(s.contains("scope:   0000:03:00.0"), "{s}");
    assert!(
        s.contains("vm scope: compute (only VMs KFD acquired"),
        "{s}"
    );
    assert!(s.contains("classes: coherent\n"), "{s}");
    assert!(s.contains("layout:  builtin"), "{s}");
    let o = rdna1ctl(&[
        "--root",
        root.to_str().unwrap(),
        "--json",
        "apply",
        "--dry-run",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["command"], "apply");
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["policy"]["mode"], "audit");
    assert_eq!(v["policy"]["vm_scope"], "compute");
    // The value that would be written; nothing read back under --dry-run.
    assert_eq!(v["bo_layout"], "builtin");
    assert!(v["layout"].is_null(), "{v}");
}

#[test]
fn apply_rejects_unknown_keys_by_name_with_exit_1() {
    let root = root_with_config(
        "unknown",
        "schema = 1\nmode = \"enforce\"\nscoep = \"rdna1\"\n",
    );
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "apply"]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("scoep"), "{e}");
    assert!(e.contains("config.toml"), "{e}");
}

#[test]
fn apply_without_module_exits_5_and_says_how_to_load() {
    let root = root_with_config(
        "nomod",
        "schema = 1\nmode = \"enforce\"\nlayout = \"keep\"\n",
    );
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "apply"]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("modprobe rdna1_mtype"));
}

#[test]
fn apply_with_btf_layout_but_no_btf_fails_before_anything() {
    let root = root_with_config(
        "nobtf",
        "schema = 1\nmode = \"enforce\"\nlayout = \"btf\"\n",
    );
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "apply", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("CONFIG_DEBUG_INFO_BTF_MODULES"));
}

#[test]
fn missing_config_says_where_the_example_is() {
    let root = root_with_config("noconfig", "");
    std::fs::remove_file(root.join("etc/rdna1-mtype/config.toml")).unwrap();
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "apply"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("docs/CLI.md"));
}

#[test]
fn policy_and_event_commands_need_the_device_and_say_so() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/rdna1-enforce"
    );
    for args in [
        &["enable"][..],
        &["disable"],
        &["set", "--mode", "audit"],
        &["events"],
        &["--json", "events"],
    ] {
        let mut all = vec!["--root", root];
        all.extend_from_slice(args);
        let o = rdna1ctl(&all);
        assert_eq!(o.status.code(), Some(5), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("is rdna1_mtype loaded"),
            "{args:?}: {}",
            text(&o.stderr)
        );
        let stdout = text(&o.stdout);
        if args[0] == "--json" {
            // Under --json the error is the one document on stdout.
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["command"], "error", "{stdout}");
            assert_eq!(v["exit_code"], 5, "{stdout}");
        } else {
            // Only the line naming the root: nothing was printed before failing.
            assert_eq!(stdout.lines().count(), 1, "{args:?}: {stdout}");
            assert!(stdout.starts_with("root: "), "{stdout}");
        }
    }
}

#[test]
fn set_without_options_is_refused_before_opening_anything() {
    let root = root_with_config("set", "");
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "set"]);
    // A usage error (docs/CLI.md), though clap cannot see it.
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("nothing to set"));
}

#[test]
fn check_kernel_takes_a_release_not_a_path() {
    // They were read as releases: '' and '../../etc' looked for files outside the module
    // trees and ended in "NOT hookable".
    for kver in ["", "../../etc", "a/b", ".", ".."] {
        let o = rdna1ctl(&["check-kernel", kver]);
        assert_eq!(o.status.code(), Some(2), "{kver:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("is not a kernel release"),
            "{kver:?}: {}",
            text(&o.stderr)
        );
    }
}

#[test]
fn check_kernel_that_cannot_read_a_kernel_says_it_cannot_tell() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/no-amd");
    let o = rdna1ctl(&["--root", root, "check-kernel", "7.9.0-1-amd64"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("7.9.0-1-amd64: cannot tell"), "{out}");
    assert!(!out.contains("NOT hookable"), "{out}");
}

#[test]
fn completions_offer_each_option_s_values_not_file_names() {
    // bash offered file names for --mode, --scope, --vm-scope, --classes and `man`'s COMMAND.
    let o = rdna1ctl(&["completions", "bash"]);
    let s = text(&o.stdout);
    for words in [
        "off audit enforce",
        "rdna1 gfx10",
        "compute all",
        "coherent uncached uc_request none",
    ] {
        assert!(
            s.contains(&format!("-W \"{words}\"")),
            "{words}: not offered"
        );
    }
    assert!(
        s.contains("status enable disable set"),
        "man's COMMAND: not offered"
    );
}

#[test]
fn a_scope_address_not_on_the_bus_is_told() {
    // It was accepted silently: nothing is protected there and nobody was told.
    let root = root_with_config(
        "offbus",
        "schema = 1\nmode = \"enforce\"\nscope = [\"0000:03:00.0\", \"99:00.0\"]\n",
    );
    let dev = root.join("sys/bus/pci/devices/0000:03:00.0");
    std::fs::create_dir_all(&dev).unwrap();
    let o = rdna1ctl(&["--root", root.to_str().unwrap(), "apply", "--dry-run"]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("scope 0000:99:00.0: no PCI device there"),
        "{err}"
    );
    assert!(!err.contains("0000:03:00.0"), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_subcommand_s_help_keeps_its_own_options_apart_from_the_global_ones() {
    // `set --help` listed --root, --json and -v between --mode and --scope.
    let o = rdna1ctl(&["set", "--help"]);
    let s = text(&o.stdout);
    let at = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("{needle}: {s}"));
    let global = at("Global options:");
    for own in ["--mode", "--scope", "--vm-scope", "--classes"] {
        assert!(at(own) < global, "{own} under the global options: {s}");
    }
    for g in ["--root <DIR>", "--json", "--verbose"] {
        assert!(at(g) > global, "{g} among set's own options: {s}");
    }
}
