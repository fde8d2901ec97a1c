//! What verify saw and what it means under the policy.
//!
//! Updates are tallied per pid as they are decoded; judging happens once at the end, when the
//! module's event log for the whole window has been read. A non-NC update is judged per
//! (pid, MTYPE) group, since the correlation with the module's log is by pid and MTYPE.
//!
//! The tracepoint does not say which kind of VM an update is in. Under VM scope `compute` a
//! process is judged only if the module logged a decision for it in a compute VM (its events
//! carry the VM kind); any other process's non-NC updates are counted as outside the VM scope,
//! never as violations: they may be a graphics client's, which the policy leaves alone.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rdna1_mtype_shared::abi::{Event, StatsArg, ACTION_KEEP};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::{Mode, Policy, Skip, VmKind, VmScope};
use rdna1_mtype_shared::pte::Mtype;
use schemars::JsonSchema;
use serde::Serialize;

use super::attribution::{Attributor, Source};
use crate::module::counters::CounterSetJson;
use crate::output::JsonNames;
use crate::sysroot::SysRoot;
use crate::trace::decode::Update;

/// Non-NC updates kept per pid to list as violations; the rest are counted only.
pub const SAMPLES_PER_PID: usize = 100;
/// Violations listed in the report (all are counted).
pub const MAX_LISTED: usize = 100;
/// A keep the module logged this long before the window still explains updates in it: the
/// hook runs before amdgpu writes the PTEs, so a mapping can straddle the start.
pub const KEEP_GRACE_NS: u64 = 2_000_000_000;

const MTYPES: [Mtype; 5] = [Mtype::Nc, Mtype::Wc, Mtype::Cc, Mtype::Uc, Mtype::Reserved];

fn mtype_index(m: Mtype) -> usize {
    match m {
        Mtype::Nc => 0,
        Mtype::Wc => 1,
        Mtype::Cc => 2,
        Mtype::Uc => 3,
        Mtype::Reserved => 4,
    }
}

/// What one process did in the window.
#[derive(Default, Debug)]
pub struct Tally {
    pub comm: Option<String>,
    pub updates: u64,
    /// PTEs of valid, non-PRT updates, by MTYPE (NC, WC, CC, UC, reserved).
    pub ptes: [u64; 5],
    /// PTEs that map nothing (no VALID) or are PRT: never subject to the policy.
    pub other_ptes: u64,
    /// Valid, non-PRT updates by MTYPE.
    pub mapped_updates: [u64; 5],
    pub samples: Vec<Update>,
}

