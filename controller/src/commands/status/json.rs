//! `rdna1ctl --json status`: one document, schema in docs/CLI.md (status) and
//! docs/schema/status.json. Ids are lowercase hex strings as sysfs prints them (`0x1002`);
//! anything unknown is `null`, never omitted.

use std::io::Write;

use anyhow::Result;
use rdna1_mtype_shared::devices::PCI_VENDOR_AMD;
use rdna1_mtype_shared::policy::{Mode, VmScope};
use schemars::JsonSchema;
use serde::Serialize;

use super::{Check, Counters, GpuReport, Report};
use crate::module::counters::CounterSetJson;
use crate::module::params::ModuleState;
use crate::module::verdict::Reason;
use crate::output::{pci_id, JsonNames, ModuleLayoutJson};

/// `rdna1ctl --json status` (docs/CLI.md, status).
#[derive(Serialize, JsonSchema)]
pub struct StatusJson {
    module: Module,
    gpus: Vec<Gpu>,
    stats: Stats,
    /// `--check`'s verdict; null without `--check`.
    check: Option<CheckJson>,
}

#[derive(Serialize, JsonSchema)]
struct CheckJson {
    /// Every in-scope RDNA1 GPU is protected, and there is one (exit code 0; else 3).
    passed: bool,
    /// PCI addresses of the in-scope RDNA1 GPUs not protected; empty when passed or when
    /// there is none.
    unprotected: Vec<String>,
    /// The verdict in words, as the text's `check:` line.
    message: String,
}

impl From<&Check> for CheckJson {
    fn from(c: &Check) -> Self {
        CheckJson {
            passed: c.passed(),
            unprotected: match c {
                Check::Unprotected(a) => a.clone(),
                _ => Vec::new(),
            },
            message: c.message(),
        }
    }
}

/// The module; when it is not loaded every field but `loaded` is null.
#[derive(Serialize, JsonSchema, Default)]
struct Module {
    /// `/sys/module/rdna1_mtype` exists.
    loaded: bool,
    version: Option<String>,
    /// GET_VERSION's answer; null when the device cannot be opened (not root, no node).
    abi_version: Option<u32>,
    /// `off`, `audit` or `enforce`.
    #[schemars(schema_with = "crate::schema::one_of_or_null::<Mode>")]
    mode: Option<&'static str>,
    scope: Option<String>,
    classes: Option<String>,
    /// `compute` or `all`.
    #[schemars(schema_with = "crate::schema::one_of_or_null::<VmScope>")]
    vm_scope: Option<&'static str>,
    /// The module has no VM scope (ABI 1): it changes every VM.
    predates_vm_scope: Option<bool>,
    layout: Option<ModuleLayoutJson>,
    /// The hook is registered.
    armed: Option<bool>,
    /// Why the hook could not be armed, if it could not.
    arm_error: Option<String>,
    /// Calls the hook's guards refused.
    rejected: Option<u64>,
    /// Calls fprobe did not hand to the module (null: not loaded, or a module without it).
    missed: Option<u64>,
}

/// One AMD GPU and the verdict on it.
#[derive(Serialize, JsonSchema)]
struct Gpu {
    /// `0000:03:00.0`.
    pci_address: String,
    name: Option<String>,
    /// `0x1002`.
    vendor_id: String,
    /// `0x731f`.
    device_id: String,
    /// The board's vendor id (sysfs `subsystem_vendor`), or null.
    subsystem_vendor_id: Option<String>,
    /// The board's device id (sysfs `subsystem_device`), or null.
    subsystem_device_id: Option<String>,
    /// `gfx1010`, or null when unknown.
    gfx_target: Option<String>,
    rdna1: bool,
    /// `navi10`, `navi12`, `navi14` for RDNA1, else null.
    chip: Option<&'static str>,
    /// The bound driver.
    driver: Option<String>,
    /// Under the module's scope; null when it is not loaded.
    in_scope: Option<bool>,
    /// True exactly when `reason_codes` is empty.
    protected: bool,
    /// Which VMs are protected when `protected`: `compute` or `all`; else null.
    #[schemars(schema_with = "crate::schema::one_of_or_null::<VmScope>")]
    protected_vms: Option<&'static str>,
    /// The reasons in words, `; `-separated; null when protected.
    reason: Option<String>,
    /// Why not protected, as stable codes (docs/CLI.md); empty when protected.
    #[schemars(schema_with = "crate::schema::list_of::<Reason>")]
    reason_codes: Vec<&'static str>,
    /// This GPU's counter set; null if none or unreadable.
    stats: Option<CounterSetJson>,
}

/// `stats.status`.
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum StatsStatus {
    /// Read: `other` holds the sets of no listed GPU.
    Read,
    /// The module is not loaded.
    NoModule,
    /// /dev/rdna1_mtype is root's only.
    NeedRoot,
    /// The device could not be read (`error` says why).
    Unavailable,
}

#[derive(Serialize, JsonSchema)]
struct Stats {
    /// Whether the counters were read, or why not.
    status: StatsStatus,
    /// Why not `read`, with what to do.
    error: Option<String>,
    /// Counter sets not matched to a listed GPU.
    other: Vec<CounterSetJson>,
}

fn module(r: &Report) -> Module {
    let ModuleState::Loaded(m) = &r.module else {
        return Module::default();
    };
    Module {
        loaded: true,
        version: Some(m.version.clone()),
        abi_version: r.abi_version,
        mode: Some(m.mode.json_name()),
        scope: Some(m.scope.to_string()),
        classes: Some(m.classes.to_string()),
        vm_scope: Some(m.vm_scope.json_name()),
        predates_vm_scope: Some(m.predates_vm_scope),
        layout: Some(m.into()),
        armed: Some(m.armed),
        arm_error: m.arm_error.clone(),
        rejected: Some(m.rejected),
        missed: m.missed,
    }
}

