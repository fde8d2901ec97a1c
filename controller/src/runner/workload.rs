//! One run of the owner's command: as the invoking user, in a process group of its own, with a
//! timeout that kills the whole group, its exit status, time and the tail of its output.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::Serialize;

use super::exec_as;
use super::gpu_work::GpuWork;
use super::progress::Progress;
use super::user::RunAs;

/// How much of each output stream the report keeps (the end: where errors are).
pub const TAIL: usize = 16 * 1024;
/// How long a group has after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(50);

/// What a run of the command recorded (part of the report's `runs[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Record {
    /// The exit code, or null if a signal ended it (or it never started).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Killed because it ran longer than `--timeout`.
    pub timed_out: bool,
    /// Killed because rdna1ctl was interrupted (Ctrl-C, SIGTERM).
    pub interrupted: bool,
    pub duration_s: f64,
    /// Why it could not be started, if it could not.
    pub spawn_error: Option<String>,
    /// The last bytes of its standard output and error (at most 16 KiB each, lossy UTF-8).
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// Its standard error's MIOpen log lines and ROCr's fault message, the last
    /// [`MIOPEN_LOG`] bytes of them (what MIOpen ran before a fault can be far above the
    /// tail); not in the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub miopen_log: String,
}

/// How much of the MIOpen log lines of a run is kept to read.
pub const MIOPEN_LOG: usize = 1 << 20;

/// Whether a line of standard error is one that says what MIOpen ran: its log, or ROCr's
/// message for a fault.
fn is_miopen_line(line: &[u8]) -> bool {
    line.windows(7).any(|w| w == b"MIOpen(") || line.starts_with(b"Memory access fault")
}

/// How a run that ran went wrong: what tells two failures apart.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Failure {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// GPU page faults of the command's processes in the kernel log during the run.
    pub faults: usize,
    /// What else made it no pass, or where it stopped: wrong numbers, no GPU work, a bypass
    /// not in effect, the layer it died in (runner/verdict.rs).
    pub reason: Option<String>,
}

impl Failure {
    /// `exit 1, 2 GPU faults`, `killed by signal 11`, `timed out`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.timed_out {
            parts.push("timed out".to_owned());
        } else if let Some(s) = self.signal {
            parts.push(format!("killed by signal {s}"));
        } else if let Some(c) = self.exit_code {
            parts.push(format!("exit {c}"));
        }
        match self.faults {
            0 => {}
            1 => parts.push("1 GPU fault".to_owned()),
            n => parts.push(format!("{n} GPU faults")),
        }
        let head = parts.join(", ");
        match &self.reason {
            Some(r) if head.is_empty() => r.clone(),
            Some(r) => format!("{head}: {r}"),
            None => head,
        }
    }

    /// The same kind of failure: same end, GPU faults in both or in neither, and the same
    /// reason.
    pub fn same_as(&self, o: &Failure) -> bool {
        (
            self.exit_code,
            self.signal,
            self.timed_out,
            self.faults > 0,
            &self.reason,
        ) == (o.exit_code, o.signal, o.timed_out, o.faults > 0, &o.reason)
    }
}

/// Reads a pipe to its end, keeping the last [`TAIL`] bytes.
pub fn tail_reader(r: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || read_to_end(r, false).0)
}

/// Reads standard error to its end: the last [`TAIL`] bytes, and the last [`MIOPEN_LOG`]
/// bytes of its MIOpen lines.
pub fn log_reader(r: impl Read + Send + 'static) -> JoinHandle<(Vec<u8>, Vec<u8>)> {
    std::thread::spawn(move || read_to_end(r, true))
}

