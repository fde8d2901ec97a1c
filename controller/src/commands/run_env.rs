//! `rdna1ctl run --env FILE -- COMMAND`: a command started with a configuration `search --keep`
//! wrote (runner/keep.rs): its variables, the MIOpen cache it names made as the user, MIOpen
//! bypassed if it says so (proven after the run: the in-process check saw it), the module's
//! mode for the command's run (root only; the policy is put back afterwards, also on Ctrl-C),
//! and with `--check` every distinct GPU op and compiled graph checked against float64
//! (`--check-exit`: its verdict the exit status).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use anyhow::{Context, Result};

use crate::cli::{CheckExit, RunArgs};
use crate::exit::{coded, Code};
use crate::module::{control, params};
use crate::runner::changes::{Changes, CheckSetup, Prepared, IN_PROCESS};
use crate::runner::check;
use crate::runner::interpreter::Resolved;
use crate::runner::policy::Restore;
use crate::runner::user::{self, RunAs};
use crate::runner::workload::EnvChanges;
use crate::runner::{exec_as, keep, script};
use crate::Ctx;

/// The variables of a kept file that name directories MIOpen, Triton and Inductor write.
const CACHE_DIRS: [&str; 4] = [
    "MIOPEN_CUSTOM_CACHE_DIR",
    "MIOPEN_USER_DB_PATH",
    "TRITON_CACHE_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
];

