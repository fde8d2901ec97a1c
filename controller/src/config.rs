//! `/etc/rdna1-mtype/config.toml` (docs/CLI.md, "Config file"): parsed and checked whole
//! before anything is sent, into a [`Plan`].

use std::path::Path;

use anyhow::{bail, Context, Result};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::{Classes, Mode, Policy, Scope, VmScope};
use serde::{Deserialize, Serialize};

/// A scope as people write it (`--scope`, the config file): `rdna1`, `gfx10`, or PCI addresses
/// comma-separated, also in lspci's short form (`03:00.0`: domain 0000) and in upper case,
/// duplicates dropped. The result is the canonical list the shared parser (the module's own)
/// takes, so the module sees exactly what status and set print.
pub fn parse_scope(text: &str) -> Option<Scope> {
    let text = text.trim();
    match Scope::parse(text.as_bytes()) {
        Some(named @ (Scope::Rdna1 | Scope::Gfx10)) => return Some(named),
        _ if text.is_empty() => return None,
        _ => {}
    }
    let mut addrs: Vec<PciAddr> = Vec::new();
    for part in text.split(',').map(str::trim) {
        // lspci prints BB:DD.F for domain 0 unless run with -D.
        let full = match part.len() {
            7 => format!("0000:{part}"),
            _ => part.to_owned(),
        };
        let addr = PciAddr::parse(full.as_bytes())?;
        if !addrs.contains(&addr) {
            addrs.push(addr);
        }
    }
    let canonical: Vec<String> = addrs.iter().map(PciAddr::to_string).collect();
    Scope::parse(canonical.join(",").as_bytes())
}

/// The only schema version this rdna1ctl reads. Keys added later with a default that keeps
/// the older files' meaning (`vm_scope`) do not change it.
pub const CONFIG_SCHEMA: u32 = 1;

/// `config.toml` (docs/CLI.md, "Config file"). Unknown keys are errors, named by serde.
#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Schema version of the file: 1.
    pub schema: u32,
    /// off, audit or enforce.
    pub mode: String,
    /// "rdna1", "gfx10", or a list of PCI addresses.
    #[serde(default = "default_scope")]
    pub scope: ScopeSetting,
    /// Optional classes: "coherent", "uncached", "uc_request", in any combination, or [];
    /// like scope, as a list or as one string (`"coherent,uncached"`, `"none"`).
    #[serde(default = "default_classes")]
    pub classes: ClassesSetting,
    /// Which VMs the policy applies to: "compute" (KFD's: ROCm/HIP) or "all".
    #[serde(default = "default_vm_scope")]
    pub vm_scope: String,
    /// Where the amdgpu_bo layout comes from: auto, btf, builtin or keep.
    #[serde(default = "default_layout")]
    pub layout: LayoutSetting,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(untagged)]
pub enum ScopeSetting {
    Named(String),
    Devices(Vec<String>),
}

/// The classes, in the shapes scope takes: one string as on the command line, or a list.
#[derive(Deserialize, Debug, PartialEq)]
#[serde(untagged)]
pub enum ClassesSetting {
    Named(String),
    List(Vec<String>),
}

#[derive(Deserialize, Serialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum LayoutSetting {
    /// From module BTF if the kernel has it, else the module's built-in one.
    Auto,
    /// From module BTF; an error if there is none.
    Btf,
    /// The module's built-in copy of struct amdgpu_bo.
    Builtin,
    /// Leave the module's layout as it is.
    Keep,
}

fn default_scope() -> ScopeSetting {
    ScopeSetting::Named("rdna1".into())
}
fn default_classes() -> ClassesSetting {
    ClassesSetting::List(vec!["coherent".into()])
}
fn default_vm_scope() -> String {
    VmScope::Compute.name().into()
}
fn default_layout() -> LayoutSetting {
    LayoutSetting::Auto
}

/// A checked config: what will be sent.
#[derive(Debug, PartialEq)]
pub struct Plan {
    pub policy: Policy,
    pub layout: LayoutSetting,
}

