//! `rdna1ctl search`: runs the owner's command (default: the shipped layer battery) under one
//! GPU-side configuration after another ([`arms::plan`]) and stops at the first under which it
//! passes on the GPU (`--all`: runs them all and ranks them); prints what to keep, and with
//! `--keep FILE` writes it for `rdna1ctl run` (docs/CLI.md, search).
//!
//! A pass is the runner's verdict (runner/verdict.rs): exit 0, no GPU fault of the command's
//! processes, GPU work seen in KFD, the numbers right where checked, a bypass proven. An
//! environment that cannot run the workload (no torch, a CUDA or CPU build, no GPU visible)
//! ends the search after the baseline, incomplete, with doctor's fixes: it is no result.
//!
//! One job per file: the arms (`arms`), the document (`json`), the ranking by speed (`rank`),
//! the text (`render`); running the command and judging a run, its user, its Python, the
//! kernel log, the policy guard and the kept form are the `runner`'s, which `report` and `run`
//! share.

mod arms;
mod json;
mod miopen_log;
mod next_steps;
mod plan;
mod rank;
mod render;
mod solvers;

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
use crate::runner::changes::CheckSetup;
use crate::runner::document::WorkloadJson;
use crate::runner::execute::{self, Setup};
use crate::runner::interpreter::{self, Probe, Resolved};
use crate::runner::policy::Restore;
use crate::runner::progress::Progress;
use crate::runner::user::{self, RunAs};
use crate::runner::{doctor_fix, script, Signals};
use crate::runner::{keep, verdict};
use crate::Ctx;
use arms::Arm;
use json::{ArmJson, SearchJson};
use plan::{Planner, Seen, Situation};
use rank::Speed;

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

