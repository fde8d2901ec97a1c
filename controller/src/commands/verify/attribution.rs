//! Which GPU a process's page-table updates are for. `amdgpu_vm_update_ptes` names no device,
//! so a pid is attributed, in order, by: the module's event log (pid -> device of its logged
//! decisions), the `drm-pdev:` lines of its DRM fds in `/proc/<pid>/fdinfo`, and the only
//! device in the module's stats if there is exactly one. Otherwise it is unattributed, and
//! could be any device the module has seen.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;

use rdna1_mtype_shared::abi::{Event, StatsArg, STATS_DEVICE};
use rdna1_mtype_shared::pci::{DeviceId, PciAddr};
use rdna1_mtype_shared::policy::Scope;
use schemars::JsonSchema;
use serde::Serialize;

use crate::sysroot::SysRoot;

/// How a pid's device was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The module's event log: the devices of its logged decisions for the process.
    ModuleEvents,
    /// The `drm-pdev:` lines of the process's DRM fds.
    Fdinfo,
    /// The only device in the module's counters.
    OnlyDevice,
    /// None of these: the updates may be for any device the module has seen.
    Unattributed,
}

/// The devices a pid's updates may be for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribution {
    /// One device when attributed; several when the process uses several, or, unattributed,
    /// every device the module has seen (possibly none).
    pub devices: Vec<PciAddr>,
    pub source: Source,
}

impl Attribution {
    /// The table's DEVICE column.
    #[cfg(test)]
    pub fn label(&self) -> String {
        if self.source == Source::Unattributed {
            return "unattributed".to_owned();
        }
        let v: Vec<String> = self.devices.iter().map(|a| a.to_string()).collect();
        v.join(",")
    }
}

/// Collects what attribution needs while verify runs; answers at the end.
pub struct Attributor {
    root: SysRoot,
    /// tgid -> devices of its logged decisions.
    events: HashMap<u32, BTreeSet<PciAddr>>,
    /// tgid -> devices of its DRM fds, read when the pid was first seen.
    fdinfo: HashMap<u32, BTreeSet<PciAddr>>,
    /// Every device the module has counted, with its ids.
    seen: BTreeMap<PciAddr, (u16, u16)>,
    tgids: HashMap<u32, u32>,
}

impl Attributor {
    pub fn new(root: SysRoot) -> Attributor {
        Attributor {
            root,
            events: HashMap::new(),
            fdinfo: HashMap::new(),
            seen: BTreeMap::new(),
            tgids: HashMap::new(),
        }
    }

    /// The thread group of thread `tid` (the module logs threads, the tracepoint processes);
    /// `tid` itself once the thread is gone.
    pub fn tgid(&mut self, tid: u32) -> u32 {
        if let Some(&t) = self.tgids.get(&tid) {
            return t;
        }
        let status = fs::read_to_string(self.root.path(&format!("/proc/{tid}/status")));
        let tgid = status
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Tgid:"))
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or(tid);
        self.tgids.insert(tid, tgid);
        tgid
    }

    /// Learns from one of the module's events; returns the event's tgid.
    pub fn note_event(&mut self, e: &Event) -> u32 {
        let tgid = self.tgid(e.pid);
        if e.dev_known != 0 {
            let addr = PciAddr::from_raw(e.dev_addr);
            self.events.entry(tgid).or_default().insert(addr);
            self.seen.entry(addr).or_insert((e.vendor, e.device));
        }
        tgid
    }

    /// Learns the devices the module has counted.
    pub fn note_stats(&mut self, stats: &[StatsArg]) {
        for s in stats.iter().filter(|s| s.kind == STATS_DEVICE) {
            self.seen
                .insert(PciAddr::from_raw(s.addr), (s.vendor, s.device));
        }
    }

    /// Reads the DRM devices pid has open, the first time pid is seen (it may exit before the
    /// window ends).
    pub fn note_pid(&mut self, pid: u32) {
        if self.fdinfo.contains_key(&pid) {
            return;
        }
        let devs = drm_pdevs(&self.root, pid);
        self.fdinfo.insert(pid, devs);
    }

    /// Every device the module has seen.
    pub fn seen(&self) -> Vec<PciAddr> {
        self.seen.keys().copied().collect()
    }

    pub fn attribute(&self, pid: u32) -> Attribution {
        for (map, source) in [
            (&self.events, Source::ModuleEvents),
            (&self.fdinfo, Source::Fdinfo),
        ] {
            if let Some(d) = map.get(&pid).filter(|d| !d.is_empty()) {
                return Attribution {
                    devices: d.iter().copied().collect(),
                    source,
                };
            }
        }
        let devices = self.seen();
        let source = if devices.len() == 1 {
            Source::OnlyDevice
        } else {
            Source::Unattributed
        };
        Attribution { devices, source }
    }

