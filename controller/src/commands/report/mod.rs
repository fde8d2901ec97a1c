//! `rdna1ctl report`: the experiment an RDNA1 owner can run and attach to a bug. doctor and
//! status, then the owner's command (default: the shipped layer battery) under mode off,
//! audit and enforce, each with verify, the module's events, the kernel log's GPU faults of
//! the command's processes, KFD's proof of GPU work and the in-process check around it; one
//! JSON file and a summary of what the runs show (docs/CLI.md, report). A Python that cannot
//! run the workload (no torch, a CUDA or CPU build, no GPU) stops it after the run under off:
//! incomplete, with doctor's fixes, never a verdict on MTYPE.
//!
//! One job per file here: verify around a run (`watch`), the other commands' documents
//! (`sub`), the conclusion (`judge`), the document (`json`), the text (`render`); who runs the
//! command, which command and Python, running and judging one run, the kernel log and the
//! policy put back are the `runner`'s.

pub mod json;
pub mod judge;
mod render;
mod sub;
mod watch;

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rdna1_mtype_shared::policy::Mode;

use crate::cli::ReportArgs;
use crate::exit::{self, coded, Code};
use crate::module::control::{self, Device};
use crate::output;
use crate::runner::changes::{Changes, CheckSetup};
use crate::runner::execute::{self, Setup};
use crate::runner::interpreter::{self, Probe, Resolved};
use crate::runner::policy::Restore;
use crate::runner::progress::Progress;
use crate::runner::user::{self, Invoker, RunAs};
use crate::runner::workload::EnvChanges;
use crate::runner::{doctor_fix, script, verdict, Signals};
use crate::trace::tracefs::Tracefs;
use crate::Ctx;
use json::{ReportJson, RunJson, WorkloadJson};
use judge::{Failure, Outcome, Verified};
use sub::SubDoc;

/// The report file, created (new, next to its final name) before anything runs, so that a
/// path that cannot be written fails first; moved into place at the end. Writing root's file
/// into a directory the user controls this way never follows a link the user put there.
struct ReportFile {
    tmp: PathBuf,
    file: File,
    path: PathBuf,
}

impl ReportFile {
    fn create(path: PathBuf) -> Result<ReportFile> {
        let dir = path.parent().unwrap_or(Path::new("/"));
        let name = path.file_name().map_or_else(
            || "rdna1-report".into(),
            |n| n.to_string_lossy().into_owned(),
        );
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| {
                coded(
                    Code::Error,
                    format!(
                        "cannot write the report next to {}: {e}: give --output PATH in a \
                         directory root can write",
                        path.display()
                    ),
                )
            })?;
        Ok(ReportFile { tmp, file, path })
    }

    /// Writes `doc`, gives the file to `owner` (the user who asked for it) and moves it into
    /// place.
    fn finish(mut self, doc: &ReportJson, owner: Option<&RunAs>) -> Result<()> {
        let mut buf = Vec::new();
        output::json("report", doc, &mut buf)?;
        let r = (|| -> Result<()> {
            self.file.write_all(&buf)?;
            self.file.sync_all()?;
            if let Some(u) = owner {
                std::os::unix::fs::fchown(&self.file, Some(u.uid), Some(u.gid))?;
            }
            std::fs::rename(&self.tmp, &self.path)?;
            Ok(())
        })();
        if r.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        r.with_context(|| format!("writing {}", self.path.display()))
    }

    fn abandon(self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Everything a run needs.
struct Experiment<'a> {
    ctx: &'a Ctx,
    exe: PathBuf,
    argv: Vec<OsString>,
    run_as: RunAs,
    timeout: Duration,
    stop: Arc<AtomicBool>,
    tracefs: Option<PathBuf>,
    /// The activated environment's PATH (sudo reset it), for every run.
    env: EnvChanges,
    check: Option<CheckSetup>,
    battery: bool,
    probe: Option<Probe>,
}

