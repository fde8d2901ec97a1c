//! The verdict on one run, the same for `report`, `search` and `run --check`: a pass is a
//! command that exited 0 in time, with no GPU fault of its own processes in the kernel log,
//! whose processes did GPU work (KFD saw them), whose numbers were right where they were
//! checked (the battery's cases, or the in-process check's ops and compiled graphs), that did not run on the
//! CPU, and, when MIOpen was to be bypassed, that was seen bypassed.

use serde_json::Value;

use super::check::{Bypass, CheckJson};
use super::gpu_work::{GpuWork, GpuWorkJson};
use super::interpreter::Probe;
use super::kmsg::Fault;
use super::workload::{Failure, Record};

/// The faults of the command's own processes, and how many were another process's
/// (GpuWork::fault_is_commands); one that names no process may be anyone's and is counted.
pub fn own_faults(faults: Vec<Fault>, gpu: &GpuWork) -> (Vec<Fault>, usize) {
    let (own, other): (Vec<Fault>, Vec<Fault>) = faults
        .into_iter()
        .partition(|f| f.pid.is_none_or(|p| gpu.fault_is_commands(p)));
    (own, other.len())
}

/// Why the environment cannot run the workload at all, from the interpreter's answer before the
/// runs or what a run's own processes found: the check saw a failed `import torch` or a torch
/// without HIP, or the battery stopped before its cases (`import`, `device`).
pub fn environment_problem(
    probe: Option<&Probe>,
    check: Option<&CheckJson>,
    battery: Option<&Value>,
) -> Option<String> {
    if let Some(p) = probe.and_then(Probe::problem) {
        return Some(p);
    }
    if let Some(p) = check.and_then(CheckJson::environment_problem) {
        return Some(p);
    }
    let b = battery?;
    matches!(
        b.get("stage").and_then(Value::as_str),
        Some("import" | "device")
    )
    .then(|| {
        b.get("error")
            .and_then(Value::as_str)
            .unwrap_or("the battery could not start")
            .to_owned()
    })
}

/// Everything a run left to judge it by.
pub struct Evidence<'a> {
    pub record: &'a Record,
    /// The command's own faults.
    pub faults: usize,
    pub gpu: &'a GpuWorkJson,
    /// The in-process check's records (None: no check in this run).
    pub check: Option<&'a CheckJson>,
    /// The battery's JSON line, when the battery ran.
    pub battery: Option<&'a Value>,
    /// What the run asked of MIOpen's bypass.
    pub bypass: &'a Bypass,
    /// Whether it asked for kernel choices inside the program (switches.py).
    pub switches: bool,
}

/// The battery's own one-line summary when it did not pass.
fn battery_failure(b: &Value) -> Option<String> {
    if b.get("ok").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    b.get("summary")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| b.get("error").and_then(Value::as_str).map(str::to_owned))
}

/// Why the run shows no GPU work: KFD saw none of its processes; where a CUDA build stands
/// for ROCm (stand_in.rs, tests only), the check's records saw none.
fn gpu_missing(e: &Evidence) -> Option<String> {
    if super::stand_in::CUDA_FOR_ROCM && e.check.is_some_and(|c| c.cuda.is_some()) {
        return (!e.check.is_some_and(CheckJson::saw_gpu_work)).then(|| {
            "no GPU work: the check saw no op of the command on the GPU (a CUDA build standing \
             for ROCm: tests only)"
                .to_owned()
        });
    }
    e.gpu.missing()
}

