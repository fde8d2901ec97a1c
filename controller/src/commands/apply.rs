//! `rdna1ctl apply`: the policy from `/etc/rdna1-mtype/config.toml` (what the systemd unit
//! runs). The whole file is checked before anything is sent; then the layout and the policy
//! are set, and if the policy is refused the layout is put back: nothing is half-applied.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use rdna1_mtype_shared::bo::{LayoutSource, BO_LAYOUT_BUILTIN, BO_LAYOUT_NONE};
use rdna1_mtype_shared::policy::Policy;
use schemars::JsonSchema;
use serde::Serialize;

use crate::btf;
use crate::config::{plan, LayoutSetting};
use crate::exit::{coded, Code};
use crate::module::control;
use crate::module::params::{self, ModuleState};
use crate::output::{self, ModuleLayoutJson, PolicyJson};
use crate::Ctx;

/// `rdna1ctl --json apply` (docs/CLI.md).
#[derive(Serialize, JsonSchema)]
pub struct ApplyJson {
    /// The config file read.
    config: String,
    /// `--dry-run`: checked, nothing set.
    dry_run: bool,
    /// The policy set (read back from the module), or that would be set.
    policy: PolicyJson,
    /// The value written to the module's `bo_layout` parameter (with `--dry-run`: that would
    /// be), as `check-kernel`'s `bo_layout`: a layout `size=N preferred_domains=N tbo=N
    /// flags=N`, or `builtin`; null when the config keeps the layout as it is.
    bo_layout: Option<String>,
    /// The module's layout read back after applying, as `status`'s `module.layout`; null with
    /// `--dry-run`.
    layout: Option<ModuleLayoutJson>,
}

/// The `bo_layout` value to write for `setting`, or None to leave it.
fn layout_value(ctx: &Ctx, setting: LayoutSetting) -> Result<Option<String>> {
    Ok(match setting {
        LayoutSetting::Keep => None,
        LayoutSetting::Builtin => Some(BO_LAYOUT_BUILTIN.to_owned()),
        LayoutSetting::Btf => Some(btf::layout::from_sysfs(&ctx.root)?.to_string()),
        LayoutSetting::Auto if ctx.root.path(btf::layout::AMDGPU_BTF).exists() => {
            Some(btf::layout::from_sysfs(&ctx.root)?.to_string())
        }
        LayoutSetting::Auto => Some(BO_LAYOUT_BUILTIN.to_owned()),
    })
}

/// Where `--config` is: an absolute path (the default, what the unit gives) below the root, a
/// relative one from the current directory, as the user who typed it means it.
fn config_path(ctx: &Ctx, config: &Path) -> PathBuf {
    if config.is_absolute() {
        let below = config.strip_prefix("/").unwrap_or(config);
        return ctx.root.base().join(below);
    }
    // Without a current directory (it was removed), the relative path is the best left.
    std::env::current_dir()
        .map(|d| d.join(config))
        .unwrap_or_else(|_| config.to_path_buf())
}

pub fn run(ctx: &Ctx, config: &Path, dry_run: bool, out: &mut impl Write) -> Result<Code> {
    let path = config_path(ctx, config);
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
    crate::gpus::warn_off_bus(&ctx.root, &plan.policy.scope);
    if dry_run {
        return report(ctx, &path, true, &plan.policy, layout, None, out);
    }
    let ModuleState::Loaded(before) = params::read(&ctx.root)? else {
        return Err(coded(
            Code::NoModule,
            "rdna1_mtype is not loaded: nothing applied (sudo modprobe rdna1_mtype)",
        ));
    };
    let dev = control::open(&ctx.root)?;
    if let Some(l) = &layout {
        params::write_bo_layout(&ctx.root, l)?;
    }
    if let Err(e) = dev.set_policy(&plan.policy) {
        if layout.is_some() {
            // Put back what was there, so a refused policy leaves the module as it was.
            let old = match (before.bo_layout, before.bo_layout_source) {
                (_, LayoutSource::Builtin) => BO_LAYOUT_BUILTIN.to_owned(),
                (Some(l), _) => l.to_string(),
                (None, _) => BO_LAYOUT_NONE.to_owned(),
            };
            if let Err(e2) = params::write_bo_layout(&ctx.root, &old) {
                tracing::error!("restoring the layout {old:?} failed too: {e2:#}");
            }
        }
        return Err(e.context("setting the policy; nothing was changed"));
    }
    let now = dev.policy()?;
    if now != plan.policy {
        bail!("the module reads back a different policy than was set (another writer?)");
    }
    let ModuleState::Loaded(after) = params::read(&ctx.root)? else {
        bail!("rdna1_mtype was unloaded while applying");
    };
    report(ctx, &path, false, &now, layout, Some((&after).into()), out)
}

fn report(
    ctx: &Ctx,
    path: &Path,
    dry_run: bool,
    policy: &Policy,
    layout: Option<String>,
    after: Option<ModuleLayoutJson>,
    out: &mut impl Write,
) -> Result<Code> {
    if ctx.json {
        let doc = ApplyJson {
            config: path.display().to_string(),
            dry_run,
            policy: policy.into(),
            bo_layout: layout,
            layout: after,
        };
        output::json("apply", &doc, out)?;
        return Ok(Code::Ok);
    }
    let verb = if dry_run { "would set" } else { "applied" };
    writeln!(out, "{} {verb}:", path.display())?;
    output::print_policy(policy, out)?;
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
    use crate::sysroot::SysRoot;
    use rdna1_mtype_shared::policy::{Classes, Mode, Scope, VmScope};

    #[test]
    fn the_applied_document_has_the_written_value_and_the_layout_read_back() {
        let ctx = Ctx {
            root: SysRoot::new("/nonexistent".into()),
            json: true,
        };
        let policy = Policy {
            mode: Mode::Enforce,
            scope: Scope::Rdna1,
            classes: Classes::DEFAULT,
            vm_scope: VmScope::Compute,
        };
        let after = ModuleLayoutJson {
            value: Some("size=1336 preferred_domains=0 tbo=56 flags=1240".into()),
            status: "ok",
            source: "builtin",
        };
        let mut out = Vec::new();
        let path = Path::new("/etc/rdna1-mtype/config.toml");
        report(
            &ctx,
            path,
            false,
            &policy,
            Some(BO_LAYOUT_BUILTIN.into()),
            Some(after),
            &mut out,
        )
        .unwrap();
        let doc = crate::schema::assert_printed_valid::<ApplyJson>("apply", &out);
        assert_eq!(doc["bo_layout"], "builtin");
        assert_eq!(doc["layout"]["source"], "builtin");
        // Kept: nothing written, nothing read back under --dry-run.
        let mut out = Vec::new();
        report(&ctx, path, true, &policy, None, None, &mut out).unwrap();
        let doc = crate::schema::assert_printed_valid::<ApplyJson>("apply", &out);
        assert!(
            doc["bo_layout"].is_null() && doc["layout"].is_null(),
            "{doc}"
        );
    }
}
