//! `rdna1ctl` as a library: the binary (`main.rs`) is [`run`] on the process's arguments, which
//! parses the command line, checks `--root` and hands the command to [`commands::run`]. Data flows one way: a command reads the system through the domain
//! modules below and prints through [`output`]; no command imports another
//! (docs/ARCHITECTURE.md).

// Domain: what the system is and what the module does. They never import `commands`.
pub mod btf;
pub mod config;
pub mod exit;
pub mod gpus;
pub mod module;
pub mod output;
pub mod runner;
pub mod schema;
pub mod sysroot;
pub mod trace;
pub mod wrap;

// The command line and one module per command.
pub mod cli;
pub mod commands;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command};
use crate::exit::{coded, Code};
use crate::sysroot::SysRoot;

/// What every command gets: where to read the system from and how to print.
pub struct Ctx {
    pub root: SysRoot,
    pub json: bool,
}

/// Whether each output stream is a terminal: ANSI colour only goes to one that is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Colors {
    pub stdout: bool,
    pub stderr: bool,
    /// The width of stdout's terminal, when it is one: text is fitted to it (`wrap`).
    pub stdout_columns: Option<usize>,
}

impl Colors {
    /// Colour for each stream that is a terminal (`stdout_tty`, `stderr_tty`), unless `env`
    /// (a variable's value by name) has a non-empty NO_COLOR (no-color.org) or TERM=dumb, a
    /// terminal that shows escapes as text.
    pub fn decide(
        env: impl Fn(&str) -> Option<OsString>,
        stdout_tty: bool,
        stderr_tty: bool,
    ) -> Self {
        let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = env("TERM").is_some_and(|v| v == "dumb");
        let on = !no_color && !dumb;
        Colors {
            stdout: on && stdout_tty,
            stderr: on && stderr_tty,
            stdout_columns: None,
        }
    }
}

/// One run of rdna1ctl on `args` (program name first), printing to `out` and `err`; returns
/// the exit code (docs/CLI.md, "Exit codes"). `setup` sees the parsed command line before
/// anything runs (`main` starts tracing there). Never panics on any argument vector (a
/// property test runs it on arbitrary ones).
pub fn run<I, T>(
    args: I,
    out: &mut impl Write,
    err: &mut impl Write,
    colors: Colors,
    setup: impl FnOnce(&Cli),
) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let out = &mut output::Named::new(out, "standard output");
    let cli = match parse(&args) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e, json_requested(&args), out, err, colors),
    };
    setup(&cli);
    let json = cli.json;
    // Text on a terminal is fitted to it; documents, scripts and roff never are.
    let fitted = match (colors.stdout_columns, &cli.command) {
        (_, Command::Completions { .. } | Command::Man { .. }) => None,
        (Some(columns), _) if !json => Some(columns),
        _ => None,
    };
    let mut wrapped;
    let mut out: &mut dyn Write = match fitted {
        Some(columns) => {
            wrapped = wrap::Wrap::new(&mut *out, columns);
            &mut wrapped
        }
        None => out,
    };
    let result = execute(cli, &mut out).and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code as u8,
        Err(e) => report_error(&e, json, &mut out, err),
    }
}

