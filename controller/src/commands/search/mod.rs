//! `rdna1ctl search`: runs the owner's command (default: the shipped Conv2d script) under one
//! GPU-side configuration after another ([`arms::plan`]) and stops at the first under which it
//! passes on the GPU (`--all`: runs them all and ranks them); prints what to keep, and with
//! `--keep FILE` writes it for `rdna1ctl run` (docs/CLI.md, search).
//!
//! One job per file: the arms (`arms`), the document (`json`), the text (`render`); running
//! the command, its user, the kernel log, the policy guard, what a configuration needs on
//! disk and its kept form are the `runner`'s, which `report` and `run` share.

mod arms;
mod json;
mod render;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rdna1_mtype_shared::policy::Mode;

use crate::cli::SearchArgs;
use crate::exit::{self, Code};
use crate::module::control::{self, Device};
use crate::output;
use crate::runner::changes::Prepared;
use crate::runner::document::WorkloadJson;
use crate::runner::keep;
use crate::runner::kmsg;
use crate::runner::policy::Restore;
use crate::runner::progress::Progress;
use crate::runner::user::{self, RunAs};
use crate::runner::workload::Failure;
use crate::runner::{script, workload, Signals};
use crate::Ctx;
use arms::{Arm, Situation};
use json::{ArmJson, SearchJson};

pub use json::SearchJson as Document;

/// Why the module's arms cannot run here, or None.
fn module_problem(ctx: &Ctx, root: bool) -> (Option<String>, Option<Device>) {
    if !root {
        return (
            Some("setting the module's mode needs root: sudo -E rdna1ctl search".into()),
            None,
        );
    }
    match control::open(&ctx.root) {
        Ok(d) => (None, Some(d)),
        Err(e) => (Some(exit::message(&e)), None),
    }
}

/// `10.1.0` when an RDNA1 GPU here is a gfx1011 or gfx1012: gfx1010 code runs on them (a
/// subset of their ISA), which is what doctor's `rocm.hsa_override` asks for whenever the
/// libraries have gfx1010's code and not theirs, and never judges wrong. Never a foreign ISA.
fn override_for_navi14(root: &crate::sysroot::SysRoot) -> Option<String> {
    let gpus = crate::gpus::discover(root).ok()?;
    gpus.iter()
        .filter_map(|g| g.rdna1)
        .any(|c| c.gfx_target() != "gfx1010")
        .then(|| "10.1.0".to_owned())
}

/// The shipped script's JSON line: the last stdout line that parses as a JSON object.
fn conv2d_line(stdout: &str) -> Option<serde_json::Value> {
    stdout
        .lines()
        .rev()
        .filter(|l| l.trim_start().starts_with('{'))
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(serde_json::Value::is_object)
}

/// Pass: exit 0, not timed out, no GPU fault (and for the shipped script its own verdict,
/// which exit 0 already says).
fn failure_of(r: &workload::Record, faults: usize) -> Option<String> {
    let f = Failure {
        exit_code: r.exit_code,
        signal: r.signal,
        timed_out: r.timed_out,
        faults,
    };
    if r.exit_code == Some(0) && !r.timed_out && faults == 0 {
        None
    } else if let Some(e) = &r.spawn_error {
        Some(e.clone())
    } else {
        Some(f.describe())
    }
}

