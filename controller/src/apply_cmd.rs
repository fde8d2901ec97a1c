//! `rdna1ctl apply`: the policy from `/etc/rdna1-mtype/config.toml` (what the systemd unit
//! runs). The whole file is checked before anything is sent; then the layout and the policy
//! are set, and if the policy is refused the layout is put back: nothing is half-applied.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use rdna1_mtype_shared::policy::{Classes, Mode, Policy, Scope};
use serde::{Deserialize, Serialize};

use crate::exit::{coded, Code};
use crate::module_state::{self, ModuleState};
use crate::output::PolicyJson;
use crate::{bo_layout, device, layout_cmd, output, Ctx};

/// The only schema version this rdna1ctl reads.
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
    /// BO classes whose forced UC is rewritten: [], ["coherent"], ["coherent", "uncached"].
    #[serde(default = "default_classes")]
    pub classes: Vec<String>,
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
            "{where_}: classes = {:?}: use [], [\"coherent\"], [\"uncached\"] or \
             [\"coherent\", \"uncached\"]",
            c.classes
        )
    })?;
    Ok(Plan {
        policy: Policy {
            mode,
            scope,
            classes,
        },
        layout: c.layout,
    })
}

#[derive(Serialize)]
struct ApplyJson {
    config: String,
    dry_run: bool,
    policy: PolicyJson,
    /// The layout written to the module, or null if left as it was.
    layout: Option<String>,
}

/// The `bo_layout` value to write for `setting`, or None to leave it.
fn layout_value(ctx: &Ctx, setting: LayoutSetting) -> Result<Option<String>> {
    Ok(match setting {
        LayoutSetting::Keep => None,
        LayoutSetting::Builtin => Some("builtin".to_owned()),
        LayoutSetting::Btf => Some(bo_layout::from_sysfs(&ctx.root)?.to_string()),
        LayoutSetting::Auto if ctx.root.path(bo_layout::AMDGPU_BTF).exists() => {
            Some(bo_layout::from_sysfs(&ctx.root)?.to_string())
        }
        LayoutSetting::Auto => Some("builtin".to_owned()),
    })
}

pub fn run(ctx: &Ctx, config: &Path, dry_run: bool, out: &mut impl Write) -> Result<Code> {
    let path = ctx.root.path(&config.to_string_lossy());
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound => {
                ": create it (an example with every key: docs/CLI.md, \"Config file\")"
            }
            _ => "",
        };
        anyhow::Error::new(e).context(format!("reading {}{hint}", path.display()))
    })?;
    let plan = plan(&text, &path)?;
    let layout = layout_value(ctx, plan.layout)?;
    tracing::info!(?plan, ?layout, "config checked");
    if dry_run {
        return report(ctx, &path, true, &plan.policy, layout, out);
    }
    let ModuleState::Loaded(before) = module_state::read(&ctx.root)? else {
        return Err(coded(
            Code::NoModule,
            "rdna1_mtype is not loaded: nothing applied (sudo modprobe rdna1_mtype)",
        ));
    };
    let dev = device::open(&ctx.root)?;
    if let Some(l) = &layout {
        layout_cmd::write_param(&ctx.root, l)?;
    }
    if let Err(e) = dev.set_policy(&plan.policy) {
        if layout.is_some() {
            // Put back what was there, so a refused policy leaves the module as it was.
            let old = match (before.bo_layout, before.bo_layout_source.as_str()) {
                (_, "builtin") => "builtin".to_owned(),
                (Some(l), _) => l.to_string(),
                (None, _) => "none".to_owned(),
            };
            if let Err(e2) = layout_cmd::write_param(&ctx.root, &old) {
                tracing::error!("restoring the layout {old:?} failed too: {e2:#}");
            }
        }
        return Err(e.context("setting the policy; nothing was changed"));
    }
    let now = dev.policy()?;
    if now != plan.policy {
        bail!("the module reads back a different policy than was set (another writer?)");
    }
    report(ctx, &path, false, &now, layout, out)
}

fn report(
    ctx: &Ctx,
    path: &Path,
    dry_run: bool,
    policy: &Policy,
    layout: Option<String>,
    out: &mut impl Write,
) -> Result<Code> {
    if ctx.json {
        let doc = ApplyJson {
            config: path.display().to_string(),
            dry_run,
            policy: policy.into(),
            layout,
        };
        output::json("apply", &doc, out)?;
        return Ok(Code::Ok);
    }
    let verb = if dry_run { "would set" } else { "applied" };
    writeln!(out, "{} {verb}:", path.display())?;
    crate::set_cmd::print_policy(policy, out)?;
    writeln!(
        out,
        "layout:  {}",
        layout.as_deref().unwrap_or("kept as it was")
    )?;
    Ok(Code::Ok)
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
                   classes = [\"coherent\", \"uncached\"]\nlayout = \"btf\"\n",
        )
        .unwrap();
        assert_eq!(a.policy.mode, Mode::Enforce);
        assert_eq!(a.policy.scope.to_string(), "0000:03:00.0,0001:0a:00.0");
        assert_eq!(a.policy.classes.to_string(), "coherent,uncached");
        assert_eq!(a.layout, LayoutSetting::Btf);
        let d = p("schema = 1\nmode = \"audit\"\n").unwrap();
        assert_eq!(d.policy.scope, Scope::Rdna1);
        assert_eq!(d.policy.classes, Classes::DEFAULT);
        assert_eq!(d.layout, LayoutSetting::Auto);
        let none = p("schema = 1\nmode = \"off\"\nclasses = []\n").unwrap();
        assert_eq!(none.policy.classes.to_string(), "none");
    }

    #[test]
    fn shipped_default_config_is_valid() {
        let text = include_str!("../../config/config.toml");
        let a = p(text).unwrap();
        assert_eq!(a.policy.mode, Mode::Enforce);
        assert_eq!(a.policy.scope, Scope::Rdna1);
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
            ("schema = 1\nmode = \"off\"\nlayout = \"guess\"\n", "layout"),
            ("schema = 2\nmode = \"off\"\n", "schema = 2"),
            ("mode = \"off\"\n", "schema"),
        ] {
            let e = format!("{:#}", p(text).unwrap_err());
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