pub fn run(ctx: &Ctx, args: &SearchArgs, out: &mut impl Write) -> Result<Code> {
    // A file that cannot be written is said before the first run, not after an hour of them.
    if let Some(path) = &args.keep {
        keep::check_target(path)?;
    }
    let root = nix::unistd::geteuid().is_root();
    let run_as = user::for_command(args.workload.user.clone())?;
    let exe = std::env::current_exe().context("finding rdna1ctl's own binary")?;
    let given = script::argv(
        &args.workload.command,
        args.workload.python.as_deref(),
        args.workload.script.as_deref(),
        &exe,
    )?;
    let default_script = args.workload.command.is_empty();
    let resolved = Resolved::of(&given);
    let (argv, base_env) = (resolved.argv.as_slice(), &resolved.env);
    let check = script::python_dir(&exe).map(|python_dir| CheckSetup {
        python_dir,
        numerics: true,
    });
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
        no_bypass: check.is_none().then(|| {
            "MIOpen cannot be bypassed: rdna1ctl's python/sitecustomize.py is not installed \
             (reinstall rdna1-mtype)"
                .to_owned()
        }),
        only_rdna1: crate::gpus::kfd::only_rdna1(&ctx.root),
    };
    let mut planner = Planner::new(situation, args.all);
    let signals = Signals::install().context("installing signal handlers")?;
    let mut progress = Progress::stderr().named("rdna1ctl search");
    let home = run_as
        .as_ref()
        .and_then(|u| u.home.clone())
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));

    // The Python the runs use, said first: a broken one is found before any result is drawn.
    let probe = interpreter::is_python(&argv[0]).then(|| {
        Probe::ask(
            &argv[0],
            run_as.as_ref(),
            base_env,
            &signals.flag,
            &mut progress,
        )
    });
    if let Some(n) = resolved.note() {
        progress.line(&n);
    }
    if let Some(p) = &probe {
        progress.line(&format!("python: {}", p.describe()));
    }
    if check.is_none() {
        progress.line(
            "note: rdna1ctl's in-process check (python/sitecustomize.py) is not installed: \
             numbers are not checked and MIOpen cannot be bypassed",
        );
    }

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
            activated: resolved.activated.clone(),
            python: probe.clone(),
            checked: check.is_some(),
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
        passes: Vec::new(),
        settled: Default::default(),
        kept: None,
        ranking: Vec::new(),
        speed_cost: Vec::new(),
        ranking_noise: Vec::new(),
        ended: String::new(),
        untried: Vec::new(),
        next_steps: Vec::new(),
        environment: None,
        fixes: Vec::new(),
        keep_lines: Vec::new(),
        kept_to: None,
        verdict: String::new(),
        mtype_verdict: String::new(),
        error: None,
        exit_code: 0,
    };
    let setup = Setup {
        root: &ctx.root,
        argv,
        user: run_as.as_ref(),
        env: base_env,
        check: check.as_ref(),
        battery: default_script,
        stop: &signals.flag,
    };
    let search = Search {
        setup,
        args,
        stop: &signals.flag,
        probe: probe.as_ref(),
    };
    let result = match &dev {
        Some(d) => {
            let mut guard = Restore::record(d)?;
            doc.policy_before = Some(guard.before().into());
            let r = search.all(&mut planner, Some(&mut guard), &mut doc, &mut progress);
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
        None => search.all(&mut planner, None, &mut doc, &mut progress),
    };
    drop(signals);
    let base_passed = doc
        .arms
        .iter()
        .any(|a| a.arm.id == "baseline" && a.outcome == "pass");
    if doc.environment.is_some() || (doc.kept.is_none() && !base_passed && !doc.arms.is_empty()) {
        // --python as given (never the path the user's interpreter reported: doctor may run
        // it, as root).
        let python = args.workload.python.as_deref();
        doc.fixes = doctor_fix::doctor(&ctx.root, python)
            .map(|d| doctor_fix::fixes(&d))
            .unwrap_or_default();
    }
    conclude(&mut doc, home.as_deref(), args.keep.as_deref());
    let mut code = match (&result, doc.winner.is_some()) {
        (Err(e), _) => {
            doc.error = Some(exit::message(e));
            exit::code_of(e)
        }
        (Ok(()), _) if doc.ended == "interrupted" => {
            doc.error = Some("interrupted (Ctrl-C or SIGTERM): the search was cut short".into());
            Code::Error
        }
        (Ok(()), _) if doc.environment.is_some() => {
            doc.error = doc.environment.clone();
            Code::Error
        }
        (Ok(()), true) => Code::Ok,
        (Ok(()), false) => Code::Problems,
    };
    if let (Some(path), false) = (&args.keep, doc.keep_lines.is_empty()) {
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
    setup: Setup<'a>,
    args: &'a SearchArgs,
    stop: &'a AtomicBool,
    probe: Option<&'a Probe>,
}

impl Search<'_> {
    /// Runs what the planner asks until it is done (a configuration kept, or nothing left to
    /// try), the bounds, a signal, or a broken environment seen at the baseline.
    fn all(
        &self,
        planner: &mut Planner,
        mut guard: Option<&mut Restore<'_, Device>>,
        doc: &mut SearchJson,
        progress: &mut Progress,
    ) -> Result<()> {
        let t0 = Instant::now();
        let budget = Duration::from_secs_f64(self.args.budget);
        let max = self.args.max_runs;
        let mut runs = 0u32;
        let mut ended: Option<&'static str> = None;
        while let Some(arm) = planner.next() {
            if arm.skipped.is_some() {
                doc.arms.push(not_run(arm, "skipped"));
                continue;
            }
            let left = budget.saturating_sub(t0.elapsed());
            let bound = if self.stop.load(Ordering::Relaxed) {
                Some("interrupted")
            } else if runs >= max {
                Some("--max-runs reached")
            } else if left.is_zero() {
                Some("--budget spent")
            } else {
                None
            };
            if let Some(b) = bound {
                ended = Some(b);
                doc.untried.push(format!("{}: {}", arm.id, arm.what));
                break;
            }
            runs += 1;
            let full = Duration::from_secs_f64(self.args.workload.timeout);
            let timeout = full.min(left);
            progress.line(&format!("[{runs}/{max}] {}: {}", arm.id, arm.what));
            let mut r = self.one(&arm, guard.as_deref_mut(), timeout, progress)?;
            // Cut short by what was left of the budget, not by --timeout: no verdict on the arm.
            if timeout < full && r.record.as_ref().is_some_and(|x| x.timed_out) {
                r.outcome = "not_run";
                r.failure = Some("stopped when --budget ran out".into());
                ended = Some("--budget spent");
            }
            let interrupted = r.record.as_ref().is_some_and(|x| x.interrupted);
            progress.line(&format!(
                "[{runs}/{max}] {}: {}{}",
                arm.id,
                r.outcome,
                r.failure
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            ));
            // At the baseline, a Python that cannot run the workload ends the search: every
            // other arm would fail the same way, and none of it would be a result.
            let broken = (runs == 1 && r.outcome == "fail")
                .then(|| {
                    verdict::environment_problem(self.probe, r.check.as_ref(), r.battery.as_ref())
                })
                .flatten();
            if r.outcome != "not_run" {
                planner.learn(&arm, &seen(&r));
            }
            doc.arms.push(r);
            if interrupted {
                ended = Some("interrupted");
            } else if let Some(p) = broken {
                progress.line(&format!(
                    "stopped: the environment cannot run the workload: {p}"
                ));
                doc.environment = Some(p);
                ended = Some("environment cannot run the workload");
            }
            if ended.is_some() {
                break;
            }
        }
        if ended.is_some() && doc.environment.is_none() {
            doc.untried.extend(planner.untried());
            planner.cut_short();
        }
        doc.kept = planner.settled.kept.clone();
        doc.settled = planner.settled.clone().into();
        doc.passes = planner.passes().iter().map(|(a, _)| a.id.clone()).collect();
        doc.ended = ended
            .unwrap_or(match &planner.settled.kept {
                Some(_) => "a configuration kept",
                None if planner.settled.baseline_intermittent => "the baseline passed again",
                None => "nothing left to try",
            })
            .into();
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
        let mut changes = arm.changes.clone();
        changes.set.extend(arm.diagnostics.iter().cloned());
        let run = execute::execute(&self.setup, &changes, timeout, progress, &arm.id)?;
        let outcome = if run.record.interrupted {
            "not_run"
        } else if run.failure.is_none() {
            "pass"
        } else {
            "fail"
        };
        let crashed = run
            .failure
            .as_ref()
            .is_some_and(|f| f.faults > 0 || f.signal.is_some());
        let solver = (!arm.diagnostics.is_empty() && crashed)
            .then(|| miopen_log::running_solver(&run.record.miopen_log))
            .flatten();
        Ok(ArmJson {
            arm: arm.clone(),
            outcome,
            failure: run.failure.as_ref().map(|f| match &run.record.spawn_error {
                Some(e) => e.clone(),
                None => f.describe(),
            }),
            solver_at_fault: solver,
            record: Some(run.record),
            faults: run.faults,
            other_faults: run.other_faults,
            kmsg_error: run.kmsg_error,
            gpu_work: Some(run.gpu),
            check: run.check,
            battery: run.battery,
        })
    }
}

