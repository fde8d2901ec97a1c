//! The report document (docs/CLI.md, `rdna1ctl report`), written to the file and, under
//! `--json`, to stdout, in the envelope every command's document has.

use rdna1_mtype_shared::policy::Mode;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::judge::{Judgement, Outcome};
use super::sub::SubDoc;
use crate::output::PolicyJson;
pub use crate::output::{civil, now, rfc3339};
use crate::runner::check::CheckJson;
pub use crate::runner::document::{RunAsJson, WorkloadJson};
use crate::runner::gpu_work::GpuWorkJson;
use crate::runner::kmsg::Fault;
use crate::runner::user::RunAs;
use crate::runner::workload::{Failure, Record};

/// The whole report.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReportJson {
    /// The rdna1ctl that wrote the report.
    pub rdna1ctl_version: &'static str,
    /// When the report started, UTC, `2026-11-24T12:00:00Z`.
    pub started_at: String,
    /// The running kernel's release, if readable.
    pub kernel: Option<String>,
    /// The file this document was written to.
    pub output: String,
    /// Who ran the command.
    #[schemars(with = "Option<RunAsJson>")]
    pub run_as: Option<RunAs>,
    pub workload: WorkloadJson,
    /// `rdna1ctl doctor` before the runs.
    #[schemars(schema_with = "super::sub::doctor_schema")]
    pub doctor: SubDoc,
    /// `rdna1ctl status` before the runs.
    #[schemars(schema_with = "super::sub::status_schema")]
    pub status: SubDoc,
    /// The policy found before the runs (null: the device could not be read).
    pub policy_before: Option<PolicyJson>,
    /// The policy read back after it was put back.
    pub policy_after: Option<PolicyJson>,
    /// Whether the policy was put back exactly; null when it was never changed.
    pub policy_restored: Option<bool>,
    /// One per mode run, in the order off, audit, enforce.
    pub runs: Vec<RunJson>,
    /// Ctrl-C or SIGTERM ended the experiment early.
    pub interrupted: bool,
    /// Why the environment cannot run the workload (no torch, a CUDA or CPU build, no GPU
    /// visible), when the run under off showed it: the experiment stopped there, incomplete.
    pub environment: Option<String>,
    /// doctor's checks of the Python, ROCm and GPU access that are not ok, with their fixes
    /// (only when `environment` is set).
    pub fixes: Vec<String>,
    /// Why the experiment stopped before its end (module not loaded, ...), if it did.
    pub error: Option<String>,
    /// rdna1ctl's exit code.
    pub exit_code: u8,
    #[serde(flatten)]
    pub judgement: Judgement,
}

/// One run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunJson {
    /// The mode of the run: `off`, `audit` or `enforce`.
    #[schemars(schema_with = "crate::schema::one_of::<Mode>")]
    pub mode: &'static str,
    /// The policy in force during the run, as read back.
    pub policy: PolicyJson,
    /// `pass` (exit 0, no GPU fault of its processes, GPU work seen in KFD, the numbers right
    /// where checked), `fail`, or `not_run` (interrupted, or the command could not be
    /// started).
    #[schemars(schema_with = "crate::schema::one_of::<Outcome>")]
    pub outcome: &'static str,
    /// Why it failed, in words (null: it passed or did not run).
    pub failure: Option<String>,
    /// The same, as the judgement compares failures.
    #[serde(skip)]
    pub judged: Option<Failure>,
    #[serde(flatten)]
    pub record: Record,
    /// amdgpu's page-fault reports of the command's processes in the kernel log during the
    /// run.
    pub faults: Vec<Fault>,
    /// Faults that named another process (not counted).
    pub other_faults: usize,
    /// The command's processes KFD saw: the proof that it did GPU work.
    pub gpu_work: Option<GpuWorkJson>,
    /// What the in-process check saw in the command's Python processes.
    pub check: Option<CheckJson>,
    /// The battery's JSON line, when it ran.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub battery: Option<Value>,
    /// Why the kernel log could not be read, if it could not (faults is then empty).
    pub kmsg_error: Option<String>,
    /// `rdna1ctl verify` around the run.
    #[schemars(schema_with = "super::sub::verify_schema")]
    pub verify: SubDoc,
    /// The module's decisions logged during the run (as `rdna1ctl events --json` has them in
    /// its `events`: docs/schema/events.json).
    #[schemars(schema_with = "events_schema")]
    pub events: Vec<Value>,
    /// Why the module's event log could not be read, if it could not (events is then empty).
    pub events_error: Option<String>,
}

