//! `rdna1ctl layout [--apply]`.

use std::io::Write;

use anyhow::{bail, Context, Result};

use crate::bo_layout;
use crate::module_state::{self, ModuleState, MODULE_DIR};
use crate::sysroot::SysRoot;

/// Writes `value` (a layout, `builtin` or `none`) to the module's `bo_layout` parameter.
pub fn write_param(root: &SysRoot, value: &str) -> Result<()> {
    let param = root.path(&format!("{MODULE_DIR}/parameters/bo_layout"));
    std::fs::write(&param, format!("{value}\n")).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::PermissionDenied => ": only root may change the policy (sudo)",
            std::io::ErrorKind::InvalidInput => ": the module refused it (see dmesg)",
            _ => "",
        };
        let what = format!("writing {value:?} to {}: {e}{hint}", param.display());
        anyhow::Error::new(e).context(what)
    })
}

pub fn run(root: &SysRoot, apply: bool, out: &mut impl Write) -> Result<()> {
    let layout = bo_layout::from_sysfs(root)?;
    writeln!(out, "amdgpu_bo layout from BTF: {layout}")?;
    let loaded = match module_state::read(root)? {
        ModuleState::Loaded(m) => m,
        ModuleState::NotLoaded if apply => {
            bail!("rdna1_mtype is not loaded: load it first (sudo modprobe rdna1_mtype)")
        }
        ModuleState::NotLoaded => return Ok(()),
    };
    let current = match loaded.bo_layout {
        Some(l) => l.to_string(),
        None => "none".to_owned(),
    };
    writeln!(
        out,
        "module's layout:           {current} ({})",
        loaded.bo_layout_status
    )?;
    if !apply {
        return Ok(());
    }
    write_param(root, &layout.to_string())?;
    let ModuleState::Loaded(after) = module_state::read(root)? else {
        bail!("rdna1_mtype was unloaded while applying the layout");
    };
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
    Ok(())
}
