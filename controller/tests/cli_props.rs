//! No argument vector makes rdna1ctl panic: `rdna1ctl::run` (what `main` is) on arbitrary
//! argument vectors, against a copy of a fixture root, must end with a documented exit code.
//! Tokens are drawn from the real vocabulary (commands, options, odd values) mixed with
//! arbitrary strings and bytes, so clap's refusals and the commands' own checks both run.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::Config;

/// Words rdna1ctl knows, and values at the edges of what it takes.
const WORDS: &[&str] = &[
    "status",
    "--check",
    "enable",
    "disable",
    "set",
    "apply",
    "layout",
    "events",
    "verify",
    "doctor",
    "check-kernel",
    "completions",
    "man",
    "help",
    "--json",
    "-v",
    "-vvv",
    "--help",
    "--version",
    "--mode",
    "off",
    "audit",
    "enforce",
    "--scope",
    "rdna1",
    "gfx10",
    "03:00.0",
    "0000:0A:00.0,03:00.0,03:00.0",
    "--vm-scope",
    "compute",
    "all",
    "--classes",
    "coherent,uncached",
    "none",
    "--config",
    "config.toml",
    "/etc/rdna1-mtype/config.toml",
    "--dry-run",
    "--apply",
    "--follow",
    "--duration",
    "--duration=1e20",
    "1e20",
    "0",
    "-1",
    "nan",
    "604800",
    "--until-interrupt",
    "--pid",
    "4294967296",
    "bash",
    "zsh",
    "7.2.13-amd64",
    "--",
    "=",
    "",
];

/// A copy of the rdna1-enforce fixture, made once: a command that writes (`layout --apply`)
/// must never change the checked-in tree.
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/rdna1-enforce");
        let dst = std::env::temp_dir().join(format!("rdna1ctl-props-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dst);
        copy_tree(&src, &dst);
        dst
    })
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let (from, to) = (e.path(), dst.join(e.file_name()));
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from).unwrap(), &to).unwrap();
        } else if kind.is_dir() {
            copy_tree(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap();
        }
    }
}

/// One argument: a known word, any string, or any bytes (not UTF-8 included). Never one that
/// names another root: the tests must not read or write this machine's /sys or /dev.
fn token() -> impl Strategy<Value = OsString> {
    prop_oneof![
        4 => prop::sample::select(WORDS).prop_map(OsString::from),
        1 => any::<String>().prop_map(OsString::from),
        1 => prop::collection::vec(any::<u8>(), 0..12).prop_map(OsString::from_vec),
    ]
    .prop_filter("no other root", |t| {
        !t.as_encoded_bytes().starts_with(b"--r")
    })
}

/// The subcommands, so that most vectors get past clap into a command.
const COMMANDS: &[&str] = &[
    "status",
    "enable",
    "disable",
    "set",
    "apply",
    "layout",
    "events",
    "verify",
    "doctor",
    "check-kernel",
    "completions",
    "man",
];

/// A subcommand then mostly known words (3 in 4), or any tokens at all.
fn argv() -> impl Strategy<Value = Vec<OsString>> {
    let words = prop::sample::select(WORDS).prop_map(OsString::from);
    let option = prop_oneof![6 => words, 1 => token()];
    let structured = (
        prop::sample::select(COMMANDS).prop_map(OsString::from),
        prop::collection::vec(option, 0..3),
    )
        .prop_map(|(cmd, mut rest)| {
            rest.insert(0, cmd);
            rest
        });
    prop_oneof![
        3 => structured,
        1 => prop::collection::vec(token(), 0..7),
    ]
}

/// Standard output that takes `room` bytes, then fails every write with `kind`: a reader that
/// went away (`BrokenPipe`, `rdna1ctl status | head -c1`) or a full disk (`StorageFull`,
/// `> /dev/full`).
struct Failing {
    room: usize,
    kind: std::io::ErrorKind,
}

