//! `rdna1ctl search` and `rdna1ctl run` as processes, with a stand-in workload whose behaviour
//! depends on the environment it gets: it fails with an amdgpu page fault in the real kmsg
//! format (appended to the fixture root's dev/kmsg), or passes, or hangs, and logs what each
//! run got. As a ROCm program's process appears in KFD while it runs, the stand-in has an
//! entry in the fixture's /sys/class/kfd/kfd/proc (unless it plays a program that never
//! touches the GPU). The fixture has no control device, so the module's arms are skipped,
//! saying why; the module's arms themselves need the module (VM). As root the command runs as
//! nobody (SUDO_UID 65534, whose home /nonexistent does not exist), otherwise as the test's
//! own user with HOME in the test's directory. rdna1ctl finds the in-process check in the
//! tree (RDNA1CTL_SHARE).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{rdna1ctl, text};

const BIN: &str = env!("CARGO_BIN_EXE_rdna1ctl");

const FAULT: &str = "3,1200,5000,-;amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32770)";

/// What a Python with a ROCm PyTorch and an RX 5700 XT answers rdna1ctl's question.
const ROCM_PYTHON: &str = r#"{"python": "/home/u/venv/bin/python3", "version": "3.12.3", "torch": "2.9.1+rocm6.4", "hip": "6.4.43484", "cuda": null, "gpus": [{"name": "AMD Radeon RX 5700 XT", "arch": "gfx1010:xnack-"}]}"#;
/// What a Python without torch answers (the probe's own words for the import error).
const NO_TORCH_PYTHON: &str = r#"{"python": "/usr/bin/python3", "version": "3.11.2", "error": "ModuleNotFoundError: No module named 'torch'"}"#;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A writable copy of the rdna1-enforce fixture with an empty dev/kmsg and a KFD process
/// directory, a stand-in workload and its log, in a directory anyone may use (the command may
/// run as nobody).
struct Setup {
    dir: PathBuf,
}