pub fn run(ctx: &Ctx, args: &RunArgs, out: &mut impl Write) -> Result<Code> {
    let kept = keep::read(&args.env)?;
    let root = nix::unistd::geteuid().is_root();
    let run_as = user::for_command(args.user.clone())?;
    // The mode: nothing to do if it is in force already; else set it as root (and put it back
    // afterwards); without root, refuse.
    let now = match kept.mtype {
        Some(_) => match params::read(&ctx.root)? {
            params::ModuleState::Loaded(l) => Some(l.mode),
            params::ModuleState::NotLoaded => None,
        },
        None => None,
    };
    let dev = match kept.mtype {
        Some(m) if now == Some(m) => None,
        Some(m) if root => Some(
            control::open(&ctx.root)
                .with_context(|| format!("{} asks for mode {}", args.env.display(), m.name()))?,
        ),
        Some(m) => {
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
        None => None,
    };
    let exe = std::env::current_exe().context("finding rdna1ctl's own binary")?;
    let bypass = kept.miopen_bypassed || !kept.bypass_kinds.is_empty();
    let switches = kept
        .set
        .iter()
        .any(|(k, _)| IN_PROCESS.contains(&k.as_str()));
    let numerics = args.check || args.check_exit.is_some();
    let check = if bypass || switches || numerics {
        let python_dir = script::python_dir(&exe).ok_or_else(|| {
            coded(
                Code::Error,
                format!(
                    "rdna1ctl's in-process check (python/sitecustomize.py) is not installed, \
                     which {}: reinstall rdna1-mtype",
                    if bypass {
                        format!("{}'s MIOpen bypass needs", args.env.display())
                    } else if switches {
                        format!(
                            "{}'s kernel choices (RDNA1_SDPA_OFF, RDNA1_BF16_AS) need",
                            args.env.display()
                        )
                    } else {
                        "--check needs".into()
                    }
                ),
            )
        })?;
        Some(CheckSetup {
            python_dir,
            numerics,
        })
    } else {
        None
    };
    let arm = Changes {
        miopen_bypassed: kept.miopen_bypassed,
        bypass_kinds: kept.bypass_kinds.clone(),
        ..Changes::default()
    };
    let prepared = Prepared::make(
        &arm,
        run_as.as_ref(),
        std::env::var_os("PYTHONPATH"),
        check.as_ref(),
    )?;
    let resolved = Resolved::of(&args.command);
    if let Some(n) = resolved.note() {
        eprintln!("rdna1ctl run: {n}");
    }
    let Resolved { argv, mut env, .. } = resolved;
    env.set.extend(
        kept.set
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env.unset.extend(kept.unset.iter().map(OsString::from));
    env.set.extend(prepared.env.set.iter().cloned());
    env.unset.extend(prepared.env.unset.iter().cloned());
    // The cache directories the file names are made as the user (by the process that has
    // dropped root, or by this one when it runs as the user itself): never by root for them.
    env.mkdir = kept
        .set
        .iter()
        .filter(|(k, _)| CACHE_DIRS.contains(&k.as_str()))
        .map(|(_, v)| OsString::from(v))
        .collect();
    if run_as.is_none() {
        let dirs: Vec<String> = env
            .mkdir
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        exec_as::make_dirs(&dirs).map_err(|e| {
            coded(
                Code::Error,
                format!(
                    "{e}: edit {} to a directory you can write",
                    args.env.display()
                ),
            )
        })?;
    }
    // In rdna1ctl's own process group: a terminal's Ctrl-C, Ctrl-\\ and stdin reach the command
    // itself; rdna1ctl only waits (it must outlive the command to put the policy back) and
    // passes on what a terminal does not send to a group (SIGTERM, SIGHUP from kill).
    let signals = Forward::install().context("installing signal handlers")?;
    let mut guard = match (&dev, kept.mtype) {
        (Some(d), Some(m)) => {
            let mut g = Restore::record(d)?;
            g.set_mode(m)?;
            Some(g)
        }
        _ => None,
    };
    let status = start(&argv, run_as.as_ref(), &env, &signals);
    let records = prepared.records();
    drop(prepared);
    let restored = guard.take().map(Restore::restore).transpose();
    drop(signals);
    restored.context("putting the policy back")?;
    let status = status?;
    let mut check_failed = false;
    if check.is_some() {
        let c = check::summarize(&records);
        let failure = c
            .failure(&check::Bypass::of(&arm))
            .or_else(|| c.switches_failure(switches));
        let unchecked = if numerics { c.unchecked() } else { Vec::new() };
        check_failed = match args.check_exit {
            None => false,
            Some(CheckExit::Wrong) => failure.is_some(),
            Some(CheckExit::Unchecked) => failure.is_some() || !unchecked.is_empty(),
        };
        match failure {
            Some(f) => {
                eprintln!("rdna1ctl run: {f}");
                // What else it saw (the ops right and unchecked), where that is more.
                if !c.verdict.contains(&f) && !f.contains(&c.verdict) {
                    eprintln!("rdna1ctl run: {}", c.verdict);
                }
            }
            None if bypass => {
                let only = if kept.bypass_kinds.is_empty() {
                    String::new()
                } else {
                    format!(" for {} only", kept.bypass_kinds.join(", "))
                };
                eprintln!("rdna1ctl run: MIOpen bypassed{only}; {}", c.verdict)
            }
            None => eprintln!("rdna1ctl run: {}", c.verdict),
        }
    }
    out.flush()?;
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    };
    // --check-exit: a command that succeeded with a check that did not exits 3 (Problems).
    if code == 0 && check_failed {
        eprintln!(
            "rdna1ctl run: exit {} (--check-exit {}): the command exited 0, the check did not pass",
            Code::Problems as i32,
            match args.check_exit {
                Some(CheckExit::Unchecked) => "unchecked",
                _ => "wrong",
            }
        );
        std::process::exit(Code::Problems as i32)
    }
    // The command's own exit code, which no `Code` names: everything is put back by now.
    std::process::exit(code)
}

/// Signals rdna1ctl catches while the command runs: each only raises its flag.
struct Forward {
    flags: Vec<(i32, Arc<AtomicBool>)>,
    ids: Vec<signal_hook::SigId>,
}

impl Forward {
    fn install() -> Result<Forward> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
        let mut f = Forward {
            flags: Vec::new(),
            ids: Vec::new(),
        };
        for sig in [SIGINT, SIGQUIT, SIGTERM, SIGHUP] {
            let flag = Arc::new(AtomicBool::new(false));
            f.ids
                .push(signal_hook::flag::register(sig, Arc::clone(&flag))?);
            f.flags.push((sig, flag));
        }
        Ok(f)
    }

    /// The signals to pass on to the command since the last call: SIGTERM and SIGHUP (SIGINT
    /// and SIGQUIT come from the terminal, which sent them to the command too).
    fn take(&self) -> Vec<Signal> {
        self.flags
            .iter()
            .filter(|(_, f)| f.swap(false, Ordering::Relaxed))
            .filter_map(|(s, _)| Signal::try_from(*s).ok())
            .filter(|s| matches!(s, Signal::SIGTERM | Signal::SIGHUP))
            .collect()
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Runs the command with the terminal's stdin, stdout and stderr until it exits, as `user`
/// when root runs it for someone (through rdna1ctl itself, which drops root and then applies
/// the file's variables), in rdna1ctl's own process group.
fn start(
    argv: &[OsString],
    user: Option<&RunAs>,
    env: &EnvChanges,
    signals: &Forward,
) -> Result<std::process::ExitStatus> {
    let (prog, rest) = argv.split_first().context("no command given after --")?;
    let mut cmd = match user {
        Some(u) => u.command_in_my_group(Path::new("/proc/self/exe"), prog, rest),
        None => {
            let mut c = Command::new(prog);
            c.args(rest);
            c
        }
    };
    env.apply(&mut cmd, user.is_some());
    let mut child = cmd.spawn().map_err(|e| {
        coded(
            Code::Error,
            format!("could not start {}: {e}", prog.to_string_lossy()),
        )
    })?;
    let pid = Pid::from_raw(child.id() as i32);
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(st);
        }
        for sig in signals.take() {
            let _ = kill(pid, sig);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
