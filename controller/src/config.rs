//! `/etc/rdna1-mtype/config.toml` (docs/CLI.md, "Config file"): parsed and checked whole
//! before anything is sent, into a [`Plan`].

use std::path::Path;

use anyhow::{bail, Context, Result};
use rdna1_mtype_shared::policy::{Classes, Mode, Policy, Scope, VmScope};
use serde::{Deserialize, Serialize};

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
    /// Optional classes: "coherent", "uncached", "uc_request", in any combination, or [].
    #[serde(default = "default_classes")]
    pub classes: Vec<String>,
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
fn default_classes() -> Vec<String> {
    vec!["coherent".into()]
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

/// Parses and checks `text` (from `path`, for messages) without touching the system.
pub fn plan(text: &str, path: &Path) -> Result<Plan> {
    let where_ = path.display();
    let c: Config = toml::from_str(text).with_context(|| format!("{where_} is not valid"))?;
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
    let scope = Scope::parse(scope_text.as_bytes()).with_context(|| {
        format!(
            "{where_}: scope = {scope_text:?}: use \"rdna1\", \"gfx10\" or a list of 1 to 8 \
             PCI addresses like [\"0000:03:00.0\"]"
        )
    })?;
    let classes_text = if c.classes.is_empty() {
        "none".to_owned()
    } else {
        c.classes.join(",")
    };
    let classes = Classes::parse(classes_text.as_bytes()).with_context(|| {
        format!(
            "{where_}: classes = {:?}: use a list of \"coherent\", \"uncached\" and \
             \"uc_request\", each at most once, or []",
            c.classes
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
}
