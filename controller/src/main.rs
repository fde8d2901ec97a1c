//! `rdna1ctl`: reads and sets the policy of the `rdna1_mtype` kernel module and checks it.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use rdna1ctl::cli::Cli;
use rdna1ctl::sysroot::SysRoot;
use rdna1ctl::{commands, exit, Ctx};

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    let ctx = Ctx {
        root: SysRoot::new(cli.root),
        json: cli.json,
    };
    let mut out = std::io::stdout().lock();
    let result = commands::run(&ctx, cli.command, &mut out).and_then(|code| {
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
