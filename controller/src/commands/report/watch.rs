//! `rdna1ctl verify` around a run, as a child process (`--json verify --until-interrupt`, in a
//! process group of its own so that only the report stops it): started before the command,
//! awaited until its tracefs instance traces, stopped with SIGTERM after the command, its
//! document kept.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::sub::SubDoc;
use crate::runner::workload::tail_reader;
use crate::trace::tracefs::INSTANCE_PREFIX;

/// How long verify may take to start tracing, and to stop.
const START: Duration = Duration::from_secs(30);
const STOP: Duration = Duration::from_secs(30);

pub struct Watch {
    child: Child,
    out: Option<JoinHandle<Vec<u8>>>,
    err: Option<JoinHandle<Vec<u8>>>,
}

/// The instance's event switch, which reads 1 once verify traces.
fn enable_file(tracefs: &Path, pid: u32) -> PathBuf {
    tracefs
        .join("instances")
        .join(format!("{INSTANCE_PREFIX}{pid}"))
        .join("events/amdgpu/amdgpu_vm_update_ptes/enable")
}

impl Watch {
    /// Starts `exe --json [--root ROOT] verify --until-interrupt` and waits until it traces
    /// (its instance's event enabled under `tracefs`), it ends, or `stop` is raised.
    pub fn start(
        exe: &Path,
        root: Option<&Path>,
        tracefs: Option<&Path>,
        stop: &AtomicBool,
    ) -> Result<Watch, String> {
        let mut args: Vec<OsString> = vec!["--json".into()];
        if let Some(r) = root {
            args.push("--root".into());
            args.push(r.into());
        }
        args.extend(["verify".into(), "--until-interrupt".into()]);
        let mut cmd = Command::new(exe);
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("could not start {} verify: {e}", exe.display()))?;
        let out = child.stdout.take().map(tail_reader);
        let err = child.stderr.take().map(tail_reader);
        let mut w = Watch { child, out, err };
        if let Some(t) = tracefs {
            let file = enable_file(t, w.child.id());
            let t0 = Instant::now();
            while t0.elapsed() < START && !stop.load(Ordering::Relaxed) {
                let on = std::fs::read_to_string(&file).is_ok_and(|s| s.trim() == "1");
                if on {
                    break;
                }
                // An early end is read by `finish` (the status stays with the child).
                if !matches!(w.child.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(w)
    }

    /// Stops verify (SIGTERM; SIGKILL if it has not ended within 30 s) and takes its document.
    pub fn finish(mut self) -> SubDoc {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = kill(pid, Signal::SIGTERM);
        let t0 = Instant::now();
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if t0.elapsed() < STOP => std::thread::sleep(Duration::from_millis(50)),
                _ => {
                    let _ = kill(pid, Signal::SIGKILL);
                    break self.child.wait().ok();
                }
            }
        };
        let out = self
            .out
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let err = self
            .err
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let code = status.and_then(|s| s.code()).map(|c| c as u8);
        SubDoc::from_output(code, &out, &err)
    }
}
