//! What doctor reads from outside the root: the process environment and `rustc --version`.
//! A trait, so unit tests inject both; the CLI tests drive the real one through the child's
//! environment (PATH pointing at a fixture `rustc`).

use std::process::Command;

pub trait Host {
    /// An environment variable of this process. ROCm reads its variables from the process
    /// that runs the workload, so doctor should run in that shell (not under plain `sudo`,
    /// which resets the environment).
    fn var(&self, name: &str) -> Option<String>;

    /// `rustc --version` of the rustc first on PATH (what Kbuild runs, as `RUSTC=rustc`),
    /// trimmed; `Err` says why there is none.
    fn rustc_version(&self) -> Result<String, String>;
}

/// The real process: `std::env` and a `rustc` child process.
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
}
