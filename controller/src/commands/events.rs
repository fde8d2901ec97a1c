//! `rdna1ctl events [--follow]`: the module's decision log.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use rdna1_mtype_shared::abi::{
    Event, ACTION_REWRITE, ACTION_WOULD_REWRITE, ORIGIN_KERNEL_THREAD, ORIGIN_TASK, ORIGIN_VM_OWNER,
};
use rdna1_mtype_shared::bo::BoClass;
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::{Skip, VmKind};
use rdna1_mtype_shared::pte::{Mtype, VmMtype};
use schemars::JsonSchema;
use serde::Serialize;

use crate::module::control::{self, cstr};
use crate::output::{self, pci_id, JsonNames};
use crate::Ctx;

fn row(e: &Event) -> String {
    let dev = if e.dev_known != 0 {
        format!(
            "{} {:04x}:{:04x}",
            PciAddr::from_raw(e.dev_addr),
            e.vendor,
            e.device
        )
    } else {
        "unknown".to_owned()
    };
    let action = action(e);
    // A kernel worker mapped for this process (KFD's restore worker, SVM): its name, marked.
    let mut comm = cstr(&e.comm);
    if e.origin == ORIGIN_VM_OWNER {
        comm.push('*');
    }
    format!(
        "{:>8} {:>14.6} {:>7} {:<16} {:<27} {:<8} {:<8} {:<6} {:<7} {:<11} {}",
        e.seq,
        e.time_ns as f64 / 1e9,
        e.pid,
        comm,
        dev,
        e.vm().map_or("?", |k| k.name()),
        VmMtype::from_vm_flags(e.vm_flags).name(),
        Mtype::from_bits(e.before).name(),
        Mtype::from_bits(e.written).name(),
        e.bo_class().map_or("?", |c| c.name()),
        action
    )
}

/// One decision in JSON (docs/CLI.md): an element of `events`, or an `event` document.
#[derive(Serialize, JsonSchema, Debug)]
pub struct EventJson {
    pub seq: u64,
    /// Nanoseconds since boot (CLOCK_MONOTONIC).
    pub time_ns: u64,
    pub pid: u32,
    pub comm: String,
    /// Whose pid and comm these are: "task" (a thread of the process that mapped), "vm_owner"
    /// (a kernel worker mapped for that process: its id and name), "kernel_thread" (a kernel
    /// worker whose VM's owner the module could not read); null if unknown to this rdna1ctl.
    pub origin: Option<Origin>,
    /// The GPU's PCI address (`0000:03:00.0`), or null if the module could not identify it.
    pub pci_address: Option<String>,
    /// PCI vendor id, `0x1002`.
    pub vendor_id: String,
    /// PCI device id, `0x731f`.
    pub device_id: String,
    /// The kind of VM: compute, graphics or unknown (null if unknown to this rdna1ctl).
    #[schemars(schema_with = "crate::schema::one_of_or_null::<VmKind>")]
    pub vm_kind: Option<&'static str>,
    /// The MTYPE the mapping asked for (vm_flags).
    #[schemars(schema_with = "crate::schema::one_of::<VmMtype>")]
    pub requested: &'static str,
    /// The MTYPE amdgpu computed.
    #[schemars(schema_with = "crate::schema::one_of::<Mtype>")]
    pub before: &'static str,
    /// The MTYPE in the PTE flags returned to amdgpu.
    #[schemars(schema_with = "crate::schema::one_of::<Mtype>")]
    pub written: &'static str,
    /// The BO class, or null if unknown to this rdna1ctl.
    #[schemars(schema_with = "crate::schema::one_of_or_null::<BoClass>")]
    pub class: Option<&'static str>,
    /// What the module did.
    pub action: Action,
    /// Why it kept the MTYPE (`keep` only): a reason of docs/ABI.md (`never_class`, ...);
    /// null for the other actions or a reason unknown to this rdna1ctl.
    #[schemars(schema_with = "crate::schema::one_of_or_null::<Skip>")]
    pub skip_reason: Option<&'static str>,
}

/// Whose pid and comm an event carries (the module's `ORIGIN_*`).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A thread of the process that mapped; `pid` is its thread id.
    Task,
    /// A kernel worker mapped for the process owning the VM: its id and name.
    VmOwner,
    /// A kernel worker whose VM's owner the module could not read.
    KernelThread,
}

fn origin(o: u8) -> Option<Origin> {
    match o {
        ORIGIN_TASK => Some(Origin::Task),
        ORIGIN_VM_OWNER => Some(Origin::VmOwner),
        ORIGIN_KERNEL_THREAD => Some(Origin::KernelThread),
        _ => None,
    }
}

/// What the module did with a call.
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Rewritten to NC.
    Rewrite,
    /// Would be rewritten in enforce (mode audit).
    WouldRewrite,
    /// Kept as amdgpu made it (`skip_reason` says why).
    Keep,
}

