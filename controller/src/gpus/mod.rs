//! AMD GPUs found on the PCI bus, with their name and gfx target.
//!
//! PCI attributes are read straight from sysfs with `std::fs` (docs/DEPENDENCIES.md says why
//! no crate), the marketing name from the system's pci.ids ([`names`]), the gfx target of
//! non-RDNA1 GPUs from KFD's topology ([`kfd`]). Everything is read below the [`SysRoot`], so
//! fixtures work. Odd content in an attribute never stops discovery: that device is skipped
//! with a warning naming the file.

pub mod kfd;
mod names;

use std::io;
use std::path::Path;

use anyhow::{Context, Result};
use rdna1_mtype_shared::devices::{rdna1_chip, Rdna1Chip, PCI_VENDOR_AMD};
use rdna1_mtype_shared::pci::PciAddr;

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

/// What reading one hex attribute (`0x1002`, as drivers/pci/pci-sysfs.c writes them) gave.
#[derive(Debug, PartialEq, Eq)]
enum Hex {
    Missing,
    Value(u32),
    /// Content that is no `0x`-prefixed hex number below `max`: the text, for the warning.
    Malformed(String),
}

/// The hex attribute `name` of the device at `dir`, at most `max`. An I/O error other than
/// "not found" (or "not text") is an error naming the file.
fn hex_attr(dir: &Path, name: &str, max: u32) -> Result<Hex> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Hex::Missing),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            return Ok(Hex::Malformed("(not UTF-8)".into()));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let t = text.trim();
    let value = t
        .strip_prefix("0x")
        .filter(|digits| !digits.is_empty())
        .and_then(|digits| u32::from_str_radix(digits, 16).ok())
        .filter(|&v| v <= max);
    Ok(match value {
        Some(v) => Hex::Value(v),
        None => Hex::Malformed(t.chars().take(40).collect()),
    })
}

/// Says why the device at `dir` is skipped, and returns `None` for the caller to skip it.
fn skip<T>(dir: &Path, name: &str, content: &str) -> Option<T> {
    tracing::warn!(
        "{}: {content:?} is not a PCI {name} (expected 0x and hex digits): device skipped; \
         is this a copied or hand-made tree?",
        dir.join(name).display()
    );
    None
}

/// A GPU's device id and its board (subsystem vendor and device) ids, if readable.
type Ids = (u16, Option<(u16, u16)>);

/// The PCI ids of the device at `dir`: `None` (skipped) if it is not an AMD display
/// controller, lacks an id, or has one that is not a hex number.
fn amd_display_ids(dir: &Path) -> Result<Option<Ids>> {
    let id16 = |name: &str| -> Result<Option<u16>> {
        Ok(match hex_attr(dir, name, 0xffff)? {
            Hex::Value(v) => u16::try_from(v).ok(),
            Hex::Missing => None,
            Hex::Malformed(t) => skip(dir, name, &t),
        })
    };
    if id16("vendor")? != Some(PCI_VENDOR_AMD) {
        return Ok(None);
    }
    // `class` is base class, subclass and programming interface: 0x030000 is a VGA controller.
    let class = match hex_attr(dir, "class", 0xff_ffff)? {
        Hex::Value(c) => c,
        Hex::Missing => return Ok(None),
        Hex::Malformed(t) => return Ok(skip(dir, "class", &t)),
    };
    if class >> 16 != 0x03 {
        return Ok(None);
    }
    let Some(device_id) = id16("device")? else {
        return Ok(None);
    };
    // Board ids are only shown: a malformed one is left out, the GPU is still judged.
    let board = |name: &str| -> Result<Option<u16>> {
        Ok(match hex_attr(dir, name, 0xffff)? {
            Hex::Value(v) => u16::try_from(v).ok(),
            _ => None,
        })
    };
    let subsystem = match (board("subsystem_vendor")?, board("subsystem_device")?) {
        (Some(v), Some(d)) => Some((v, d)),
        _ => None,
    };
    Ok(Some((device_id, subsystem)))
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
        let Some((device_id, subsystem)) = amd_display_ids(&dir)? else {
            continue;
        };
        // The `driver` link's last component names the driver; no link, no driver.
        let driver = std::fs::read_link(dir.join("driver"))
            .ok()
            .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()));
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

/// The addresses of a scope list that are not on this machine's PCI bus: nothing there can
/// be protected (a typo, another machine's config), so `set` and `apply` say so.
pub fn off_bus(root: &SysRoot, scope: &rdna1_mtype_shared::policy::Scope) -> Vec<PciAddr> {
    scope
        .addrs()
        .iter()
        .copied()
        .filter(|a| !root.path(&format!("/sys/bus/pci/devices/{a}")).exists())
        .collect()
}

