//! `rdna1ctl report` as a process, on the fake-root fixtures: without a control device it
//! stops cleanly (exit 5) with the JSON file written and the command never run; without root
//! it refuses (exit 4); as root with nobody to run the command as, it refuses (exit 2) with
//! the fix. The runs themselves need the module: VM case 98.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::text;

const BIN: &str = env!("CARGO_BIN_EXE_rdna1ctl");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/rdna1-enforce")
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A fresh directory anyone may write and read (the command runs as another user).
fn tmpdir(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let d = std::env::temp_dir().join(format!("rdna1ctl-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// `rdna1ctl --root FIXTURE report ARGS` in `dir`, with `env` set and no invoking user
/// inherited.
fn report(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.current_dir(dir)
        .arg("--root")
        .arg(fixture())
        .arg("report")
        .args(args)
        .env_remove("RDNA1CTL_ROOT")
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .env_remove("PKEXEC_UID");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run rdna1ctl")
}

/// `doc` is valid under docs/schema/report.json, and the documents it keeps under their own
/// schemas (docs/schema/doctor.json, status.json).
fn assert_valid(doc: &serde_json::Value) {
    let check = |name: &str, v: &serde_json::Value| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../docs/schema/{name}.json"));
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(v)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}\n{v}");
    };
    check("report", doc);
    for sub in ["doctor", "status"] {
        let d = &doc[sub]["document"];
        let name = d["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{sub}: {d}"));
        check(name, d);
    }
}

