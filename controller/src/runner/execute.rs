//! One run of the command under a configuration, and everything it is judged by: the kernel
//! log's GPU faults of its own processes, KFD's proof of GPU work, the in-process check's
//! records, the battery's JSON line, and the verdict (runner/verdict.rs). `report` and `search`
//! run the command this way; what they do between runs (the module's mode, verify) is theirs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;

use super::changes::{Changes, CheckSetup, Prepared};
use super::check::{self, CheckJson};
use super::gpu_work::{GpuWork, GpuWorkJson};
use super::kmsg::{self, Fault};
use super::progress::Progress;
use super::user::RunAs;
use super::verdict::{self, Evidence};
use super::workload::{self, EnvChanges, Failure, Record};
use crate::sysroot::SysRoot;

/// What stays the same from run to run.
pub struct Setup<'a> {
    pub root: &'a SysRoot,
    pub argv: &'a [OsString],
    pub user: Option<&'a RunAs>,
    /// Changes every run gets (the activated environment's PATH).
    pub env: &'a EnvChanges,
    /// The in-process check (None: not installed; Python commands then run unchecked).
    pub check: Option<&'a CheckSetup>,
    /// The command is the shipped battery: its JSON line is read.
    pub battery: bool,
    pub stop: &'a AtomicBool,
}

/// One run and what it showed.
pub struct Run {
    pub record: Record,
    /// The command's own GPU faults, and how many other processes had.
    pub faults: Vec<Fault>,
    pub other_faults: usize,
    pub kmsg_error: Option<String>,
    pub gpu: GpuWorkJson,
    pub check: Option<CheckJson>,
    pub battery: Option<Value>,
    /// Why it is no pass (None: a pass).
    pub failure: Option<Failure>,
}

/// The battery's JSON line: the last stdout line that parses as a JSON object.
pub fn battery_line(stdout: &str) -> Option<Value> {
    stdout
        .lines()
        .rev()
        .filter(|l| l.trim_start().starts_with('{'))
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
}

/// Runs the command once under `changes` (its mode is the caller's to set).
pub fn execute(
    s: &Setup,
    changes: &Changes,
    timeout: Duration,
    progress: &mut Progress,
    label: &str,
) -> Result<Run> {
    let prepared = Prepared::make(changes, s.user, std::env::var_os("PYTHONPATH"), s.check)?;
    let mut env = s.env.clone();
    env.set.extend(prepared.env.set.iter().cloned());
    env.unset.extend(prepared.env.unset.iter().cloned());
    let mut kmsg = kmsg::Kmsg::open(&s.root.path("/dev/kmsg"));
    let mut gpu = GpuWork::new(
        s.root.path("/sys/class/kfd/kfd/proc"),
        PathBuf::from("/proc"),
    );
    let record = workload::run_with(
        s.argv,
        s.user,
        &env,
        timeout,
        s.stop,
        Some(&mut gpu),
        progress,
        label,
    );
    let records = prepared.records();
    drop(prepared);
    let (faults, kmsg_error) = match kmsg.as_mut() {
        Ok(k) => match k.read_new() {
            Ok(lines) => (kmsg::faults(&lines), None),
            Err(e) => (Vec::new(), Some(format!("reading /dev/kmsg: {e}"))),
        },
        Err(e) => (
            Vec::new(),
            Some(format!(
                "opening /dev/kmsg: {e}: GPU faults not seen, runs judged without them"
            )),
        ),
    };
    let (faults, other_faults) = verdict::own_faults(faults, &gpu);
    let check = s.check.map(|_| check::summarize(&records));
    let battery = s
        .battery
        .then(|| battery_line(&record.stdout_tail))
        .flatten();
    let gpu = gpu.json();
    let failure = verdict::judge(&Evidence {
        record: &record,
        faults: faults.len(),
        gpu: &gpu,
        check: check.as_ref(),
        battery: battery.as_ref(),
        bypass: &check::Bypass::of(changes),
        switches: changes.switches(),
    });
    Ok(Run {
        record,
        faults,
        other_faults,
        kmsg_error,
        gpu,
        check,
        battery,
        failure,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batterys_line_is_found_after_other_output() {
        let out = "warming up\n{\"ok\": true, \"speed\": {\"steps_per_s\": 3.5}}\n";
        assert_eq!(battery_line(out).unwrap()["speed"]["steps_per_s"], 3.5);
        assert!(battery_line("no json\n[1,2]\n").is_none());
    }
}