fn gpu(g: &GpuReport) -> Gpu {
    let v = &g.verdict;
    Gpu {
        pci_address: g.gpu.address.clone(),
        name: g.gpu.name.clone(),
        vendor_id: pci_id(PCI_VENDOR_AMD),
        device_id: pci_id(g.gpu.device_id),
        subsystem_vendor_id: g.gpu.subsystem.map(|(v, _)| pci_id(v)),
        subsystem_device_id: g.gpu.subsystem.map(|(_, d)| pci_id(d)),
        gfx_target: g.gpu.gfx_target.clone(),
        rdna1: g.gpu.rdna1.is_some(),
        chip: g.gpu.rdna1.map(|c| c.name()),
        driver: g.gpu.driver.clone(),
        in_scope: v.in_scope,
        protected: v.protected(),
        protected_vms: v.protected_vms().map(|s| s.json_name()),
        reason: (!v.protected()).then(|| {
            v.reasons
                .iter()
                .map(Reason::text)
                .collect::<Vec<_>>()
                .join("; ")
        }),
        reason_codes: v.reasons.iter().map(Reason::json_name).collect(),
        stats: g.stats.as_ref().map(CounterSetJson::of),
    }
}

fn stats(c: &Counters) -> Stats {
    let (status, error, other) = match c {
        Counters::NoModule => (StatsStatus::NoModule, None, Vec::new()),
        Counters::NeedRoot => (
            StatsStatus::NeedRoot,
            Some("/dev/rdna1_mtype is root's only: run as root for the counters".to_owned()),
            Vec::new(),
        ),
        Counters::Unavailable(e) => (StatsStatus::Unavailable, Some(e.clone()), Vec::new()),
        Counters::Read(rest) => (
            StatsStatus::Read,
            None,
            rest.iter().map(CounterSetJson::of).collect(),
        ),
    };
    Stats {
        status,
        error,
        other,
    }
}

pub fn write(r: &Report, check: Option<&Check>, out: &mut impl Write) -> Result<()> {
    let body = StatusJson {
        module: module(r),
        gpus: r.gpus.iter().map(gpu).collect(),
        stats: stats(&r.counters),
        check: check.map(CheckJson::from),
    };
    crate::output::json("status", &body, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::status::tests::set as stats_set;
    use crate::gpus::tests::gpu as gpu_at;
    use rdna1_mtype_shared::abi::{STATS_DEVICE, STATS_OTHER_DEVICES};
    use rdna1_mtype_shared::policy::Skip;
    use serde_json::Value;

    fn doc(r: &Report) -> Value {
        let mut v = Vec::new();
        write(r, None, &mut v).unwrap();
        assert_eq!(v.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        crate::schema::assert_printed_valid::<StatusJson>("status", &v)
    }

    #[test]
    fn not_loaded_module_is_all_null_and_gpu_says_why() {
        let r = Report::new(
            ModuleState::NotLoaded,
            vec![gpu_at(3, 0x731f, None)],
            false,
            None,
            Counters::NoModule,
        );
        let d = doc(&r);
        assert_eq!(d["command"], "status");
        assert_eq!(d["module"]["loaded"], false);
        for k in [
            "version",
            "abi_version",
            "mode",
            "scope",
            "classes",
            "vm_scope",
            "predates_vm_scope",
            "layout",
            "armed",
            "arm_error",
            "rejected",
            "missed",
        ] {
            assert!(d["module"][k].is_null(), "{k}: {d}");
        }
        let g = &d["gpus"][0];
        assert_eq!(g["pci_address"], "0000:03:00.0");
        assert_eq!(
            (g["vendor_id"].as_str(), g["device_id"].as_str()),
            (Some("0x1002"), Some("0x731f"))
        );
        assert_eq!(g["subsystem_vendor_id"], "0x1da2");
        assert_eq!(g["subsystem_device_id"], "0xe411");
        assert_eq!(g["chip"], "navi10");
        assert_eq!(g["rdna1"], true);
        assert!(g["driver"].is_null() && g["in_scope"].is_null() && g["stats"].is_null());
        assert_eq!(g["protected"], false);
        assert!(g["protected_vms"].is_null());
        assert_eq!(
            g["reason_codes"],
            serde_json::json!(["module_not_loaded", "not_on_amdgpu"])
        );
        assert_eq!(d["stats"]["status"], "no_module");
    }

    #[test]
    fn counters_are_named_by_mtype_and_skip_reason() {
        let mut s = stats_set(STATS_DEVICE, 3, 12);
        s.rewritten = [0, 1, 2, 3];
        s.skipped[Skip::OutOfScope as usize] = 5;
        let r = Report::new(
            ModuleState::NotLoaded,
            vec![gpu_at(3, 0x731f, Some("amdgpu"))],
            true,
            Some(1),
            Counters::Read(vec![s, stats_set(STATS_OTHER_DEVICES, 0, 2)]),
        );
        let d = doc(&r);
        let st = &d["gpus"][0]["stats"];
        assert_eq!(st["kind"], "device");
        assert_eq!(st["pci_address"], "0000:03:00.0");
        assert_eq!(st["calls"], 12);
        assert_eq!(
            st["rewritten"],
            serde_json::json!({"wc": 1, "cc": 2, "uc": 3})
        );
        assert_eq!(st["skipped"]["out_of_scope"], 5);
        assert_eq!(st["skipped"].as_object().unwrap().len(), Skip::COUNT);
        assert_eq!(d["stats"]["status"], "read");
        assert_eq!(d["stats"]["other"][0]["kind"], "other_devices");
        assert!(d["stats"]["other"][0]["pci_address"].is_null());
    }
}