pub fn run(ctx: &Ctx, args: &SearchArgs, out: &mut impl Write) -> Result<Code> {
    let root = nix::unistd::geteuid().is_root();
    let run_as = user::for_command(args.workload.user.clone())?;
    let exe = std::env::current_exe().context("finding rdna1ctl's own binary")?;
    let argv = script::argv(
        &args.workload.command,
        args.workload.python.as_deref(),
        args.workload.script.as_deref(),
        &exe,
    )?;
    let default_script = args.workload.command.is_empty();
    let (no_module, dev) = module_problem(ctx, root);
    let mode_now = match (&no_module, crate::module::params::read(&ctx.root)) {
        (Some(_), Ok(crate::module::params::ModuleState::Loaded(l))) => Some(l.mode.name()),
        _ => None,
    };
    let situation = Situation {
        no_module: no_module.clone(),
        mode_now,
        override_now: std::env::var("HSA_OVERRIDE_GFX_VERSION")
            .ok()
            .filter(|v| !v.is_empty()),
        override_advised: override_for_navi14(&ctx.root),
    };
    let plan = arms::plan(&situation);
    let signals = Signals::install().context("installing signal handlers")?;
    let mut progress = Progress::stderr().named("rdna1ctl search");
    let home = run_as
        .as_ref()
        .and_then(|u| u.home.clone())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));

    let mut doc = SearchJson {
        rdna1ctl_version: env!("CARGO_PKG_VERSION"),
        started_at: output::rfc3339(output::now()),
        run_as: run_as.clone(),
        workload: WorkloadJson {
            argv: argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            default_script,
            timeout_s: args.workload.timeout,
        },
        module_skipped: no_module,
        mode_in_force: mode_now,
        max_runs: args.max_runs,
        budget_s: args.budget,
        all: args.all,
        policy_before: None,
        policy_restored: None,
        arms: Vec::new(),
        winner: None,
        ranking: Vec::new(),
        ended: String::new(),
        keep_lines: Vec::new(),
        kept_to: None,
        verdict: String::new(),
        mtype_verdict: String::new(),
        error: None,
        exit_code: 0,
    };
    let search = Search {
        ctx,
        argv: &argv,
        run_as: run_as.as_ref(),
        args,
        stop: &signals.flag,
    };
    let result = match &dev {
        Some(d) => {
            let mut guard = Restore::record(d)?;
            doc.policy_before = Some(guard.before().into());
            let r = search.all(&plan, Some(&mut guard), &mut doc, &mut progress);
            let changed = guard.changed();
            let restored = guard.restore();
            doc.policy_restored = changed.then_some(restored.is_ok());
            if let Err(e) = &restored {
                progress.line(&format!(
                    "could NOT put the policy back: {}",
                    exit::message(e)
                ));
            }
            r.and(restored.context("putting the policy back"))
        }
        None => search.all(&plan, None, &mut doc, &mut progress),
    };
    drop(signals);
    conclude(&mut doc, home.as_deref());
    let mut code = match (&result, doc.winner.is_some()) {
        (Err(e), _) => {
            doc.error = Some(exit::message(e));
            exit::code_of(e)
        }
        (Ok(()), _) if doc.ended == "interrupted" => {
            doc.error = Some("interrupted (Ctrl-C or SIGTERM): the search was cut short".into());
            Code::Error
        }
        (Ok(()), true) => Code::Ok,
        (Ok(()), false) => Code::Problems,
    };
    if let (Some(path), Some(_)) = (&args.keep, &doc.winner) {
        match write_kept(path, &doc.keep_lines, run_as.as_ref()) {
            Ok(p) => doc.kept_to = Some(p.display().to_string()),
            Err(e) => {
                doc.error = Some(exit::message(&e));
                code = Code::Error;
            }
        }
    }
    doc.exit_code = code as u8;
    if ctx.json {
        output::json("search", &doc, out)?;
    } else {
        render::human(&doc, out)?;
    }
    Ok(code)
}

struct Search<'a> {
    ctx: &'a Ctx,
    argv: &'a [OsString],
    run_as: Option<&'a RunAs>,
    args: &'a SearchArgs,
    stop: &'a AtomicBool,
}

