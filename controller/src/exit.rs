//! rdna1ctl's exit codes (documented in docs/CLI.md) and how an error maps to one.

use std::io;

use nix::errno::Errno;

/// What the process tells its caller. Scripts and the systemd unit rely on these numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Code {
    /// Done; every check passed.
    Ok = 0,
    /// Could not do what was asked (I/O error, refused value, version mismatch, ...).
    Error = 1,
    /// Bad command line: clap's own code, and values only rdna1ctl can judge (`--root`).
    Usage = 2,
    /// The command ran and found problems: `verify` saw a violation, `doctor` a failed check.
    Problems = 3,
    /// Needs root (or the device's group) and did not have it.
    Permission = 4,
    /// rdna1_mtype is not loaded and the command needs it.
    NoModule = 5,
}

/// An error that carries its own exit code (attach with `anyhow::Error::new` or `.context`).
#[derive(Debug)]
pub struct Coded {
    pub code: Code,
    pub message: String,
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Coded {}

/// An error with `code`.
pub fn coded(code: Code, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Coded {
        code,
        message: message.into(),
    })
}

/// The exit code for `e`: an explicit [`Coded`] anywhere in the chain wins, then a permission
/// error from the kernel, else [`Code::Error`].
pub fn code_of(e: &anyhow::Error) -> Code {
    for cause in e.chain() {
        if let Some(c) = cause.downcast_ref::<Coded>() {
            return c.code;
        }
    }
    for cause in e.chain() {
        let errno = cause.downcast_ref::<Errno>().copied();
        let io_kind = cause.downcast_ref::<io::Error>().map(io::Error::kind);
        if matches!(errno, Some(Errno::EPERM | Errno::EACCES))
            || io_kind == Some(io::ErrorKind::PermissionDenied)
        {
            return Code::Permission;
        }
    }
    Code::Error
}

/// `e` and its causes on one line, each said once. Contexts here often quote their cause
/// (`opening X: Permission denied (os error 13): only root may open it`) and keep it as the
/// source so that [`code_of`] sees its kind; printing the chain as is would repeat it. A cause
/// whose text (without ` (os error N)`) the line already holds is left out.
pub fn message(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        let text = one_line(&text);
        let bare = match text.rfind(" (os error ") {
            Some(i) if text.ends_with(')') => &text[..i],
            _ => text.as_str(),
        };
        if bare.is_empty() || line.contains(bare) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// `s` with its lines joined by `; ` (an error is printed on one line).
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn explicit_code_wins_through_context() {
        let e = Err::<(), _>(coded(Code::NoModule, "not loaded"))
            .context("status")
            .unwrap_err();
        assert_eq!(code_of(&e), Code::NoModule);
    }

    #[test]
    fn message_says_each_cause_once_on_one_line() {
        let io = io::Error::from_raw_os_error(13);
        let e = anyhow::Error::new(io::Error::from_raw_os_error(13)).context(format!(
            "opening /dev/rdna1_mtype: {io}: only root may open it (sudo)"
        ));
        assert_eq!(
            message(&e),
            "opening /dev/rdna1_mtype: Permission denied (os error 13): only root may open it (sudo)"
        );
        let e = anyhow::Error::new(Errno::EACCES).context("SET_POLICY: EACCES: Permission denied");
        assert_eq!(message(&e), "SET_POLICY: EACCES: Permission denied");
        // Causes the contexts do not quote are kept, in order.
        let e = anyhow::Error::new(io::Error::from_raw_os_error(2))
            .context("reading /x")
            .context("status");
        assert_eq!(
            message(&e),
            "status: reading /x: No such file or directory (os error 2)"
        );
        let e = anyhow::anyhow!("two\nlines\n");
        assert_eq!(message(&e), "two; lines");
    }

    #[test]
    fn permission_errors_map_to_4() {
        let e = anyhow::Error::new(Errno::EPERM).context("SET_POLICY");
        assert_eq!(code_of(&e), Code::Permission);
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(code_of(&e), Code::Permission);
        let e = anyhow::Error::new(Errno::EINVAL);
        assert_eq!(code_of(&e), Code::Error);
    }
}