/// A TOML error on one line, as compilers place theirs: `PATH:LINE:COLUMN: what (line N:
/// the line)`; toml's own text is a multi-line snippet, and errors are one line (docs/CLI.md).
fn toml_error(e: &toml::de::Error, text: &str, path: &Path) -> String {
    let what = e.message().trim_end_matches('\n').replace('\n', "; ");
    let Some(span) = e.span() else {
        return format!("{} is not valid: {what}", path.display());
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    let source = text.lines().nth(line - 1).unwrap_or_default().trim();
    format!(
        "{}:{line}:{column}: {what} (line {line}: {source})",
        path.display()
    )
}

/// Parses and checks `text` (from `path`, for messages) without touching the system.
pub fn plan(text: &str, path: &Path) -> Result<Plan> {
    let where_ = path.display();
    let c: Config =
        toml::from_str(text).map_err(|e| anyhow::anyhow!(toml_error(&e, text, path)))?;
    if c.schema != CONFIG_SCHEMA {
        bail!(
            "{where_}: schema = {} is not supported; this rdna1ctl reads schema = {CONFIG_SCHEMA}",
            c.schema
        );
    }
    let mode = Mode::parse(c.mode.as_bytes()).with_context(|| {
        format!(
            "{where_}: mode = {:?}: use \"off\", \"audit\" or \"enforce\"",
            c.mode
        )
    })?;
    let scope_text = match &c.scope {
        ScopeSetting::Named(s) => s.clone(),
        ScopeSetting::Devices(list) if list.is_empty() => {
            bail!("{where_}: scope = []: list 1 to 8 PCI addresses, or use \"rdna1\"")
        }
        ScopeSetting::Devices(list) => list.join(","),
    };
    let scope = parse_scope(&scope_text).with_context(|| {
        format!(
            "{where_}: scope = {scope_text:?}: use \"rdna1\", \"gfx10\" or a list of 1 to 8 \
             PCI addresses like [\"0000:03:00.0\"]"
        )
    })?;
    let (classes_text, written) = match &c.classes {
        ClassesSetting::Named(s) => (s.clone(), format!("{s:?}")),
        ClassesSetting::List(list) if list.is_empty() => ("none".to_owned(), "[]".to_owned()),
        ClassesSetting::List(list) => (list.join(","), format!("{list:?}")),
    };
    let classes = Classes::parse(classes_text.as_bytes()).with_context(|| {
        format!(
            "{where_}: classes = {written}: use a list of \"coherent\", \"uncached\" and \
             \"uc_request\", each at most once, or [] (or one string: \"coherent,uncached\", \
             \"none\")"
        )
    })?;
    let vm_scope = VmScope::parse(c.vm_scope.as_bytes()).with_context(|| {
        format!(
            "{where_}: vm_scope = {:?}: use \"compute\" (compute VMs only: ROCm/HIP) or \
             \"all\" (graphics clients too)",
            c.vm_scope
        )
    })?;
    Ok(Plan {
        policy: Policy {
            mode,
            scope,
            classes,
            vm_scope,
        },
        layout: c.layout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Plan> {
        plan(text, Path::new("/etc/rdna1-mtype/config.toml"))
    }

    #[test]
    fn full_file_and_defaults() {
        let a = p(
            "schema = 1\nmode = \"enforce\"\nscope = [\"0000:03:00.0\", \"0001:0a:00.0\"]\n\
                   classes = [\"coherent\", \"uncached\", \"uc_request\"]\nlayout = \"btf\"\n\
                   vm_scope = \"all\"\n",
        )
        .unwrap();
        assert_eq!(a.policy.mode, Mode::Enforce);
        assert_eq!(a.policy.scope.to_string(), "0000:03:00.0,0001:0a:00.0");
        assert_eq!(a.policy.classes.to_string(), "coherent,uncached,uc_request");
        assert_eq!(a.policy.vm_scope, VmScope::All);
        assert_eq!(a.layout, LayoutSetting::Btf);
        let d = p("schema = 1\nmode = \"audit\"\n").unwrap();
        assert_eq!(d.policy.scope, Scope::Rdna1);
        assert_eq!(d.policy.classes, Classes::DEFAULT);
        assert_eq!(
            d.policy.vm_scope,
            VmScope::Compute,
            "a schema 1 file without vm_scope"
        );
        assert_eq!(d.layout, LayoutSetting::Auto);
        let none = p("schema = 1\nmode = \"off\"\nclasses = []\n").unwrap();
        assert_eq!(none.policy.classes.to_string(), "none");
    }

    #[test]
    fn a_toml_error_is_one_line_with_its_place() {
        // It was toml's multi-line snippet with its lines joined by "; ": "TOML parse error at
        // line 4, column 9; |; 4 | classes = 3; |         ^; unexpected ...".
        let e = p("schema = 1\nmode = \"enforce\"\nscope = [ \"a\",\nclasses = 3\n").unwrap_err();
        let m = crate::exit::message(&e);
        assert_eq!(
            m,
            "/etc/rdna1-mtype/config.toml:4:9: unexpected `=` in array, expected value, `]` \
             (line 4: classes = 3)"
        );
        let e = p("schema = 1\nmode = \"enforce\"\nbogus = 1\n").unwrap_err();
        let m = crate::exit::message(&e);
        assert!(
            m.starts_with(
                "/etc/rdna1-mtype/config.toml:3:1: unknown field `bogus`, expected one of"
            ),
            "{m}"
        );
        assert!(m.ends_with("(line 3: bogus = 1)"), "{m}");
    }

    #[test]
    fn scope_and_classes_take_the_same_shapes() {
        // scope took a string (as --scope) or a list, classes only a list: `classes =
        // "coherent"` was refused with serde's "invalid type: string, expected a sequence".
        for (scope, classes, want_scope, want_classes) in [
            (
                "\"rdna1\"",
                "\"coherent,uncached\"",
                "rdna1",
                "coherent,uncached",
            ),
            (
                "[\"rdna1\"]",
                "[\"coherent\", \"uncached\"]",
                "rdna1",
                "coherent,uncached",
            ),
            (
                "\"0000:03:00.0,04:00.0\"",
                "\"none\"",
                "0000:03:00.0,0000:04:00.0",
                "none",
            ),
            (
                "[\"0000:03:00.0\", \"04:00.0\"]",
                "[]",
                "0000:03:00.0,0000:04:00.0",
                "none",
            ),
        ] {
            let text =
                format!("schema = 1\nmode = \"enforce\"\nscope = {scope}\nclasses = {classes}\n");
            let a = p(&text).unwrap_or_else(|e| panic!("{text}: {e:#}"));
            assert_eq!(a.policy.scope.to_string(), want_scope, "{text}");
            assert_eq!(a.policy.classes.to_string(), want_classes, "{text}");
        }
        let e = p("schema = 1\nmode = \"off\"\nclasses = \"coherent,bogus\"\n").unwrap_err();
        assert!(
            format!("{e:#}").contains("classes = \"coherent,bogus\": use"),
            "{e:#}"
        );
    }

    #[test]
    fn shipped_default_config_is_valid() {
        let text = include_str!("../../dist/config/config.toml");
        let a = p(text).unwrap();
        assert_eq!(a.policy.mode, Mode::Enforce);
        assert_eq!(a.policy.scope, Scope::Rdna1);
        assert_eq!(a.policy.classes, Classes::DEFAULT);
        assert_eq!(a.policy.vm_scope, VmScope::Compute);
        assert_eq!(a.layout, LayoutSetting::Auto);
    }

    #[test]
    fn unknown_key_is_named() {
        let e = format!(
            "{:#}",
            p("schema = 1\nmode = \"enforce\"\nmdoe = 1\n").unwrap_err()
        );
        assert!(e.contains("mdoe"), "{e}");
        assert!(e.contains("config.toml"), "{e}");
    }

    #[test]
    fn bad_values_say_what_is_allowed() {
        for (text, needle) in [
            ("schema = 1\nmode = \"turbo\"\n", "mode = \"turbo\""),
            (
                "schema = 1\nmode = \"off\"\nscope = \"rdna3\"\n",
                "scope = \"rdna3\"",
            ),
            ("schema = 1\nmode = \"off\"\nscope = []\n", "scope = []"),
            (
                "schema = 1\nmode = \"off\"\nclasses = [\"all\"]\n",
                "classes = [\"all\"]",
            ),
            (
                "schema = 1\nmode = \"off\"\nclasses = [\"uc_request\", \"uc_request\"]\n",
                "classes = [\"uc_request\", \"uc_request\"]",
            ),
            (
                "schema = 1\nmode = \"off\"\nvm_scope = \"graphics\"\n",
                "vm_scope = \"graphics\": use \"compute\"",
            ),
            ("schema = 1\nmode = \"off\"\nlayout = \"guess\"\n", "layout"),
            ("schema = 2\nmode = \"off\"\n", "schema = 2"),
            ("mode = \"off\"\n", "schema"),
        ] {
            let e = format!("{:#}", p(text).unwrap_err());
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn scope_takes_lspci_short_and_upper_case_addresses_once() {
        let list = |t: &str| parse_scope(t).map(|s| s.to_string());
        assert_eq!(list("rdna1").as_deref(), Some("rdna1"));
        assert_eq!(list(" gfx10\n").as_deref(), Some("gfx10"));
        assert_eq!(list("03:00.0").as_deref(), Some("0000:03:00.0"));
        assert_eq!(list("0000:0A:00.0").as_deref(), Some("0000:0a:00.0"));
        assert_eq!(
            list("03:00.0,0000:03:00.0, 0A:00.0,0000:0a:00.0").as_deref(),
            Some("0000:03:00.0,0000:0a:00.0"),
            "duplicates in any spelling are one"
        );
        // Nine spellings of eight devices fit the module's eight.
        let nine = "01:00.0,02:00.0,03:00.0,04:00.0,05:00.0,06:00.0,07:00.0,08:00.0,08:00.0";
        assert_eq!(parse_scope(nine).map(|s| s.addrs().len()), Some(8));
        for bad in [
            "",
            ",",
            "03:00.0,",
            "3:00.0",
            "0000:03:00.8",
            "RDNA1",
            "01:00.0,02:00.0,03:00.0,04:00.0,05:00.0,06:00.0,07:00.0,08:00.0,09:00.0",
        ] {
            assert_eq!(parse_scope(bad), None, "{bad:?}");
        }
    }
}