/// `events`: the entries of an `events` document's `events`, kept as it printed them.
fn events_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {
            "description": "One entry of rdna1ctl --json events's events \
                            (docs/schema/events.json), as it printed it.",
            "type": "object",
        },
    })
}

/// The default file name for `secs`: `rdna1-report-20261124-120000.json`.
pub fn default_name(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("rdna1-report-{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}.json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::report::judge::{judge, Outcome, Verified};
    use rdna1_mtype_shared::policy::{Classes, Mode, Policy, Scope, VmScope};

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_523_696), "2026-11-24T12:34:56Z");
        assert_eq!(
            default_name(1_795_523_696),
            "rdna1-report-20261124-123456.json"
        );
    }

    #[test]
    fn the_document_shape() {
        let p = Policy {
            mode: Mode::Enforce,
            scope: Scope::Rdna1,
            classes: Classes::DEFAULT,
            vm_scope: VmScope::Compute,
        };
        let run = |mode| RunJson {
            mode,
            policy: (&p).into(),
            outcome: "pass",
            failure: None,
            judged: None,
            record: Record {
                exit_code: Some(0),
                duration_s: 1.5,
                ..Default::default()
            },
            faults: vec![],
            other_faults: 0,
            kmsg_error: None,
            gpu_work: None,
            check: None,
            battery: None,
            verify: SubDoc::default(),
            events: vec![],
            events_error: None,
        };
        let doc = ReportJson {
            rdna1ctl_version: "0.1.0",
            started_at: rfc3339(0),
            kernel: Some("7.2.0".into()),
            output: "/tmp/r.json".into(),
            run_as: Some(RunAs {
                uid: 1000,
                gid: 1000,
                groups: vec![1000, 44],
                name: Some("owner".into()),
                home: Some("/home/owner".into()),
                source: "SUDO_UID",
            }),
            workload: WorkloadJson {
                argv: vec!["true".into()],
                default_script: false,
                timeout_s: 600.0,
                activated: None,
                python: None,
                checked: true,
            },
            doctor: SubDoc::default(),
            status: SubDoc::default(),
            policy_before: Some((&p).into()),
            policy_after: Some((&p).into()),
            policy_restored: Some(true),
            runs: vec![run("off"), run("audit"), run("enforce")],
            interrupted: false,
            environment: None,
            fixes: vec![],
            error: None,
            exit_code: 0,
            judgement: judge(
                &Outcome::Pass,
                &Outcome::Pass,
                &Outcome::Pass,
                Verified::Ok,
                None,
            ),
        };
        let mut v = Vec::new();
        crate::output::json("report", &doc, &mut v).unwrap();
        let j: Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(j["command"], "report");
        assert_eq!(j["schema_version"], crate::output::JSON_SCHEMA_VERSION);
        // Valid under docs/schema/report.json (run_as is a mirror of RunAs there).
        crate::schema::assert_valid("report", &doc);
        crate::schema::assert_valid(
            "report",
            &ReportJson {
                run_as: None,
                ..doc
            },
        );
        assert_eq!(j["verdict"], "not_reproduced");
        assert!(j["summary"].as_str().unwrap().contains("did not reproduce"));
        let modes: Vec<&str> = j["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["mode"].as_str().unwrap())
            .collect();
        assert_eq!(modes, ["off", "audit", "enforce"]);
        let r = &j["runs"][2];
        for k in [
            "policy",
            "outcome",
            "exit_code",
            "signal",
            "timed_out",
            "interrupted",
            "duration_s",
            "spawn_error",
            "stdout_tail",
            "stderr_tail",
            "faults",
            "kmsg_error",
            "verify",
            "events",
            "events_error",
        ] {
            assert!(r.get(k).is_some(), "runs[] lacks {k}: {r}");
        }
        assert_eq!(r["policy"]["mode"], "enforce");
        for k in [
            "rdna1ctl_version",
            "started_at",
            "kernel",
            "output",
            "run_as",
            "workload",
            "doctor",
            "status",
            "policy_before",
            "policy_after",
            "policy_restored",
            "interrupted",
            "error",
            "exit_code",
            "notes",
        ] {
            assert!(j.get(k).is_some(), "report lacks {k}");
        }
        // snake_case keys everywhere.
        fn keys(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::Object(m) => m.iter().for_each(|(k, v)| {
                    out.push(k.clone());
                    keys(v, out)
                }),
                Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
                _ => {}
            }
        }
        let mut all = Vec::new();
        keys(&j, &mut all);
        assert!(
            all.iter().all(|k| k
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')),
            "{all:?}"
        );
    }
}
