//! `rdna1ctl run --env FILE -- COMMAND`: a command started with a configuration `search --keep`
//! wrote (search/keep.rs): its variables, MIOpen bypassed if it says so, and the module's mode
//! for the command's run (root only; the policy is put back afterwards, also on Ctrl-C).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use anyhow::{Context, Result};

use crate::cli::RunArgs;
use crate::exit::{coded, Code};
use crate::module::{control, params};
use crate::runner::changes::{Changes, Prepared};
use crate::runner::keep;
use crate::runner::policy::Restore;
use crate::runner::user::{self, Invoker, RunAs};
use crate::runner::workload::EnvChanges;
use crate::runner::Signals;
use crate::Ctx;

pub fn run(ctx: &Ctx, args: &RunArgs, out: &mut impl Write) -> Result<Code> {
    let kept = keep::read(&args.env)?;
    let root = nix::unistd::geteuid().is_root();
    let run_as = if root {
        let target = user::decide(&Invoker::from_env(args.user.clone()))?;
        Some(user::resolve(&target, &user::System)?)
    } else {
        None
    };
    // The mode: set it as root; without root only run if it is already in force.
    let dev = match kept.mtype {
        Some(m) if root => Some(
            control::open(&ctx.root)
                .with_context(|| format!("{} asks for mode {}", args.env.display(), m.name()))?,
        ),
        Some(m) => {
            let now = match params::read(&ctx.root)? {
                params::ModuleState::Loaded(l) => Some(l.mode),
                params::ModuleState::NotLoaded => None,
            };
            if now != Some(m) {
                return Err(coded(
                    Code::Permission,
                    format!(
                        "{} asks for rdna1_mtype in mode {} (now {}): setting it needs root: sudo -E rdna1ctl run --env {} -- ...",
                        args.env.display(),
                        m.name(),
                        now.map_or("not loaded", |m| m.name()),
                        args.env.display()
                    ),
                ));
            }
            None
        }
        None => None,
    };
    let arm = Changes {
        miopen_bypassed: kept.miopen_bypassed,
        ..Changes::default()
    };
    let prepared = Prepared::make(&arm, run_as.as_ref(), std::env::var_os("PYTHONPATH"))?;
    let mut env = EnvChanges {
        set: kept
            .set
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect(),
        unset: kept.unset.iter().map(OsString::from).collect(),
    };
    env.set.extend(prepared.env.set.iter().cloned());
    // Private MIOpen directories the file names are made for the user, as MIOpen would.
    for (k, v) in &kept.set {
        if (k == "MIOPEN_CUSTOM_CACHE_DIR" || k == "MIOPEN_USER_DB_PATH")
            && !std::path::Path::new(v).exists()
        {
            std::fs::create_dir_all(v).with_context(|| format!("creating {v}"))?;
            if let Some(u) = &run_as {
                std::os::unix::fs::chown(v, Some(u.uid), Some(u.gid))?;
            }
        }
    }
    let signals = Signals::install().context("installing signal handlers")?;
    let mut guard = match (&dev, kept.mtype) {
        (Some(d), Some(m)) => {
            let mut g = Restore::record(d)?;
            g.set_mode(m)?;
            Some(g)
        }
        _ => None,
    };
    let status = start(&args.command, run_as.as_ref(), &env, &signals.flag);
    drop(prepared);
    let restored = guard.take().map(Restore::restore).transpose();
    drop(signals);
    restored.context("putting the policy back")?;
    let status = status?;
    out.flush()?;
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    };
    // The command's own exit code, which no `Code` names: everything is put back by now.
    std::process::exit(code)
}

/// Runs the command with the terminal's stdin, stdout and stderr until it exits. As root it
/// runs as `user` in a process group of its own (report's way of dropping root), so a Ctrl-C
/// that reaches rdna1ctl is passed on to that group.
fn start(
    argv: &[OsString],
    user: Option<&RunAs>,
    env: &EnvChanges,
    stop: &AtomicBool,
) -> Result<std::process::ExitStatus> {
    let (prog, rest) = argv.split_first().context("no command given after --")?;
    let mut cmd = match user {
        Some(u) => u.command(Path::new("/proc/self/exe"), prog, rest),
        None => {
            let mut c = Command::new(prog);
            c.args(rest);
            c
        }
    };
    for k in &env.unset {
        cmd.env_remove(k);
    }
    for (k, v) in &env.set {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| {
        coded(
            Code::Error,
            format!("could not start {}: {e}", prog.to_string_lossy()),
        )
    })?;
    let pgid = Pid::from_raw(child.id() as i32);
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st);
        }
        if user.is_some() && stop.swap(false, Ordering::Relaxed) {
            let _ = killpg(pgid, Signal::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