/// An arm listed without a run.
fn not_run(arm: Arm, outcome: &'static str) -> ArmJson {
    ArmJson {
        arm,
        outcome,
        failure: None,
        solver_at_fault: None,
        record: None,
        faults: Vec::new(),
        other_faults: 0,
        kmsg_error: None,
        gpu_work: None,
        check: None,
        battery: None,
    }
}

/// What a run showed that the plan reads.
fn seen(r: &ArmJson) -> Seen {
    let record = r.record.as_ref();
    Seen {
        passed: r.outcome == "pass",
        crashed: !r.faults.is_empty() || record.is_some_and(|x| x.signal.is_some()),
        miopen_log: record.map(|x| x.miopen_log.clone()).unwrap_or_default(),
        failing_kinds: r
            .check
            .as_ref()
            .map(|c| c.failing_kinds())
            .unwrap_or_default(),
        speed: Speed::of(r.battery.as_ref()).map(|s| s.median),
        facts: r
            .check
            .as_ref()
            .filter(|c| c.torch.is_some())
            .map(|c| c.facts()),
        completed: record.is_some_and(|x| x.exit_code == Some(0) && !x.timed_out),
    }
}

/// The winner's numbers in words: the battery's speed and cases, or the check's verdict on
/// the owner's command.
fn numbers(doc: &SearchJson, a: &ArmJson) -> String {
    if doc.workload.default_script {
        let cases: Vec<&serde_json::Value> = a
            .battery
            .as_ref()
            .and_then(|b| b.get("cases")?.as_array())
            .map(|c| c.iter().collect())
            .unwrap_or_default();
        let count = |f32: bool, ok: bool| {
            cases
                .iter()
                .filter(|c| (c["dtype"] == "float32") == f32 && c["ok"] == ok)
                .count()
        };
        let half = match (count(false, true), count(false, false)) {
            (0, 0) => String::new(),
            (_, 0) => ", float16 too".into(),
            (_, bad) => format!("; {bad} float16 case(s) failed: train in float32"),
        };
        return match Speed::of(a.battery.as_ref()) {
            Some(s) => format!(
                " ({} float32 layer cases right against float64{half}; {})",
                count(true, true),
                s.describe()
            ),
            None => String::new(),
        };
    }
    match &a.check {
        Some(c) if c.processes > 0 => format!(". Checked in your command's process: {}", c.verdict),
        _ => ". Your command's numbers were not checked: no Python process of it loaded \
              rdna1ctl's check (exit code, GPU work and GPU faults only)"
            .into(),
    }
}

