//! rdna1ctl's exit codes (documented in docs/CLI.md) and how an error maps to one.

use std::io;

use nix::errno::Errno;

/// What the process tells its caller. Scripts and the systemd unit rely on these numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(dead_code)] // Usage is clap's; listed so the table is whole.
pub enum Code {
    /// Done; every check passed.
    Ok = 0,
    /// Could not do what was asked (I/O error, refused value, version mismatch, ...).
    Error = 1,
    /// Bad command line (clap's own code).
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
    fn permission_errors_map_to_4() {
        let e = anyhow::Error::new(Errno::EPERM).context("SET_POLICY");
        assert_eq!(code_of(&e), Code::Permission);
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(code_of(&e), Code::Permission);
        let e = anyhow::Error::new(Errno::EINVAL);
        assert_eq!(code_of(&e), Code::Error);
    }
}