/// The module's logged keeps: (tgid, written MTYPE) -> (device, reason).
pub type Keeps = HashMap<(u32, u8), BTreeSet<(Option<PciAddr>, &'static str)>>;

/// Everything verify collected in the window.
pub struct Collector {
    pub by_pid: BTreeMap<i32, Tally>,
    /// (tgid, written MTYPE) -> (device, reason) of the module's logged keeps.
    pub keeps: Keeps,
    /// tgid -> the kinds of VM (by name) the module logged decisions for (window and before).
    pub vm_kinds: HashMap<u32, BTreeSet<&'static str>>,
    pub pid_filter: Option<u32>,
    /// Updates of other pids, dropped by `--pid`.
    pub filtered: u64,
    /// Module events read in the window, and lost (overwritten before verify read them).
    pub module_events: u64,
    pub module_events_lost: u64,
    /// CLOCK_MONOTONIC at the start of the window.
    pub window_start_ns: u64,
    root: SysRoot,
}

impl Collector {
    pub fn new(root: SysRoot, pid_filter: Option<u32>, window_start_ns: u64) -> Collector {
        Collector {
            by_pid: BTreeMap::new(),
            keeps: HashMap::new(),
            vm_kinds: HashMap::new(),
            pid_filter,
            filtered: 0,
            module_events: 0,
            module_events_lost: 0,
            window_start_ns,
            root,
        }
    }

    pub fn add_update(&mut self, u: Update, attr: &mut Attributor) {
        if self.pid_filter.is_some_and(|p| p as i32 != u.pid) {
            self.filtered += 1;
            return;
        }
        let root = &self.root;
        let t = self.by_pid.entry(u.pid).or_insert_with(|| {
            // First sight: the process may be gone by the end of the window.
            let pid = u.pid as u32;
            attr.note_pid(pid);
            Tally {
                comm: std::fs::read_to_string(root.path(&format!("/proc/{pid}/comm")))
                    .ok()
                    .map(|s| s.trim().to_owned()),
                ..Tally::default()
            }
        });
        t.updates += 1;
        if !u.maps_a_page() {
            t.other_ptes += u.ptes();
            return;
        }
        let m = mtype_index(u.mtype());
        t.ptes[m] += u.ptes();
        t.mapped_updates[m] += 1;
        if m != 0 && t.samples.len() < SAMPLES_PER_PID {
            t.samples.push(u);
        }
    }

    /// One of the module's logged decisions; `in_window` is false for those read from the
    /// ring before the window (they still attribute pids, and recent keeps still explain).
    pub fn add_event(&mut self, e: &Event, attr: &mut Attributor, in_window: bool) {
        let tgid = attr.note_event(e);
        if let Some(kind) = e.vm() {
            self.vm_kinds.entry(tgid).or_default().insert(kind.name());
        }
        if in_window {
            self.module_events += 1;
        }
        let recent = e.time_ns + KEEP_GRACE_NS >= self.window_start_ns;
        if e.action == ACTION_KEEP && (in_window || recent) {
            let dev = (e.dev_known != 0).then(|| PciAddr::from_raw(e.dev_addr));
            let why = e.skip_reason().map_or("unknown", Skip::name);
            self.keeps
                .entry((tgid, e.written & 7))
                .or_default()
                .insert((dev, why));
        }
    }
}

/// One listed violation (or, in off/audit, would-be violation).
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq, Eq)]
pub struct ViolationJson {
    pub pid: u32,
    /// The process's name, or null if it exited before verify read it.
    pub comm: Option<String>,
    /// The PCI addresses of the GPUs the process's updates are attributed to (its row's).
    pub pci_addresses: Vec<String>,
    pub vm_ctx: u64,
    /// GPU page numbers (4 KiB), end exclusive.
    pub start: u64,
    pub end: u64,
    pub ptes: u64,
    /// The PTE flags written, hex (`0x3000000000067`).
    pub flags: String,
    /// The MTYPE written (never `nc`).
    #[schemars(schema_with = "crate::schema::one_of::<Mtype>")]
    pub mtype: &'static str,
}

/// PTEs by MTYPE.
#[derive(Serialize, JsonSchema, Debug, Default, PartialEq, Eq)]
pub struct PtesJson {
    pub nc: u64,
    pub wc: u64,
    pub cc: u64,
    pub uc: u64,
    pub reserved: u64,
}

/// One row of the table: a process and the device(s) it is attributed to.
#[derive(Serialize, JsonSchema, Debug)]
pub struct RowJson {
    /// The PCI addresses of the GPUs the process's updates are attributed to: one, several
    /// (it uses several), or, `unattributed`, every device the module has seen (possibly
    /// none): the updates may be for any of them.
    pub pci_addresses: Vec<String>,
    /// How they were found (docs/CLI.md, "Device attribution").
    pub attribution: Source,
    pub in_scope: bool,
    pub pid: u32,
    pub comm: Option<String>,
    pub updates: u64,
    /// PTEs of valid, non-PRT updates by MTYPE.
    pub ptes: PtesJson,
    /// PTEs of invalid or PRT updates (unmaps, sparse): not subject to the policy.
    pub other_ptes: u64,
    /// Non-NC updates that break the policy in force (mode enforce only).
    pub violations: u64,
    /// Non-NC updates that would break it in enforce (mode off or audit).
    pub would_violate: u64,
    /// Non-NC updates the module logged as kept on purpose, by reason.
    pub explained: BTreeMap<String, u64>,
    /// Non-NC updates for devices outside the scope.
    pub out_of_scope: u64,
    /// The kinds of VM the module logged decisions for this process in (compute, graphics,
    /// unknown); empty if it logged none.
    #[schemars(schema_with = "crate::schema::list_of::<VmKind>")]
    pub vm_kinds: Vec<&'static str>,
    /// Non-NC updates not judged under VM scope `compute`: the module logged no decision for
    /// this process in a compute VM, so they may be a graphics client's.
    pub outside_vm_scope: u64,
}