impl Search<'_> {
    /// Runs the plan until the first pass (unless `--all`), the bounds, or a signal.
    fn all(
        &self,
        plan: &[Arm],
        mut guard: Option<&mut Restore<'_, Device>>,
        doc: &mut SearchJson,
        progress: &mut Progress,
    ) -> Result<()> {
        let t0 = Instant::now();
        let budget = Duration::from_secs_f64(self.args.budget);
        let mut runs = 0u32;
        let mut ended = "all arms run";
        for arm in plan {
            let not_run = |outcome| ArmJson {
                arm: arm.clone(),
                outcome,
                failure: None,
                record: None,
                faults: Vec::new(),
                kmsg_error: None,
                conv2d: None,
            };
            if arm.skipped.is_some() {
                doc.arms.push(not_run("skipped"));
                continue;
            }
            if ended != "all arms run" {
                doc.arms.push(not_run("not_run"));
                continue;
            }
            if self.stop.load(Ordering::Relaxed) {
                ended = "interrupted";
                doc.arms.push(not_run("not_run"));
                continue;
            }
            if runs >= self.args.max_runs {
                ended = "--max-runs reached";
                doc.arms.push(not_run("not_run"));
                continue;
            }
            let left = budget.saturating_sub(t0.elapsed());
            if left.is_zero() {
                ended = "--budget spent";
                doc.arms.push(not_run("not_run"));
                continue;
            }
            runs += 1;
            let full = Duration::from_secs_f64(self.args.workload.timeout);
            let timeout = full.min(left);
            progress.line(&format!("[{runs}] {}: {}", arm.id, arm.what));
            let mut r = self.one(arm, guard.as_deref_mut(), timeout, progress)?;
            // Cut short by what was left of the budget, not by --timeout: no verdict on the arm.
            if timeout < full && r.record.as_ref().is_some_and(|x| x.timed_out) {
                r.outcome = "not_run";
                r.failure = Some("stopped when --budget ran out".into());
                ended = "--budget spent";
            }
            let passed = r.outcome == "pass";
            let interrupted = r.record.as_ref().is_some_and(|x| x.interrupted);
            progress.line(&format!(
                "[{runs}] {}: {}{}",
                arm.id,
                r.outcome,
                r.failure
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            ));
            doc.arms.push(r);
            if interrupted {
                ended = "interrupted";
            } else if passed && !self.args.all {
                ended = "first pass";
            }
        }
        doc.ended = ended.into();
        Ok(())
    }

    fn one(
        &self,
        arm: &Arm,
        guard: Option<&mut Restore<'_, Device>>,
        timeout: Duration,
        progress: &mut Progress,
    ) -> Result<ArmJson> {
        if let (Some(g), Some(m)) = (guard, arm.changes.mtype) {
            let mode = Mode::parse(m.as_bytes()).unwrap_or(Mode::Off);
            g.set_mode(mode)?;
        }
        let prepared = Prepared::make(&arm.changes, self.run_as, std::env::var_os("PYTHONPATH"))?;
        let mut kmsg = kmsg::Kmsg::open(&self.ctx.root.path("/dev/kmsg"));
        let record = workload::run_with(
            self.argv,
            self.run_as,
            &prepared.env,
            timeout,
            self.stop,
            progress,
            &arm.id,
        );
        drop(prepared);
        let (faults, kmsg_error) = match kmsg.as_mut() {
            Ok(k) => match k.read_new() {
                Ok(lines) => (kmsg::faults(&lines), None),
                Err(e) => (Vec::new(), Some(format!("reading /dev/kmsg: {e}"))),
            },
            Err(e) => (
                Vec::new(),
                Some(format!(
                    "opening /dev/kmsg: {e}: GPU faults not seen, runs judged by exit code"
                )),
            ),
        };
        let failure = failure_of(&record, faults.len());
        let outcome = if record.interrupted {
            "not_run"
        } else if failure.is_none() {
            "pass"
        } else {
            "fail"
        };
        let conv2d = self
            .args
            .workload
            .command
            .is_empty()
            .then(|| conv2d_line(&record.stdout_tail))
            .flatten();
        Ok(ArmJson {
            arm: arm.clone(),
            outcome,
            failure,
            record: Some(record),
            faults,
            kmsg_error,
            conv2d,
        })
    }
}

/// Steps per second of the shipped script's training, if it said.
fn steps_per_s(a: &ArmJson) -> Option<f64> {
    a.conv2d.as_ref()?.get("steps_per_s")?.as_f64()
}

