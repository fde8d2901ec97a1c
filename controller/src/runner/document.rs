//! The parts of `report`'s and `search`'s documents that say whom and what they ran.

use schemars::JsonSchema;
use serde::Serialize;

use super::interpreter::{Activated, Probe};

/// Whom the command runs as, as `run_as` prints it (the schema of
/// `runner::user::RunAs`, which a test in commands/report/json.rs serializes against it).
#[derive(JsonSchema)]
#[allow(dead_code)]
pub struct RunAsJson {
    uid: u32,
    gid: u32,
    /// Every group the command gets (the primary one included).
    groups: Vec<u32>,
    /// The user's name, or null for a uid the user database does not know.
    name: Option<String>,
    /// The user's home directory, if the user database has one.
    home: Option<String>,
    /// What named the user: `--user`, `SUDO_UID` or `PKEXEC_UID`.
    source: String,
}

/// What the runs execute.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkloadJson {
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// The shipped layer battery (no command given).
    pub default_script: bool,
    /// `--timeout`: how long one run may take, in seconds.
    pub timeout_s: f64,
    /// The active environment whose `bin` was put first on the command's PATH (sudo had
    /// reset PATH), if any.
    pub activated: Option<Activated>,
    /// What the command's Python said of itself before the runs (Python commands only).
    pub python: Option<Probe>,
    /// Whether the in-process check was loaded into the command's Python (installed).
    pub checked: bool,
}