impl RowJson {
    /// The text table's DEVICE column: the addresses, or `unattributed`.
    pub fn label(&self) -> String {
        match self.attribution {
            Source::Unattributed => "unattributed".to_owned(),
            _ => self.pci_addresses.join(","),
        }
    }
}

/// What the judgement found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub rows: Vec<RowJson>,
    pub violations: u64,
    pub would_violate: u64,
    pub outside_vm_scope: u64,
    pub listed: Vec<ViolationJson>,
}

/// Judges every non-NC mapped update under `policy`.
pub fn judge(c: &Collector, attr: &Attributor, policy: &Policy) -> Verdict {
    let mut v = Verdict::default();
    for (&tid, t) in &c.by_pid {
        // The tracepoint's pid is a signed int; a thread id is never negative.
        let pid = tid as u32;
        let a = attr.attribute(pid);
        let in_scope = attr.in_scope(&a, &policy.scope);
        let kinds = c.vm_kinds.get(&pid);
        let in_vm_scope = match policy.vm_scope {
            VmScope::All => true,
            VmScope::Compute => kinds.is_some_and(|k| k.contains(VmKind::Compute.name())),
        };
        let mut row = RowJson {
            pci_addresses: a.devices.iter().map(|d| d.to_string()).collect(),
            attribution: a.source,
            in_scope,
            pid,
            comm: t.comm.clone(),
            updates: t.updates,
            ptes: PtesJson {
                nc: t.ptes[0],
                wc: t.ptes[1],
                cc: t.ptes[2],
                uc: t.ptes[3],
                reserved: t.ptes[4],
            },
            other_ptes: t.other_ptes,
            violations: 0,
            would_violate: 0,
            explained: BTreeMap::new(),
            out_of_scope: 0,
            vm_kinds: kinds.into_iter().flatten().copied().collect(),
            outside_vm_scope: 0,
        };
        for (i, &m) in MTYPES.iter().enumerate().skip(1) {
            let n = t.mapped_updates[i];
            if n == 0 {
                continue;
            }
            if !in_scope {
                row.out_of_scope += n;
                continue;
            }
            if !in_vm_scope {
                row.outside_vm_scope += n;
                v.outside_vm_scope += n;
                continue;
            }
            // Explained if the module logged a keep for this process writing this MTYPE, on
            // one of the devices it is attributed to (or on an unidentified one).
            let reasons: BTreeSet<&str> = c
                .keeps
                .get(&(pid, m as u8))
                .into_iter()
                .flatten()
                .filter(|(dev, _)| dev.is_none_or(|d| a.devices.contains(&d)))
                .map(|&(_, why)| why)
                .collect();
            if !reasons.is_empty() {
                let key: Vec<&str> = reasons.into_iter().collect();
                *row.explained.entry(key.join("+")).or_default() += n;
                continue;
            }
            let enforce = policy.mode == Mode::Enforce;
            if enforce {
                row.violations += n;
                v.violations += n;
            } else {
                row.would_violate += n;
                v.would_violate += n;
            }
            for s in t.samples.iter().filter(|s| s.mtype() == m) {
                if v.listed.len() < MAX_LISTED {
                    v.listed.push(ViolationJson {
                        pid,
                        comm: t.comm.clone(),
                        pci_addresses: row.pci_addresses.clone(),
                        vm_ctx: s.vm_ctx,
                        start: s.start,
                        end: s.end,
                        ptes: s.ptes(),
                        flags: format!("{:#x}", s.flags),
                        mtype: m.json_name(),
                    });
                }
            }
        }
        v.rows.push(row);
    }
    v
}

