//! AMD GPUs found on the PCI bus.

use anyhow::{Context, Result};
use rdna1_mtype_shared::devices::{rdna1_chip, Rdna1Chip, PCI_VENDOR_AMD};

use crate::sysroot::SysRoot;

/// One AMD display-class PCI function.
#[derive(Debug, PartialEq, Eq)]
pub struct Gpu {
    /// PCI address, e.g. `0000:03:00.0`.
    pub address: String,
    pub device_id: u16,
    pub rdna1: Option<Rdna1Chip>,
    /// The kernel driver bound to it, if any.
    pub driver: Option<String>,
}

fn hex_attr(root: &SysRoot, dir: &std::path::Path, name: &str) -> Result<Option<u32>> {
    let p = dir.join(name);
    let Some(text) = root
        .read_attr(&p)
        .with_context(|| format!("reading {}", p.display()))?
    else {
        return Ok(None);
    };
    let digits = text.strip_prefix("0x").unwrap_or(&text);
    u32::from_str_radix(digits, 16)
        .map(Some)
        .with_context(|| format!("{} holds {text:?}, not a hex number", p.display()))
}

/// AMD GPUs (vendor 0x1002, PCI display class 0x03), sorted by address.
pub fn discover(root: &SysRoot) -> Result<Vec<Gpu>> {
    let bus = root.path("/sys/bus/pci/devices");
    let entries = match std::fs::read_dir(&bus) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", bus.display())),
    };
    let mut gpus = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", bus.display()))?;
        let dir = entry.path();
        if hex_attr(root, &dir, "vendor")? != Some(u32::from(PCI_VENDOR_AMD)) {
            continue;
        }
        if hex_attr(root, &dir, "class")?.map(|c| c >> 16) != Some(0x03) {
            continue;
        }
        let Some(device) = hex_attr(root, &dir, "device")? else {
            continue;
        };
        let device_id = u16::try_from(device)
            .with_context(|| format!("{}: device id {device:#x} out of range", dir.display()))?;
        let driver = std::fs::read_link(dir.join("driver"))
            .ok()
            .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()));
        gpus.push(Gpu {
            address: entry.file_name().to_string_lossy().into_owned(),
            device_id,
            rdna1: rdna1_chip(PCI_VENDOR_AMD, device_id),
            driver,
        });
    }
    gpus.sort_by(|a, b| a.address.cmp(&b.address));
    Ok(gpus)
}
