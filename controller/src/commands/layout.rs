//! `rdna1ctl layout [--apply]`.

use std::io::Write;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::btf;
use crate::exit::{coded, Code};
use crate::module::params::{self, LoadedModule, ModuleState};
use crate::{output, Ctx};

/// The module's layout in JSON: value (or null), status, source.
#[derive(Serialize)]
struct ModuleLayoutJson {
    value: Option<String>,
    status: &'static str,
    source: &'static str,
}

impl From<&LoadedModule> for ModuleLayoutJson {
    fn from(m: &LoadedModule) -> Self {
        ModuleLayoutJson {
            value: m.bo_layout.map(|l| l.to_string()),
            status: m.bo_layout_status.name(),
            source: m.bo_layout_source.name(),
        }
    }
}

/// `rdna1ctl layout --json` (docs/CLI.md).
#[derive(Serialize)]
struct LayoutJson {
    /// From /sys/kernel/btf/amdgpu.
    btf: String,
    /// The module's, before --apply; null if it is not loaded.
    module: Option<ModuleLayoutJson>,
    /// The module's after --apply; null without --apply.
    applied: Option<ModuleLayoutJson>,
}

pub fn run(ctx: &Ctx, apply: bool, out: &mut impl Write) -> Result<()> {
    let root = &ctx.root;
    let layout = btf::layout::from_sysfs(root)?;
    let mut doc = LayoutJson {
        btf: layout.to_string(),
        module: None,
        applied: None,
    };
    if !ctx.json {
        writeln!(out, "amdgpu_bo layout from BTF: {layout}")?;
    }
    let loaded = match params::read(root)? {
        ModuleState::Loaded(m) => m,
        ModuleState::NotLoaded if apply => {
            return Err(coded(
                Code::NoModule,
                "rdna1_mtype is not loaded: load it first (sudo modprobe rdna1_mtype)",
            ));
        }
        ModuleState::NotLoaded if ctx.json => return output::json("layout", &doc, out),
        ModuleState::NotLoaded => return Ok(()),
    };
    doc.module = Some((&loaded).into());
    if !ctx.json {
        let current = match loaded.bo_layout {
            Some(l) => l.to_string(),
            None => "none".to_owned(),
        };
        writeln!(
            out,
            "module's layout:           {current} ({}, {})",
            loaded.bo_layout_status, loaded.bo_layout_source
        )?;
    }
    if apply {
        params::write_bo_layout(root, &layout.to_string())?;
        let ModuleState::Loaded(after) = params::read(root)? else {
            bail!("rdna1_mtype was unloaded while applying the layout");
        };
        if !ctx.json {
            writeln!(
                out,
                "applied; module now reads: {} ({})",
                after
                    .bo_layout
                    .map(|l| l.to_string())
                    .unwrap_or_else(|| "none".into()),
                after.bo_layout_status
            )
            .context("printing")?;
        }
        doc.applied = Some((&after).into());
    }
    if ctx.json {
        output::json("layout", &doc, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::layout::tests::{write_pair, LAYOUT};
    use crate::sysroot::SysRoot;

    #[test]
    fn json_has_the_btf_and_the_module_layouts() {
        let root =
            std::env::temp_dir().join(format!("rdna1ctl-layout-json-{}", std::process::id()));
        let btf = root.join("sys/kernel/btf");
        std::fs::create_dir_all(&btf).unwrap();
        write_pair(&btf, LAYOUT, true);
        let ctx = Ctx {
            root: SysRoot::new(root.clone()),
            json: true,
        };
        let mut v = Vec::new();
        run(&ctx, false, &mut v).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(doc["command"], "layout");
        assert_eq!(doc["btf"], LAYOUT.to_string());
        assert!(doc["module"].is_null(), "no module loaded: {doc}");
        // --apply without the module: exit 5, nothing written.
        let e = run(&ctx, true, &mut Vec::new()).unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::NoModule);
        std::fs::remove_dir_all(root).unwrap();
    }
}
