//! AMD GPUs found on the PCI bus, with their name and gfx target.
//!
//! PCI attributes are read with `sysfs-class` (docs/DEPENDENCIES.md says why this crate), the
//! marketing name from the system's pci.ids ([`names`]), the gfx target of non-RDNA1 GPUs from
//! KFD's topology ([`kfd`]). Everything is read below the [`SysRoot`], so fixtures work.

pub mod kfd;
mod names;

use std::io;
use std::path::Path;

use anyhow::{Context, Result};
use rdna1_mtype_shared::devices::{rdna1_chip, Rdna1Chip, PCI_VENDOR_AMD};
use rdna1_mtype_shared::pci::PciAddr;
use sysfs_class::{PciDevice, SysClass};

use crate::sysroot::SysRoot;
use names::VendorIds;

/// One AMD display-class PCI function.
#[derive(Debug, PartialEq, Eq)]
pub struct Gpu {
    /// PCI address, e.g. `0000:03:00.0`.
    pub address: String,
    /// The same address, packed as the module and the policy see it.
    pub pci_addr: PciAddr,
    pub device_id: u16,
    /// Board (subsystem) vendor and device ids, when sysfs has them.
    pub subsystem: Option<(u16, u16)>,
    pub rdna1: Option<Rdna1Chip>,
    /// The kernel driver bound to it, if any.
    pub driver: Option<String>,
    /// Marketing name from pci.ids, else the RDNA1 chip name (`navi10`), else `None`.
    pub name: Option<String>,
    /// LLVM gfx target (`gfx1010`): RDNA1 from the shared table, others from KFD's topology
    /// (only while amdgpu drives them with KFD); `None` if neither knows.
    pub gfx_target: Option<String>,
}

/// `Ok(None)` for a missing attribute (the device is skipped), the error with its path otherwise.
fn attr<T>(dir: &Path, name: &str, value: io::Result<T>) -> Result<Option<T>> {
    match value {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", dir.join(name).display())),
    }
}

/// AMD GPUs (vendor 0x1002, PCI display class 0x03), sorted by address.
pub fn discover(root: &SysRoot) -> Result<Vec<Gpu>> {
    let bus = root.path("/sys/bus/pci/devices");
    let entries = match std::fs::read_dir(&bus) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", bus.display())),
    };
    // Read on first use: a machine without AMD GPU never needs pci.ids, one with only RDNA1
    // GPUs never needs KFD's topology.
    let mut pci_ids = None;
    let mut kfd_nodes = None;
    let mut gpus = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", bus.display()))?;
        let dir = entry.path();
        let address = entry.file_name().to_string_lossy().into_owned();
        let Some(pci_addr) = PciAddr::parse(address.as_bytes()) else {
            tracing::debug!("{}: not a PCI address, skipped", dir.display());
            continue;
        };
        // SAFETY: `from_path_unchecked` has no memory-safety precondition; it is `unsafe` only
        // because it skips `from_path`'s check that the path is under the real
        // /sys/bus/pci/devices, which would refuse a `--root` tree. `dir` is an entry of that
        // directory below our root.
        let dev = unsafe { PciDevice::from_path_unchecked(dir.clone()) };
        if attr(&dir, "vendor", dev.vendor())? != Some(PCI_VENDOR_AMD) {
            continue;
        }
        if attr(&dir, "class", dev.class())?.map(|c| c >> 16) != Some(0x03) {
            continue;
        }
        let Some(device_id) = attr(&dir, "device", dev.device())? else {
            continue;
        };
        let subsystem = match (
            attr(&dir, "subsystem_vendor", dev.subsystem_vendor())?,
            attr(&dir, "subsystem_device", dev.subsystem_device())?,
        ) {
            (Some(v), Some(d)) => Some((v, d)),
            _ => None,
        };
        // `driver()` resolves the `driver` link: a device without a driver has no link.
        let driver = attr(&dir, "driver", dev.driver())?.and_then(|d| {
            d.path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        });
        let rdna1 = rdna1_chip(PCI_VENDOR_AMD, device_id);
        let name = pci_ids
            .get_or_insert_with(|| VendorIds::load(root, PCI_VENDOR_AMD))
            .as_ref()
            .and_then(|ids| ids.device_name(device_id))
            .or_else(|| rdna1.map(|c| c.name().to_owned()));
        let gfx_target = match rdna1 {
            Some(chip) => Some(chip.gfx_target().to_owned()),
            None => {
                let nodes = kfd_nodes.get_or_insert_with(|| kfd::nodes(root));
                kfd::gfx_target(nodes, pci_addr)
            }
        };
        gpus.push(Gpu {
            address,
            pci_addr,
            device_id,
            subsystem,
            rdna1,
            driver,
            name,
            gfx_target,
        });
    }
    gpus.sort_by(|a, b| a.address.cmp(&b.address));
    Ok(gpus)
}