/// The text form's ACTION column.
fn action(e: &Event) -> String {
    match (e.action, e.skip_reason()) {
        (ACTION_REWRITE, _) => "rewrite".to_owned(),
        (ACTION_WOULD_REWRITE, _) => "would-rewrite".to_owned(),
        (_, Some(why)) => format!("keep:{}", why.name()),
        (_, None) => format!("keep:{}", e.skip),
    }
}

impl From<&Event> for EventJson {
    fn from(e: &Event) -> Self {
        EventJson {
            seq: e.seq,
            time_ns: e.time_ns,
            pid: e.pid,
            comm: cstr(&e.comm),
            origin: origin(e.origin),
            pci_address: (e.dev_known != 0).then(|| PciAddr::from_raw(e.dev_addr).to_string()),
            vendor_id: pci_id(e.vendor),
            device_id: pci_id(e.device),
            vm_kind: e.vm().map(|k| k.json_name()),
            requested: VmMtype::from_vm_flags(e.vm_flags).json_name(),
            before: Mtype::from_bits(e.before).json_name(),
            written: Mtype::from_bits(e.written).json_name(),
            class: e.bo_class().map(|c| c.json_name()),
            action: match e.action {
                ACTION_REWRITE => Action::Rewrite,
                ACTION_WOULD_REWRITE => Action::WouldRewrite,
                _ => Action::Keep,
            },
            skip_reason: e.skip_reason().map(|w| w.json_name()),
        }
    }
}

/// `rdna1ctl --json events` (without `--follow`).
#[derive(Serialize, JsonSchema)]
pub struct EventsJson {
    events: Vec<EventJson>,
    /// Events logged since the module loaded (the cursor after the last one read).
    logged: u64,
    /// Events overwritten before they were read.
    lost: u64,
}

/// `events --follow --json`'s `events-lost` line: events overwritten before they were read.
#[derive(Serialize, JsonSchema)]
pub struct EventsLostJson {
    lost: u64,
}

