//! `rdna1ctl doctor`: checks everything rdna1_mtype and ROCm on RDNA1 depend on, each with a
//! verdict (ok / warn / fail), a one-line message and a one-line fix.
//!
//! Every file is read below `ctx.root`, so fixture trees drive every check; the process
//! environment and the one external command (`rustc --version`) come through [`Host`], so
//! tests inject them. The checks are grouped by subject, one file per group; what each check
//! knows and what it assumes is written down in docs/CLI.md (doctor).

mod access;
mod boot;
/// Public for its benchmark (controller/benches/codeobj_scan.rs).
pub mod codeobj;
mod compute_env;
#[cfg(test)]
mod consistency;
mod distro;
mod dkms;
mod driver;
mod facts;
mod faults;
mod host;
mod kconfig;
mod kfd;
mod miopen_cache;
mod noretry;
mod python;
mod render;
mod rocm;
#[cfg(test)]
mod testutil;
mod torch_libs;
mod visible;

use std::cell::OnceCell;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Code;
use crate::sysroot::SysRoot;
use crate::Ctx;

pub use facts::Facts;
pub use host::{Host, ProcessHost};

/// A check's verdict, ordered by severity: a `fail` makes `doctor` exit 3 ([`Code::Problems`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One check's result; `fix` is null when there is nothing to do.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Check {
    /// The check's stable name, `group.check` (`kconfig.rust`, `amdgpu.loaded`).
    pub id: &'static str,
    pub status: Status,
    /// What the check found, one line.
    pub message: String,
    /// What to do about it, one line; null when there is nothing to do.
    pub fix: Option<String>,
    /// What the check states about code objects, for the test that no two checks
    /// contradict each other (not printed).
    #[serde(skip)]
    #[schemars(skip)]
    pub claims: Vec<Claim>,
}

/// "`lib` has (or lacks) code objects for `target`", as a check states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub lib: String,
    pub target: String,
    pub present: bool,
}

impl Check {
    pub fn ok(id: &'static str, message: impl Into<String>) -> Check {
        Check {
            id,
            status: Status::Ok,
            message: message.into(),
            fix: None,
            claims: Vec::new(),
        }
    }

    pub fn warn(id: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            id,
            status: Status::Warn,
            message: message.into(),
            fix: Some(fix.into()),
            claims: Vec::new(),
        }
    }

    pub fn fail(id: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            id,
            status: Status::Fail,
            message: message.into(),
            fix: Some(fix.into()),
            claims: Vec::new(),
        }
    }

    /// The check with `claims` attached.
    pub fn claiming(mut self, claims: Vec<Claim>) -> Check {
        self.claims = claims;
        self
    }
}

/// What every group of checks reads from: the root, the injected host, and the facts several
/// groups share (kernel release and config, GPUs), gathered once.
pub struct Input<'a> {
    pub root: &'a SysRoot,
    pub host: &'a dyn Host,
    pub facts: &'a Facts,
    /// `--python`, if given.
    pub python: Option<&'a Path>,
    /// The Python, torch and the code objects torch loads, found on first use.
    pub stack: OnceCell<torch_libs::Stack>,
    distro: OnceCell<distro::Distro>,
}

impl<'a> Input<'a> {
    pub fn new(
        root: &'a SysRoot,
        host: &'a dyn Host,
        facts: &'a Facts,
        python: Option<&'a Path>,
    ) -> Input<'a> {
        Input {
            root,
            host,
            facts,
            python,
            stack: OnceCell::new(),
            distro: OnceCell::new(),
        }
    }

    /// The root's distribution (read once), for fixes that name its packages.
    pub fn distro(&self) -> distro::Distro {
        *self.distro.get_or_init(|| distro::Distro::of(self))
    }

    /// The owner's PyTorch stack (gathered once).
    pub fn stack(&self) -> &torch_libs::Stack {
        self.stack.get_or_init(|| torch_libs::Stack::gather(self))
    }

    /// `p` as the machine names it, without the `--root` prefix, for messages.
    pub fn show(&self, p: &Path) -> String {
        match p.strip_prefix(self.root.path("/")) {
            Ok(rel) => format!("/{}", rel.display()),
            Err(_) => p.display().to_string(),
        }
    }
}

/// All checks, in the order they are printed: kernel, boot, packaging, driver and module,
/// KFD, device access, ROCm userspace, the owner's PyTorch, the kernel log.
pub fn check_all(root: &SysRoot, host: &dyn Host, python: Option<&Path>) -> Vec<Check> {
    let facts = Facts::gather(root);
    let input = Input::new(root, host, &facts, python);
    let mut checks = Vec::new();
    checks.extend(kconfig::checks(&input));
    checks.extend(boot::checks(&input));
    checks.extend(dkms::checks(&input));
    checks.extend(driver::checks(&input));
    checks.extend(noretry::checks(&input));
    checks.extend(kfd::checks(&input));
    checks.extend(access::checks(&input));
    checks.extend(visible::checks(&input));
    checks.extend(rocm::checks(&input));
    checks.extend(miopen_cache::checks(&input));
    checks.extend(python::checks(&input));
    checks.extend(torch_libs::checks(&input));
    checks.extend(compute_env::checks(&input));
    checks.extend(faults::checks(&input));
    checks
}

/// The JSON body: `{"checks": [{id, status, message, fix}, ...]}` inside the common envelope.
#[derive(Serialize, JsonSchema)]
pub struct Body<'a> {
    /// Every check, in the order the table prints them.
    pub checks: &'a [Check],
}

/// [`Code::Problems`] if any check failed, else [`Code::Ok`]; warnings do not change it.
pub fn exit_code(checks: &[Check]) -> Code {
    if checks.iter().any(|c| c.status == Status::Fail) {
        Code::Problems
    } else {
        Code::Ok
    }
}

pub fn run(ctx: &Ctx, args: &crate::cli::DoctorArgs, out: &mut impl Write) -> Result<Code> {
    let checks = check_all(&ctx.root, &ProcessHost, args.python.as_deref());
    if ctx.json {
        crate::output::json("doctor", &Body { checks: &checks }, out)?;
    } else {
        render::table(&checks, out)?;
    }
    Ok(exit_code(&checks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_fail_means_problems_and_warnings_do_not() {
        let ok = Check::ok("a", "fine");
        let warn = Check::warn("b", "hmm", "look");
        assert_eq!(exit_code(&[ok, warn]), Code::Ok);
        let fail = Check::fail("c", "broken", "fix it");
        assert_eq!(exit_code(&[Check::ok("a", "fine"), fail]), Code::Problems);
    }

    #[test]
    fn json_body_has_the_documented_fields() {
        let checks = [
            Check::ok("kernel.release", "Linux 7.2.13"),
            Check::fail("kconfig.rust", "no Rust", "rebuild"),
        ];
        let mut v = Vec::new();
        crate::output::json("doctor", &Body { checks: &checks }, &mut v).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(doc["command"], "doctor");
        assert_eq!(doc["checks"][0]["id"], "kernel.release");
        assert_eq!(doc["checks"][0]["status"], "ok");
        assert!(doc["checks"][0]["fix"].is_null());
        assert_eq!(doc["checks"][1]["status"], "fail");
        assert_eq!(doc["checks"][1]["fix"], "rebuild");
        assert_eq!(doc["checks"][1]["message"], "no Rust");
    }
}
