//! `rdna1ctl --json status`: one document, schema in docs/CLI.md (status). Ids are lowercase hex
//! strings as lspci prints them; anything unknown is `null`, never omitted.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;
use rdna1_mtype_shared::abi::{StatsArg, STATS_DEVICE, STATS_OTHER_DEVICES};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::Skip;
use serde::Serialize;

use super::{Check, Counters, GpuReport, Report};
use crate::module::params::ModuleState;
use crate::module::verdict::Reason;

#[derive(Serialize)]
struct Body {
    module: Module,
    gpus: Vec<Gpu>,
    stats: Stats,
    /// `--check`'s verdict; null without `--check`.
    check: Option<CheckJson>,
}

#[derive(Serialize)]
struct CheckJson {
    passed: bool,
    /// In-scope RDNA1 GPUs not protected (addresses); empty when passed or when there is none.
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

#[derive(Serialize, Default)]
struct Module {
    loaded: bool,
    version: Option<String>,
    abi_version: Option<u32>,
    mode: Option<&'static str>,
    scope: Option<String>,
    classes: Option<String>,
    /// `compute` or `all`.
    vm_scope: Option<&'static str>,
    /// The module has no VM scope (ABI 1): it changes every VM.
    predates_vm_scope: Option<bool>,
    layout: Option<Layout>,
    armed: Option<bool>,
    /// Why the hook could not be armed, if it could not.
    arm_error: Option<String>,
    /// Calls the hook's guards refused.
    rejected: Option<u64>,
    /// Calls fprobe did not hand to the module (null: not loaded, or a module without it).
    missed: Option<u64>,
}

#[derive(Serialize)]
struct Layout {
    /// Where the module's layout came from: `builtin` (its own copy of amdgpu_bo), `set`
    /// (written by root, e.g. from BTF) or `none`.
    source: &'static str,
    status: &'static str,
    value: Option<String>,
}

#[derive(Serialize)]
struct Gpu {
    address: String,
    name: Option<String>,
    vendor_id: String,
    device_id: String,
    subsystem: Option<String>,
    gfx_target: Option<String>,
    rdna1: bool,
    chip: Option<&'static str>,
    driver: Option<String>,
    in_scope: Option<bool>,
    protected: bool,
    /// Which VMs are protected when `protected`: `compute` or `all`; else null.
    protected_vms: Option<&'static str>,
    reason: Option<String>,
    reason_codes: Vec<&'static str>,
    stats: Option<Set>,
}

#[derive(Serialize)]
struct Stats {
    /// `read`, `no_module`, `need_root` or `unavailable`.
    status: &'static str,
    error: Option<String>,
    /// Counter sets not matched to a listed GPU.
    other: Vec<Set>,
}

#[derive(Serialize)]
struct Set {
    kind: &'static str,
    address: Option<String>,
    vendor_id: String,
    device_id: String,
    calls: u64,
    rewritten: ByMtype,
    would_rewrite: ByMtype,
    /// Every skip reason by its stable name (`Skip::name`), zeros included.
    skipped: BTreeMap<&'static str, u64>,
}

#[derive(Serialize)]
struct ByMtype {
    wc: u64,
    cc: u64,
    uc: u64,
}

impl ByMtype {
    /// The counters are indexed by the MTYPE before: NC, WC, CC, UC (NC is never rewritten).
    fn of(c: &[u64; 4]) -> ByMtype {
        ByMtype {
            wc: c[1],
            cc: c[2],
            uc: c[3],
        }
    }
}

fn set(s: &StatsArg) -> Set {
    let (kind, address) = match s.kind {
        STATS_DEVICE => ("device", Some(PciAddr::from_raw(s.addr).to_string())),
        STATS_OTHER_DEVICES => ("other_devices", None),
        _ => ("unidentified", None),
    };
    Set {
        kind,
        address,
        vendor_id: format!("{:04x}", s.vendor),
        device_id: format!("{:04x}", s.device),
        calls: s.calls,
        rewritten: ByMtype::of(&s.rewritten),
        would_rewrite: ByMtype::of(&s.would_rewrite),
        skipped: Skip::ALL
            .iter()
            .map(|&w| (w.name(), s.skipped.get(w as usize).copied().unwrap_or(0)))
            .collect(),
    }
}

fn module(r: &Report) -> Module {
    let ModuleState::Loaded(m) = &r.module else {
        return Module::default();
    };
    Module {
        loaded: true,
        version: Some(m.version.clone()),
        abi_version: r.abi_version,
        mode: Some(m.mode.name()),
        scope: Some(m.scope.to_string()),
        classes: Some(m.classes.to_string()),
        vm_scope: Some(m.vm_scope.name()),
        predates_vm_scope: Some(m.predates_vm_scope),
        layout: Some(Layout {
            source: m.bo_layout_source.name(),
            status: m.bo_layout_status.name(),
            value: m.bo_layout.map(|l| l.to_string()),
        }),
        armed: Some(m.armed),
        arm_error: m.arm_error.clone(),
        rejected: Some(m.rejected),
        missed: m.missed,
    }
}

fn gpu(g: &GpuReport) -> Gpu {
    let v = &g.verdict;
    Gpu {
        address: g.gpu.address.clone(),
        name: g.gpu.name.clone(),
        vendor_id: "1002".into(),
        device_id: format!("{:04x}", g.gpu.device_id),
        subsystem: g.gpu.subsystem.map(|(v, d)| format!("{v:04x}:{d:04x}")),
        gfx_target: g.gpu.gfx_target.clone(),
        rdna1: g.gpu.rdna1.is_some(),
        chip: g.gpu.rdna1.map(|c| c.name()),
        driver: g.gpu.driver.clone(),
        in_scope: v.in_scope,
        protected: v.protected(),
        protected_vms: v.protected_vms().map(|s| s.name()),
        reason: (!v.protected()).then(|| {
            v.reasons
                .iter()
                .map(Reason::text)
                .collect::<Vec<_>>()
                .join("; ")
        }),
        reason_codes: v.reasons.iter().map(Reason::code).collect(),
        stats: g.stats.as_ref().map(set),
    }
}

fn stats(c: &Counters) -> Stats {
    let (status, error, other) = match c {
        Counters::NoModule => ("no_module", None, Vec::new()),
        Counters::NeedRoot => (
            "need_root",
            Some("/dev/rdna1_mtype is root's only: run as root for the counters".to_owned()),
            Vec::new(),
        ),
        Counters::Unavailable(e) => ("unavailable", Some(e.clone()), Vec::new()),
        Counters::Read(rest) => ("read", None, rest.iter().map(set).collect()),
    };
    Stats {
        status,
        error,
        other,
    }
}

pub fn write(r: &Report, check: Option<&Check>, out: &mut impl Write) -> Result<()> {
    let body = Body {
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
    use serde_json::Value;

    fn doc(r: &Report) -> Value {
        let mut v = Vec::new();
        write(r, None, &mut v).unwrap();
        assert_eq!(v.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        serde_json::from_slice(&v).unwrap()
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
        assert_eq!(g["device_id"], "731f");
        assert_eq!(g["subsystem"], "1da2:e411");
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
        assert_eq!(st["address"], "0000:03:00.0");
        assert_eq!(st["calls"], 12);
        assert_eq!(
            st["rewritten"],
            serde_json::json!({"wc": 1, "cc": 2, "uc": 3})
        );
        assert_eq!(st["skipped"]["out_of_scope"], 5);
        assert_eq!(st["skipped"].as_object().unwrap().len(), Skip::COUNT);
        assert_eq!(d["stats"]["status"], "read");
        assert_eq!(d["stats"]["other"][0]["kind"], "other_devices");
        assert!(d["stats"]["other"][0]["address"].is_null());
    }
}
