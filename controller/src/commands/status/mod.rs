//! `rdna1ctl status`: the module's policy and, per AMD GPU, whether it is protected and why not.
//!
//! Everything but the counters comes from sysfs, so status works for any user; the counters
//! and the ABI version need `/dev/rdna1_mtype`, which only root may open.

mod json;
mod render;

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use rdna1_mtype_shared::abi::{self, StatsArg, STATS_DEVICE};
use rdna1_mtype_shared::pci::PciAddr;

use crate::exit::{self, Code};
use crate::gpus::{self, Gpu};
use crate::module::control::Device;
use crate::module::params::{self, ModuleState};
use crate::module::verdict::{self, Verdict};
use crate::sysroot::SysRoot;
use crate::Ctx;

/// Whether the module's counters could be read.
#[derive(Debug)]
pub enum Counters {
    /// The module is not loaded: there are none.
    NoModule,
    /// `/dev/rdna1_mtype` is root's only.
    NeedRoot,
    /// Opening or reading the device failed otherwise: the error, with what to do.
    Unavailable(String),
    /// Read; the sets matched to a listed GPU are in [`GpuReport::stats`], the others here
    /// (other devices, unidentified, devices not on this machine's PCI bus).
    Read(Vec<StatsArg>),
}

/// One GPU with the verdict on it and its counters.
#[derive(Debug)]
pub struct GpuReport {
    pub gpu: Gpu,
    pub verdict: Verdict,
    pub stats: Option<StatsArg>,
}

/// Everything status shows.
#[derive(Debug)]
pub struct Report {
    pub module: ModuleState,
    /// From GET_VERSION when the device could be opened.
    pub abi_version: Option<u32>,
    pub gpus: Vec<GpuReport>,
    pub counters: Counters,
}

pub fn run(ctx: &Ctx, out: &mut impl Write) -> Result<()> {
    let module = params::read(&ctx.root)?;
    let gpus = gpus::discover(&ctx.root)?;
    let amdgpu_loaded = gpus::amdgpu_loaded(&ctx.root, &gpus);
    let (abi_version, counters) = match module {
        ModuleState::NotLoaded => (None, Counters::NoModule),
        ModuleState::Loaded(_) => read_device(&ctx.root),
    };
    let report = Report::new(module, gpus, amdgpu_loaded, abi_version, counters);
    if ctx.json {
        json::write(&report, out)
    } else {
        Ok(render::human(&report, out)?)
    }
}

/// ABI version and counters; a device that cannot be opened is reported, never an error, so
/// status still shows what sysfs says.
fn read_device(root: &SysRoot) -> (Option<u32>, Counters) {
    let dev = match Device::open(root) {
        Ok(d) => d,
        Err(e) => {
            let path = root.path(&format!("/dev/{}", abi::DEVICE_NAME));
            return (None, open_failure(&path, &e));
        }
    };
    let abi = dev.version().ok().map(|v| v.version);
    match dev.stats() {
        Ok(s) => (abi, Counters::Read(s)),
        Err(e) => (abi, Counters::Unavailable(format!("{e:#}"))),
    }
}

/// Why the device at `path` could not be opened, in the terms status reports it.
fn open_failure(path: &Path, e: &anyhow::Error) -> Counters {
    match exit::code_of(e) {
        Code::Permission => Counters::NeedRoot,
        // Device::open's own advice (load the module) is wrong here: sysfs says it is loaded.
        Code::NoModule => Counters::Unavailable(format!(
            "{} does not exist although rdna1_mtype is loaded: is devtmpfs mounted on /dev?",
            path.display()
        )),
        _ => Counters::Unavailable(format!("{e:#}")),
    }
}

impl Report {
    /// Judges every GPU and gives each the counter set with its PCI address.
    pub fn new(
        module: ModuleState,
        gpus: Vec<Gpu>,
        amdgpu_loaded: bool,
        abi_version: Option<u32>,
        mut counters: Counters,
    ) -> Report {
        let gpus = gpus
            .into_iter()
            .map(|gpu| {
                let stats = match &mut counters {
                    Counters::Read(sets) => take_set_of(sets, gpu.pci_addr),
                    _ => None,
                };
                GpuReport {
                    verdict: verdict::judge(&module, &gpu, amdgpu_loaded),
                    gpu,
                    stats,
                }
            })
            .collect();
        Report {
            module,
            abi_version,
            gpus,
            counters,
        }
    }
}

/// Removes and returns the per-device set of `addr`.
fn take_set_of(sets: &mut Vec<StatsArg>, addr: PciAddr) -> Option<StatsArg> {
    let i = sets
        .iter()
        .position(|s| s.kind == STATS_DEVICE && PciAddr::from_raw(s.addr) == addr)?;
    Some(sets.remove(i))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gpus::tests::gpu;
    use rdna1_mtype_shared::abi::STATS_OTHER_DEVICES;
    use rdna1_mtype_shared::devices::PCI_VENDOR_AMD;

    pub fn set(kind: u32, bus: u8, calls: u64) -> StatsArg {
        StatsArg {
            kind,
            addr: PciAddr::new(0, bus, 0, 0).unwrap().raw(),
            vendor: PCI_VENDOR_AMD,
            device: 0x731f,
            calls,
            ..Default::default()
        }
    }

    #[test]
    fn open_failures_are_told_apart() {
        use std::io::{Error, ErrorKind};
        let dev = Path::new("/dev/rdna1_mtype");
        let denied = anyhow::Error::new(Error::from(ErrorKind::PermissionDenied)).context("open");
        assert!(matches!(open_failure(dev, &denied), Counters::NeedRoot));
        let missing = exit::coded(Code::NoModule, "is rdna1_mtype loaded?");
        let Counters::Unavailable(t) = open_failure(dev, &missing) else {
            panic!()
        };
        assert!(
            t.starts_with("/dev/rdna1_mtype does not exist although"),
            "{t}"
        );
        let Counters::Unavailable(t) = open_failure(dev, &anyhow::anyhow!("ABI version 9")) else {
            panic!()
        };
        assert_eq!(t, "ABI version 9");
    }

    #[test]
    fn counter_sets_go_to_the_gpu_with_their_address() {
        let sets = vec![
            set(STATS_DEVICE, 4, 7),
            set(STATS_DEVICE, 3, 5),
            set(STATS_OTHER_DEVICES, 0, 2),
        ];
        let r = Report::new(
            ModuleState::NotLoaded,
            vec![
                gpu(3, 0x731f, Some("amdgpu")),
                gpu(5, 0x731f, Some("amdgpu")),
            ],
            true,
            Some(1),
            Counters::Read(sets),
        );
        assert_eq!(r.gpus[0].stats.map(|s| s.calls), Some(5));
        assert_eq!(r.gpus[1].stats.map(|s| s.calls), None, "no set for 05:00.0");
        let Counters::Read(rest) = &r.counters else {
            panic!("{:?}", r.counters)
        };
        let rest: Vec<_> = rest.iter().map(|s| s.calls).collect();
        assert_eq!(rest, [7, 2], "unmatched sets stay, in the module's order");
    }
}
