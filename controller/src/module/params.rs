//! What sysfs says about the loaded `rdna1_mtype` module.

use anyhow::{Context, Result};
use rdna1_mtype_shared::bo::{BoLayout, LayoutSource, LayoutStatus, BO_LAYOUT_NONE};
use rdna1_mtype_shared::policy::{Classes, Mode, Scope, VmScope};

use crate::sysroot::SysRoot;

/// sysfs directory of the module.
pub const MODULE_DIR: &str = "/sys/module/rdna1_mtype";

/// The module's state, as its sysfs attributes report it.
#[derive(Debug, PartialEq, Eq)]
pub enum ModuleState {
    NotLoaded,
    Loaded(LoadedModule),
}

#[derive(Debug, PartialEq, Eq)]
pub struct LoadedModule {
    pub version: String,
    pub mode: Mode,
    pub scope: Scope,
    /// As the module behaves: a module older than `parameters/vm_scope` (ABI 1) changes every
    /// VM and rewrites requested UC, so it reads as VM scope `all` with `uc_request` on.
    pub classes: Classes,
    /// Which VMs the policy applies to (`parameters/vm_scope`).
    pub vm_scope: VmScope,
    /// The module has no `parameters/vm_scope`: it predates the VM scope (ABI 1).
    pub predates_vm_scope: bool,
    /// The amdgpu_bo layout the module classifies BOs with, if any.
    pub bo_layout: Option<BoLayout>,
    /// Whether that layout is in use (`unset` or `ok`).
    pub bo_layout_status: LayoutStatus,
    /// `builtin` (the module's own copy of amdgpu_bo), `set` (written by root) or `none`.
    pub bo_layout_source: LayoutSource,
    /// Whether the hook on amdgpu's `gmc_v10_0_get_vm_pte` is registered.
    pub armed: bool,
    /// Why the last arming failed (`parameters/arm_error`), if it did.
    pub arm_error: Option<String>,
    /// Calls the hook's guards refused (`parameters/rejected`).
    pub rejected: u64,
    /// Calls fprobe did not hand to the module (`parameters/missed`, its `nmissed`); `None`
    /// for a module without that parameter.
    pub missed: Option<u64>,
}

#[cfg(test)]
impl LoadedModule {
    /// An armed module with a root-set layout, in `mode` and `scope`: the one fixture the
    /// status and verdict tests share.
    pub(crate) fn armed_for_tests(mode: Mode, scope: &str) -> LoadedModule {
        LoadedModule {
            version: "0.1.0".into(),
            mode,
            scope: Scope::parse(scope.as_bytes()).unwrap(),
            classes: Classes::DEFAULT,
            vm_scope: VmScope::Compute,
            predates_vm_scope: false,
            bo_layout: BoLayout::parse(b"size=1336 preferred_domains=0 tbo=56 flags=1240"),
            bo_layout_status: LayoutStatus::Ok,
            bo_layout_source: LayoutSource::Set,
            armed: true,
            arm_error: None,
            rejected: 0,
            missed: Some(0),
        }
    }
}

pub fn read(root: &SysRoot) -> Result<ModuleState> {
    let dir = root.path(MODULE_DIR);
    if !dir.is_dir() {
        return Ok(ModuleState::NotLoaded);
    }
    let attr = |name: &str| -> Result<String> {
        let p = dir.join(name);
        root.read_attr(&p)
            .with_context(|| format!("reading {}", p.display()))?
            .with_context(|| {
                format!(
                    "{} is missing: is this an rdna1_mtype build older than rdna1ctl?",
                    p.display()
                )
            })
    };
    let version = attr("version")?;
    // A word this rdna1ctl does not know: the file, the word, and the fix.
    let unknown = |what: &str, name: &str, text: &str| {
        format!(
            "the module reports an unknown {what} {text:?}: rdna1ctl and the module differ in \
             version ({} reads it; this is rdna1ctl {}): install the rdna1ctl of rdna1-mtype \
             {version}, or load the module of this rdna1ctl (sudo modprobe -r rdna1_mtype && \
             sudo modprobe rdna1_mtype)",
            dir.join(name).display(),
            env!("CARGO_PKG_VERSION")
        )
    };
    let mode_text = attr("parameters/mode")?;
    let mode = Mode::parse(mode_text.as_bytes())
        .with_context(|| unknown("mode", "parameters/mode", &mode_text))?;
    let scope_text = attr("parameters/scope")?;
    let scope = Scope::parse(scope_text.as_bytes())
        .with_context(|| unknown("scope", "parameters/scope", &scope_text))?;
    let classes_text = attr("parameters/classes")?;
    let mut classes = Classes::parse(classes_text.as_bytes())
        .with_context(|| unknown("classes", "parameters/classes", &classes_text))?;
    let layout_text = attr("parameters/bo_layout")?;
    let bo_layout = match layout_text.as_str() {
        BO_LAYOUT_NONE => None,
        t => Some(BoLayout::parse(t.as_bytes()).with_context(|| {
            format!("the module reports a bo_layout rdna1ctl cannot read: {t:?}")
        })?),
    };
    let word = |name: &str| -> Result<String> { attr(&format!("parameters/{name}")) };
    let status_text = word("bo_layout_status")?;
    let bo_layout_status = LayoutStatus::parse(status_text.as_bytes()).with_context(|| {
        unknown(
            "bo_layout_status",
            "parameters/bo_layout_status",
            &status_text,
        )
    })?;
    let source_text = word("bo_layout_source")?;
    let bo_layout_source = LayoutSource::parse(source_text.as_bytes()).with_context(|| {
        unknown(
            "bo_layout_source",
            "parameters/bo_layout_source",
            &source_text,
        )
    })?;
    let armed = match attr("parameters/armed")?.as_str() {
        "Y" | "1" => true,
        "N" | "0" => false,
        other => anyhow::bail!("parameters/armed reads {other:?}, expected Y or N"),
    };
    // Newer than the other parameters: a module loaded before an upgrade of rdna1ctl lacks
    // them, and status/apply must still work against it.
    let optional = |name: &str| root.read_attr(&dir.join(name)).ok().flatten();
    let arm_error = optional("parameters/arm_error").filter(|e| !e.is_empty());
    // A module without `vm_scope` predates it: it changes every VM's mappings and rewrites
    // requested UC (it has no `uc_request` class), so that is what it is shown to do, never
    // the safer default it does not have.
    let (vm_scope, predates_vm_scope) = match optional("parameters/vm_scope") {
        None => {
            classes.uc_request = true;
            (VmScope::All, true)
        }
        Some(t) => (
            VmScope::parse(t.as_bytes())
                .with_context(|| unknown("vm_scope", "parameters/vm_scope", &t))?,
            false,
        ),
    };
    let rejected = match optional("parameters/rejected") {
        None => 0,
        Some(t) => t
            .parse()
            .with_context(|| format!("parameters/rejected reads {t:?}, expected a count"))?,
    };
    let missed = match optional("parameters/missed") {
        None => None,
        Some(t) => Some(
            t.parse()
                .with_context(|| format!("parameters/missed reads {t:?}, expected a count"))?,
        ),
    };
    Ok(ModuleState::Loaded(LoadedModule {
        version,
        mode,
        scope,
        classes,
        vm_scope,
        predates_vm_scope,
        bo_layout,
        bo_layout_status,
        bo_layout_source,
        armed,
        arm_error,
        rejected,
        missed,
    }))
}

/// Writes `value` (a layout, `builtin` or `none`) to the module's `bo_layout` parameter.
pub fn write_bo_layout(root: &SysRoot, value: &str) -> Result<()> {
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