/// The verdicts, the ranking, what to keep and, when nothing passed, what to do next.
fn conclude(doc: &mut SearchJson, home: Option<&Path>, keep_to: Option<&Path>) {
    let arms = std::mem::take(&mut doc.arms);
    // The search's own passes (not the runs that settled one).
    let searched = |a: &&ArmJson| !matches!(a.arm.step, "confirm" | "baseline-again" | "minimize");
    let passed: Vec<&ArmJson> = arms
        .iter()
        .filter(searched)
        .filter(|a| a.outcome == "pass")
        .collect();
    let (ranked, noise) = rank::rank(&passed);
    doc.ranking = ranked.iter().map(|a| a.arm.id.clone()).collect();
    doc.ranking_noise = noise;
    let baseline = arms.iter().find(|a| a.arm.id == "baseline");
    // Only a baseline that ran to its end failed; an interrupted one says nothing.
    let base_failure = baseline
        .filter(|b| b.outcome == "fail")
        .and_then(|b| b.failure.clone());
    let base_passed = baseline.is_some_and(|b| b.outcome == "pass");
    let ran = arms.iter().filter(|a| a.record.is_some()).count();
    let kept = doc.kept.clone();
    // A baseline pass is the winner, with nothing to keep.
    doc.winner = kept
        .as_ref()
        .map(|k| k.id.clone())
        .or_else(|| base_passed.then(|| "baseline".to_owned()));
    // The kept configuration's last pass: its numbers.
    let kept_run = kept.as_ref().and_then(|k| {
        arms.iter()
            .rev()
            .find(|a| a.outcome == "pass" && a.arm.changes == k.changes)
    });
    if let (Some(k), Some(run)) = (&kept, kept_run) {
        doc.speed_cost = speed_cost(&arms, k, run);
    }
    let cut_short = !doc.untried.is_empty();
    let untried = if cut_short {
        format!(
            " The search was cut short ({}): not tried: {}.",
            doc.ended,
            doc.untried.join("; ")
        )
    } else {
        String::new()
    };
    let intermittent = if doc.settled.intermittent.is_empty() {
        String::new()
    } else {
        format!(
            " Passed once, then failed (intermittent, not kept): {}.",
            doc.settled.intermittent.join("; ")
        )
    };
    doc.verdict = match (&doc.environment, &kept, &base_failure) {
        (Some(env), _, _) => format!(
            "incomplete: the environment cannot run the workload ({env}). This is no result \
             about the GPU: fix the environment (doctor's fixes below), then search again."
        ),
        _ if base_passed => format!(
            "It trains on the GPU as it is: the baseline passed{}. Nothing to change, nothing \
             to keep.",
            baseline.map(|b| numbers(doc, b)).unwrap_or_default()
        ),
        _ if doc.settled.baseline_intermittent => format!(
            "The failure is intermittent: the baseline failed ({}) and then passed when run \
             again (RDNA1 faults come and go: MIOpen #1613). A configuration that passed three \
             times proves little against that, so nothing is kept. Run `rdna1ctl report` \
             several times to see how often it fails.{intermittent}",
            base_failure.as_deref().unwrap_or("failed")
        ),
        (None, Some(k), bf) => {
            let n = plan::switch_count(&k.changes, doc.mode_in_force.or(Some("off")));
            format!(
                "{}{}made it train on the GPU: {}{}. It passed {} times{}{}.{intermittent}",
                bf.as_ref()
                    .map(|f| format!("At baseline it failed ({f}). "))
                    .unwrap_or_default(),
                match n {
                    1 => "One change ".to_owned(),
                    n => format!("{n} changes together "),
                },
                k.what,
                kept_run.map(|r| numbers(doc, r)).unwrap_or_default(),
                1 + plan::CONFIRMATIONS,
                if base_failure.is_some() {
                    " and the baseline failed again"
                } else {
                    ""
                },
                if doc.settled.dropped.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; not needed, so not kept: {}",
                        doc.settled.dropped.join(", ")
                    )
                }
            )
        }
        (None, None, bf) if doc.settled.unconfirmed.is_some() => format!(
            "{} passed once, but the search ended before it was confirmed (it must pass three \
             times, and the baseline fail again): not kept.{untried} Search again with a \
             larger bound{}.",
            doc.settled
                .unconfirmed
                .as_deref()
                .unwrap_or("a configuration"),
            bf.as_ref()
                .map(|f| format!("; baseline: {f}"))
                .unwrap_or_default()
        ),
        (None, None, bf) => format!(
            "No configuration tried made it pass ({ran} run(s){}).{intermittent}{untried} \
             Next steps below.",
            bf.as_ref()
                .map(|f| format!("; baseline: {f}"))
                .unwrap_or_default()
        ),
    };
    if doc.environment.is_none() && kept.is_none() && !base_passed {
        doc.next_steps = next_steps::next_steps(&arms, &doc.fixes);
    }
    let enforce = arms.iter().find(|a| a.arm.id == "mtype-enforce");
    let e_out = enforce.map(|e| e.outcome);
    doc.mtype_verdict = match (enforce, e_out, &base_failure) {
        _ if doc.environment.is_some() => {
            "MTYPE not tested: the environment cannot run the workload".into()
        }
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
        _ if base_passed => "MTYPE did not matter: it passed with MTYPE off".into(),
        _ if kept.is_some() => format!(
            "MTYPE not tested: the search kept {} before MTYPE's step (the plan tries MTYPE_NC \
             last; `rdna1ctl report` tests it alone)",
            doc.winner.as_deref().unwrap_or("a configuration")
        ),
        _ => "MTYPE not tested: the search ended before its arm".into(),
    };
    if let Some(k) = &kept {
        let base = keep::cache_base(home, keep_to);
        doc.keep_lines = keep::lines(&k.id, &k.what, &k.changes, &base);
    }
    drop(passed);
    drop(ranked);
    doc.arms = arms;
}