#[test]
fn without_a_control_device_it_writes_doctor_and_status_and_runs_nothing() {
    if !is_root() {
        eprintln!("skipped: needs root (report refuses without it; see the exit-4 test)");
        return;
    }
    let dir = tmpdir("nodev");
    let ran = dir.join("ran");
    let ran_s = ran.to_str().unwrap();
    let o = report(
        &dir,
        &["--output", "r.json", "--", "touch", ran_s],
        &[("SUDO_UID", "65534"), ("SUDO_GID", "65534")],
    );
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(!ran.exists(), "the command ran");
    let stdout = text(&o.stdout);
    assert!(stdout.contains("summary: incomplete"), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(doc["command"], "report");
    assert_valid(&doc);
    assert_eq!(doc["exit_code"], 5);
    assert_eq!(doc["doctor"]["document"]["command"], "doctor");
    assert_eq!(doc["status"]["document"]["command"], "status");
    assert_eq!(doc["status"]["document"]["module"]["mode"], "enforce");
    assert_eq!(doc["runs"], serde_json::json!([]));
    assert!(doc["policy_restored"].is_null());
    assert_eq!(doc["run_as"]["uid"], 65534);
    assert_eq!(doc["run_as"]["source"], "SUDO_UID");
    assert_eq!(doc["workload"]["argv"], serde_json::json!(["touch", ran_s]));
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .contains("modprobe rdna1_mtype"),
        "{}",
        doc["error"]
    );
    assert_eq!(doc["verdict"], "incomplete");
    // No temporary file left beside it.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["r.json"], "{left:?}");

    // --json: the same document on stdout, and the default file name.
    let o = report(
        &dir,
        &["--json", "--user", "65534", "--", "touch", ran_s],
        &[],
    );
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["command"], "report");
    assert_valid(&doc);
    assert_eq!(doc["run_as"]["source"], "--user");
    let out = doc["output"].as_str().unwrap();
    assert!(
        Path::new(out).starts_with(&dir) && out.contains("rdna1-report-") && out.ends_with(".json"),
        "{out}"
    );
    assert!(Path::new(out).is_file());
    assert!(!ran.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A copy of `from` at `to` that every user can read: directories 0755, files 0644, symlinks
/// as they are (the fixtures' links are relative).
fn copy_readable(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_readable(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

#[test]
fn without_root_it_refuses_and_writes_nothing() {
    let dir = tmpdir("noroot");
    // The binary and the fixture where the unprivileged user can reach them, wherever the
    // checkout is (a clone in a 0700 directory is not).
    let bin = dir.join("rdna1ctl");
    std::fs::copy(BIN, &bin).unwrap();
    let root = tmpdir("noroot-fixture");
    copy_readable(&fixture(), &root);
    let mut c = Command::new(&bin);
    c.current_dir(&dir)
        .arg("--root")
        .arg(&root)
        .args(["report", "--", "touch"])
        .arg(dir.join("ran"))
        .env_remove("RDNA1CTL_ROOT");
    if is_root() {
        c.uid(65534).gid(65534);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("sudo") && err.lines().count() == 1, "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["rdna1ctl"], "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_output_directory_gets_the_report_under_its_default_name() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    // It passed the up-front check, ran everything, and failed only when it moved the report
    // onto the directory: the runs' results were lost.
    let dir = tmpdir("outdir");
    let out = dir.join("reports");
    std::fs::create_dir(&out).unwrap();
    let o = report(
        &dir,
        &["--output", out.to_str().unwrap(), "--", "true"],
        &[("SUDO_UID", "65534"), ("SUDO_GID", "65534")],
    );
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.len() == 1 && names[0].starts_with("rdna1-report-") && names[0].ends_with(".json"),
        "{names:?}"
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["reports"], "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn as_root_with_nobody_to_run_as_it_refuses_with_the_fix() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let dir = tmpdir("nouser");
    for (args, env) in [
        (vec!["--", "true"], vec![]),
        (
            vec!["--", "true"],
            vec![("SUDO_UID", "0"), ("SUDO_GID", "0")],
        ),
        (vec!["--user", "root", "--", "true"], vec![]),
    ] {
        let o = report(&dir, &args, &env);
        assert_eq!(o.status.code(), Some(2), "{args:?} {env:?}");
        let err = text(&o.stderr);
        assert!(err.contains("--user") && err.lines().count() == 1, "{err}");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_output_that_cannot_be_written_fails_before_anything_runs() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let dir = tmpdir("badout");
    let ran = dir.join("ran");
    let o = report(
        &dir,
        &[
            "--user",
            "65534",
            "--output",
            "/nonexistent/dir/r.json",
            "--",
            "touch",
            ran.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--output"), "{}", text(&o.stderr));
    assert!(!ran.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_and_the_man_page() {
    let o = common::rdna1ctl(&["report", "--timeout", "0"]);
    assert_eq!(o.status.code(), Some(2));
    // Its hint named verify's --until-interrupt, which report does not have.
    let err = text(&o.stderr);
    assert!(
        err.contains("is not a timeout") && !err.contains("until-interrupt"),
        "{err}"
    );
    // A negative number is a value refused, not an unknown option.
    let o = common::rdna1ctl(&["report", "--timeout", "-1"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a timeout"), "{err}");
    let o = common::rdna1ctl(&["report", "--python", "/x", "--", "true"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--python applies to the default script only"
    );
    let o = common::rdna1ctl(&["man", "report"]);
    assert_eq!(o.status.code(), Some(0));
    let page = text(&o.stdout);
    for s in [
        ".TH rdna1ctl-report 8",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH FILES",
        "SUDO_UID",
        "\\-\\-timeout",
        "\\-\\-user",
    ] {
        assert!(page.contains(s), "man report lacks {s}");
    }
    let o = common::rdna1ctl(&["report", "--help"]);
    assert!(
        text(&o.stdout).contains("[-- <COMMAND>...]"),
        "{}",
        text(&o.stdout)
    );
}

/// What `report` starts for the owner's command: rdna1ctl itself with RDNA1CTL_EXEC_AS, which
/// drops root (groups, group, user) and execs the command; it never runs it as root.
#[test]
fn exec_as_drops_root_then_runs_the_command() {
    if !is_root() {
        eprintln!("skipped: dropping privileges needs root");
        return;
    }
    let o = Command::new(BIN)
        .env("RDNA1CTL_EXEC_AS", "65534:65533:65533,44")
        .args([
            "sh",
            "-c",
            "id -u; id -g; id -G; printenv RDNA1CTL_EXEC_AS || echo unset",
        ])
        .output()
        .unwrap();
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().map(str::trim).collect();
    assert_eq!(
        lines,
        ["65534", "65533", "65533 44", "unset"],
        "{out}{}",
        text(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0));
}

/// A command that cannot be started: exit 127 and one line that report turns into the run's
/// spawn error.
#[test]
fn exec_as_says_when_the_command_cannot_start() {
    if !is_root() {
        eprintln!("skipped: dropping privileges needs root");
        return;
    }
    let o = Command::new(BIN)
        .env("RDNA1CTL_EXEC_AS", "65534:65534:65534")
        .args(["/nonexistent/train"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(127));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("rdna1ctl: could not start /nonexistent/train as uid 65534: "),
        "{err}"
    );
    let garbage = Command::new(BIN)
        .env("RDNA1CTL_EXEC_AS", "root")
        .args(["true"])
        .output()
        .unwrap();
    assert_eq!(
        garbage.status.code(),
        Some(127),
        "{}",
        text(&garbage.stderr)
    );
}

/// RDNA1CTL_EXEC_AS never makes rdna1ctl exec anything as root (report refuses root too).
#[test]
fn exec_as_refuses_root() {
    let o = Command::new(BIN)
        .env("RDNA1CTL_EXEC_AS", "0:0:0")
        .args(["sh", "-c", "echo ran"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(127), "{}", text(&o.stderr));
    assert!(text(&o.stdout).is_empty(), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("root"), "{}", text(&o.stderr));
}