/// Why the run is no pass, or None for a pass.
pub fn judge(e: &Evidence) -> Option<Failure> {
    let r = e.record;
    let mut f = Failure {
        exit_code: r.exit_code,
        signal: r.signal,
        timed_out: r.timed_out,
        faults: e.faults,
        reason: None,
    };
    let check_failure = e.check.and_then(|c| {
        c.failure(e.bypass)
            .or_else(|| c.switches_failure(e.switches))
    });
    let battery = e.battery.and_then(battery_failure);
    let ended_badly = r.exit_code != Some(0) || r.timed_out || r.signal.is_some() || e.faults > 0;
    if ended_badly {
        f.reason = check_failure.or(battery).or_else(|| {
            e.check
                .and_then(|c| c.unfinished.as_ref())
                .map(|l| format!("it stopped in {l}"))
        });
        return Some(f);
    }
    f.reason = check_failure.or(battery).or_else(|| gpu_missing(e));
    f.reason.is_some().then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::check::summarize;
    use serde_json::json;

    fn ok() -> Record {
        Record {
            exit_code: Some(0),
            ..Default::default()
        }
    }

    fn on_gpu() -> GpuWorkJson {
        GpuWorkJson {
            kfd_processes: vec![42],
            samples: 3,
            error: None,
            unproven: None,
        }
    }

    fn ev<'a>(record: &'a Record, gpu: &'a GpuWorkJson) -> Evidence<'a> {
        Evidence {
            record,
            faults: 0,
            gpu,
            check: None,
            battery: None,
            bypass: &Bypass::None,
            switches: false,
        }
    }

    #[test]
    fn exit_0_on_the_gpu_is_a_pass_and_a_silent_cpu_run_is_not() {
        let (r, g) = (ok(), on_gpu());
        assert_eq!(judge(&ev(&r, &g)), None);
        let cpu = GpuWorkJson::default();
        let f = judge(&ev(&r, &cpu)).unwrap();
        assert_eq!(f.exit_code, Some(0));
        assert!(f.describe().contains("no GPU work"), "{}", f.describe());
    }

    #[test]
    fn wrong_numbers_and_an_unproven_bypass_fail_an_exit_0() {
        let (r, g) = (ok(), on_gpu());
        let check = summarize(&[
            json!({"event": "start", "pid": 1}),
            json!({"event": "torch", "pid": 1, "torch": "2.9", "hip": "6.4"}),
            json!({"event": "op", "pid": 1, "id": 1, "kind": "Conv2d 3x3", "op": "convolution",
                   "family": "convolution", "dtype": "float32", "layout": "contiguous",
                   "device": "cuda:0", "checked": false, "backend": "Miopen",
                   "backend_family": "MIOpen"}),
            json!({"event": "returned", "pid": 1, "id": 1}),
        ]);
        let mut e = ev(&r, &g);
        e.check = Some(&check);
        assert_eq!(judge(&e), None);
        e.bypass = &Bypass::All;
        assert!(judge(&e)
            .unwrap()
            .describe()
            .contains("MIOpen bypass not shown"));
        let b = json!({"ok": false, "summary": "1 of 28 layer cases failed: BatchNorm2d ..."});
        let mut e = ev(&r, &g);
        e.battery = Some(&b);
        assert!(judge(&e).unwrap().describe().contains("BatchNorm2d"));
    }

    #[test]
    fn a_broken_environment_is_found_by_the_probe_the_check_or_the_battery() {
        assert_eq!(environment_problem(None, None, None), None);
        let probe = Probe {
            python: Some("/usr/bin/python3".into()),
            error: Some("ModuleNotFoundError: No module named 'torch'".into()),
            ..Probe::default()
        };
        assert!(environment_problem(Some(&probe), None, None)
            .unwrap()
            .contains("/usr/bin/python3 cannot import torch"));
        // A shell script that runs Python: what its processes found.
        let check = summarize(&[
            json!({"event": "start", "pid": 1}),
            json!({"event": "torch_missing", "pid": 1, "python": "/usr/bin/python3"}),
        ]);
        assert!(environment_problem(None, Some(&check), None)
            .unwrap()
            .contains("has no PyTorch"));
        let b =
            json!({"ok": false, "stage": "device", "error": "RuntimeError: PyTorch sees no GPU"});
        assert!(environment_problem(None, None, Some(&b))
            .unwrap()
            .contains("sees no GPU"));
        // A battery that got to its cases says nothing about the environment.
        let b = json!({"ok": false, "stage": "done", "error": null});
        assert_eq!(environment_problem(None, None, Some(&b)), None);
    }

    #[test]
    fn a_failed_run_says_where_it_stopped() {
        let g = on_gpu();
        let r = Record {
            signal: Some(6),
            ..Default::default()
        };
        let check = summarize(&[
            json!({"event": "start", "pid": 1}),
            json!({"event": "torch", "pid": 1, "torch": "2.9", "hip": "6.4"}),
            json!({"event": "op", "pid": 1, "id": 1, "kind": "Conv2d 1x1", "op": "convolution",
                   "family": "convolution", "dtype": "float32", "layout": "contiguous",
                   "device": "cuda:0", "checked": true}),
        ]);
        let mut e = ev(&r, &g);
        e.check = Some(&check);
        let f = judge(&e).unwrap();
        assert_eq!(
            f.describe(),
            "killed by signal 6: it stopped in Conv2d 1x1 [convolution] (float32)"
        );
    }
}
