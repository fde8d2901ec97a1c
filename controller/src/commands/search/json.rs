//! `rdna1ctl search`'s document (`--json`): the arms, each run, and what to keep.

use schemars::JsonSchema;
use serde::Serialize;

use super::arms::Arm;
use crate::output::PolicyJson;
use crate::runner::check::CheckJson;
use crate::runner::document::{RunAsJson, WorkloadJson};
use crate::runner::gpu_work::GpuWorkJson;
use crate::runner::kmsg::Fault;
use crate::runner::user::RunAs;
use crate::runner::workload::Record;

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchJson {
    pub rdna1ctl_version: &'static str,
    /// When the search started, UTC.
    pub started_at: String,
    /// Who ran the command (null: rdna1ctl's own user, when not run as root).
    #[schemars(with = "Option<RunAsJson>")]
    pub run_as: Option<RunAs>,
    pub workload: WorkloadJson,
    /// Why the module's arms (MTYPE audit, enforce) are skipped; null if they can run.
    pub module_skipped: Option<String>,
    /// The module's mode, left in force for every run, when the search could not set it
    /// (null: no module loaded, or the search sets it per arm).
    pub mode_in_force: Option<&'static str>,
    /// `--max-runs`, `--budget`, `--all`.
    pub max_runs: u32,
    pub budget_s: f64,
    pub all: bool,
    /// The policy found before (null without the module) and whether it was put back.
    pub policy_before: Option<PolicyJson>,
    pub policy_restored: Option<bool>,
    /// Every arm planned, in order, with its run (if it ran).
    pub arms: Vec<ArmJson>,
    /// The configuration kept: it passed three times, the baseline failed again, and it has
    /// no switch its pass does not need (null: none).
    pub winner: Option<String>,
    /// The search's arms that passed, in the order found (confirmations not counted).
    pub passes: Vec<String>,
    /// What became of the configurations that passed: kept, reduced, or intermittent.
    pub settled: SettledJson,
    /// The kept configuration itself (its lines are `keep_lines`).
    #[serde(skip)]
    #[schemars(skip)]
    pub kept: Option<Arm>,
    /// The arms that passed, fastest first (the battery's median steps/s, else run time).
    pub ranking: Vec<String>,
    /// The kept configuration's speed against the baseline's and the full bypass's, where
    /// they were measured.
    pub speed_cost: Vec<String>,
    /// Neighbours in the ranking whose speeds are within noise of each other (their timed
    /// repeats overlap), in words.
    pub ranking_noise: Vec<String>,
    /// Why the search ended where it did: `a configuration kept`, `nothing left to try`,
    /// `the baseline passed again`, `--max-runs reached`, `--budget spent`, `interrupted`,
    /// `environment cannot run the workload`.
    pub ended: String,
    /// What was not tried because the search ended early (a bound, Ctrl-C), in words.
    pub untried: Vec<String>,
    /// When nothing passed: what to do next, the most likely first.
    pub next_steps: Vec<String>,
    /// Why the environment cannot run the workload (no torch, a CUDA or CPU build, no GPU
    /// visible), when the baseline showed it: the search is then incomplete, no result.
    pub environment: Option<String>,
    /// doctor's checks of the Python, ROCm and GPU access that are not ok, with their fixes
    /// (only when `environment` is set).
    pub fixes: Vec<String>,
    /// The winning configuration as environment-file lines (`rdna1ctl run --env FILE`).
    pub keep_lines: Vec<String>,
    /// The file written with `--keep`, if any.
    pub kept_to: Option<String>,
    /// What the runs show, for the owner.
    pub verdict: String,
    /// Whether MTYPE had anything to do with it.
    pub mtype_verdict: String,
    pub error: Option<String>,
    pub exit_code: u8,
}

/// One arm and its run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ArmJson {
    #[serde(flatten)]
    pub arm: Arm,
    /// `pass`, `fail`, `skipped` or `not_run` (after the search ended).
    pub outcome: &'static str,
    /// How it failed, in words, if it did.
    pub failure: Option<String>,
    /// The MIOpen solver its log shows running at the failure (elimination runs only).
    pub solver_at_fault: Option<String>,
    pub record: Option<Record>,
    /// amdgpu page faults of the command's processes the kernel log showed during the run.
    pub faults: Vec<Fault>,
    /// Faults that named another process (not counted).
    pub other_faults: usize,
    pub kmsg_error: Option<String>,
    /// The command's processes KFD saw: the proof that it did GPU work.
    pub gpu_work: Option<GpuWorkJson>,
    /// What the in-process check saw in the command's Python processes.
    pub check: Option<CheckJson>,
    /// The battery's JSON line (`ok`, `cases`, `speed`, `summary`, ...); null for a command of
    /// the owner's.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub battery: Option<serde_json::Value>,
}

/// What became of the configurations that passed.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct SettledJson {
    /// The switches dropped from the kept configuration: its pass did not need them.
    pub dropped: Vec<String>,
    /// Configurations that passed once and then failed (`ID: passed N of M`): not kept.
    pub intermittent: Vec<String>,
    /// The baseline passed when run again: the failure is intermittent and nothing is kept.
    pub baseline_intermittent: bool,
    /// A configuration that passed once, whose confirmation a bound or Ctrl-C cut short: not
    /// kept.
    pub unconfirmed: Option<String>,
}

impl From<super::plan::Settled> for SettledJson {
    fn from(s: super::plan::Settled) -> SettledJson {
        SettledJson {
            dropped: s.dropped,
            intermittent: s.intermittent,
            baseline_intermittent: s.baseline_intermittent,
            unconfirmed: s.unconfirmed,
        }
    }
}
