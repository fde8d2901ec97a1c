//! A target kernel's amdgpu BTF (running or only installed), and the hook's contract checked
//! against it.

pub mod contract;
pub mod layout;
pub mod locate;
pub mod query;
#[cfg(test)]
pub mod testbtf;
pub mod unpack;

use std::path::PathBuf;

use anyhow::{Context, Result};
use btf_rs::Btf;
use rdna1_mtype_shared::btf_id;
use schemars::JsonSchema;
use serde::Serialize;

use crate::btf::layout::{AMDGPU_BTF, VMLINUX_BTF};
use crate::sysroot::SysRoot;

/// Why a kernel's amdgpu BTF was not read as usual; each kind leads to its own verdict.
#[derive(Debug)]
pub enum NotRead {
    /// A kernel without BTF to read (the message says which file lacks it): decided by
    /// [`contract::without_btf`].
    NoBtf(String),
    /// An amdgpu built out of tree (amdgpu-dkms, say): its BTF has a distilled base
    /// (`.BTF.base`) that the kernel rewrites against vmlinux at load, so the module cannot
    /// compare it with what was checked (`shared/src/btf_id.rs`). Not hookable.
    OutOfTree(String),
}

impl std::fmt::Display for NotRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRead::NoBtf(m) | NotRead::OutOfTree(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for NotRead {}

/// Whether kernel `kver` can be hooked, and from which files that was decided: from its BTF
/// if it has any, else by [`contract::without_btf`]. Unreadable files make it not hookable.
pub fn assess(root: &SysRoot, kver: &str) -> (contract::Verdict, Option<Sources>) {
    match load(root, kver) {
        Ok(t) => (contract::check(&t.btf), Some(t.sources)),
        Err(e) => match e.chain().find_map(|c| c.downcast_ref::<NotRead>()) {
            Some(NotRead::NoBtf(why)) => (contract::without_btf(kver, why), None),
            Some(NotRead::OutOfTree(_)) => (
                contract::Verdict {
                    basis: contract::Basis::Btf,
                    problems: vec![format!("{e:#}")],
                    ..contract::Verdict::default()
                },
                None,
            ),
            None => (
                contract::Verdict {
                    basis: contract::Basis::Unreadable,
                    problems: vec![format!("{e:#}")],
                    ..contract::Verdict::default()
                },
                None,
            ),
        },
    }
}

/// The release of the running kernel (under `root`).
pub fn running_release(root: &SysRoot) -> Result<String> {
    let p = root.path("/proc/sys/kernel/osrelease");
    root.read_attr(&p)
        .with_context(|| format!("reading {}", p.display()))?
        .with_context(|| format!("{} does not exist", p.display()))
}

/// Where a kernel's BTF was read from.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Sources {
    /// The base (vmlinux) BTF: `/sys/kernel/btf/vmlinux` or the kernel image.
    pub base: PathBuf,
    /// amdgpu's BTF: `/sys/kernel/btf/amdgpu` (the loaded module) or a module file.
    pub amdgpu: PathBuf,
    /// The id of that BTF (`shared::btf_id`, as `0x` and 16 hex digits): the DKMS build
    /// compiles it into the module, which arms only on an amdgpu with the same id.
    pub amdgpu_btf_id: String,
}

/// amdgpu's BTF of kernel `kver`, split on that kernel's base BTF.
pub struct TargetBtf {
    pub btf: Btf,
    pub sources: Sources,
}

const OUT_OF_TREE: &str = "rdna1_mtype hooks only the amdgpu built with the kernel, whose BTF \
     it can compare at load (remove amdgpu-dkms, or use the kernel's own amdgpu)";

/// Reads amdgpu's BTF of `kver`. For the running kernel, the loaded amdgpu
/// (`/sys/kernel/btf/amdgpu`, which is what would be hooked) if there is one; otherwise the
/// installed files: the amdgpu module modprobe would load, on the base BTF of the running
/// kernel or of the kernel's image.
pub fn load(root: &SysRoot, kver: &str) -> Result<TargetBtf> {
    let running = running_release(root).is_ok_and(|r| r == kver);
    let sys_base = root.path(VMLINUX_BTF);
    let sys_amdgpu = root.path(AMDGPU_BTF);
    // amdgpu first: a module without BTF decides the verdict (see `assess`) before a
    // missing image can.
    let (split_bytes, split_path) = if running && sys_amdgpu.is_file() {
        // The loaded module's taint letters: "O" is out of tree.
        let taint = root.path("/sys/module/amdgpu/taint");
        if root.read_attr(&taint)?.is_some_and(|t| t.contains('O')) {
            return Err(NotRead::OutOfTree(format!(
                "the loaded amdgpu is out of tree ({} has O): {OUT_OF_TREE}",
                taint.display()
            ))
            .into());
        }
        let b = std::fs::read(&sys_amdgpu)
            .with_context(|| format!("reading {}", sys_amdgpu.display()))?;
        (b, sys_amdgpu)
    } else {
        let module = locate::amdgpu_module(root, kver)?;
        let elf = unpack::read_file(&module)?;
        if unpack::has_section(&elf, ".BTF.base", &module)? {
            return Err(NotRead::OutOfTree(format!(
                "{} was built out of tree (its BTF has a distilled base, .BTF.base): {OUT_OF_TREE}",
                module.display()
            ))
            .into());
        }
        (unpack::btf_section(&elf, &module)?, module)
    };
    let (base_bytes, base_path) = if running && sys_base.is_file() {
        let b =
            std::fs::read(&sys_base).with_context(|| format!("reading {}", sys_base.display()))?;
        (b, sys_base)
    } else {
        let image = locate::kernel_image(root, kver)?;
        let raw = std::fs::read(&image).with_context(|| format!("reading {}", image.display()))?;
        let vmlinux = unpack::vmlinux_from_image(&raw, &image)?;
        (unpack::btf_section(&vmlinux, &image)?, image)
    };
    let base = Btf::from_bytes(&base_bytes)
        .with_context(|| format!("parsing the base BTF of {}", base_path.display()))?;
    let btf = Btf::from_split_bytes(&split_bytes, &base)
        .with_context(|| format!("parsing the BTF of {}", split_path.display()))?;
    Ok(TargetBtf {
        btf,
        sources: Sources {
            base: base_path,
            amdgpu: split_path,
            amdgpu_btf_id: format!("{:#018x}", btf_id::btf_id(&split_bytes)),
        },
    })
}