impl std::io::Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::from(self.kind));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// rdna1ctl on `tokens` (after `--root FIXTURE`), printing to `out`: exit code and stderr.
fn run_into(tokens: &[OsString], out: &mut impl std::io::Write) -> (u8, String) {
    let mut args: Vec<OsString> = vec!["rdna1ctl".into(), "--root".into(), root().into()];
    args.extend(tokens.iter().cloned());
    let mut err = Vec::new();
    let code = rdna1ctl::run(args, out, &mut err, rdna1ctl::Colors::default(), |_| {});
    (code, String::from_utf8_lossy(&err).into_owned())
}

/// The closed pipes the audit found (`completions bash | head -1` panicked in clap_complete,
/// `--json status | head -c1` and `--json doctor` exited 1): each ends with 0, nothing said.
#[test]
fn the_closed_pipes_found_end_with_0() {
    let commands: &[&[&str]] = &[
        &["completions", "bash"],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["--json", "status"],
        &["--json", "doctor"],
        &["status"],
        &["doctor"],
        &["man"],
    ];
    for argv in commands {
        let tokens: Vec<OsString> = argv.iter().map(OsString::from).collect();
        for room in [0, 1] {
            let mut out = Failing {
                room,
                kind: std::io::ErrorKind::BrokenPipe,
            };
            let (code, err) = run_into(&tokens, &mut out);
            assert_eq!(code, 0, "{argv:?}, closed after {room} bytes: {err}");
            assert!(err.is_empty(), "{argv:?}: {err}");
        }
    }
}

proptest! {
    #![proptest_config(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    })]

    /// A reader that stops reading ends the command quietly, as `cat | head` would: exit 0
    /// once a write failed, or what the command exits with anyway when it wrote less; never
    /// a panic (clap_complete panicked on a closed pipe).
    #[test]
    fn a_closed_stdout_ends_the_command_with_0(tokens in argv(), room in 0usize..200) {
        let (code, _) = run_into(&tokens, &mut Vec::new());
        let mut out = Failing { room, kind: std::io::ErrorKind::BrokenPipe };
        let (closed, err) = run_into(&tokens, &mut out);
        prop_assert!(closed == 0 || closed == code, "exit {closed} (with stdout open: {code}): {tokens:?}\n{err}");
        prop_assert!(!err.contains("Broken pipe"), "{tokens:?}: {err}");
    }

    /// A full disk is an error that says it was standard output that could not be written.
    #[test]
    fn a_full_stdout_is_named(tokens in argv(), room in 0usize..200) {
        let (code, _) = run_into(&tokens, &mut Vec::new());
        let mut out = Failing { room, kind: std::io::ErrorKind::StorageFull };
        let (full, err) = run_into(&tokens, &mut out);
        if full != code {
            prop_assert_eq!(full, 1, "{:?}: {}", tokens, err);
            let last = err.lines().last().unwrap_or_default();
            prop_assert!(last.starts_with("rdna1ctl: writing standard output: "), "{tokens:?}: {err}");
        }
    }
}

proptest! {
    #![proptest_config(Config {
        cases: 512,
        // No regressions file in the source tree; a failure prints its minimal input.
        failure_persistence: None,
        ..Config::default()
    })]

    #[test]
    fn no_argument_vector_panics(tokens in argv()) {
        let mut args: Vec<OsString> = vec!["rdna1ctl".into(), "--root".into(), root().into()];
        args.extend(tokens.iter().cloned());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = rdna1ctl::run(args, &mut out, &mut err, rdna1ctl::Colors::default(), |_| {});
        let err = String::from_utf8_lossy(&err);
        prop_assert!(code <= 5, "exit {code} is not documented: {tokens:?}\n{err}");
        if matches!(code, 1 | 4 | 5) {
            // Said on stderr, or check-kernel's verdict that it cannot tell (docs/CLI.md).
            let last = err.lines().last().unwrap_or_default();
            let said = String::from_utf8_lossy(&out);
            let cannot_tell = code == 1
                && (said.contains(": cannot tell: ") || said.contains(r#""basis":"unreadable""#));
            prop_assert!(last.starts_with("rdna1ctl: ") || cannot_tell, "{tokens:?}: {err}");
        }
        prop_assert!(!err.contains('\x1b'), "colour without a terminal: {err:?}");
    }
}