pub fn run(ctx: &Ctx, follow: bool, out: &mut impl Write) -> Result<()> {
    let dev = control::open(&ctx.root)?;
    if !ctx.json {
        writeln!(
            out,
            "{:>8} {:>14} {:>7} {:<16} {:<27} {:<8} {:<8} {:<6} {:<7} {:<11} ACTION",
            "SEQ", "TIME", "PID", "COMM", "DEVICE", "VM", "REQUEST", "BEFORE", "WRITTEN", "CLASS"
        )?;
    }
    let (mut cursor, mut lost) = (0u64, 0u64);
    let mut all = Vec::new();
    loop {
        let (events, next, dropped) = dev.events(cursor)?;
        if dropped > 0 {
            if !ctx.json {
                writeln!(
                    out,
                    "-- {dropped} events lost (overwritten before they were read)"
                )?;
            } else if follow {
                output::json("events-lost", &EventsLostJson { lost: dropped }, out)?;
            }
            lost += dropped;
        }
        for e in &events {
            match (ctx.json, follow) {
                (false, _) => writeln!(out, "{}", row(e))?,
                (true, true) => output::json("event", &EventJson::from(e), out)?,
                (true, false) => all.push(EventJson::from(e)),
            }
        }
        cursor = next;
        if events.is_empty() {
            if !follow {
                break;
            }
            out.flush()?;
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    if ctx.json {
        let doc = EventsJson {
            events: all,
            logged: cursor,
            lost,
        };
        return output::json("events", &doc, out);
    }
    writeln!(out, "{cursor} events logged since load; {lost} lost")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdna1_mtype_shared::abi::ACTION_KEEP;

    fn event(vm: VmKind, class: BoClass, skip: Skip) -> Event {
        Event {
            seq: 7,
            pid: 42,
            dev_addr: PciAddr::new(0, 3, 0, 0).unwrap().raw(),
            vendor: 0x1002,
            device: 0x731f,
            dev_known: 1,
            vm_flags: VmMtype::Uc.to_vm_flags(),
            before: Mtype::Uc as u8,
            written: Mtype::Uc as u8,
            class: class as u8,
            action: ACTION_KEEP,
            skip: skip as u8,
            vm_kind: vm as u8,
            ..Default::default()
        }
    }

    #[test]
    fn a_worker_mapping_for_a_process_is_marked_with_its_name() {
        let mut e = event(VmKind::Compute, BoClass::Memory, Skip::AlreadyNc);
        e.comm[..7].copy_from_slice(b"python3");
        assert!(row(&e).contains("     42 python3 "), "{}", row(&e));
        assert_eq!(EventJson::from(&e).origin, Some(Origin::Task));
        e.origin = ORIGIN_VM_OWNER;
        assert!(row(&e).contains("     42 python3* "), "{}", row(&e));
        assert_eq!(EventJson::from(&e).origin, Some(Origin::VmOwner));
        e.origin = ORIGIN_KERNEL_THREAD;
        assert_eq!(EventJson::from(&e).origin, Some(Origin::KernelThread));
        e.origin = 9;
        assert_eq!(EventJson::from(&e).origin, None);
    }

    #[test]
    fn the_schemas_value_lists_are_the_shared_enums() {
        use crate::schema::{enum_values, enum_values_any};
        let names = |v: Vec<&str>, extra: &[&str]| {
            let mut v: Vec<String> = v.into_iter().map(str::to_ascii_lowercase).collect();
            v.extend(extra.iter().map(|s| s.to_string()));
            v
        };
        let p = |f: &str| enum_values::<EventJson>(&format!("/properties/{f}"));
        assert_eq!(
            p("class"),
            names(BoClass::ALL.map(BoClass::name).to_vec(), &["null"])
        );
        assert_eq!(
            p("skip_reason"),
            names(Skip::ALL.map(Skip::name).to_vec(), &["null"])
        );
        let mut kinds = names(VmKind::ALL.map(VmKind::name).to_vec(), &["null"]);
        let mut got = p("vm_kind");
        kinds.sort();
        got.sort();
        assert_eq!(got, kinds);
        // The reserved MTYPE is `reserved` in every JSON field (verify's `ptes.reserved`).
        assert_eq!(p("before"), ["nc", "wc", "cc", "uc", "reserved"]);
        assert_eq!(p("written"), p("before"));
        assert_eq!(
            p("requested"),
            names(VmMtype::ALL.map(VmMtype::name).to_vec(), &["other"])
        );
        // Every origin the module sends, and null.
        let mut origins: Vec<String> = [ORIGIN_TASK, ORIGIN_VM_OWNER, ORIGIN_KERNEL_THREAD, 9]
            .into_iter()
            .map(|o| serde_json::to_value(origin(o)).unwrap())
            .map(|v| v.as_str().unwrap_or("null").to_owned())
            .collect();
        let mut listed = enum_values_any::<EventJson>("/properties/origin");
        origins.sort();
        listed.sort();
        assert_eq!(listed, origins);
        let e = Event {
            before: 5,
            written: Mtype::Reserved as u8,
            ..Event::default()
        };
        let j = serde_json::to_value(EventJson::from(&e)).unwrap();
        assert_eq!(
            (j["before"].as_str(), j["written"].as_str()),
            (Some("reserved"), Some("reserved"))
        );
    }

    #[test]
    fn documents_match_their_schemas() {
        let e = EventJson::from(&event(VmKind::Compute, BoClass::Memory, Skip::AlreadyNc));
        crate::schema::assert_valid("event", &e);
        let unknown = Event {
            vm_kind: 9,
            class: 99,
            origin: 9,
            dev_known: 0,
            action: ACTION_REWRITE,
            ..event(VmKind::Unknown, BoClass::Memory, Skip::AlreadyNc)
        };
        let doc = EventsJson {
            events: vec![e, EventJson::from(&unknown)],
            logged: 2,
            lost: 0,
        };
        crate::schema::assert_valid("events", &doc);
        crate::schema::assert_valid("events-lost", &EventsLostJson { lost: 3 });
    }

    #[test]
    fn vm_kind_and_the_new_classes_and_skips_by_name() {
        let e = event(VmKind::Compute, BoClass::CoherentSg, Skip::CoherentSg);
        let r = row(&e);
        assert!(
            r.contains(" 0000:03:00.0 1002:731f      compute  UC       UC     UC      coherent_sg keep:coherent_sg"),
            "{r}"
        );
        let j = serde_json::to_value(EventJson::from(&e)).unwrap();
        assert_eq!(j["vm_kind"], "compute");
        assert_eq!(j["class"], "coherent_sg");
        assert_eq!(
            (j["action"].as_str(), j["skip_reason"].as_str()),
            (Some("keep"), Some("coherent_sg"))
        );
        assert_eq!(j["pci_address"], "0000:03:00.0");
        assert_eq!(
            (j["vendor_id"].as_str(), j["device_id"].as_str()),
            (Some("0x1002"), Some("0x731f"))
        );
        assert_eq!(
            (j["before"].as_str(), j["requested"].as_str()),
            (Some("uc"), Some("uc"))
        );
        let e = event(VmKind::Graphics, BoClass::Kernel, Skip::NeverClass);
        let j = serde_json::to_value(EventJson::from(&e)).unwrap();
        assert_eq!(
            (j["vm_kind"].as_str(), j["class"].as_str()),
            (Some("graphics"), Some("kernel"))
        );
        let e = Event {
            vm_kind: 9,
            ..event(VmKind::Unknown, BoClass::Memory, Skip::ClassNotEnabled)
        };
        assert!(row(&e).contains(" ?        UC "), "{}", row(&e));
        let j = serde_json::to_value(EventJson::from(&e)).unwrap();
        assert!(j["vm_kind"].is_null());
        assert_eq!(j["action"], "keep");
        assert_eq!(j["skip_reason"], "class_not_enabled");
        let e = Event {
            action: ACTION_WOULD_REWRITE,
            dev_known: 0,
            ..e
        };
        let j = serde_json::to_value(EventJson::from(&e)).unwrap();
        assert_eq!(j["action"], "would_rewrite");
        assert!(j["skip_reason"].is_null() && j["pci_address"].is_null());
    }
}