/// The command line.
fn parse(args: &[OsString]) -> Result<Cli, clap::Error> {
    let matches = Cli::command().try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// The variable that gives `--root`'s default.
pub const ROOT_ENV: &str = "RDNA1CTL_ROOT";

/// Where to read the system from: `--root`, else a non-empty `RDNA1CTL_ROOT` (`env`, given
/// so that tests need not touch the process's environment), else `/`; and whether it came
/// from the variable (errors then name it).
fn resolve_root(option: Option<PathBuf>, env: Option<OsString>) -> (PathBuf, bool) {
    match (option, env) {
        (Some(dir), _) => (dir, false),
        (None, Some(dir)) if !dir.is_empty() => (PathBuf::from(dir), true),
        _ => (PathBuf::from("/"), false),
    }
}

/// Whether `--json` is among the options (before `--`), for a command line clap refused.
fn json_requested(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

/// clap's answer to a command line it did not run: `--help` and `--version` on `out` (exit
/// 0), errors on `err`, or under `--json` as an error document on `out` (exit 2).
fn usage_error(
    e: &clap::Error,
    json: bool,
    out: &mut impl Write,
    err: &mut impl Write,
    colors: Colors,
) -> u8 {
    let code = u8::try_from(e.exit_code()).unwrap_or(Code::Usage as u8);
    let styled = e.render();
    // Write errors are ignored: there is nowhere left to say them.
    if !e.use_stderr() {
        let _ = match colors.stdout {
            true => write!(out, "{}", styled.ansi()),
            false => write!(out, "{styled}"),
        };
        let _ = out.flush();
        return code;
    }
    let _ = match colors.stderr {
        true => write!(err, "{}", styled.ansi()),
        false => write!(err, "{styled}"),
    };
    if json {
        // clap's first line, without its "error: " prefix; the usage lines are for people.
        let text = styled.to_string();
        let first = text.lines().next().unwrap_or_default();
        let message = first.strip_prefix("error: ").unwrap_or(first);
        let _ = output::json_error(message, code, out);
        let _ = out.flush();
    }
    code
}

/// Checks the root, says which one is in use when it is not `/`, and runs the command.
fn execute(cli: Cli, out: &mut impl Write) -> anyhow::Result<Code> {
    let (root, root_from_env) = resolve_root(cli.root, std::env::var_os(ROOT_ENV));
    let root = SysRoot::new(root);
    // Completions and the man page read nothing below the root. `check-kernel KVER` reads an
    // installed kernel's files and `apply --dry-run` a config file: both are run on staged or
    // unpacked trees (tests/kernel, tests/install) that have no sys/.
    let reads_root = !matches!(
        cli.command,
        Command::Completions { .. } | Command::Man { .. }
    );
    let needs_sys = !matches!(
        cli.command,
        Command::CheckKernel { kver: Some(_) } | Command::Apply { dry_run: true, .. }
    );
    if reads_root && let Some(problem) = root.problem(needs_sys) {
        let (name, fix) = match root_from_env {
            true => ("RDNA1CTL_ROOT", "unset RDNA1CTL_ROOT to read this machine"),
            false => ("--root", "leave --root out to read this machine"),
        };
        return Err(coded(
            Code::Usage,
            format!(
                "{name}: {problem}: give the directory that holds a copied or mounted \
                 system's sys/, or {fix}"
            ),
        ));
    }
    let other_root = reads_root && !root.is_host();
    output::set_root(other_root.then(|| root.base().display().to_string()));
    if other_root && !cli.json {
        writeln!(out, "root: {} (not this machine)", root.base().display())?;
    }
    let ctx = Ctx {
        root,
        json: cli.json,
    };
    commands::run(&ctx, cli.command, out)
}

/// Prints a failed command's error once, on one line (and under `--json` as a document on
/// `out`); its exit code.
fn report_error(e: &anyhow::Error, json: bool, out: &mut impl Write, err: &mut impl Write) -> u8 {
    // A closed pipe (`rdna1ctl events --follow | head`) is not an error.
    if e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }) {
        return Code::Ok as u8;
    }
    let code = exit::code_of(e) as u8;
    let message = exit::message(e);
    let _ = writeln!(err, "rdna1ctl: {message}");
    if json {
        let _ = output::json_error(&message, code, out);
        let _ = out.flush();
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(args: &[&str], colors: Colors) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(
            std::iter::once("rdna1ctl").chain(args.iter().copied()),
            &mut out,
            &mut err,
            colors,
            |_| {},
        );
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        (code, text(out), text(err))
    }

    #[test]
    fn colour_only_on_a_terminal() {
        let tty = Colors {
            stdout: true,
            stderr: true,
            stdout_columns: None,
        };
        let (code, _, err) = run_with(&["set", "--mode", "turbo"], tty);
        assert_eq!(code, 2);
        assert!(
            err.contains('\x1b'),
            "a terminal gets clap's colours: {err:?}"
        );
        let (code, _, err) = run_with(&["set", "--mode", "turbo"], Colors::default());
        assert_eq!(code, 2);
        assert!(!err.contains('\x1b'), "{err:?}");
        assert!(err.contains("use off, audit or enforce"), "{err}");
        let (code, out, _) = run_with(&["--help"], Colors::default());
        assert_eq!(code, 0);
        assert!(!out.contains('\x1b') && out.contains("Usage:"), "{out:?}");
    }

    #[test]
    fn a_global_option_given_twice_counts_once_or_the_last_wins() {
        // `--json --json` and `--root A --root B` were usage errors (an alias that adds
        // --json, a wrapper that adds --root): as with most tools, the last one given wins.
        let (code, out, err) = run_with(
            &["--json", "completions", "bash", "--json"],
            Colors::default(),
        );
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("rdna1ctl"), "{out}");
        let (code, _, err) = run_with(
            &[
                "--root",
                "/nonexistent-a",
                "--root",
                "/nonexistent-b",
                "status",
            ],
            Colors::default(),
        );
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("--root") && err.contains("/nonexistent-b"),
            "{err}"
        );
        assert!(!err.contains("/nonexistent-a"), "{err}");
    }

    #[test]
    fn text_fits_the_terminal_and_pipes_get_whole_lines() {
        // doctor on the bad machine printed 33 lines wider than 80 columns, up to 289.
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/doctor-bad");
        let term = Colors {
            stdout_columns: Some(80),
            ..Colors::default()
        };
        for cmd in [
            &["--root", root, "doctor"][..],
            &["--root", root, "status"][..],
        ] {
            let (_, fitted, err) = run_with(cmd, term);
            let (_, whole, _) = run_with(cmd, Colors::default());
            assert!(!fitted.is_empty(), "{cmd:?}: {err}");
            for l in fitted.lines() {
                let one_word = !l.trim().contains(' ');
                assert!(l.chars().count() <= 80 || one_word, "{cmd:?}: {l:?}");
            }
            let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
            assert_eq!(words(&fitted), words(&whole), "{cmd:?}: the same words");
        }
        let (_, whole, _) = run_with(&["--root", root, "doctor"], Colors::default());
        assert!(
            whole.lines().any(|l| l.len() > 80),
            "a pipe gets whole lines"
        );
        // JSON is one line, whatever the terminal.
        let (_, json, _) = run_with(&["--root", root, "--json", "doctor"], term);
        assert_eq!(json.lines().count(), 1);
    }

    #[test]
    fn colour_needs_a_terminal_that_is_not_dumb_and_no_no_color() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let both = |c: Colors| (c.stdout, c.stderr);
        assert_eq!(
            both(Colors::decide(env(&[("TERM", "xterm")]), true, true)),
            (true, true)
        );
        assert_eq!(
            both(Colors::decide(env(&[("TERM", "xterm")]), false, true)),
            (false, true)
        );
        // TERM=dumb (Emacs shells, some CI consoles) cannot show escapes; NO_COLOR, any
        // non-empty value; an empty NO_COLOR is as if unset.
        assert_eq!(
            both(Colors::decide(env(&[("TERM", "dumb")]), true, true)),
            (false, false)
        );
        let no_color = env(&[("TERM", "xterm"), ("NO_COLOR", "1")]);
        assert_eq!(both(Colors::decide(no_color, true, true)), (false, false));
        let empty = env(&[("TERM", "xterm"), ("NO_COLOR", "")]);
        assert_eq!(both(Colors::decide(empty, true, true)), (true, true));
    }

    #[test]
    fn root_is_the_option_then_a_non_empty_variable_then_slash() {
        let p = |s: &str| Some(PathBuf::from(s));
        let e = |s: &str| Some(OsString::from(s));
        assert_eq!(resolve_root(p("/a"), e("/b")), (PathBuf::from("/a"), false));
        assert_eq!(resolve_root(None, e("/b")), (PathBuf::from("/b"), true));
        assert_eq!(resolve_root(None, e("")), (PathBuf::from("/"), false));
        assert_eq!(resolve_root(None, None), (PathBuf::from("/"), false));
    }

    #[test]
    fn json_is_seen_only_before_a_double_dash() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(json_requested(&args(&["rdna1ctl", "set", "--json"])));
        assert!(!json_requested(&args(&[
            "rdna1ctl",
            "check-kernel",
            "--",
            "--json"
        ])));
        assert!(
            !json_requested(&args(&["--json"])),
            "argv[0] is not an option"
        );
    }
}