/// The last [`TAIL`] bytes of `r`, and (`miopen`) the last [`MIOPEN_LOG`] bytes of its
/// MIOpen lines.
fn read_to_end(mut r: impl Read, miopen: bool) -> (Vec<u8>, Vec<u8>) {
    let (mut keep, mut log, mut line) = (Vec::new(), Vec::new(), Vec::new());
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                keep.extend_from_slice(&buf[..n]);
                if keep.len() > 2 * TAIL {
                    keep.drain(..keep.len() - TAIL);
                }
                if !miopen {
                    continue;
                }
                for &b in &buf[..n] {
                    // A line longer than the log's bound is no MIOpen line: cut it short.
                    if line.len() < MIOPEN_LOG {
                        line.push(b);
                    }
                    if b == b'\n' {
                        if is_miopen_line(&line) {
                            log.extend_from_slice(&line);
                            if log.len() > 2 * MIOPEN_LOG {
                                log.drain(..log.len() - MIOPEN_LOG);
                            }
                        }
                        line.clear();
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if is_miopen_line(&line) {
        log.extend_from_slice(&line);
    }
    let start = keep.len().saturating_sub(TAIL);
    let log_start = log.len().saturating_sub(MIOPEN_LOG);
    (keep.split_off(start), log.split_off(log_start))
}

fn joined(h: Option<JoinHandle<Vec<u8>>>) -> String {
    h.and_then(|h| h.join().ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Ends process group `pgid`: SIGTERM, then SIGKILL after [`GRACE`] if `child` is still there.
/// Returns the child's status if it could be reaped.
pub fn end_group(child: &mut Child, pgid: Pid) -> Option<ExitStatus> {
    let _ = killpg(pgid, Signal::SIGTERM);
    let t0 = Instant::now();
    while t0.elapsed() < GRACE {
        if let Ok(Some(st)) = child.try_wait() {
            // The rest of the group (children it left) goes too.
            let _ = killpg(pgid, Signal::SIGKILL);
            return Some(st);
        }
        std::thread::sleep(POLL);
    }
    let _ = killpg(pgid, Signal::SIGKILL);
    child.wait().ok()
}

/// Variables to set and to remove for a command, beyond what [`RunAs::command`] does, and
/// directories to make as the user before it starts.
#[derive(Clone, Debug, Default)]
pub struct EnvChanges {
    pub set: Vec<(OsString, OsString)>,
    pub unset: Vec<OsString>,
    /// Made with mode 0700 as the user the command runs as (never by root for them: a link
    /// in the user's path could send root's mkdir anywhere).
    pub mkdir: Vec<OsString>,
}

impl EnvChanges {
    /// Puts the changes on `cmd`: directly, or (`through_helper`: `cmd` is rdna1ctl started as
    /// root to drop root and exec the command) in [`exec_as::ENV_CHANGES`], which that process
    /// applies only after dropping root. Directories are made by the helper; without it the
    /// caller makes them ([`exec_as::make_dirs`]), as the same user.
    pub fn apply(&self, cmd: &mut Command, through_helper: bool) {
        if !through_helper {
            for k in &self.unset {
                cmd.env_remove(k);
            }
            for (k, v) in &self.set {
                cmd.env(k, v);
            }
            return;
        }
        let text = |o: &OsString| o.to_string_lossy().into_owned();
        let c = exec_as::Changes {
            set: self.set.iter().map(|(k, v)| (text(k), text(v))).collect(),
            unset: self.unset.iter().map(text).collect(),
            mkdir: self.mkdir.iter().map(text).collect(),
        };
        if c != exec_as::Changes::default() {
            cmd.env(
                exec_as::ENV_CHANGES,
                serde_json::to_string(&c).unwrap_or_default(),
            );
        }
    }
}

/// Runs `argv` as `user` (None: as this process, for tests), with stdin from /dev/null, until
/// it exits, `timeout` passes or `stop` is raised. `progress` gets a tick every second.
pub fn run(
    argv: &[OsString],
    user: Option<&RunAs>,
    timeout: Duration,
    stop: &AtomicBool,
    progress: &mut Progress,
    label: &str,
) -> Record {
    run_with(
        argv,
        user,
        &EnvChanges::default(),
        timeout,
        stop,
        None,
        progress,
        label,
    )
}

/// [`run`] with `env` applied to the command's environment, and `gpu` (if given) sampled
/// from the start until the command exits.
#[allow(clippy::too_many_arguments)]
pub fn run_with(
    argv: &[OsString],
    user: Option<&RunAs>,
    env: &EnvChanges,
    timeout: Duration,
    stop: &AtomicBool,
    mut gpu: Option<&mut GpuWork>,
    progress: &mut Progress,
    label: &str,
) -> Record {
    let mut rec = Record::default();
    let Some((prog, args)) = argv.split_first() else {
        rec.spawn_error = Some("no command to run".into());
        return rec;
    };
    let mut cmd = match user {
        Some(u) => u.command(Path::new("/proc/self/exe"), prog, args),
        None => {
            let mut cmd = Command::new(prog);
            cmd.args(args);
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
            cmd
        }
    };
    env.apply(&mut cmd, user.is_some());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            rec.spawn_error = Some(format!("could not start {}: {e}", prog.to_string_lossy()));
            return rec;
        }
    };
    let pgid = Pid::from_raw(child.id() as i32);
    if let Some(g) = gpu.as_deref_mut() {
        g.start(child.id());
    }
    let out = child.stdout.take().map(tail_reader);
    let err = child.stderr.take().map(log_reader);
    let mut last_tick = 0;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                // Whatever it left running in its group goes with it.
                let _ = killpg(pgid, Signal::SIGKILL);
                break Some(st);
            }
            Ok(None) => {}
            Err(_) => break end_group(&mut child, pgid),
        }
        if stop.load(Ordering::Relaxed) {
            rec.interrupted = true;
            break end_group(&mut child, pgid);
        }
        let elapsed = t0.elapsed();
        if elapsed >= timeout {
            rec.timed_out = true;
            break end_group(&mut child, pgid);
        }
        if elapsed.as_secs() > last_tick {
            last_tick = elapsed.as_secs();
            progress.tick(&format!("{label}: running for {last_tick} s"));
        }
        std::thread::sleep(POLL);
        if let Some(g) = gpu.as_deref_mut() {
            g.sample();
        }
    };
    rec.duration_s = (t0.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    if let Some(st) = status {
        use std::os::unix::process::ExitStatusExt;
        rec.exit_code = st.code();
        rec.signal = st.signal();
    }
    rec.stdout_tail = joined(out);
    let (err, log) = err.and_then(|h| h.join().ok()).unwrap_or_default();
    rec.stderr_tail = String::from_utf8_lossy(&err).into_owned();
    rec.miopen_log = String::from_utf8_lossy(&log).into_owned();
    // rdna1ctl, started to drop root and exec the command, could not: as a spawn error. Only
    // its exact shape (127, nothing on stdout, that one line), not a command's own exit 127.
    if user.is_some()
        && rec.exit_code == Some(exec_as::CANNOT_START)
        && rec.stdout_tail.is_empty()
        && rec.stderr_tail.lines().count() == 1
        && let Some(line) = rec
            .stderr_tail
            .trim_end()
            .strip_prefix(exec_as::CANNOT_START_MARK)
    {
        rec.spawn_error = Some(format!("could not start {line}"));
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miopen_lines_far_above_the_tail_are_kept() {
        let mut text = String::from("MIOpen(HIP): Info2 [Find] Starting find for X\n");
        for i in 0..5000 {
            text.push_str(&format!("training step {i} of a long run\n"));
        }
        text.push_str("Memory access fault by GPU node-1");
        let (tail, log) = read_to_end(text.as_bytes(), true);
        assert_eq!(tail.len(), TAIL);
        let log = String::from_utf8(log).unwrap();
        assert_eq!(
            log,
            "MIOpen(HIP): Info2 [Find] Starting find for X\nMemory access fault by GPU node-1"
        );
        assert!(read_to_end(text.as_bytes(), false).1.is_empty());
    }

    fn sh(script: &str, timeout: Duration) -> Record {
        let argv: Vec<OsString> = ["sh", "-c", script].iter().map(OsString::from).collect();
        let mut p = Progress::new(Box::new(std::io::sink()), false);
        run(&argv, None, timeout, &AtomicBool::new(false), &mut p, "t")
    }

    #[test]
    fn exit_status_and_output_tails() {
        let r = sh("echo out; echo err >&2; exit 3", Duration::from_secs(30));
        assert_eq!((r.exit_code, r.signal, r.timed_out), (Some(3), None, false));
        assert_eq!(
            (r.stdout_tail.as_str(), r.stderr_tail.as_str()),
            ("out\n", "err\n")
        );
        let r = sh(
            "head -c 100000 /dev/zero | tr '\\0' x",
            Duration::from_secs(30),
        );
        assert_eq!(r.stdout_tail.len(), TAIL);
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let marker = std::env::temp_dir().join(format!("rdna1ctl-grp-{}", std::process::id()));
        let script = format!("(sleep 2; touch {m}) & sleep 60", m = marker.display());
        let t0 = Instant::now();
        let r = sh(&script, Duration::from_millis(300));
        assert!(r.timed_out);
        assert_eq!(r.signal, Some(15), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(
            !marker.exists(),
            "the background child survived the timeout"
        );
    }

    #[test]
    fn a_command_that_does_not_exist_is_recorded() {
        let argv = vec![OsString::from("/nonexistent/rdna1-workload")];
        let mut p = Progress::new(Box::new(std::io::sink()), false);
        let r = run(
            &argv,
            None,
            Duration::from_secs(1),
            &AtomicBool::new(false),
            &mut p,
            "t",
        );
        assert!(r.spawn_error.unwrap().contains("could not start"));
        assert_eq!(r.exit_code, None);
    }

    #[test]
    fn stop_interrupts() {
        let argv: Vec<OsString> = ["sleep", "60"].iter().map(OsString::from).collect();
        let mut p = Progress::new(Box::new(std::io::sink()), false);
        let r = run(
            &argv,
            None,
            Duration::from_secs(60),
            &AtomicBool::new(true),
            &mut p,
            "t",
        );
        assert!(r.interrupted && !r.timed_out);
    }
}