pub fn run(ctx: &Ctx, args: &ReportArgs, out: &mut impl Write) -> Result<Code> {
    if !nix::unistd::geteuid().is_root() {
        return Err(coded(
            Code::Permission,
            "report needs root (it sets the policy and traces GPU page-table updates): run \
             `sudo -E rdna1ctl report`; your command still runs as you",
        ));
    }
    let target = user::decide(&Invoker::from_env(args.workload.user.clone()))?;
    let run_as = user::resolve(&target, &user::System)?;
    let exe = std::env::current_exe().context("finding rdna1ctl's own binary (for verify)")?;
    let given = script::argv(
        &args.workload.command,
        args.workload.python.as_deref(),
        args.workload.script.as_deref(),
        &exe,
    )?;
    let resolved = Resolved::of(&given);
    let activated_note = resolved.note();
    let Resolved {
        argv,
        env: base_env,
        activated,
    } = resolved;
    let check = script::python_dir(&exe).map(|python_dir| CheckSetup {
        python_dir,
        numerics: true,
    });
    let started = json::now();
    // A directory gets the file under its default name, as `cp FILE DIR` does.
    let path = match args.output.clone() {
        Some(dir) if dir.is_dir() => dir.join(json::default_name(started)),
        Some(file) => file,
        None => PathBuf::from(json::default_name(started)),
    };
    let path = std::path::absolute(&path).unwrap_or(path);
    let file = ReportFile::create(path.clone())?;
    let signals = match Signals::install() {
        Ok(s) => s,
        Err(e) => {
            file.abandon();
            return Err(e.context("installing signal handlers"));
        }
    };
    let mut progress = Progress::stderr();
    if let Some(n) = &activated_note {
        progress.line(n);
    }
    // The Python the runs use, said first (and the one doctor judges).
    let probe = interpreter::is_python(&argv[0]).then(|| {
        Probe::ask(
            &argv[0],
            Some(&run_as),
            &base_env,
            &signals.flag,
            &mut progress,
        )
    });
    if let Some(p) = &probe {
        progress.line(&format!("python: {}", p.describe()));
    }

    let mut doc = ReportJson {
        rdna1ctl_version: env!("CARGO_PKG_VERSION"),
        started_at: json::rfc3339(started),
        kernel: ctx
            .root
            .read_attr(&ctx.root.path("/proc/sys/kernel/osrelease"))
            .ok()
            .flatten(),
        output: path.display().to_string(),
        run_as: Some(run_as.clone()),
        workload: WorkloadJson {
            argv: argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            default_script: args.workload.command.is_empty(),
            timeout_s: args.workload.timeout,
            activated: activated.clone(),
            python: probe.clone(),
            checked: check.is_some(),
        },
        doctor: SubDoc::default(),
        status: SubDoc::default(),
        policy_before: None,
        policy_after: None,
        policy_restored: None,
        runs: Vec::new(),
        interrupted: false,
        environment: None,
        fixes: Vec::new(),
        error: None,
        exit_code: 0,
        judgement: judge::judge(
            &Outcome::NotRun,
            &Outcome::NotRun,
            &Outcome::NotRun,
            Verified::Unknown,
            None,
        ),
    };
    progress.line("doctor");
    // Doctor judges the Python --python names (else it finds one as it always does); never
    // the path the user's own interpreter reported, which doctor may run as root.
    let python = args
        .workload
        .python
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    let mut doctor_args = vec!["doctor"];
    if let Some(p) = &python {
        doctor_args.extend(["--python", p.as_str()]);
    }
    doc.doctor = sub::run_json(&ctx.root, &doctor_args);
    progress.line("status");
    doc.status = sub::run_json(&ctx.root, &["status"]);

    let exp = Experiment {
        ctx,
        exe,
        argv,
        run_as,
        timeout: Duration::try_from_secs_f64(args.workload.timeout)
            .unwrap_or(Duration::from_secs(600)),
        stop: Arc::clone(&signals.flag),
        tracefs: Tracefs::locate(&ctx.root).ok().map(|t| t.dir().to_owned()),
        env: base_env,
        check,
        battery: args.workload.command.is_empty(),
        probe,
    };
    let code = match exp.all_runs(&mut doc, &mut progress) {
        Ok(()) if doc.interrupted => {
            doc.error = Some("interrupted (Ctrl-C or SIGTERM): the runs were cut short".into());
            Code::Error
        }
        Ok(()) if doc.environment.is_some() => {
            doc.error = Some(format!(
                "the environment cannot run the workload: {}",
                doc.environment.as_deref().unwrap_or("")
            ));
            doc.fixes = doc
                .doctor
                .document
                .as_ref()
                .map(doctor_fix::fixes)
                .unwrap_or_default();
            Code::Error
        }
        Ok(()) => Code::Ok,
        Err(e) => {
            doc.error = Some(exit::message(&e));
            exit::code_of(&e)
        }
    };
    drop(signals);
    doc.exit_code = code as u8;
    let verified = match doc.runs.iter().find(|r| r.mode == "enforce") {
        Some(r) => match r.verify.str_field("result") {
            Some("ok") => Verified::Ok,
            Some(_) => Verified::Violations,
            None => Verified::Unknown,
        },
        None => Verified::Unknown,
    };
    let outcome = |mode: &str| {
        doc.runs
            .iter()
            .find(|r| r.mode == mode)
            .map_or(Outcome::NotRun, run_outcome)
    };
    doc.judgement = judge::judge(
        &outcome("off"),
        &outcome("audit"),
        &outcome("enforce"),
        verified,
        doc.environment.as_deref(),
    );

    let written = file.finish(&doc, exp.run_as_owner());
    if ctx.json {
        output::json("report", &doc, out)?;
    } else {
        render::human(&doc, out)?;
    }
    if let Some(e) = &doc.error {
        progress.line(&format!("stopped: {e}"));
    }
    written?;
    Ok(code)
}