/// The module's counter sets as deltas over the window, `after - before` (matched by kind and
/// address; a set new in `after` counts from zero).
pub fn counter_deltas(before: &[StatsArg], after: &[StatsArg]) -> Vec<CounterSetJson> {
    after
        .iter()
        .map(|a| {
            let zero = StatsArg::default();
            let b = before
                .iter()
                .find(|b| b.kind == a.kind && b.addr == a.addr)
                .unwrap_or(&zero);
            CounterSetJson::delta(a, b)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdna1_mtype_shared::abi::{ACTION_REWRITE, STATS_DEVICE};
    use rdna1_mtype_shared::policy::{Classes, Scope};

    const RDNA1: &str = "0000:03:00.0";
    const RDNA2: &str = "0000:04:00.0";
    const START: u64 = 100_000_000_000;

    fn addr(s: &str) -> PciAddr {
        PciAddr::parse(s.as_bytes()).unwrap()
    }

    /// VM scope `all`: every process is judged (the VM scope has tests of its own).
    fn policy(mode: Mode, scope: Scope) -> Policy {
        Policy {
            mode,
            scope,
            classes: Classes::DEFAULT,
            vm_scope: VmScope::All,
        }
    }

    fn stats(a: &str, device: u16) -> StatsArg {
        StatsArg {
            kind: STATS_DEVICE,
            addr: addr(a).raw(),
            vendor: 0x1002,
            device,
            ..Default::default()
        }
    }

    /// A root with no /proc: tids are their own tgids, no fdinfo.
    fn setup() -> (Collector, Attributor) {
        let root = SysRoot::new(std::env::temp_dir().join("rdna1ctl-report-noroot"));
        let mut attr = Attributor::new(root.clone());
        attr.note_stats(&[stats(RDNA1, 0x731f), stats(RDNA2, 0x73bf)]);
        (Collector::new(root, None, START), attr)
    }

    fn event(pid: u32, dev: &str, written: u8, action: u8, skip: Skip, time_ns: u64) -> Event {
        Event {
            pid,
            time_ns,
            dev_addr: addr(dev).raw(),
            vendor: 0x1002,
            device: if dev == RDNA1 { 0x731f } else { 0x73bf },
            dev_known: 1,
            written,
            action,
            skip: skip as u8,
            ..Default::default()
        }
    }

    fn upd(pid: i32, flags: u64) -> Update {
        Update {
            start: 0x100,
            end: 0x104,
            flags,
            nptes: 4,
            incr: 4096,
            pid,
            vm_ctx: 0x42,
        }
    }

    /// `v` in a whole report, which must be valid under verify's schema.
    fn assert_valid(c: &Collector, v: Verdict) {
        use super::super::report::{tests::doc, LostJson};
        let mut d = doc(LostJson::default(), v.violations);
        d.module_events_read = c.module_events;
        d.rows = v.rows;
        d.listed = v.listed;
        d.would_violate = v.would_violate;
        d.outside_vm_scope = v.outside_vm_scope;
        crate::schema::assert_valid("verify", &d);
    }

    const UC: u64 = 0x67 | (3 << 48);
    const RSVD: u64 = 0x67 | (7 << 48);
    const CC: u64 = 0x67 | (2 << 48);
    const NC: u64 = 0x67;

    #[test]
    fn unexplained_uc_in_enforce_is_a_violation_with_details() {
        let (mut c, mut a) = setup();
        c.add_event(
            &event(10, RDNA1, 0, ACTION_REWRITE, Skip::ModeOff, START),
            &mut a,
            true,
        );
        c.add_update(upd(10, NC), &mut a);
        c.add_update(upd(10, UC), &mut a);
        c.add_update(upd(10, UC & !1), &mut a); // not VALID: an unmap
        c.add_update(upd(10, UC | rdna1_mtype_shared::pte::PTE_PRT), &mut a);
        let v = judge(&c, &a, &policy(Mode::Enforce, Scope::Rdna1));
        assert_eq!(v.violations, 1);
        let row = &v.rows[0];
        assert_eq!(
            (row.label(), row.attribution),
            (RDNA1.to_owned(), Source::ModuleEvents)
        );
        assert_eq!(
            (row.updates, row.ptes.nc, row.ptes.uc, row.other_ptes),
            (4, 4, 4, 8)
        );
        assert_eq!(
            v.listed,
            [ViolationJson {
                pid: 10,
                comm: None,
                pci_addresses: vec![RDNA1.into()],
                vm_ctx: 0x42,
                start: 0x100,
                end: 0x104,
                ptes: 4,
                flags: "0x3000000000067".into(),
                mtype: "uc",
            }]
        );
        assert_valid(&c, v);
    }

    #[test]
    fn the_reserved_mtype_is_reserved_in_rows_and_listed() {
        let (mut c, mut a) = setup();
        c.add_event(
            &event(10, RDNA1, 0, ACTION_REWRITE, Skip::ModeOff, START),
            &mut a,
            true,
        );
        c.add_update(upd(10, RSVD), &mut a);
        let v = judge(&c, &a, &policy(Mode::Enforce, Scope::Rdna1));
        assert_eq!(v.rows[0].ptes.reserved, 4);
        assert_eq!(v.listed[0].mtype, "reserved");
        let j = serde_json::to_value(&v.listed[0]).unwrap();
        assert_eq!(j["mtype"], "reserved");
        assert_valid(&c, v);
    }

    #[test]
    fn a_logged_keep_of_the_same_pid_and_mtype_explains() {
        let (mut c, mut a) = setup();
        c.add_event(
            &event(10, RDNA1, 3, ACTION_KEEP, Skip::NeverClass, START + 5),
            &mut a,
            true,
        );
        // Another pid's keep, and a keep of another MTYPE, explain nothing.
        c.add_event(
            &event(11, RDNA1, 3, ACTION_KEEP, Skip::NeverClass, START + 5),
            &mut a,
            true,
        );
        c.add_event(
            &event(12, RDNA1, 2, ACTION_KEEP, Skip::LayoutUnknown, START + 5),
            &mut a,
            true,
        );
        for pid in [10, 12, 13] {
            c.add_update(upd(pid, UC), &mut a);
        }
        c.add_event(
            &event(13, RDNA1, 0, ACTION_REWRITE, Skip::ModeOff, START),
            &mut a,
            true,
        );
        c.add_update(upd(11, CC), &mut a);
        let v = judge(&c, &a, &policy(Mode::Enforce, Scope::Rdna1));
        let by_pid: BTreeMap<u32, (u64, Vec<&String>)> = v
            .rows
            .iter()
            .map(|r| (r.pid, (r.violations, r.explained.keys().collect())))
            .collect();
        assert_eq!(by_pid[&10], (0, vec![&"never_class".to_string()]));
        assert_eq!(by_pid[&11].0, 1, "pid 11 kept UC, not CC");
        assert_eq!(by_pid[&12].0, 1, "pid 12 kept CC, not UC");
        assert_eq!(by_pid[&13].0, 1);
        assert_eq!(v.violations, 3);
    }

    #[test]
    fn keeps_long_before_the_window_explain_nothing() {
        let (mut c, mut a) = setup();
        let old = START - KEEP_GRACE_NS - 1;
        c.add_event(
            &event(10, RDNA1, 3, ACTION_KEEP, Skip::NeverClass, old),
            &mut a,
            false,
        );
        c.add_event(
            &event(11, RDNA1, 3, ACTION_KEEP, Skip::NeverClass, START - 1000),
            &mut a,
            false,
        );
        c.add_update(upd(10, UC), &mut a);
        c.add_update(upd(11, UC), &mut a);
        let v = judge(&c, &a, &policy(Mode::Enforce, Scope::Rdna1));
        assert_eq!(
            v.rows.iter().map(|r| r.violations).collect::<Vec<_>>(),
            [1, 0]
        );
        assert_eq!(
            c.module_events, 0,
            "events before the window are not counted in it"
        );
    }

    #[test]
    fn audit_and_off_report_would_violate_only() {
        for mode in [Mode::Audit, Mode::Off] {
            let (mut c, mut a) = setup();
            c.add_event(
                &event(10, RDNA1, 0, ACTION_REWRITE, Skip::ModeOff, START),
                &mut a,
                true,
            );
            c.add_update(upd(10, UC), &mut a);
            let v = judge(&c, &a, &policy(mode, Scope::Rdna1));
            assert_eq!(
                (v.violations, v.would_violate, v.listed.len()),
                (0, 1, 1),
                "{mode:?}"
            );
            assert_valid(&c, v);
        }
    }

    #[test]
    fn scope_decides_for_attributed_and_unattributed_pids() {
        let (mut c, mut a) = setup();
        c.add_event(
            &event(20, RDNA2, 0, ACTION_REWRITE, Skip::ModeOff, START),
            &mut a,
            true,
        );
        c.add_update(upd(20, UC), &mut a); // RDNA2: out of rdna1
        c.add_update(upd(30, UC), &mut a); // unattributed: RDNA1 or RDNA2
        let v = judge(&c, &a, &policy(Mode::Enforce, Scope::Rdna1));
        assert_eq!(v.violations, 0);
        assert_eq!(v.rows.iter().map(|r| r.out_of_scope).sum::<u64>(), 2);
        assert_eq!(v.rows[1].label(), "unattributed");
        assert_eq!(v.rows[1].pci_addresses, [RDNA1, RDNA2], "could be either");
        // gfx10 covers both devices: both are violations now.
        let v = judge(&c, &a, &policy(Mode::Enforce, Scope::Gfx10));
        assert_eq!(v.violations, 2);
        assert_valid(&c, v);
    }

    #[test]
    fn vm_scope_compute_judges_only_processes_logged_in_a_compute_vm() {
        let (mut c, mut a) = setup();
        let in_vm = |pid, kind: VmKind| Event {
            vm_kind: kind as u8,
            ..event(pid, RDNA1, 0, ACTION_REWRITE, Skip::ModeOff, START)
        };
        // 10: a HIP process (compute VM); 11: a compositor under VM scope all earlier
        // (graphics); 12: a v1 module's event (unknown); 13: no event at all.
        c.add_event(&in_vm(10, VmKind::Compute), &mut a, true);
        c.add_event(&in_vm(11, VmKind::Graphics), &mut a, true);
        c.add_event(&in_vm(12, VmKind::Unknown), &mut a, true);
        for pid in [10, 11, 12, 13] {
            c.add_update(upd(pid, UC), &mut a);
        }
        // gfx10: 13, unattributed between the two devices, is in scope too.
        let mut p = policy(Mode::Enforce, Scope::Gfx10);
        p.vm_scope = VmScope::Compute;
        let v = judge(&c, &a, &p);
        let by_pid: BTreeMap<u32, (u64, u64, Vec<&str>)> = v
            .rows
            .iter()
            .map(|r| {
                (
                    r.pid,
                    (r.violations, r.outside_vm_scope, r.vm_kinds.clone()),
                )
            })
            .collect();
        assert_eq!(by_pid[&10], (1, 0, vec!["compute"]));
        assert_eq!(by_pid[&11], (0, 1, vec!["graphics"]));
        assert_eq!(by_pid[&12], (0, 1, vec!["unknown"]));
        assert_eq!(by_pid[&13], (0, 1, vec![]));
        assert_eq!((v.violations, v.outside_vm_scope), (1, 3));
        assert_eq!(v.listed.len(), 1);
        assert_valid(&c, v);
        // Under VM scope all, every process is judged.
        p.vm_scope = VmScope::All;
        let v = judge(&c, &a, &p);
        assert_eq!((v.violations, v.outside_vm_scope), (4, 0));
    }

    #[test]
    fn pid_filter_drops_other_pids() {
        let (_, mut a) = setup();
        let mut c = Collector::new(SysRoot::new("/nonexistent".into()), Some(10), START);
        c.add_update(upd(10, NC), &mut a);
        c.add_update(upd(11, UC), &mut a);
        assert_eq!((c.by_pid.len(), c.filtered), (1, 1));
    }

    #[test]
    fn counters_are_deltas_over_the_window() {
        let mut b = stats(RDNA1, 0x731f);
        b.calls = 10;
        b.rewritten = [0, 1, 2, 3];
        b.skipped[Skip::NeverClass as usize] = 4;
        let mut a = b;
        a.calls = 15;
        a.rewritten = [0, 1, 4, 3];
        a.skipped[Skip::NeverClass as usize] = 5;
        let new = stats(RDNA2, 0x73bf);
        let d = counter_deltas(&[b], &[a, StatsArg { calls: 2, ..new }]);
        assert_eq!(d[0].calls, 5);
        assert_eq!((d[0].rewritten.cc, d[0].rewritten.uc), (2, 0));
        assert_eq!(d[0].skipped.get("never_class"), Some(&1));
        assert_eq!((d[1].pci_address.as_deref(), d[1].calls), (Some(RDNA2), 2));
        assert_eq!(
            (d[1].kind.name(), d[1].device_id.as_str()),
            ("device", "0x73bf")
        );
    }
}
