//! Human or JSON output. JSON documents carry the schema version (docs/CLI.md) so scripts can
//! tell what they read.

use std::cell::RefCell;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use rdna1_mtype_shared::bo::{BoClass, LayoutSource, LayoutStatus};
use rdna1_mtype_shared::policy::{Mode, Policy, Skip, VmKind, VmScope};
use rdna1_mtype_shared::pte::{Mtype, VmMtype};
use schemars::JsonSchema;
use serde::Serialize;

use crate::module::params::LoadedModule;

/// Version of the JSON schema of every command's output. Bump on any incompatible change
/// (renamed or removed field, changed meaning); adding a field is compatible. 2: one set of
/// names across commands (`pci_address`, `vendor_id`/`device_id` as `"0x1002"`, lowercase
/// snake_case values); docs/CLI.md, "JSON".
pub const JSON_SCHEMA_VERSION: u32 = 2;

/// A set of names JSON carries as lowercase strings: a shared enum's values (their one list,
/// `ALL`), or rdna1ctl's own. The value printed is `json_name()` and the schema's `enum` is
/// every value's `json_name()` ([`crate::schema::one_of`] and its kin), so the two cannot
/// drift apart.
pub trait JsonNames: Sized + 'static {
    /// Every value, in the order the schema lists them.
    fn every() -> Vec<Self>;
    /// The value as JSON names it.
    fn json_name(&self) -> &'static str;
}

/// Implements [`JsonNames`] for shared enums whose `name()` is already the JSON name.
macro_rules! names_are_json {
    ($($t:ty),+) => {$(
        impl JsonNames for $t {
            fn every() -> Vec<Self> {
                <$t>::ALL.to_vec()
            }
            fn json_name(&self) -> &'static str {
                (*self).name()
            }
        }
    )+};
}

names_are_json!(
    Mode,
    VmScope,
    VmKind,
    Skip,
    BoClass,
    LayoutStatus,
    LayoutSource
);

/// MTYPEs as JSON names them: lowercase, the reserved one in full (text keeps `RSVD`).
impl JsonNames for Mtype {
    fn every() -> Vec<Self> {
        Mtype::ALL.to_vec()
    }
    fn json_name(&self) -> &'static str {
        match self {
            Mtype::Nc => "nc",
            Mtype::Wc => "wc",
            Mtype::Cc => "cc",
            Mtype::Uc => "uc",
            Mtype::Reserved => "reserved",
        }
    }
}

/// A mapping request's MTYPE: lowercase; `other` for a value amdgpu does not define.
impl JsonNames for VmMtype {
    fn every() -> Vec<Self> {
        let mut v = VmMtype::ALL.to_vec();
        v.push(VmMtype::Other(u8::MAX));
        v
    }
    fn json_name(&self) -> &'static str {
        match self {
            VmMtype::Default => "default",
            VmMtype::Nc => "nc",
            VmMtype::Wc => "wc",
            VmMtype::Cc => "cc",
            VmMtype::Uc => "uc",
            VmMtype::Rw => "rw",
            VmMtype::Other(_) => "other",
        }
    }
}

/// A PCI id (vendor, device, subsystem) as JSON carries it: as sysfs prints it, `0x1002`.
pub fn pci_id(id: u16) -> String {
    format!("{id:#06x}")
}

/// A policy in JSON, as `policy`, `apply` and `verify` documents and status's `module` carry
/// it (docs/CLI.md).
#[derive(Serialize, JsonSchema, Debug, PartialEq, Eq)]
pub struct PolicyJson {
    /// `off`, `audit` or `enforce`.
    #[schemars(schema_with = "crate::schema::one_of::<Mode>")]
    pub mode: &'static str,
    /// `rdna1`, `gfx10`, or comma-separated PCI addresses (`0000:03:00.0`).
    pub scope: String,
    /// `none`, or the classes on, comma-separated, in the order `coherent,uncached,uc_request`.
    pub classes: String,
    /// `compute` or `all`.
    #[schemars(schema_with = "crate::schema::one_of::<VmScope>")]
    pub vm_scope: &'static str,
}

/// The module's `amdgpu_bo` layout as its parameters report it (`status`'s `module.layout`,
/// `layout`'s `module` and `applied`).
#[derive(Serialize, JsonSchema, Debug, PartialEq, Eq)]
pub struct ModuleLayoutJson {
    /// `size=N preferred_domains=N tbo=N flags=N`, or null: none in force.
    pub value: Option<String>,
    /// `unset` (no layout: no BO is classified, none modified) or `ok`.
    #[schemars(schema_with = "crate::schema::one_of::<LayoutStatus>")]
    pub status: &'static str,
    /// Where it came from: `builtin` (the module's own copy of amdgpu_bo), `set` (written by
    /// root, e.g. from BTF) or `none`.
    #[schemars(schema_with = "crate::schema::one_of::<LayoutSource>")]
    pub source: &'static str,
}

