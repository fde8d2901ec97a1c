//! Human or JSON output. JSON documents carry the schema version (docs/CLI.md) so scripts can
//! tell what they read.

use std::cell::RefCell;
use std::io::Write;

use anyhow::Result;
use rdna1_mtype_shared::policy::{Policy, VmScope};
use serde::Serialize;

/// Version of the JSON schema of every command's output. Bump on any incompatible change
/// (renamed or removed field, changed meaning); adding a field is compatible.
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// A policy in JSON, as `policy`, `apply` and `verify` documents carry it (docs/CLI.md).
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct PolicyJson {
    pub mode: &'static str,
    pub scope: String,
    pub classes: String,
    /// `compute` or `all`.
    pub vm_scope: &'static str,
}

impl From<&Policy> for PolicyJson {
    fn from(p: &Policy) -> Self {
        PolicyJson {
            mode: p.mode.name(),
            scope: p.scope.to_string(),
            classes: p.classes.to_string(),
            vm_scope: p.vm_scope.name(),
        }
    }
}

/// A policy as text, one `key: value` line each (`set`, `enable`, `apply`; `status` prints
/// the same lines).
pub fn print_policy(p: &Policy, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "mode:    {}", p.mode.name())?;
    writeln!(out, "scope:   {}", p.scope)?;
    writeln!(out, "vm scope: {}", vm_scope_text(p.vm_scope))?;
    writeln!(out, "classes: {}", p.classes)
}

/// The VM scope with what it means, as `status`, `set` and `apply` print it.
pub fn vm_scope_text(v: VmScope) -> &'static str {
    match v {
        VmScope::Compute => "compute (only VMs KFD acquired: ROCm/HIP; graphics clients untouched)",
        VmScope::All => "all (graphics clients are changed too)",
    }
}

thread_local! {
    /// The `--root` in use when it is not `/`, for every document's `root` field. Set once per
    /// run by [`crate::run`]; thread-local rather than an argument so that no command has to
    /// carry it to each `json` call.
    static ROOT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Sets the `root` every JSON document of this thread carries from now on (`None`: `/`, omitted).
pub fn set_root(root: Option<String>) {
    ROOT.with(|r| *r.borrow_mut() = root);
}

#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    schema_version: u32,
    command: &'a str,
    /// Present only when rdna1ctl reads a tree other than `/` (`--root`, `RDNA1CTL_ROOT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<String>,
    #[serde(flatten)]
    body: &'a T,
}

/// Writes `body` as one JSON document (one line) with the schema version and command name.
pub fn json<T: Serialize>(command: &str, body: &T, out: &mut impl Write) -> Result<()> {
    serde_json::to_writer(
        &mut *out,
        &Envelope {
            schema_version: JSON_SCHEMA_VERSION,
            command,
            root: ROOT.with(|r| r.borrow().clone()),
            body,
        },
    )?;
    writeln!(out)?;
    Ok(())
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    message: &'a str,
    exit_code: u8,
}

/// A failed command under `--json`: the `error` document (docs/CLI.md, "Errors").
pub fn json_error(message: &str, exit_code: u8, out: &mut impl Write) -> Result<()> {
    json("error", &ErrorJson { message, exit_code }, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct B {
        x: u32,
    }

    #[test]
    fn envelope_is_flat_and_versioned() {
        let mut v = Vec::new();
        json("status", &B { x: 7 }, &mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "{\"schema_version\":1,\"command\":\"status\",\"x\":7}\n"
        );
    }

    #[test]
    fn root_other_than_slash_is_in_every_document_and_errors_are_documents() {
        set_root(Some("/mnt/x".into()));
        let mut v = Vec::new();
        json_error("no such thing", 2, &mut v).unwrap();
        set_root(None);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "{\"schema_version\":1,\"command\":\"error\",\"root\":\"/mnt/x\",\
             \"message\":\"no such thing\",\"exit_code\":2}\n"
        );
    }
}
