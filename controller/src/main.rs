//! `rdna1ctl`: reads and sets the policy of the `rdna1_mtype` kernel module and checks it.

use std::io::IsTerminal;
use std::process::ExitCode;

use rdna1ctl::Colors;

fn init_tracing(verbose: u8, ansi: bool) {
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
        // The subscriber colours by default, also into files and pipes.
        .with_ansi(ansi)
        .init();
}

fn main() -> ExitCode {
    // Before anything else: a static build must never load an NSS module.
    rdna1ctl::runner::user_db::files_only();
    // `report` started this process to become the invoking user and exec their command.
    if let Some(code) = rdna1ctl::runner::exec_as::exec_from_env() {
        return ExitCode::from(code);
    }
    let stdout_tty = std::io::stdout().is_terminal();
    let mut colors = Colors::decide(
        |name| std::env::var_os(name),
        stdout_tty,
        std::io::stderr().is_terminal(),
    );
    if stdout_tty {
        colors.stdout_columns = terminal_size::terminal_size_of(std::io::stdout())
            .map(|(terminal_size::Width(w), _)| usize::from(w).max(40));
    }
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr();
    let code = rdna1ctl::run(std::env::args_os(), &mut out, &mut err, colors, |cli| {
        init_tracing(cli.verbose, colors.stderr)
    });
    ExitCode::from(code)
}