impl From<&LoadedModule> for ModuleLayoutJson {
    fn from(m: &LoadedModule) -> Self {
        ModuleLayoutJson {
            value: m.bo_layout.map(|l| l.to_string()),
            status: m.bo_layout_status.json_name(),
            source: m.bo_layout_source.json_name(),
        }
    }
}

impl From<&Policy> for PolicyJson {
    fn from(p: &Policy) -> Self {
        PolicyJson {
            mode: p.mode.json_name(),
            scope: p.scope.to_string(),
            classes: p.classes.to_string(),
            vm_scope: p.vm_scope.json_name(),
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
/// Made whole first, then written: a write error stays the `std::io::Error` it is (serde_json
/// would hide it, and a closed pipe would no longer be told from a failure).
pub fn json<T: Serialize>(command: &str, body: &T, out: &mut impl Write) -> Result<()> {
    let mut doc = serde_json::to_vec(&Envelope {
        schema_version: JSON_SCHEMA_VERSION,
        command,
        root: ROOT.with(|r| r.borrow().clone()),
        body,
    })?;
    doc.push(b'\n');
    out.write_all(&doc)?;
    Ok(())
}

/// A stream whose write errors say which stream failed ("writing standard output: No space
/// left on device"), of the same kind, so a closed pipe is still `BrokenPipe`.
pub struct Named<W> {
    inner: W,
    what: &'static str,
}

impl<W: Write> Named<W> {
    pub fn new(inner: W, what: &'static str) -> Self {
        Self { inner, what }
    }

    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("writing {}: {e}", self.what))
    }
}

impl<W: Write> Write for Named<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.named(e))
    }
}

/// The `error` document: a command that failed under `--json` (docs/CLI.md, "Errors").
#[derive(Serialize, JsonSchema)]
pub struct ErrorJson<'a> {
    /// The stderr line without `rdna1ctl: `: what failed, why, what to do.
    pub message: &'a str,
    /// The process's exit code (docs/CLI.md, "Exit codes").
    #[schemars(range(min = 1, max = 5))]
    pub exit_code: u8,
}

/// A failed command under `--json`: the `error` document (docs/CLI.md, "Errors").
pub fn json_error(message: &str, exit_code: u8, out: &mut impl Write) -> Result<()> {
    json("error", &ErrorJson { message, exit_code }, out)
}

// Dates for documents (`started_at`) and report file names, without a time crate.
/// Seconds since the epoch as (year, month, day, hour, minute, second), UTC.
pub fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days_from_civil, inverted.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem / 60 % 60) as u32,
        (rem % 60) as u32,
    )
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `2026-11-24T12:00:00Z` for `secs`.
pub fn rfc3339(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// Now, in seconds since the epoch.
pub fn now() -> u64 {
    now_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct B {
        x: u32,
    }

    #[test]
    fn the_schemas_value_lists_are_the_shared_enums() {
        use crate::schema::enum_values;
        use rdna1_mtype_shared::bo::{LayoutSource, LayoutStatus};
        use rdna1_mtype_shared::policy::Mode;
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let names = |v: &[&str]| sorted(v.iter().map(|s| s.to_string()).collect());
        let p = |f: &str| sorted(enum_values::<PolicyJson>(&format!("/properties/{f}")));
        assert_eq!(p("mode"), names(&Mode::ALL.map(Mode::name)));
        assert_eq!(p("vm_scope"), names(&VmScope::ALL.map(VmScope::name)));
        let l = |f: &str| sorted(enum_values::<ModuleLayoutJson>(&format!("/properties/{f}")));
        assert_eq!(
            l("status"),
            names(&LayoutStatus::ALL.map(LayoutStatus::name))
        );
        assert_eq!(
            l("source"),
            names(&LayoutSource::ALL.map(LayoutSource::name))
        );
    }

    #[test]
    fn policy_and_error_documents_match_their_schemas() {
        let p = Policy {
            mode: rdna1_mtype_shared::policy::Mode::Audit,
            scope: rdna1_mtype_shared::policy::Scope::Rdna1,
            classes: rdna1_mtype_shared::policy::Classes::DEFAULT,
            vm_scope: VmScope::All,
        };
        crate::schema::assert_valid("policy", &PolicyJson::from(&p));
        let e = ErrorJson {
            message: "x",
            exit_code: 4,
        };
        crate::schema::assert_valid("error", &e);
    }

    #[test]
    fn envelope_is_flat_and_versioned() {
        let mut v = Vec::new();
        json("status", &B { x: 7 }, &mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "{\"schema_version\":2,\"command\":\"status\",\"x\":7}\n"
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
            "{\"schema_version\":2,\"command\":\"error\",\"root\":\"/mnt/x\",\
             \"message\":\"no such thing\",\"exit_code\":2}\n"
        );
    }
}