/// Tells, on stderr, each address of `scope` that is not on the PCI bus.
pub fn warn_off_bus(root: &SysRoot, scope: &rdna1_mtype_shared::policy::Scope) {
    for a in off_bus(root, scope) {
        tracing::warn!(
            "scope {a}: no PCI device there on this machine, so nothing there is protected \
             (lspci -D lists the GPUs' addresses)"
        );
    }
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

    /// A fake root with one device at 0000:03:00.0 whose attributes are `attrs`.
    fn one_device(tag: &str, attrs: &[(&str, &[u8])]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("rdna1ctl-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dev = dir.join("sys/bus/pci/devices/0000:03:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        for (name, content) in attrs {
            std::fs::write(dev.join(name), content).unwrap();
        }
        dir
    }

    #[test]
    fn missing_bus_is_no_gpu_and_unreadable_attribute_names_the_file() {
        let empty = SysRoot::new(std::env::temp_dir().join("rdna1ctl-no-such-root"));
        assert_eq!(discover(&empty).unwrap(), Vec::new());

        // A `class` that cannot be read at all (here a directory) is an error naming it.
        let dir = one_device("badattr", &[("vendor", b"0x1002\n")]);
        std::fs::create_dir(dir.join("sys/bus/pci/devices/0000:03:00.0/class")).unwrap();
        let e = format!("{:#}", discover(&SysRoot::new(dir.clone())).unwrap_err());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("0000:03:00.0/class"), "{e}");
    }

    #[test]
    fn odd_attribute_content_skips_the_device_without_panicking() {
        let good: [(&str, &[u8]); 3] = [
            ("vendor", b"0x1002\n"),
            ("class", b"0x030000\n"),
            ("device", b"0x731f\n"),
        ];
        // sysfs-class 0.1.3 sliced `v[2..]` and panicked on the first two.
        let odd: [&[u8]; 9] = [
            b"",
            b"0",
            b"0x",
            b"0x\n",
            b"garbage",
            b"0xzz00",
            b"0x1ffffffff",
            b"\xff\xfe",
            b"0x-1",
        ];
        for attr in ["vendor", "class", "device"] {
            for content in odd {
                let attrs: Vec<(&str, &[u8])> = good
                    .iter()
                    .map(|&(n, c)| (n, if n == attr { content } else { c }))
                    .collect();
                let dir = one_device("odd", &attrs);
                let r = discover(&SysRoot::new(dir.clone()));
                std::fs::remove_dir_all(&dir).unwrap();
                let gpus = r.unwrap_or_else(|e| panic!("{attr}={content:?}: {e:#}"));
                assert_eq!(gpus, Vec::new(), "{attr}={content:?}");
            }
        }
        // A short but well-formed class ("0x03" is base class 0) is simply not a display one.
        let dir = one_device("short", &[("vendor", b"0x1002"), ("class", b"0x03")]);
        let gpus = discover(&SysRoot::new(dir.clone())).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(gpus, Vec::new());
        // The same tree with good attributes has the GPU, so the skips above are the content's.
        let dir = one_device("good", &good);
        let gpus = discover(&SysRoot::new(dir.clone())).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(gpus.len(), 1);
        assert_eq!(gpus[0].driver, None);
        assert_eq!(gpus[0].subsystem, None);
    }

    #[test]
    fn odd_board_ids_are_left_out_but_the_gpu_stays() {
        let dir = one_device(
            "oddboard",
            &[
                ("vendor", b"0x1002"),
                ("class", b"0x030000"),
                ("device", b"0x731f"),
                ("subsystem_vendor", b"0x"),
                ("subsystem_device", b"0xe411"),
            ],
        );
        let gpus = discover(&SysRoot::new(dir.clone())).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(gpus.len(), 1);
        assert_eq!(gpus[0].subsystem, None);
        assert_eq!(gpus[0].rdna1, Some(Rdna1Chip::Navi10));
    }

    #[test]
    fn hex_attributes_take_exactly_0x_and_hex_digits() {
        let dir = one_device(
            "hex",
            &[("a", b"0x1002\n"), ("b", b"1002"), ("c", b"0x10000")],
        );
        let dev = dir.join("sys/bus/pci/devices/0000:03:00.0");
        assert_eq!(hex_attr(&dev, "a", 0xffff).unwrap(), Hex::Value(0x1002));
        assert_eq!(
            hex_attr(&dev, "b", 0xffff).unwrap(),
            Hex::Malformed("1002".into())
        );
        assert_eq!(
            hex_attr(&dev, "c", 0xffff).unwrap(),
            Hex::Malformed("0x10000".into())
        );
        assert_eq!(hex_attr(&dev, "none", 0xffff).unwrap(), Hex::Missing);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
