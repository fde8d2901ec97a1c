//! `rdna1ctl`: reads and sets the policy of the `rdna1_mtype` kernel module and checks it.

mod apply_cmd;
mod bo_layout;
mod check_kernel_cmd;
mod cli;
mod device;
mod doctor;
mod events_cmd;
mod exit;
mod gpus;
mod layout_cmd;
mod module_state;
mod output;
mod set_cmd;
mod status;
mod sysroot;
mod target;
mod verify;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser};
use rdna1_mtype_shared::policy::Mode;

use crate::cli::{Cli, Command};
use crate::exit::Code;
use crate::sysroot::SysRoot;

/// What every command gets: where to read the system from and how to print.
pub struct Ctx {
    pub root: SysRoot,
    pub json: bool,
}

fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => tracing::Level::WARN,
        1 => tracing::Level::INFO,
        2 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    };
    tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
}

fn dispatch(ctx: &Ctx, command: Command, out: &mut impl Write) -> Result<Code> {
    match command {
        Command::Status => status::run(ctx, out).map(|()| Code::Ok),
        Command::Enable { scope, classes } => {
            set_cmd::run(ctx, Some(Mode::Enforce), scope, classes, out).map(|()| Code::Ok)
        }
        Command::Disable => set_cmd::run(ctx, Some(Mode::Off), None, None, out).map(|()| Code::Ok),
        Command::Set {
            mode,
            scope,
            classes,
        } => set_cmd::run(ctx, mode, scope, classes, out).map(|()| Code::Ok),
        Command::Apply { config, dry_run } => apply_cmd::run(ctx, &config, dry_run, out),
        Command::Layout { apply } => layout_cmd::run(ctx, apply, out).map(|()| Code::Ok),
        Command::Events { follow } => events_cmd::run(ctx, follow, out).map(|()| Code::Ok),
        Command::Verify(args) => verify::run(ctx, &args, out),
        Command::Doctor => doctor::run(ctx, out),
        Command::CheckKernel { kver } => check_kernel_cmd::run(ctx, kver.as_deref(), out),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "rdna1ctl", out);
            Ok(Code::Ok)
        }
        Command::Man => {
            clap_mangen::Man::new(Cli::command())
                .section("8")
                .render(out)?;
            Ok(Code::Ok)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    let ctx = Ctx {
        root: SysRoot::new(cli.root),
        json: cli.json,
    };
    let mut out = std::io::stdout().lock();
    let result = dispatch(&ctx, cli.command, &mut out).and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            // A closed pipe (`rdna1ctl events --follow | head`) is not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("rdna1ctl: {e:#}");
            ExitCode::from(exit::code_of(&e) as u8)
        }
    }
}
