//! `rdna1ctl search` and `rdna1ctl run` as processes, with a stand-in workload whose behaviour
//! depends on the environment it gets: it fails with an amdgpu page fault in the real kmsg
//! format (appended to the fixture root's dev/kmsg), or passes, or hangs, and logs what each
//! run got. The fixture has no control device, so the module's arms are skipped, saying why;
//! the module's arms themselves need the module (VM). As root the command runs as nobody
//! (SUDO_UID 65534), otherwise as the test's own user.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{rdna1ctl, text};

const BIN: &str = env!("CARGO_BIN_EXE_rdna1ctl");

const FAULT: &str = "3,1200,5000,-;amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32770)";

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A writable copy of the rdna1-enforce fixture with an empty dev/kmsg, a stand-in workload
/// and its log, in a directory anyone may use (the command may run as nobody).
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(name: &str, behaviour: &str) -> Setup {
        let dir =
            std::env::temp_dir().join(format!("rdna1ctl-search-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/rdna1-enforce");
        let ok = Command::new("cp")
            .arg("-a")
            .arg(&fixture)
            .arg(dir.join("root"))
            .status()
            .unwrap();
        assert!(ok.success());
        std::fs::create_dir_all(dir.join("root/dev")).unwrap();
        std::fs::write(dir.join("root/dev/kmsg"), "").unwrap();
        std::fs::write(dir.join("log"), "").unwrap();
        std::fs::write(dir.join("envlog"), "").unwrap();
        let script = format!(
            "#!/bin/sh\n\
             cache=no; [ -n \"$MIOPEN_CUSTOM_CACHE_DIR\" ] && [ -w \"$MIOPEN_CUSTOM_CACHE_DIR\" ] && [ -w \"$MIOPEN_USER_DB_PATH\" ] && cache=yes\n\
             site=no; for d in $(echo \"$PYTHONPATH\" | tr : ' '); do grep -q cudnn.enabled \"$d/sitecustomize.py\" 2>/dev/null && site=yes; done\n\
             echo \"hsa=${{HSA_OVERRIDE_GFX_VERSION-unset}} find=${{MIOPEN_FIND_MODE-}} wino=${{MIOPEN_DEBUG_CONV_WINOGRAD-}} gemm=${{MIOPEN_DEBUG_CONV_GEMM-}} cache=$cache site=$site dir=${{MIOPEN_CUSTOM_CACHE_DIR-}}\" >> {log}\n\
             env | grep -E '^(MIOPEN_|HSA_|PYTHONPATH=)' | sort | tr '\\n' '|' >> {envlog}; echo >> {envlog}\n\
             {behaviour}\n",
            log = dir.join("log").display(),
            envlog = dir.join("envlog").display(),
        );
        std::fs::write(dir.join("standin"), script).unwrap();
        for (p, mode) in [
            ("", 0o777),
            ("standin", 0o755),
            ("log", 0o666),
            ("envlog", 0o666),
            ("root/dev/kmsg", 0o666),
        ] {
            std::fs::set_permissions(dir.join(p), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        Setup { dir }
    }

    fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut c = Command::new(BIN);
        c.current_dir(&self.dir)
            .arg("--root")
            .arg(self.dir.join("root"))
            .args(args)
            .env_remove("RDNA1CTL_ROOT")
            .env_remove("SUDO_UID")
            .env_remove("SUDO_GID")
            .env_remove("PKEXEC_UID")
            .env_remove("HSA_OVERRIDE_GFX_VERSION")
            .env_remove("PYTHONPATH")
            .env("STANDIN_KMSG", self.dir.join("root/dev/kmsg"));
        if is_root() {
            c.env("SUDO_UID", "65534").env("SUDO_GID", "65534");
        }
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }

    fn search(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut a = vec!["--json", "search"];
        a.extend(args);
        let standin = self.standin();
        a.extend(["--", standin.to_str().unwrap()]);
        self.command(&a, env).output().unwrap()
    }

    /// `rdna1ctl run --env KEPT -- ARGS...`.
    fn run(&self, kept: &Path, args: &[&str]) -> Output {
        let mut a = vec!["run", "--env", kept.to_str().unwrap(), "--"];
        a.extend(args);
        self.command(&a, &[]).output().unwrap()
    }

    fn standin(&self) -> PathBuf {
        self.dir.join("standin")
    }

    /// Each run's MIOPEN_*, HSA_* and PYTHONPATH variables, `NAME=value|...`, in run order.
    fn envlog(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("envlog"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("log"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Faults (the real amdgpu kmsg line) unless MIOpen's Winograd solvers are off.
fn winograd_is_the_culprit() -> String {
    format!(
        "if [ \"$MIOPEN_DEBUG_CONV_WINOGRAD\" = 0 ]; then exit 0; fi\n\
         echo '{FAULT}' >> \"$STANDIN_KMSG\"; exit 1"
    )
}

/// What the command printed: stdout without rdna1ctl's `root: DIR (not this machine)` line.
fn command_output(o: &Output) -> String {
    text(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with("root: "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn doc(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&o.stdout), text(&o.stderr)))
}

fn outcomes(d: &serde_json::Value) -> Vec<(String, String)> {
    d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["id"].as_str().unwrap().to_owned(),
                a["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn outcome_of(d: &serde_json::Value, id: &str) -> String {
    outcomes(d).into_iter().find(|(i, _)| i == id).unwrap().1
}

#[test]
fn it_stops_at_the_first_arm_that_passes_and_applies_each_arm_as_documented() {
    let s = Setup::new("first", &winograd_is_the_culprit());
    let o = s.search(&[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["command"], "search");
    assert_eq!(d["winner"], "miopen-no-winograd");
    assert_eq!(d["ended"], "first pass");
    // The module's arms are skipped, saying why; the runs before the winner failed, each with
    // the GPU fault the stand-in logged; those after it did not run.
    for (id, out) in outcomes(&d) {
        let want = match id.as_str() {
            i if i.starts_with("mtype-") => "skipped",
            "baseline"
            | "miopen-fresh-cache"
            | "miopen-find-normal"
            | "miopen-find-fast"
            | "miopen-no-direct"
            | "miopen-no-implicit-gemm"
            | "miopen-no-gemm" => "fail",
            "miopen-no-winograd" => "pass",
            _ => "not_run",
        };
        assert_eq!(out, want, "{id}");
    }
    let skipped = &d["arms"][1]["skipped"];
    assert!(
        skipped.as_str().unwrap().contains("needs rdna1_mtype"),
        "{skipped}"
    );
    assert_eq!(
        d["arms"][0]["faults"].as_array().unwrap().len(),
        1,
        "{}",
        d["arms"][0]
    );
    assert_eq!(d["arms"][0]["failure"], "exit 1, 1 GPU fault");
    // What each run got, in order: exactly its one change (and a private MIOpen database
    // for the MIOpen arms, writable by the user the command ran as).
    let log = s.log();
    let want = [
        "hsa=unset find= wino= gemm= cache=no site=no dir=",
        "hsa=unset find= wino= gemm= cache=yes site=no",
        "hsa=unset find=NORMAL wino= gemm= cache=yes site=no",
        "hsa=unset find=FAST wino= gemm= cache=yes site=no",
        "hsa=unset find= wino= gemm= cache=yes site=no",
        "hsa=unset find= wino= gemm= cache=yes site=no",
        "hsa=unset find= wino= gemm=0 cache=yes site=no",
        "hsa=unset find= wino=0 gemm= cache=yes site=no",
    ];
    assert_eq!(log.len(), want.len(), "{log:#?}");
    for (got, want) in log.iter().zip(want) {
        assert!(got.starts_with(want), "{got} vs {want}");
    }
    // The private directories are gone.
    for l in &log[1..] {
        let dir = l.rsplit("dir=").next().unwrap();
        assert!(
            !dir.is_empty() && !Path::new(dir).exists(),
            "{dir} left behind"
        );
    }
    assert!(d["verdict"]
        .as_str()
        .unwrap()
        .contains("At baseline it failed (exit 1, 1 GPU fault)"));
    assert!(d["verdict"]
        .as_str()
        .unwrap()
        .contains("numbers were not checked"));
    assert!(d["mtype_verdict"]
        .as_str()
        .unwrap()
        .starts_with("MTYPE not tested"));
    assert!(d["keep_lines"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l == "MIOPEN_DEBUG_CONV_WINOGRAD=0"));
    assert!(d["kept_to"].is_null(), "nothing kept unless asked");
}

#[test]
fn all_runs_every_arm_and_ranks_what_passed_and_the_bypass_arm_sets_sitecustomize() {
    let s = Setup::new("all", "[ \"$MIOPEN_DEBUG_CONV_GEMM\" = 0 ] && exit 0\n\
        for d in $(echo \"$PYTHONPATH\" | tr : ' '); do [ -f \"$d/sitecustomize.py\" ] && exit 0; done\n\
        exit 1");
    let o = s.search(&["--all"], &[("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["ended"], "all arms run");
    let ranking: Vec<&str> = d["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        ranking.contains(&"miopen-no-gemm") && ranking.contains(&"miopen-bypassed"),
        "{ranking:?}"
    );
    // 10.3.0 in the environment: one arm removes it (the fixture's GPU is a gfx1010: no 10.1.0
    // arm); no arm ever sets a foreign ISA.
    assert_eq!(outcome_of(&d, "override-unset"), "fail");
    assert!(!outcomes(&d).iter().any(|(i, _)| i == "override-10.1.0"));
    let log = s.log();
    assert!(log[0].starts_with("hsa=10.3.0 "), "{}", log[0]);
    // override-unset alone, then with each of the 9 MIOpen arms.
    assert_eq!(
        log.iter().filter(|l| l.starts_with("hsa=unset")).count(),
        1 + 9,
        "{log:#?}"
    );
    assert!(log.iter().any(|l| l.contains("site=yes")), "{log:#?}");
    // Combinations of the override fix with every MIOpen arm ran after the single changes.
    assert_eq!(outcome_of(&d, "override-unset+miopen-no-gemm"), "pass");
    // Every run got exactly its arm's changes on top of the baseline (10.3.0), as its JSON
    // says: what `set` names with its value, `unset` gone, the private MIOpen directories
    // with a fresh cache, PYTHONPATH with the bypass; nothing else.
    let ran: Vec<&serde_json::Value> = d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["record"].is_null())
        .collect();
    let envs = s.envlog();
    assert_eq!(ran.len(), envs.len(), "{envs:#?}");
    // baseline, override-unset, 9 MIOpen arms, then override-unset with each of them.
    assert_eq!(ran.len(), 11 + 9);
    for (a, got) in ran.iter().zip(&envs) {
        let mut want: Vec<String> = vec!["HSA_OVERRIDE_GFX_VERSION=10.3.0".into()];
        for u in a["unset"].as_array().unwrap() {
            let u = u.as_str().unwrap();
            want.retain(|w| !w.starts_with(&format!("{u}=")));
        }
        for kv in a["set"].as_array().unwrap() {
            want.push(format!(
                "{}={}",
                kv[0].as_str().unwrap(),
                kv[1].as_str().unwrap()
            ));
        }
        let mut got: Vec<String> = got
            .split('|')
            .filter(|x| !x.is_empty())
            .map(str::to_owned)
            .collect();
        let dirs = ["MIOPEN_CUSTOM_CACHE_DIR=", "MIOPEN_USER_DB_PATH="];
        let fresh = a["fresh_miopen"] == true;
        for d in dirs {
            assert_eq!(
                got.iter().any(|g| g.starts_with(d)),
                fresh,
                "{}: {d} in {got:?}",
                a["id"]
            );
        }
        let bypass = a["miopen_bypassed"] == true;
        assert_eq!(
            got.iter().any(|g| g.starts_with("PYTHONPATH=")),
            bypass,
            "{}: {got:?}",
            a["id"]
        );
        got.retain(|g| !dirs.iter().any(|d| g.starts_with(d)) && !g.starts_with("PYTHONPATH="));
        got.sort();
        want.sort();
        assert_eq!(got, want, "{}", a["id"]);
    }
}

#[test]
fn bounds_a_hang_and_a_timeout() {
    let s = Setup::new("bounds", "sleep 30");
    let t0 = Instant::now();
    let o = s.search(&["--timeout", "0.5", "--max-runs", "2"], &[]);
    assert_eq!(o.status.code(), Some(3), "none passed: {}", text(&o.stderr));
    assert!(t0.elapsed() < Duration::from_secs(25), "{:?}", t0.elapsed());
    let d = doc(&o);
    assert_eq!(d["ended"], "--max-runs reached");
    let ran: Vec<_> = d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["record"].is_null())
        .collect();
    assert_eq!(ran.len(), 2);
    assert!(ran
        .iter()
        .all(|a| a["record"]["timed_out"] == true && a["failure"] == "timed out"));
    assert!(d["verdict"]
        .as_str()
        .unwrap()
        .starts_with("No configuration tried made it pass"));
    // --budget: no run starts once it is spent.
    let o = s.search(&["--timeout", "0.5", "--budget", "0.8"], &[]);
    let d = doc(&o);
    assert_eq!(d["ended"], "--budget spent", "{d}");
}

#[test]
fn ctrl_c_ends_the_run_and_removes_the_private_directories() {
    // Fails at once at baseline, hangs in the next run (the first with a private directory).
    let s = Setup::new(
        "sigint",
        "[ -n \"$MIOPEN_CUSTOM_CACHE_DIR\" ] && sleep 30\nexit 1",
    );
    let mut c = s.command(
        &["--json", "search", "--", s.standin().to_str().unwrap()],
        &[],
    );
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the second run (a private MIOpen directory) to start.
    let t0 = Instant::now();
    while s.log().len() < 2 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{:?} {}",
        o.status.signal(),
        text(&o.stderr)
    );
    let d = doc(&o);
    assert_eq!(d["ended"], "interrupted");
    assert!(d["error"].as_str().unwrap().contains("interrupted"));
    let dir = s.log()[1].rsplit("dir=").next().unwrap().to_owned();
    assert!(
        !dir.is_empty() && !Path::new(&dir).exists(),
        "{dir} left behind"
    );
}

#[test]
fn the_kept_configuration_reproduces_the_pass_through_run() {
    let s = Setup::new("keep", &winograd_is_the_culprit());
    let kept = s.dir.join("gpu.env");
    let o = s.search(&["--keep", kept.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(doc(&o)["kept_to"], kept.to_str().unwrap());
    let body = std::fs::read_to_string(&kept).unwrap();
    assert!(body.contains("MIOPEN_DEBUG_CONV_WINOGRAD=0\n"), "{body}");
    let o = s.run(&kept, &[s.standin().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let last = s.log().pop().unwrap();
    assert!(
        last.contains("wino=0 ") && last.contains("cache=yes"),
        "{last}"
    );
    // Without it the stand-in fails, and run passes its exit code on.
    std::fs::write(&kept, "A=1\n").unwrap();
    let o = s.run(&kept, &[s.standin().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    // A mode the file asks for is set only by root, and only if it is not in force already:
    // the fixture's module is in enforce (nothing to set) and has no control device (audit
    // cannot be set: it fails, naming it).
    std::fs::write(&kept, "RDNA1_MTYPE_MODE=enforce\n").unwrap();
    let o = s.run(&kept, &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::write(&kept, "RDNA1_MTYPE_MODE=audit\n").unwrap();
    let o = s.run(&kept, &["true"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("mode audit"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn help_teaches_what_is_tried_and_how_to_keep_it() {
    let o = rdna1ctl(&["search", "--help"]);
    let h = text(&o.stdout);
    for w in [
        "MIOPEN_FIND_MODE",
        "Winograd",
        "never 10.3.0",
        "--keep",
        "rdna1ctl run",
        "--all",
        "--budget",
    ] {
        assert!(h.contains(w), "{w} not in search --help:\n{h}");
    }
    let h = text(&rdna1ctl(&["run", "--help"]).stdout);
    assert!(h.contains("RDNA1_MTYPE_MODE") && h.contains("--env"), "{h}");
}

#[test]
fn wrong_numbers_fail_and_working_arms_are_ranked_by_training_speed() {
    // A stand-in for the shipped script (--script): wrong numbers (its own check fails, exit 1)
    // unless a MIOpen family is off; 9 steps/s without GEMM, 5 without Winograd.
    let s = Setup::new("numbers", "exit 0");
    let script = s.dir.join("conv2d.py");
    std::fs::write(
        &script,
        "import json, os, sys\n\
         speed = {'MIOPEN_DEBUG_CONV_GEMM': 9.0, 'MIOPEN_DEBUG_CONV_WINOGRAD': 5.0}\n\
         s = [v for k, v in speed.items() if os.environ.get(k) == '0']\n\
         if s:\n    print(json.dumps({'ok': True, 'correct': True, 'stage': 'done', 'max_rel_error': {'output': 2e-7}, 'steps_per_s': s[0]}))\n    sys.exit(0)\n\
         print(json.dumps({'ok': False, 'correct': False, 'stage': 'verify', 'max_rel_error': {'output': 0.9}, 'error': 'RuntimeError: wrong results'}))\n\
         sys.exit(1)\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = s
        .command(
            &[
                "--json",
                "search",
                "--all",
                "--python",
                "/usr/bin/python3",
                "--script",
                script.to_str().unwrap(),
            ],
            &[],
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["workload"]["default_script"], true);
    let base = &d["arms"][0];
    assert_eq!(base["outcome"], "fail");
    assert_eq!(base["conv2d"]["correct"], false, "{base}");
    assert_eq!(d["winner"], "miopen-no-gemm");
    let ranking: Vec<&str> = d["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        &ranking[..2],
        ["miopen-no-gemm", "miopen-no-winograd"],
        "{ranking:?}"
    );
    let v = d["verdict"].as_str().unwrap();
    assert!(
        v.contains("(9 steps/s") && v.contains("largest error against float64"),
        "{v}"
    );
    assert!(!v.contains("not checked"), "{v}");
}

#[test]
fn run_as_root_creates_no_directory_a_kept_file_names() {
    // A kept file is the user's: root must not create (and give the user) a directory it
    // names, which a link in the user's path could put anywhere. MIOpen makes its own, as the
    // user.
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let s = Setup::new("rundirs", "exit 0");
    let target = s.dir.join("root-only");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, s.dir.join("link")).unwrap();
    let kept = s.dir.join("gpu.env");
    let db = s.dir.join("link/new-db");
    std::fs::write(&kept, format!("MIOPEN_USER_DB_PATH={}\n", db.display())).unwrap();
    let o = s.run(&kept, &["true"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !target.join("new-db").exists(),
        "root made a directory the kept file named"
    );
}

#[test]
fn a_kept_files_variables_reach_the_command_only_after_root_is_dropped() {
    // As root, a file naming RDNA1CTL_EXEC_AS (or LD_PRELOAD) must not change what the process
    // that is still root does: the command runs as the invoking user, with the file's values.
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let s = Setup::new("envdrop", "exit 0");
    let kept = s.dir.join("gpu.env");
    std::fs::write(
        &kept,
        "RDNA1_UNSET=RDNA1CTL_EXEC_AS\nA_VALUE=from-the-file\n",
    )
    .unwrap();
    let o = s.run(&kept, &["sh", "-c", "echo $(id -u) $A_VALUE"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(command_output(&o), "65534 from-the-file");
}

#[test]
fn run_keeps_the_command_in_the_terminals_process_group() {
    // In rdna1ctl's own group, so a terminal's stdin and Ctrl-C reach it (a group of its own
    // is a background group: reading the terminal would stop it).
    let s = Setup::new("pgrp", "exit 0");
    let kept = s.dir.join("gpu.env");
    std::fs::write(&kept, "A=1\n").unwrap();
    let o = s.run(
        &kept,
        &[
            "sh",
            "-c",
            "cut -d' ' -f5 /proc/$$/stat; cut -d' ' -f5 /proc/$PPID/stat",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = command_output(&o);
    let groups: Vec<&str> = out.lines().collect();
    assert_eq!(groups.len(), 2, "{out}");
    assert_eq!(
        groups[0], groups[1],
        "the command's group and rdna1ctl's differ: {out}"
    );
}

#[test]
fn a_run_the_budget_cut_short_is_no_verdict_on_its_arm() {
    let s = Setup::new("budgetcut", "sleep 5; exit 1");
    let o = s.search(&["--timeout", "60", "--budget", "1"], &[]);
    let d = doc(&o);
    assert_eq!(d["ended"], "--budget spent", "{d}");
    let base = &d["arms"][0];
    assert_eq!(base["outcome"], "not_run", "{base}");
    assert!(
        !d["verdict"]
            .as_str()
            .unwrap()
            .contains("baseline: timed out"),
        "{}",
        d["verdict"]
    );
}