/// A run's outcome as the judgement sees it: an interrupted run, or a command that could not
/// be started, did not happen (the experiment stops there); otherwise the runner's verdict.
fn run_outcome(r: &RunJson) -> Outcome {
    if r.record.interrupted || r.record.spawn_error.is_some() {
        return Outcome::NotRun;
    }
    match &r.judged {
        Some(f) => Outcome::Fail(f.clone()),
        None => Outcome::Pass,
    }
}

impl Experiment<'_> {
    fn run_as_owner(&self) -> Option<&RunAs> {
        Some(&self.run_as)
    }

    /// Opens the device, records the policy, runs every mode and puts the policy back
    /// (whatever happened), recording each step in `doc`.
    fn all_runs(&self, doc: &mut ReportJson, progress: &mut Progress) -> Result<()> {
        let dev = control::open(&self.ctx.root).map_err(|e| match exit::code_of(&e) {
            Code::NoModule => coded(
                Code::NoModule,
                format!(
                    "{}: nothing was run (the report holds doctor and status)",
                    exit::message(&e)
                ),
            ),
            _ => e,
        })?;
        let mut guard = Restore::record(&dev)?;
        doc.policy_before = Some(guard.before().into());
        let runs = self.runs(&mut guard, doc, progress);
        let changed = guard.changed();
        let restored = guard.restore();
        doc.policy_restored = changed.then_some(restored.is_ok());
        doc.policy_after = Device::policy(&dev).ok().map(|p| (&p).into());
        match &restored {
            Ok(()) if !changed => {}
            Ok(()) => progress.line(&format!(
                "policy put back (mode {})",
                doc.policy_before.as_ref().map_or("?", |p| p.mode)
            )),
            Err(e) => progress.line(&format!(
                "could NOT put the policy back: {}",
                exit::message(e)
            )),
        }
        runs?;
        restored.context("putting the policy back")
    }

    fn runs(
        &self,
        guard: &mut Restore<'_, Device>,
        doc: &mut ReportJson,
        progress: &mut Progress,
    ) -> Result<()> {
        for mode in [Mode::Off, Mode::Audit, Mode::Enforce] {
            if self.stop.load(Ordering::Relaxed) {
                doc.interrupted = true;
                break;
            }
            let policy = guard.set_mode(mode)?;
            let run = self.one_run(mode, (&policy).into(), progress)?;
            let interrupted = run.record.interrupted;
            let spawn_error = run.record.spawn_error.clone();
            // A Python that cannot run the workload fails the same way under every mode: the
            // experiment stops after off, and no verdict on MTYPE is drawn from it.
            let broken = (mode == Mode::Off && run.outcome == "fail")
                .then(|| {
                    verdict::environment_problem(
                        self.probe.as_ref(),
                        run.check.as_ref(),
                        run.battery.as_ref(),
                    )
                })
                .flatten();
            doc.runs.push(run);
            if interrupted {
                doc.interrupted = true;
                break;
            }
            if let Some(p) = broken {
                progress.line(&format!(
                    "stopped: the environment cannot run the workload: {p}"
                ));
                doc.environment = Some(p);
                break;
            }
            // A command that cannot start will not start under the next mode either.
            if let Some(e) = spawn_error {
                return Err(coded(
                    Code::Error,
                    format!(
                        "{e} (as {}): give a command that user can run (a full path, or sudo -E \
                         for your PATH)",
                        self.run_as.describe()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// One run under `mode`: verify started, the kernel log and the module's log marked, the
    /// command run and judged (runner/execute.rs), then what verify and the module saw.
    fn one_run(
        &self,
        mode: Mode,
        policy: output::PolicyJson,
        progress: &mut Progress,
    ) -> Result<RunJson> {
        let root = &self.ctx.root;
        let label = mode.name();
        let (_, logged_before, _) = sub::events_since(root, u64::MAX);
        progress.line(&format!("{label}: starting verify"));
        let base = (!root.is_host()).then(|| root.base());
        let watch = watch::Watch::start(&self.exe, base, self.tracefs.as_deref(), &self.stop);
        progress.line(&format!("{label}: running {}", self.argv_text()));
        let setup = Setup {
            root,
            argv: &self.argv,
            user: Some(&self.run_as),
            env: &self.env,
            check: self.check.as_ref(),
            battery: self.battery,
            stop: &self.stop,
        };
        let ran = execute::execute(&setup, &Changes::default(), self.timeout, progress, label)?;
        let verify = match watch {
            Ok(w) => w.finish(),
            Err(e) => SubDoc {
                error: Some(e),
                ..SubDoc::default()
            },
        };
        let (events_doc, _, events) = sub::events_since(root, logged_before.unwrap_or(0));
        let events_error = match logged_before {
            Some(_) => events_doc.error.clone(),
            None => Some("the module's event log could not be read before the run".into()),
        };
        let mut run = RunJson {
            mode: label,
            policy,
            outcome: "",
            failure: ran.failure.as_ref().map(Failure::describe),
            judged: ran.failure,
            record: ran.record,
            faults: ran.faults,
            other_faults: ran.other_faults,
            kmsg_error: ran.kmsg_error,
            gpu_work: Some(ran.gpu),
            check: ran.check,
            battery: ran.battery,
            verify,
            events,
            events_error,
        };
        let o = run_outcome(&run);
        run.outcome = o.name();
        let how = match &o {
            Outcome::Fail(f) => format!(" ({})", f.describe()),
            _ => String::new(),
        };
        progress.line(&format!(
            "{label}: {}{how} in {:.1} s; verify {}; {} GPU faults; {} module events",
            run.outcome,
            run.record.duration_s,
            run.verify.str_field("result").unwrap_or("gave no result"),
            run.faults.len(),
            run.events.len()
        ));
        Ok(run)
    }

    fn argv_text(&self) -> String {
        let a: Vec<String> = self
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        format!("{} as {}", a.join(" "), self.run_as.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::workload::{self, Failure};
    use rdna1_mtype_shared::policy::Policy;

    fn run(record: workload::Record, judged: Option<Failure>) -> RunJson {
        RunJson {
            mode: "off",
            policy: (&Policy::DEFAULT).into(),
            outcome: "",
            failure: judged.as_ref().map(Failure::describe),
            judged,
            record,
            faults: vec![],
            other_faults: 0,
            kmsg_error: None,
            gpu_work: None,
            check: None,
            battery: None,
            verify: SubDoc::default(),
            events: vec![],
            events_error: None,
        }
    }

    #[test]
    fn a_run_that_did_not_happen_is_not_judged() {
        let ok = workload::Record {
            exit_code: Some(0),
            ..Default::default()
        };
        assert_eq!(run_outcome(&run(ok.clone(), None)), Outcome::Pass);
        let faulted = Failure {
            exit_code: Some(0),
            faults: 2,
            ..Default::default()
        };
        assert_eq!(run_outcome(&run(ok.clone(), Some(faulted))).name(), "fail");
        let cut = workload::Record {
            interrupted: true,
            ..ok.clone()
        };
        assert_eq!(run_outcome(&run(cut, None)), Outcome::NotRun);
        let never = workload::Record {
            exit_code: None,
            spawn_error: Some("could not start x: No such file or directory".into()),
            ..ok
        };
        assert_eq!(run_outcome(&run(never, None)), Outcome::NotRun);
    }
}
