//! `rdna1ctl status`: the module's policy and, per AMD GPU, whether it is protected and why not.
//!
//! Everything but the counters comes from sysfs, so status works for any user; the counters
//! and the ABI version need `/dev/rdna1_mtype`, which only root may open.

mod json;
mod render;

pub use json::StatusJson;

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

/// What `status --check` concludes.
#[derive(Debug, PartialEq, Eq)]
pub enum Check {
    /// Every RDNA1 GPU in the module's scope is protected; how many there are (at least 1).
    Passed(usize),
    /// No RDNA1 GPU is in scope (none present, or the scope leaves them all out): nothing is
    /// protected, which a script asking "is this machine protected?" must not take for yes.
    /// How many AMD GPUs, and RDNA1 GPUs among them, there are: the message says which case.
    NoRdna1InScope { amd: usize, rdna1: usize },
    /// These in-scope RDNA1 GPUs are not protected (addresses).
    Unprotected(Vec<String>),
}

impl Check {
    pub fn passed(&self) -> bool {
        matches!(self, Check::Passed(_))
    }

    /// The verdict in words; a failure names the GPUs (their verdicts say why).
    pub fn message(&self) -> String {
        match self {
            Check::Passed(1) => "passed: the RDNA1 GPU in scope is protected".into(),
            Check::Passed(n) => format!("passed: all {n} RDNA1 GPUs in scope are protected"),
            Check::NoRdna1InScope { amd: 0, .. } => {
                "FAILED: no AMD GPU found: nothing to protect".into()
            }
            Check::NoRdna1InScope { amd, rdna1: 0 } => {
                format!(
                    "FAILED: no RDNA1 GPU found, only other AMD GPUs ({amd}): nothing to protect"
                )
            }
            Check::NoRdna1InScope { .. } => {
                "FAILED: no RDNA1 GPU is in the module's scope: nothing is protected (set one: \
                 sudo rdna1ctl set --scope rdna1)"
                    .into()
            }
            Check::Unprotected(addrs) => format!("FAILED: NOT protected: {}", addrs.join(", ")),
        }
    }
}

pub fn run(ctx: &Ctx, check: bool, out: &mut impl Write) -> Result<Code> {
    let module = params::read(&ctx.root)?;
    let gpus = gpus::discover(&ctx.root)?;
    let amdgpu_loaded = gpus::amdgpu_loaded(&ctx.root, &gpus);
    let (abi_version, counters) = match module {
        ModuleState::NotLoaded => (None, Counters::NoModule),
        ModuleState::Loaded(_) => read_device(&ctx.root),
    };
    let report = Report::new(module, gpus, amdgpu_loaded, abi_version, counters);
    let check = check.then(|| report.check());
    if ctx.json {
        json::write(&report, check.as_ref(), out)?;
    } else {
        render::human(&report, out)?;
        if let Some(c) = &check {
            render::check(c, out)?;
        }
    }
    Ok(match check {
        Some(c) if !c.passed() => Code::Problems,
        _ => Code::Ok,
    })
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
        Err(e) => (abi, Counters::Unavailable(exit::message(&e))),
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
        _ => Counters::Unavailable(exit::message(e)),
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

impl Report {
    /// `--check`: the RDNA1 GPUs the module's scope covers must all be protected. An RDNA1 GPU
    /// counts unless the loaded module's scope leaves it out, so with the module not loaded
    /// every RDNA1 GPU counts (and is not protected).
    pub fn check(&self) -> Check {
        let counted: Vec<&GpuReport> = self
            .gpus
            .iter()
            .filter(|g| g.gpu.rdna1.is_some() && g.verdict.in_scope != Some(false))
            .collect();
        if counted.is_empty() {
            return Check::NoRdna1InScope {
                amd: self.gpus.len(),
                rdna1: self.gpus.iter().filter(|g| g.gpu.rdna1.is_some()).count(),
            };
        }
        let unprotected: Vec<String> = counted
            .iter()
            .filter(|g| !g.verdict.protected())
            .map(|g| g.gpu.address.clone())
            .collect();
        match unprotected.is_empty() {
            true => Check::Passed(counted.len()),
            false => Check::Unprotected(unprotected),
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

    /// An armed module with a layout in `mode` and `scope`.
    fn loaded(mode: &str, scope: &str) -> ModuleState {
        let mode = rdna1_mtype_shared::policy::Mode::parse(mode.as_bytes()).unwrap();
        ModuleState::Loaded(crate::module::params::LoadedModule::armed_for_tests(
            mode, scope,
        ))
    }

    #[test]
    fn check_without_rdna1_in_scope_says_what_the_machine_has() {
        // Without any AMD GPU it said "no RDNA1 GPU is in the module's scope", as if the
        // scope were wrong.
        assert_eq!(
            Check::NoRdna1InScope { amd: 0, rdna1: 0 }.message(),
            "FAILED: no AMD GPU found: nothing to protect"
        );
        assert_eq!(
            Check::NoRdna1InScope { amd: 2, rdna1: 0 }.message(),
            "FAILED: no RDNA1 GPU found, only other AMD GPUs (2): nothing to protect"
        );
        assert_eq!(
            Check::NoRdna1InScope { amd: 1, rdna1: 1 }.message(),
            "FAILED: no RDNA1 GPU is in the module's scope: nothing is protected (set one: \
             sudo rdna1ctl set --scope rdna1)"
        );
    }

    #[test]
    fn check_passes_only_when_every_in_scope_rdna1_gpu_is_protected() {
        let judge = |module: ModuleState, gpus| {
            Report::new(module, gpus, true, None, Counters::NoModule).check()
        };
        let rx5700 = || gpu(3, 0x731f, Some("amdgpu"));
        let rx6600 = || gpu(11, 0x73ff, Some("amdgpu"));
        assert_eq!(
            judge(loaded("enforce", "rdna1"), vec![rx5700()]),
            Check::Passed(1)
        );
        // A non-RDNA1 GPU out of scope does not count against it.
        assert_eq!(
            judge(loaded("enforce", "rdna1"), vec![rx5700(), rx6600()]),
            Check::Passed(1)
        );
        // An RDNA1 GPU the scope leaves out does not count; with none left, nothing passes.
        assert_eq!(
            judge(loaded("enforce", "0000:05:00.0"), vec![rx5700()]),
            Check::NoRdna1InScope { amd: 1, rdna1: 1 }
        );
        assert_eq!(
            judge(loaded("enforce", "rdna1"), vec![rx6600()]),
            Check::NoRdna1InScope { amd: 1, rdna1: 0 }
        );
        assert_eq!(
            judge(loaded("audit", "rdna1"), vec![rx5700()]),
            Check::Unprotected(vec!["0000:03:00.0".into()])
        );
        assert_eq!(
            judge(
                loaded("enforce", "rdna1"),
                vec![gpu(3, 0x731f, Some("vfio-pci"))]
            ),
            Check::Unprotected(vec!["0000:03:00.0".into()])
        );
        // Not loaded: every RDNA1 GPU counts, and none is protected.
        assert_eq!(
            judge(ModuleState::NotLoaded, vec![rx5700()]),
            Check::Unprotected(vec!["0000:03:00.0".into()])
        );
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
