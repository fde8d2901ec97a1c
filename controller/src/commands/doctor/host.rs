//! What doctor reads from outside the root: the process environment, `rustc --version`, the
//! invoking user, and the Python interpreter's answer to where `torch` is. A trait, so unit
//! tests inject all of them; the CLI tests drive the real one through the child's environment
//! (PATH pointing at a fixture `rustc`).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The user the checks are for: the one who runs doctor, or under sudo the one who ran sudo
/// (`SUDO_UID`/`SUDO_GID`), since that is who will run the training job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
    /// Supplementary groups of the process; `None` under sudo (then read from /etc/group).
    pub groups: Option<Vec<u32>>,
    /// Whether doctor runs as root through sudo (the user is SUDO_UID).
    pub via_sudo: bool,
}

/// How long the interpreter may take to answer.
pub const PYTHON_TIMEOUT: Duration = Duration::from_secs(10);

/// What the interpreter is asked: where `torch` would be imported from, without importing it
/// (`importlib.util.find_spec` of a top-level package only searches sys.path).
pub const FIND_TORCH: &str = "import importlib.util, sys, json\n\
s = importlib.util.find_spec('torch')\n\
print(json.dumps({'torch': s.origin if s else None, 'path': sys.path, \
'version': sys.version.split()[0]}))";

pub trait Host {
    /// An environment variable of this process. ROCm reads its variables from the process
    /// that runs the workload, so doctor should run in that shell (not under plain `sudo`,
    /// which resets the environment).
    fn var(&self, name: &str) -> Option<String>;

    /// `rustc --version` of the rustc first on PATH (what Kbuild runs, as `RUSTC=rustc`),
    /// trimmed; `Err` says why there is none.
    fn rustc_version(&self) -> Result<String, String>;

    /// The invoking user.
    fn user(&self) -> User;

    /// Runs `python -c FIND_TORCH` as the invoking user (never as root for a sudo user), with
    /// [`PYTHON_TIMEOUT`]; its stdout, or why it gave none.
    fn find_torch(&self, python: &Path) -> Result<String, String>;
}

/// The real process: `std::env`, child processes, the process's credentials.
pub struct ProcessHost;

impl Host for ProcessHost {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn rustc_version(&self) -> Result<String, String> {
        let out = Command::new("rustc")
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run rustc from PATH: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`rustc --version` failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    fn user(&self) -> User {
        let euid = nix::unistd::geteuid().as_raw();
        let sudo = |n: &str| self.var(n).and_then(|v| v.parse::<u32>().ok());
        if euid == 0
            && let (Some(uid), Some(gid)) = (sudo("SUDO_UID"), sudo("SUDO_GID"))
        {
            return User {
                uid,
                gid,
                groups: None,
                via_sudo: true,
            };
        }
        User {
            uid: nix::unistd::getuid().as_raw(),
            gid: nix::unistd::getgid().as_raw(),
            groups: nix::unistd::getgroups()
                .ok()
                .map(|g| g.into_iter().map(|g| g.as_raw()).collect()),
            via_sudo: false,
        }
    }

    fn find_torch(&self, python: &Path) -> Result<String, String> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(python);
        cmd.args(["-c", FIND_TORCH])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let user = self.user();
        if user.via_sudo {
            // The user's interpreter, site-packages and .pth files are theirs: run them with
            // their credentials (std drops root's supplementary groups with the uid change).
            cmd.uid(user.uid).gid(user.gid);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    let mut out = String::new();
                    if let Some(mut s) = child.stdout.take() {
                        let _ = s.by_ref().take(1 << 20).read_to_string(&mut out);
                    }
                    return if status.success() {
                        Ok(out)
                    } else {
                        Err(format!("{} exited with {status}", python.display()))
                    };
                }
                Ok(None) if start.elapsed() > PYTHON_TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "{} gave no answer within {} s",
                        python.display(),
                        PYTHON_TIMEOUT.as_secs()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("waiting for {}: {e}", python.display())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpreter_question_fails_cleanly() {
        let h = ProcessHost;
        let e = h.find_torch(Path::new("/nonexistent/python3")).unwrap_err();
        assert!(e.contains("cannot run /nonexistent/python3"), "{e}");
        // sh cannot run Python: a non-zero exit, not a hang or a panic.
        let e = h.find_torch(Path::new("/bin/sh")).unwrap_err();
        assert!(e.contains("exited with"), "{e}");
    }

    #[test]
    fn a_real_python_answers_json() {
        let Some(py) = ["/usr/bin/python3", "/bin/python3"]
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
        else {
            return; // no Python on this machine
        };
        let out = ProcessHost.find_torch(py).expect("python3 answers");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert!(v["path"].is_array(), "{out}");
    }
}