/// Whether amdgpu is loaded: its sysfs directory (there also when built in) or a GPU bound to
/// it. Status and doctor both judge "not armed" with this one answer.
pub fn amdgpu_loaded(root: &SysRoot, gpus: &[Gpu]) -> bool {
    root.path("/sys/module/amdgpu").is_dir()
        || gpus.iter().any(|g| g.driver.as_deref() == Some("amdgpu"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A GPU at 0000:BUS:00.0 as discovery would return it, for other modules' tests.
    pub fn gpu(bus: u8, device_id: u16, driver: Option<&str>) -> Gpu {
        let pci_addr = PciAddr::new(0, bus, 0, 0).unwrap();
        Gpu {
            address: pci_addr.to_string(),
            pci_addr,
            device_id,
            subsystem: Some((0x1da2, 0xe411)),
            rdna1: rdna1_chip(PCI_VENDOR_AMD, device_id),
            driver: driver.map(str::to_owned),
            name: Some("Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]".into()),
            gfx_target: Some("gfx1010".into()),
        }
    }

    fn fixture(name: &str) -> SysRoot {
        SysRoot::new(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures")
                .join(name),
        )
    }

    #[test]
    fn rdna1_fixture_has_one_gpu_with_everything() {
        let gpus = discover(&fixture("rdna1-enforce")).unwrap();
        assert_eq!(gpus.len(), 1, "the HDMI audio function is no GPU: {gpus:?}");
        let g = &gpus[0];
        assert_eq!(g.address, "0000:03:00.0");
        assert_eq!(g.pci_addr, PciAddr::new(0, 3, 0, 0).unwrap());
        assert_eq!(g.device_id, 0x731f);
        assert_eq!(g.subsystem, Some((0x1da2, 0xe411)));
        assert_eq!(g.rdna1, Some(Rdna1Chip::Navi10));
        assert_eq!(g.driver.as_deref(), Some("amdgpu"));
        assert_eq!(
            g.name.as_deref(),
            Some("Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]")
        );
        assert_eq!(g.gfx_target.as_deref(), Some("gfx1010"));
    }

    #[test]
    fn non_rdna1_gpus_get_their_target_from_kfd_and_other_vendors_are_skipped() {
        let gpus = discover(&fixture("rdna1-plus-other")).unwrap();
        let addrs: Vec<_> = gpus.iter().map(|g| g.address.as_str()).collect();
        assert_eq!(addrs, ["0000:03:00.0", "0000:08:00.0", "0000:0b:00.0"]);
        let rx6600 = &gpus[2];
        assert_eq!(rx6600.rdna1, None);
        assert_eq!(rx6600.gfx_target.as_deref(), Some("gfx1032"));
        assert_eq!(
            rx6600.name.as_deref(),
            Some("Navi 23 [Radeon RX 6600/6600 XT/6600M]")
        );
        let vfio = &gpus[1];
        assert_eq!(vfio.driver.as_deref(), Some("vfio-pci"));
        assert_eq!(vfio.gfx_target.as_deref(), Some("gfx1012"));
    }

    #[test]
    fn missing_bus_is_no_gpu_and_unreadable_attribute_names_the_file() {
        let empty = SysRoot::new(std::env::temp_dir().join("rdna1ctl-no-such-root"));
        assert_eq!(discover(&empty).unwrap(), Vec::new());

        let dir = std::env::temp_dir().join(format!("rdna1ctl-badattr-{}", std::process::id()));
        let dev = dir.join("sys/bus/pci/devices/0000:03:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("vendor"), "0x1002\n").unwrap();
        std::fs::write(dev.join("class"), "0x03zz00\n").unwrap();
        let e = format!("{:#}", discover(&SysRoot::new(dir.clone())).unwrap_err());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("0000:03:00.0/class"), "{e}");
    }
}