/// The largest of the shipped script's relative errors (output and gradients), if it said.
fn largest_error(a: &ArmJson) -> Option<f64> {
    a.conv2d
        .as_ref()?
        .get("max_rel_error")?
        .as_object()?
        .values()
        .filter_map(serde_json::Value::as_f64)
        .reduce(f64::max)
}

/// The winner, ranking, what to keep and the verdicts.
fn conclude(doc: &mut SearchJson, home: Option<&Path>) {
    let passed: Vec<&ArmJson> = doc.arms.iter().filter(|a| a.outcome == "pass").collect();
    doc.winner = passed.first().map(|a| a.arm.id.clone());
    let mut ranked = passed.clone();
    ranked.sort_by(|a, b| {
        let key = |x: &ArmJson| {
            (
                steps_per_s(x).map(|s| -s),
                x.record.as_ref().map_or(f64::MAX, |r| r.duration_s),
            )
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    doc.ranking = ranked.iter().map(|a| a.arm.id.clone()).collect();
    let how = |a: &ArmJson| match (steps_per_s(a), largest_error(a)) {
        (Some(s), Some(e)) => format!(" ({s} steps/s; largest error against float64 {e:.1e})"),
        (Some(s), None) => format!(" ({s} steps/s)"),
        _ => String::new(),
    };
    let numbers = if doc.workload.default_script {
        ""
    } else {
        " Your own command's numbers were not checked (exit code and GPU faults only)."
    };
    let baseline = doc.arms.iter().find(|a| a.arm.id == "baseline");
    // Only a baseline that ran to its end failed; an interrupted one says nothing.
    let base_failure = baseline
        .filter(|b| b.outcome == "fail")
        .and_then(|b| b.failure.clone());
    let base_passed = baseline.is_some_and(|b| b.outcome == "pass");
    let ran = doc.arms.iter().filter(|a| a.record.is_some()).count();
    doc.verdict = match (passed.first(), &base_failure) {
        (Some(w), _) if w.arm.id == "baseline" => format!(
            "It trains on the GPU as it is: the baseline passed{}. Nothing to change.{numbers}",
            how(w)
        ),
        (Some(w), Some(bf)) => format!(
            "At baseline it failed ({bf}). {} made it train on the GPU: {}{}.{numbers}",
            if w.arm.id.contains('+') {
                "Two changes together"
            } else {
                "One change"
            },
            w.arm.what,
            how(w)
        ),
        (Some(w), None) => format!("{} passed{}.{numbers}", w.arm.what, how(w)),
        (None, bf) => format!(
            "No configuration tried made it pass ({ran} run(s){}). Attach `rdna1ctl search --all --json` to a bug report.",
            bf.as_ref().map(|f| format!("; baseline: {f}")).unwrap_or_default()
        ),
    };
    let enforce = doc.arms.iter().find(|a| a.arm.id == "mtype-enforce");
    let e_out = enforce.map(|e| e.outcome);
    doc.mtype_verdict = match (enforce, e_out, &base_failure) {
        (Some(e), Some("skipped"), _) => format!(
            "MTYPE not tested: {}",
            e.arm.skipped.as_deref().unwrap_or("skipped")
        ),
        (_, Some("pass"), Some(_)) => {
            "MTYPE mattered: with MTYPE_NC forced it passed where MTYPE off failed".into()
        }
        (Some(e), Some("fail"), Some(bf)) => format!(
            "forcing MTYPE_NC did not make it pass (MTYPE off: {bf}; enforce: {}): MTYPE is not the cause here",
            e.failure.as_deref().unwrap_or("failed")
        ),
        (Some(e), Some("fail"), None) if base_passed => format!(
            "forcing MTYPE_NC broke it: it passed with MTYPE off and failed under enforce ({})",
            e.failure.as_deref().unwrap_or("failed")
        ),
        (_, Some("pass"), None) if base_passed => {
            "MTYPE did not matter: it passed with MTYPE off and with MTYPE_NC forced".into()
        }
        _ if base_passed => "MTYPE did not matter: it passed with MTYPE off".into(),
        _ => "MTYPE not tested: the search ended before its arm".into(),
    };
    if let Some(w) = passed.first() {
        doc.keep_lines = keep::lines(&w.arm.id, &w.arm.what, &w.arm.changes, home);
    }
}

/// Writes the kept configuration to `path` (new next to it, then moved into place: never
/// through a link in a directory the user controls), owned by the user.
fn write_kept(path: &Path, lines: &[String], owner: Option<&RunAs>) -> Result<PathBuf> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().unwrap_or(Path::new("/"));
    let tmp = dir.join(format!(".rdna1ctl-keep.{}.tmp", std::process::id()));
    let text = lines.join("\n") + "\n";
    let r = (|| -> Result<()> {
        let mut f = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Some(u) = owner {
            std::os::unix::fs::fchown(&f, Some(u.uid), Some(u.gid))?;
        }
        std::fs::rename(&tmp, &path)?;
        Ok(())
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r.with_context(|| format!("writing {} (--keep)", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with(arms: &[(&str, &'static str, Option<&str>)]) -> SearchJson {
        SearchJson {
            rdna1ctl_version: "0",
            started_at: String::new(),
            run_as: None,
            workload: WorkloadJson {
                argv: vec![],
                default_script: true,
                timeout_s: 1.0,
            },
            module_skipped: None,
            mode_in_force: None,
            max_runs: 40,
            budget_s: 1.0,
            all: true,
            policy_before: None,
            policy_restored: None,
            arms: arms
                .iter()
                .map(|(id, outcome, failure)| ArmJson {
                    arm: Arm {
                        id: (*id).into(),
                        what: format!("{id} changed"),
                        ..Arm::default()
                    },
                    outcome,
                    failure: failure.map(str::to_owned),
                    record: Some(workload::Record::default()),
                    faults: vec![],
                    kmsg_error: None,
                    conv2d: None,
                })
                .collect(),
            winner: None,
            ranking: vec![],
            ended: String::new(),
            keep_lines: vec![],
            kept_to: None,
            verdict: String::new(),
            mtype_verdict: String::new(),
            error: None,
            exit_code: 0,
        }
    }

    #[test]
    fn verdicts_in_the_corners() {
        // An interrupted baseline is no failure to report.
        let mut d = doc_with(&[
            ("baseline", "not_run", Some("killed by signal 15")),
            ("miopen-bypassed", "pass", None),
        ]);
        conclude(&mut d, None);
        assert!(!d.verdict.contains("signal 15"), "{}", d.verdict);
        // Passing with MTYPE off and failing under enforce: enforce broke it.
        let mut d = doc_with(&[
            ("baseline", "pass", None),
            ("mtype-enforce", "fail", Some("exit 1")),
        ]);
        conclude(&mut d, None);
        assert!(d.mtype_verdict.contains("broke it"), "{}", d.mtype_verdict);
        // A combination is two changes, not one.
        let mut d = doc_with(&[
            ("baseline", "fail", Some("exit 1")),
            ("override-10.1.0+miopen-no-gemm", "pass", None),
        ]);
        conclude(&mut d, None);
        assert!(d.verdict.contains("Two changes together"), "{}", d.verdict);
    }

    #[test]
    fn the_scripts_line_is_found_after_other_output() {
        let out = "warming up\n{\"ok\": true, \"steps_per_s\": 3.5}\n";
        assert_eq!(conv2d_line(out).unwrap()["steps_per_s"], 3.5);
        assert!(conv2d_line("no json\n[1,2]\n").is_none());
    }

    #[test]
    fn a_pass_is_exit_0_without_faults_or_timeout() {
        let ok = workload::Record {
            exit_code: Some(0),
            ..Default::default()
        };
        assert_eq!(failure_of(&ok, 0), None);
        assert_eq!(failure_of(&ok, 1).as_deref(), Some("exit 0, 1 GPU fault"));
        let slow = workload::Record {
            timed_out: true,
            ..ok
        };
        assert_eq!(failure_of(&slow, 0).as_deref(), Some("timed out"));
    }
}