/// The kept configuration's speed against the baseline's and the full bypass's.
fn speed_cost(arms: &[ArmJson], kept: &Arm, run: &ArmJson) -> Vec<String> {
    let Some(k) = Speed::of(run.battery.as_ref()) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for (id, name) in [
        ("baseline", "baseline MIOpen"),
        ("miopen-bypassed", "MIOpen bypassed"),
    ] {
        if kept.id == id {
            continue;
        }
        if let Some(o) = arms
            .iter()
            .find(|a| a.arm.id == id && a.outcome == "pass")
            .and_then(|a| Speed::of(a.battery.as_ref()))
        {
            let noise = if k.within_noise(&o) {
                ": within noise"
            } else {
                ""
            };
            v.push(format!(
                "{} {} against {name}'s {} ({:.2}x){noise}",
                kept.id,
                k.describe(),
                o.describe(),
                k.median / o.median
            ));
        }
    }
    v
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
    use crate::runner::workload;

    fn doc_with(arms: &[(&str, &'static str, Option<&str>)]) -> SearchJson {
        SearchJson {
            rdna1ctl_version: "0",
            started_at: String::new(),
            run_as: None,
            workload: WorkloadJson {
                argv: vec![],
                default_script: true,
                timeout_s: 1.0,
                activated: None,
                python: None,
                checked: true,
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
                    solver_at_fault: None,
                    record: Some(workload::Record::default()),
                    faults: vec![],
                    other_faults: 0,
                    kmsg_error: None,
                    gpu_work: None,
                    check: None,
                    battery: None,
                })
                .collect(),
            winner: None,
            passes: vec![],
            settled: Default::default(),
            kept: None,
            ranking: vec![],
            speed_cost: vec![],
            ranking_noise: vec![],
            ended: String::new(),
            untried: vec![],
            next_steps: vec![],
            environment: None,
            fixes: vec![],
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
        conclude(&mut d, None, None);
        assert!(!d.verdict.contains("signal 15"), "{}", d.verdict);
        // A kept configuration of two switches is two changes; what was dropped is said.
        let mut d = doc_with(&[
            ("baseline", "fail", Some("exit 1")),
            ("eliminate-3", "pass", None),
        ]);
        let mut k = d.arms[1].arm.clone();
        k.changes.set = vec![
            ("MIOPEN_DEBUG_CONV_GEMM".into(), "0".into()),
            ("MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2".into(), "0".into()),
        ];
        k.changes.mtype = Some("off");
        d.arms[1].arm.changes = k.changes.clone();
        d.kept = Some(k);
        d.settled.dropped = vec!["HSA_OVERRIDE_GFX_VERSION unset".into()];
        conclude(&mut d, None, None);
        assert!(d.verdict.contains("2 changes together"), "{}", d.verdict);
        assert!(
            d.verdict.contains("not kept: HSA_OVERRIDE"),
            "{}",
            d.verdict
        );
        assert_eq!(d.winner.as_deref(), Some("eliminate-3"));
        // Nothing passed: next steps that exist, never "attach to a bug report".
        let mut d = doc_with(&[("baseline", "fail", Some("exit 1"))]);
        conclude(&mut d, None, None);
        assert!(d.verdict.contains("Next steps below"), "{}", d.verdict);
        assert!(!d.verdict.contains("bug report"), "{}", d.verdict);
        assert!(
            d.next_steps.iter().any(|n| n.contains("TheRock")),
            "{:?}",
            d.next_steps
        );
        // The baseline passing again: intermittent, nothing kept.
        let mut d = doc_with(&[("baseline", "fail", Some("exit 1"))]);
        d.settled.baseline_intermittent = true;
        conclude(&mut d, None, None);
        assert!(
            d.verdict.starts_with("The failure is intermittent"),
            "{}",
            d.verdict
        );
        assert!(d.keep_lines.is_empty());
    }

    #[test]
    fn a_broken_environment_is_incomplete_never_a_result() {
        let mut d = doc_with(&[
            ("baseline", "fail", Some("exit 1")),
            ("mtype-enforce", "not_run", None),
        ]);
        d.environment = Some("/usr/bin/python3 cannot import torch".into());
        conclude(&mut d, None, None);
        assert!(d.verdict.starts_with("incomplete:"), "{}", d.verdict);
        assert!(!d.verdict.contains("bug report"), "{}", d.verdict);
        assert!(
            !d.mtype_verdict.contains("not the cause"),
            "{}",
            d.mtype_verdict
        );
    }
}
