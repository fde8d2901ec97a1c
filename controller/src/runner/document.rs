//! The parts of `report`'s and `search`'s documents that say whom and what they ran.

use schemars::JsonSchema;
use serde::Serialize;

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
    /// The shipped Conv2d script (no command given).
    pub default_script: bool,
    /// `--timeout`: how long one run may take, in seconds.
    pub timeout_s: f64,
}
