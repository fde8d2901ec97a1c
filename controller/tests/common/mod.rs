//! What the CLI tests share: running the built rdna1ctl as a process.

use std::process::{Command, Output};

/// rdna1ctl with `args`, never under a root inherited from the environment.
pub fn rdna1ctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(args)
        .env_remove("RDNA1CTL_ROOT")
        .output()
        .expect("run rdna1ctl")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