    /// PCI ids of `addr`: from the module, else sysfs, else unknown (vendor 0: in no scope).
    pub fn device_id(&self, addr: PciAddr) -> DeviceId {
        let (vendor, device) = self.seen.get(&addr).copied().unwrap_or_else(|| {
            let attr = |name: &str| {
                let p = self
                    .root
                    .path(&format!("/sys/bus/pci/devices/{addr}/{name}"));
                fs::read_to_string(p)
                    .ok()
                    .and_then(|s| u16::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
                    .unwrap_or(0)
            };
            (attr("vendor"), attr("device"))
        });
        DeviceId {
            addr,
            vendor,
            device,
        }
    }

    /// Whether a pid's updates are for a device in `scope`: only if every device it may be
    /// for is in scope (so an unattributed pid counts only when every device the module has
    /// seen is in scope, and never when it has seen none).
    pub fn in_scope(&self, a: &Attribution, scope: &Scope) -> bool {
        !a.devices.is_empty()
            && a.devices
                .iter()
                .all(|&d| scope.contains(&self.device_id(d)))
    }
}

/// PCI addresses in the `drm-pdev:` lines of `/proc/<pid>/fdinfo/*`.
fn drm_pdevs(root: &SysRoot, pid: u32) -> BTreeSet<PciAddr> {
    let mut out = BTreeSet::new();
    let Ok(dir) = fs::read_dir(root.path(&format!("/proc/{pid}/fdinfo"))) else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(text) = fs::read_to_string(e.path()) else {
            continue;
        };
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("drm-pdev:")
                && let Some(a) = PciAddr::parse(v.trim().as_bytes())
            {
                out.insert(a);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rdna1ctl-attr-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn put(root: &std::path::Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn addr(s: &str) -> PciAddr {
        PciAddr::parse(s.as_bytes()).unwrap()
    }

    fn event(pid: u32, a: &str, vendor: u16, device: u16) -> Event {
        Event {
            pid,
            dev_addr: addr(a).raw(),
            vendor,
            device,
            dev_known: 1,
            ..Default::default()
        }
    }

    fn stats(a: &str, vendor: u16, device: u16) -> StatsArg {
        StatsArg {
            kind: STATS_DEVICE,
            addr: addr(a).raw(),
            vendor,
            device,
            ..Default::default()
        }
    }

    #[test]
    fn order_is_events_then_fdinfo_then_only_device() {
        let d = tmp("order");
        put(
            &d,
            "proc/20/fdinfo/3",
            "pos:\t0\ndrm-driver:\tamdgpu\ndrm-pdev:\t0000:04:00.0\n",
        );
        put(&d, "proc/20/fdinfo/4", "pos:\t0\n");
        put(&d, "proc/30/fdinfo/5", "drm-pdev:\t0000:04:00.0\n");
        // Thread 11 of process 10 made the logged mapping.
        put(&d, "proc/11/status", "Name:\tworker\nTgid:\t10\nPid:\t11\n");
        let mut a = Attributor::new(SysRoot::new(d.clone()));
        assert_eq!(a.note_event(&event(11, "0000:03:00.0", 0x1002, 0x731f)), 10);
        a.note_stats(&[stats("0000:03:00.0", 0x1002, 0x731f)]);
        for p in [10, 20, 30, 40] {
            a.note_pid(p);
        }
        // 30's fdinfo names a device, but its event log entry wins.
        a.note_event(&event(30, "0000:03:00.0", 0x1002, 0x731f));
        let got = |a: &Attributor, p| {
            let x = a.attribute(p);
            (x.label(), x.source)
        };
        assert_eq!(got(&a, 10), ("0000:03:00.0".into(), Source::ModuleEvents));
        assert_eq!(got(&a, 20), ("0000:04:00.0".into(), Source::Fdinfo));
        assert_eq!(got(&a, 30), ("0000:03:00.0".into(), Source::ModuleEvents));
        assert_eq!(got(&a, 40), ("0000:03:00.0".into(), Source::OnlyDevice));
        // A second device in the stats: 40 can no longer be placed.
        a.note_stats(&[stats("0000:04:00.0", 0x1002, 0x73bf)]);
        assert_eq!(got(&a, 40), ("unattributed".into(), Source::Unattributed));
        assert_eq!(a.attribute(40).devices.len(), 2);
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn scope_needs_every_candidate_in_scope() {
        let d = tmp("scope");
        // 0000:05:00.0 is known only from sysfs (an RDNA1 id the module never counted).
        put(&d, "sys/bus/pci/devices/0000:05:00.0/vendor", "0x1002\n");
        put(&d, "sys/bus/pci/devices/0000:05:00.0/device", "0x7340\n");
        let mut a = Attributor::new(SysRoot::new(d.clone()));
        let none = a.attribute(1);
        assert!(
            !a.in_scope(&none, &Scope::Gfx10),
            "no device seen: in no scope"
        );
        a.note_stats(&[stats("0000:03:00.0", 0x1002, 0x731f)]);
        let one = a.attribute(1);
        assert!(a.in_scope(&one, &Scope::Rdna1));
        a.note_stats(&[stats("0000:04:00.0", 0x1002, 0x73bf)]); // RDNA2
        let two = a.attribute(1);
        assert!(
            !a.in_scope(&two, &Scope::Rdna1),
            "an RDNA2 candidate is out of rdna1"
        );
        assert!(a.in_scope(&two, &Scope::Gfx10));
        assert_eq!(a.device_id(addr("0000:05:00.0")).device, 0x7340);
        let sysfs_only = Attribution {
            devices: vec![addr("0000:05:00.0")],
            source: Source::Fdinfo,
        };
        assert!(a.in_scope(&sysfs_only, &Scope::Rdna1));
        let unknown = Attribution {
            devices: vec![addr("0000:06:00.0")],
            source: Source::Fdinfo,
        };
        assert!(
            !a.in_scope(&unknown, &Scope::Gfx10),
            "unknown ids are in no scope"
        );
        fs::remove_dir_all(d).unwrap();
    }
}