/// The stand-in's first lines: its entry in the fixture's KFD process list while it runs,
/// long enough for rdna1ctl's sampler (every 50 ms) to see it, as a ROCm program's.
const ON_THE_GPU: &str =
    "kfd=\"$STANDIN_KFD/$$\"; mkdir \"$kfd\"; trap 'rmdir \"$kfd\"' EXIT; sleep 0.15\n";

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl Setup {
    fn new(name: &str, behaviour: &str) -> Setup {
        Setup::with(name, &format!("{ON_THE_GPU}{behaviour}"))
    }

    /// A stand-in that does no GPU work: KFD never sees it.
    fn off_the_gpu(name: &str, behaviour: &str) -> Setup {
        Setup::with(name, behaviour)
    }

    fn with(name: &str, behaviour: &str) -> Setup {
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
        std::fs::create_dir_all(dir.join("root/sys/class/kfd/kfd/proc")).unwrap();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::fs::write(dir.join("root/dev/kmsg"), "").unwrap();
        std::fs::write(dir.join("log"), "").unwrap();
        std::fs::write(dir.join("envlog"), "").unwrap();
        let script = format!(
            "#!/bin/sh\n\
             cache=no; [ -n \"$MIOPEN_CUSTOM_CACHE_DIR\" ] && [ -w \"$MIOPEN_CUSTOM_CACHE_DIR\" ] && [ -w \"$MIOPEN_USER_DB_PATH\" ] && cache=yes\n\
             site=no; [ \"$RDNA1_MIOPEN_BYPASS\" = 1 ] && site=yes\n\
             echo \"hsa=${{HSA_OVERRIDE_GFX_VERSION-unset}} find=${{MIOPEN_FIND_MODE-}} wino=${{MIOPEN_DEBUG_CONV_WINOGRAD-}} gemm=${{MIOPEN_DEBUG_CONV_GEMM-}} cache=$cache site=$site dir=${{MIOPEN_CUSTOM_CACHE_DIR-}}\" >> {log}\n\
             env | grep -E '^(MIOPEN_|HSA_|PYTHONPATH=|RDNA1_MIOPEN_BYPASS=)' | sort | tr '\\n' '|' >> {envlog}; echo >> {envlog}\n\
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
            ("root/sys/class/kfd/kfd/proc", 0o777),
            ("home", 0o777),
        ] {
            std::fs::set_permissions(dir.join(p), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        Setup { dir }
    }

    fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        common::fixture_command(BIN, &self.dir, args, env)
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

    /// An interpreter named `python3` in `dir` (made here, mode 0755): a shell stand-in that
    /// logs that it ran, answers rdna1ctl's question about itself (`-c`) with `probe` (the
    /// JSON line a real Python prints) and runs any script given with this machine's python3.
    fn python(&self, dir: &str, probe: &str) -> PathBuf {
        let bin = self.dir.join(dir);
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let py = bin.join("python3");
        std::fs::write(
            &py,
            format!(
                "#!/bin/sh\n\
                 echo \"$0 $*\" >> {log}\n\
                 if [ \"$1\" = -c ]; then echo '{probe}'; exit 0; fi\n\
                 exec /usr/bin/python3 \"$@\"\n",
                log = self.dir.join("pylog").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(self.dir.join("pylog"), "").unwrap();
        std::fs::set_permissions(
            self.dir.join("pylog"),
            std::fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        py
    }

    /// A Python program `name` in the test's directory (mode 0644) that first has an entry in
    /// the fixture's KFD process list for a moment, as a ROCm program's process would, then
    /// runs `body`.
    fn gpu_program(&self, name: &str, body: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(
            &p,
            format!(
                "import json, os, sys, time\n\
                 kfd = os.path.join(os.environ['STANDIN_KFD'], str(os.getpid())); os.mkdir(kfd); time.sleep(0.15); os.rmdir(kfd)\n\
                 {body}"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        p
    }

    fn pylog(&self) -> String {
        std::fs::read_to_string(self.dir.join("pylog")).unwrap_or_default()
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
fn it_stops_when_a_configuration_holds_and_applies_each_arm_as_documented() {
    // A shell stand-in: no MIOpen log to read, so the elimination falls back to pairs of
    // families; the pair that passes is confirmed, then reduced to the one switch it needs.
    let s = Setup::new("first", &winograd_is_the_culprit());
    let o = s.search(&[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["command"], "search");
    assert_eq!(d["winner"], "miopen-no-direct+winograd");
    assert_eq!(d["ended"], "a configuration kept");
    let want = [
        ("baseline", "fail"),
        // Not Python: the check sees none of its ops, so nothing points beyond MIOpen.
        ("beyond-miopen", "skipped"),
        ("miopen-find-fast", "fail"),
        ("miopen-no-implicit-gemm", "skipped"),
        ("miopen-no-fft", "skipped"),
        ("eliminate-1", "fail"),
        ("miopen-no-direct+gemm", "fail"),
        ("miopen-no-direct+winograd", "pass"),
        ("confirm-1", "pass"),
        ("confirm-2", "pass"),
        ("baseline-again", "fail"),
        ("without-MIOPEN_DEBUG_CONV_WINOGRAD", "fail"),
        ("without-MIOPEN_DEBUG_CONV_DIRECT", "pass"),
        ("confirm-minimal-1", "pass"),
        ("confirm-minimal-2", "pass"),
    ];
    let got = outcomes(&d);
    let got: Vec<(&str, &str)> = got.iter().map(|(i, o)| (i.as_str(), o.as_str())).collect();
    assert_eq!(got, want);
    assert_eq!(d["arms"][0]["failure"], "exit 1, 1 GPU fault");
    assert!(d["arms"][0]["faults"].as_array().unwrap().len() == 1);
    // What each run got, in order: exactly its changes (and a private MIOpen database for
    // the MIOpen arms, writable by the user the command ran as).
    let log = s.log();
    let want = [
        "hsa=unset find= wino= gemm= cache=no site=no dir=",
        "hsa=unset find=FAST wino= gemm= cache=yes site=no",
        "hsa=unset find= wino= gemm= cache=no site=no dir=",
        "hsa=unset find= wino= gemm=0 cache=yes site=no",
        "hsa=unset find= wino=0 gemm= cache=yes site=no",
    ];
    for (got, want) in log.iter().zip(want) {
        assert!(got.starts_with(want), "{got} vs {want}");
    }
    assert_eq!(log.len(), 12, "{log:#?}");
    // The elimination's run had MIOpen's log and serialized kernels.
    let envs = s.envlog();
    assert!(envs[2].contains("MIOPEN_LOG_LEVEL=6"), "{}", envs[2]);
    // The private directories are gone.
    for l in &log[1..] {
        let dir = l.rsplit("dir=").next().unwrap();
        assert!(
            dir.is_empty() || !Path::new(dir).exists(),
            "{dir} left behind"
        );
    }
    let v = d["verdict"].as_str().unwrap();
    assert!(
        v.contains("At baseline it failed (exit 1, 1 GPU fault)"),
        "{v}"
    );
    assert!(v.contains("numbers were not checked"), "{v}");
    assert!(
        v.contains("not needed, so not kept: MIOPEN_DEBUG_CONV_DIRECT=0"),
        "{v}"
    );
    assert!(d["mtype_verdict"]
        .as_str()
        .unwrap()
        .starts_with("MTYPE not tested"));
    let keep = d["keep_lines"].as_array().unwrap();
    assert!(
        keep.iter().any(|l| l == "MIOPEN_DEBUG_CONV_WINOGRAD=0"),
        "{keep:?}"
    );
    assert!(
        !keep.iter().any(|l| l == "MIOPEN_DEBUG_CONV_DIRECT=0"),
        "{keep:?}"
    );
    assert!(d["kept_to"].is_null(), "nothing kept unless asked");
}

#[test]
fn all_runs_every_step_and_ranks_what_passed_and_a_bypass_must_show_itself() {
    // Passes without MIOpen's OpenCL kernels, or whenever a bypass's variable reaches it: a
    // shell script, in which no Python loaded rdna1ctl's check, so nothing shows MIOpen was
    // bypassed.
    let s = Setup::new(
        "all",
        "[ \"$MIOPEN_DEBUG_OPENCL_CONVOLUTIONS\" = 0 ] && exit 0\n\
         [ \"$RDNA1_MIOPEN_BYPASS\" = 1 ] && exit 0\n\
         [ -n \"$RDNA1_MIOPEN_BYPASS_KINDS\" ] && exit 0\n\
         exit 1",
    );
    let o = s.search(&["--all"], &[("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["ended"], "a configuration kept", "{d}");
    assert_eq!(d["winner"], "miopen-no-opencl");
    let ranking: Vec<&str> = d["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(ranking, ["miopen-no-opencl"]);
    // Exit 0 under the bypass arms is not credited to a bypass nothing showed.
    for id in ["miopen-bypassed", "miopen-bypassed-for"] {
        let bypass = d["arms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .unwrap();
        assert_eq!(bypass["outcome"], "fail", "{bypass}");
        assert!(
            bypass["failure"]
                .as_str()
                .unwrap()
                .contains("MIOpen bypass not in effect"),
            "{bypass}"
        );
    }
    // A failure that is no crash has no fault to trace: no elimination run.
    assert_eq!(outcome_of(&d, "eliminate-1"), "skipped");
    // 10.3.0 in the environment: one arm removes it (the fixture's GPU is a gfx1010: no 10.1.0
    // arm), kept for the steps after it; no arm ever sets a foreign ISA.
    assert_eq!(outcome_of(&d, "override-unset"), "fail");
    assert!(!outcomes(&d).iter().any(|(i, _)| i == "override-10.1.0"));
    let log = s.log();
    assert!(log[0].starts_with("hsa=10.3.0 "), "{}", log[0]);
    assert!(
        log[1..]
            .iter()
            .filter(|l| l.starts_with("hsa=10.3.0"))
            .count()
            >= 1
    );
    // Every run got exactly its arm's changes on top of the baseline (10.3.0), as its JSON
    // says: what `set` names with its value, `unset` gone, the private MIOpen directories
    // with a fresh cache, the bypass's variables; and every run the in-process check first on
    // PYTHONPATH; nothing else.
    let ran: Vec<&serde_json::Value> = d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["record"].is_null())
        .collect();
    let envs = s.envlog();
    assert_eq!(ran.len(), envs.len(), "{envs:#?}");
    let check_dir = format!(
        "PYTHONPATH={}",
        common::share_copy().join("python").display()
    );
    for (a, got) in ran.iter().zip(&envs) {
        let mut want: Vec<String> = vec!["HSA_OVERRIDE_GFX_VERSION=10.3.0".into()];
        for u in a["unset"].as_array().unwrap() {
            let u = u.as_str().unwrap();
            want.retain(|w| !w.starts_with(&format!("{u}=")));
        }
        for kv in a["set"]
            .as_array()
            .unwrap()
            .iter()
            .chain(a["diagnostics"].as_array().unwrap())
        {
            let k = kv[0].as_str().unwrap();
            if k.starts_with("MIOPEN_") || k.starts_with("HSA_") {
                want.push(format!("{k}={}", kv[1].as_str().unwrap()));
            }
        }
        if a["miopen_bypassed"] == true {
            want.push("RDNA1_MIOPEN_BYPASS=1".into());
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
        assert!(got.contains(&check_dir), "{}: {got:?}", a["id"]);
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
    // The private MIOpen cache is kept in the user's ~/.cache, or, for a user whose home does
    // not exist (nobody's /nonexistent), beside the kept file, saying why.
    let base = if is_root() {
        assert!(body.contains("/nonexistent does not exist"), "{body}");
        s.dir.join("rdna1-mtype-cache")
    } else {
        s.dir.join("home/.cache/rdna1-mtype")
    };
    assert!(
        body.contains(&format!(
            "MIOPEN_USER_DB_PATH={}",
            base.join("miopen-db").display()
        )),
        "{body}"
    );
    let o = s.run(&kept, &[s.standin().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let last = s.log().pop().unwrap();
    assert!(
        last.contains("wino=0 ") && last.contains("cache=yes"),
        "{last}"
    );
    // run made the MIOpen directories, as the user the command ran as.
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(base.join("miopen-db")).unwrap().uid();
    let want = if is_root() {
        65534
    } else {
        nix::unistd::geteuid().as_raw()
    };
    assert_eq!(owner, want);
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
        "AMDGCN_USE_BUFFER_OPS",
        "math kernel",
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
    // A stand-in for the battery (--script): wrong numbers (its own check fails, exit 1)
    // unless one of MIOpen's build filters is on: 9 steps/s without its GCN assembly, 8.8
    // without its OpenCL kernels, within noise of the first (their timed repeats overlap).
    let s = Setup::new("numbers", "exit 0");
    let script = s.gpu_program(
        "battery.py",
        "speed = {'MIOPEN_DEBUG_GCN_ASM_KERNELS': (9.0, 8.7, 9.2), 'MIOPEN_DEBUG_OPENCL_CONVOLUTIONS': (8.8, 8.5, 9.0)}\n\
         s = [v for k, v in speed.items() if os.environ.get(k) == '0']\n\
         if s:\n    m, lo, hi = s[0]\n    print(json.dumps({'ok': True, 'stage': 'done', 'cases': [{'name': 'Conv2d 3x3', 'dtype': 'float32', 'ok': True}, {'name': 'Conv2d 3x3', 'dtype': 'float16', 'ok': False}], 'speed': {'steps_per_s': m, 'min': lo, 'max': hi}}))\n    sys.exit(0)\n\
         print(json.dumps({'ok': False, 'stage': 'done', 'cases': [{'name': 'Conv2d 3x3', 'dtype': 'float32', 'ok': False}], 'summary': '1 of 1 layer cases failed: Conv2d 3x3 (float32): forward off by 0.9'}))\n\
         sys.exit(1)\n",
    );
    let python = s.python("bin", ROCM_PYTHON);
    let o = s
        .command(
            &[
                "--json",
                "search",
                "--all",
                "--python",
                python.to_str().unwrap(),
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
    assert_eq!(d["workload"]["python"]["hip"], "6.4.43484");
    let base = &d["arms"][0];
    assert_eq!(base["outcome"], "fail");
    assert!(
        base["failure"]
            .as_str()
            .unwrap()
            .contains("Conv2d 3x3 (float32): forward off"),
        "{base}"
    );
    // The fastest within noise of the best: GCN assembly off.
    assert_eq!(d["winner"], "miopen-no-asm");
    let ranking: Vec<&str> = d["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        ranking,
        ["miopen-no-asm", "miopen-no-opencl"],
        "{ranking:?}"
    );
    let noise: Vec<&str> = d["ranking_noise"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        noise
            .iter()
            .any(|n| n.starts_with("miopen-no-asm and miopen-no-opencl are within noise")),
        "{noise:?}"
    );
    let v = d["verdict"].as_str().unwrap();
    assert!(
        v.contains("(1 float32 layer cases right against float64; 1 float16 case(s) failed: train in float32; 9 steps/s (9 to 9))"),
        "{v}"
    );
    assert!(!v.contains("not checked"), "{v}");
}

#[test]
fn run_as_root_creates_no_directory_a_kept_file_names() {
    // A kept file is the user's: root must not create (and give the user) a directory it
    // names, which a link in the user's path could put anywhere. The user's process makes it,
    // and where the user may not, run says so and does not start the command.
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
    let marker = s.dir.join("ran");
    let o = s.run(&kept, &["touch", marker.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("creating") && text(&o.stderr).contains("new-db"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        !target.join("new-db").exists(),
        "root made a directory the kept file named"
    );
    assert!(
        !marker.exists(),
        "the command ran without its MIOpen directory"
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

#[test]
fn a_workload_silently_on_the_cpu_is_no_pass() {
    // Exits 0 under every configuration, but never opens /dev/kfd: a CPU fallback.
    let s = Setup::off_the_gpu("cpu", "exit 0");
    let o = s.search(&["--max-runs", "3"], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let d = doc(&o);
    assert!(d["winner"].is_null(), "{d}");
    let base = &d["arms"][0];
    assert_eq!(base["outcome"], "fail", "{base}");
    assert_eq!(base["record"]["exit_code"], 0);
    assert!(
        base["failure"]
            .as_str()
            .unwrap()
            .contains("no GPU work: none of the command's processes opened /dev/kfd"),
        "{base}"
    );
    // With KFD seeing it, the same command passes.
    let s = Setup::new("gpu", "exit 0");
    let o = s.search(&[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["winner"], "baseline");
    // A baseline pass offers nothing to keep.
    assert!(d["keep_lines"].as_array().unwrap().is_empty(), "{d}");
    assert_eq!(outcomes(&d).len(), 1, "only the baseline ran");
    assert_eq!(
        d["arms"][0]["gpu_work"]["kfd_processes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn sudos_reset_path_with_virtual_env_runs_the_venvs_python() {
    // sudo -E with secure_path: VIRTUAL_ENV kept, PATH the system's. The venv's python3 must
    // run the command, and be named at the start.
    let s = Setup::new("venv", "exit 0");
    let venv = s.dir.join("venv");
    let py = s.python("venv/bin", ROCM_PYTHON);
    let train = s.gpu_program("train.py", "");
    let mut c = s.command(
        &["--json", "search", "--", "python3", train.to_str().unwrap()],
        &[
            (
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            ),
            ("VIRTUAL_ENV", venv.to_str().unwrap()),
        ],
    );
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["workload"]["activated"]["from"], "VIRTUAL_ENV", "{d}");
    assert_eq!(d["workload"]["argv"][0], py.to_str().unwrap());
    assert_eq!(d["winner"], "baseline");
    let log = s.pylog();
    assert!(log.contains(&format!("{} -c", py.display())), "{log}");
    assert!(
        log.contains(&format!("{} {}", py.display(), train.display())),
        "{log}"
    );
    assert!(
        text(&o.stderr).contains(
            "python: /home/u/venv/bin/python3 (Python 3.12.3), torch 2.9.1+rocm6.4, HIP 6.4.43484"
        ),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn an_isolated_interpreter_is_not_credited_with_the_bypass() {
    // Passes exactly when the bypass arm's environment reaches it, as a network would whose
    // convolutions fail on MIOpen; `python3 -I` ignores PYTHONPATH, so rdna1ctl's check never
    // loaded and nothing bypassed MIOpen in it.
    let s = Setup::new("isolated", "exit 0");
    let prog = s.gpu_program(
        "prog.py",
        "bypassed = os.environ.get('RDNA1_MIOPEN_BYPASS') == '1' or 'rdna1ctl-search' in os.environ.get('PYTHONPATH', '')\n\
         sys.exit(0 if bypassed else 1)\n",
    );
    // This machine's python3 (no torch here) behind an interpreter that answers as a ROCm one.
    let python = s.python("bin", ROCM_PYTHON);
    let mut c = s.command(
        &[
            "--json",
            "search",
            "--",
            python.to_str().unwrap(),
            "-I",
            prog.to_str().unwrap(),
        ],
        &[],
    );
    let o = c.output().unwrap();
    let d = doc(&o);
    assert_eq!(o.status.code(), Some(3), "{d}");
    let bypass = d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "miopen-bypassed")
        .unwrap();
    assert_eq!(bypass["outcome"], "fail", "{bypass}");
    assert_eq!(bypass["record"]["exit_code"], 0);
    assert!(
        bypass["failure"]
            .as_str()
            .unwrap()
            .contains("MIOpen bypass not in effect: no Python process of the command loaded rdna1ctl's sitecustomize (an isolated interpreter"),
        "{bypass}"
    );
    assert!(d["winner"].is_null(), "{d}");
}

#[test]
fn a_python_without_torch_ends_the_search_incomplete() {
    // The owner's python3 has no torch: the baseline fails, and that is the environment, not
    // a result: the search stops there, says why, gives doctor's fixes, and never calls it
    // "no configuration passed".
    let s = Setup::new("notorch", "exit 0");
    let python = s.python("bin", NO_TORCH_PYTHON);
    let battery = tree().join("dist/field-kit/battery.py");
    let args = [
        "search",
        "--python",
        python.to_str().unwrap(),
        "--script",
        battery.to_str().unwrap(),
    ];
    let json: Vec<&str> = std::iter::once("--json").chain(args).collect();
    let o = s.command(&json, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let d = doc(&o);
    assert_eq!(d["ended"], "environment cannot run the workload", "{d}");
    assert!(
        d["environment"]
            .as_str()
            .unwrap()
            .contains("/usr/bin/python3 cannot import torch: ModuleNotFoundError"),
        "{d}"
    );
    let v = d["verdict"].as_str().unwrap();
    assert!(
        v.starts_with("incomplete:") && !v.contains("bug report"),
        "{v}"
    );
    assert!(d["mtype_verdict"].as_str().unwrap().contains("environment"));
    let ran = d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a["record"].is_null())
        .count();
    assert_eq!(ran, 1, "only the baseline ran");
    assert!(
        d["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().starts_with("python.torch")),
        "{d}"
    );
    let o = s.command(&args, &[]).output().unwrap();
    let out = text(&o.stdout);
    assert!(
        out.contains("incomplete: the environment cannot run the workload"),
        "{out}"
    );
    assert!(out.contains("  doctor: python.torch"), "{out}");
}

#[test]
fn a_keep_file_that_cannot_be_written_is_refused_before_the_first_run() {
    let s = Setup::new("keepdir", "exit 0");
    let missing = s.dir.join("no-such-dir/gpu.env");
    let o = s.search(&["--keep", missing.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("rdna1ctl: ") && err.contains("no-such-dir") && err.contains("mkdir -p"),
        "{err}"
    );
    assert!(s.log().is_empty(), "a run started: {:?}", s.log());
}

/// A compiled graph's records as the in-process check writes them (and a GEMM that was right),
/// from a program that stands for a torch.compile'd fine-tune: the graph's kernels write zeros
/// unless AMDGCN_USE_BUFFER_OPS=0 (unsloth #11614). It logs the Triton and Inductor cache
/// directories each run got, and whether they existed then.
const COMPILED_ZEROS: &str = r#"d = os.environ['RDNA1_CHECK_DIR']; pid = os.getpid()
zeros = os.environ.get('AMDGCN_USE_BUFFER_OPS') != '0'
caches = [os.environ.get(k, '') for k in ('TRITON_CACHE_DIR', 'TORCHINDUCTOR_CACHE_DIR')]
with open(os.environ['CACHE_LOG'], 'a') as f:
    f.write(' '.join(f'{c}:{str(os.path.isdir(c)).lower()}' for c in caches) + '\n')
res = lambda i, ok, err: {'event': 'result', 'pid': pid, 'id': i, 'direction': 'forward', 'math': 'float32', 'rms_rel': err, 'max_rel': err, 'tolerance_rms': 1e-5, 'tolerance_max': 1e-4, 'ok': ok}
recs = [{'event': 'torch', 'pid': pid, 'torch': '2.10.0+rocm7.1', 'hip': '7.1', 'cuda': None, 'numerics': True, 'bypass': False, 'bypass_kinds': []},
        {'event': 'op', 'pid': pid, 'id': 1, 'kind': 'mm 2048x256 @ 256x768', 'op': 'mm', 'family': 'GEMM', 'dtype': 'float32', 'layout': 'contiguous', 'device': 'cuda:0', 'device_name': 'AMD Radeon RX 5700 XT', 'checked': True, 'inputs': [[2048, 256], [256, 768]]},
        res(1, True, 1e-7), {'event': 'returned', 'pid': pid, 'id': 1},
        {'event': 'graph', 'pid': pid, 'id': 2, 'graph': 'forward 0', 'kernels': ['triton_per_fused_native_layer_norm_0'], 'ops': ['native_layer_norm']},
        res(2, not zeros, 1.0 if zeros else 1e-7) | {'event': 'graph_result'},
        {'event': 'exit', 'pid': pid, 'gpu_used': True}]
with open(os.path.join(d, f'check-{pid}.jsonl'), 'a') as f:
    f.write(''.join(json.dumps(r) + '\n' for r in recs))
"#;

#[test]
fn a_compiled_graph_writing_zeros_is_cured_by_tritons_switch_with_caches_of_its_own() {
    let s = Setup::new("compiled", "exit 0");
    let prog = s.gpu_program("finetune.py", COMPILED_ZEROS);
    let python = s.python("bin", ROCM_PYTHON);
    let cache_log = s.dir.join("cachelog");
    std::fs::write(&cache_log, "").unwrap();
    std::fs::set_permissions(&cache_log, std::fs::Permissions::from_mode(0o666)).unwrap();
    let kept = s.dir.join("kept.env");
    let o = s
        .command(
            &[
                "--json",
                "search",
                "--keep",
                kept.to_str().unwrap(),
                "--",
                python.to_str().unwrap(),
                prog.to_str().unwrap(),
            ],
            &[("CACHE_LOG", cache_log.to_str().unwrap())],
        )
        .output()
        .unwrap();
    let d = doc(&o);
    assert_eq!(o.status.code(), Some(0), "{d}\n{}", text(&o.stderr));
    assert_eq!(d["winner"], "triton-no-buffer-ops", "{d}");
    let out = outcomes(&d);
    assert_eq!(out[0], ("baseline".into(), "fail".into()), "{out:?}");
    assert!(
        d["arms"][0]["failure"]
            .as_str()
            .unwrap()
            .contains("compiled forward 0 graph, kernels triton_per_fused_native_layer_norm_0"),
        "{}",
        d["arms"][0]
    );
    assert_eq!(
        out[1],
        ("triton-no-buffer-ops".into(), "pass".into()),
        "{out:?}"
    );
    // No convolution or batch norm ran: MIOpen's steps were passed over, saying why.
    let miopen = d["arms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "miopen");
    assert!(
        miopen.is_none_or(|a| a["skipped"]
            .as_str()
            .unwrap()
            .contains("no convolution or batch norm")),
        "{miopen:?}"
    );
    assert!(
        !out.iter().any(|(id, _)| id == "miopen-find-fast"),
        "{out:?}"
    );
    // The baselines had the owner's caches (none here); each run of the switch caches of its
    // own, there while it ran, gone after.
    let caches = std::fs::read_to_string(&cache_log).unwrap();
    let lines: Vec<&str> = caches.lines().collect();
    assert_eq!(lines[0], ":false :false", "{caches}");
    assert_eq!(
        lines.len(),
        5,
        "baseline, the switch, 2 confirmations, baseline again"
    );
    for l in lines[1..4].iter() {
        let dirs: Vec<&str> = l.split(' ').collect();
        assert!(dirs.iter().all(|x| x.ends_with(":true")), "{caches}");
        for x in dirs {
            assert!(!Path::new(x.trim_end_matches(":true")).exists(), "{x} left");
        }
    }
    // Kept with caches of its own below the user's home, and `run` reproduces the pass.
    let text_kept = std::fs::read_to_string(&kept).unwrap();
    assert!(
        text_kept.contains("AMDGCN_USE_BUFFER_OPS=0\n"),
        "{text_kept}"
    );
    assert!(text_kept.contains("TRITON_CACHE_DIR="), "{text_kept}");
    assert!(
        text_kept.contains("TORCHINDUCTOR_CACHE_DIR="),
        "{text_kept}"
    );
    let o = s
        .command(
            &[
                "run",
                "--env",
                kept.to_str().unwrap(),
                "--check-exit",
                "wrong",
                "--",
                python.to_str().unwrap(),
                prog.to_str().unwrap(),
            ],
            &[("CACHE_LOG", cache_log.to_str().unwrap())],
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let last = std::fs::read_to_string(&cache_log).unwrap();
    assert!(
        last.lines()
            .last()
            .unwrap()
            .ends_with("inductor-cache:true"),
        "{last}"
    );
}
