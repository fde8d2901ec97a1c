//! The report: the `--json` document (schema in docs/CLI.md (verify)) and its text form.

use std::io::{self, Write};

use schemars::JsonSchema;
use serde::Serialize;

use super::judge::{PtesJson, RowJson, ViolationJson};
use crate::module::counters::CounterSetJson;
use crate::output::PolicyJson;
use crate::trace::tracefs::Lost;

/// The tracefs instance verify traced in.
#[derive(Serialize, JsonSchema, Debug)]
pub struct TracefsJson {
    pub instance: String,
    pub removed: bool,
    /// Instances of earlier runs whose rdna1ctl was gone, removed before this one.
    pub stale_removed: Vec<String>,
    pub cpus: usize,
}

/// What was read from the ring buffers.
#[derive(Serialize, JsonSchema, Debug)]
pub struct DecodedJson {
    /// Ring-buffer pages read.
    pub pages: u64,
    /// `amdgpu_vm_update_ptes` records decoded (before `--pid`).
    pub updates: u64,
    pub updates_per_s: f64,
    /// Records of other events, or malformed: expected 0.
    pub foreign: u64,
    pub malformed: u64,
    /// Updates of other processes, dropped by `--pid`.
    pub filtered: u64,
}

/// Events lost before verify read them: the counts are incomplete when any is not 0.
#[derive(Serialize, JsonSchema, Debug, Default)]
pub struct LostJson {
    /// Per-CPU ring-buffer losses (`per_cpu/cpuN/stats`), summed.
    #[serde(flatten)]
    pub ring: Lost,
    /// Pages the kernel flagged as following lost events, and the count it stored.
    pub flagged_pages: u64,
    pub flagged_events: u64,
    /// The module's event ring overwrote this many events before verify read them.
    pub module_events: u64,
}

impl LostJson {
    pub fn any(&self) -> bool {
        self.ring.total() + self.flagged_pages + self.module_events > 0
    }
}

/// Why the window ended.
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    /// `--duration` elapsed.
    Duration,
    /// SIGINT, SIGTERM or SIGHUP.
    Signal,
}

impl EndedBy {
    pub fn name(self) -> &'static str {
        match self {
            EndedBy::Duration => "duration",
            EndedBy::Signal => "signal",
        }
    }
}

/// The verdict: no violation of the policy in force, or some (exit code 3).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No violation (in off or audit, would-be violations do not count).
    Ok,
    /// Violations of the policy in force.
    Violations,
}

/// The whole report; the `--json` document (docs/CLI.md (verify)).
#[derive(Serialize, JsonSchema, Debug)]
pub struct VerifyJson {
    /// The window actually traced, in seconds.
    pub duration_s: f64,
    /// Why the window ended.
    pub ended_by: EndedBy,
    pub pid_filter: Option<u32>,
    pub policy: PolicyJson,
    /// The policy read again at the end differs from the one at the start.
    pub policy_changed: bool,
    pub tracefs: TracefsJson,
    pub decoded: DecodedJson,
    pub lost: LostJson,
    /// Entries of the module's event log read in the window (`lost.module_events`: those
    /// overwritten before verify read them).
    pub module_events_read: u64,
    pub rows: Vec<RowJson>,
    /// The module's counter sets as deltas over the window (`status`'s `stats`).
    pub stats: Vec<CounterSetJson>,
    pub violations: u64,
    pub would_violate: u64,
    /// Non-NC updates not judged under VM scope `compute` (no compute VM logged for their
    /// process).
    pub outside_vm_scope: u64,
    /// The first violations (or would-be violations in off/audit), at most 100.
    pub listed: Vec<ViolationJson>,
    pub result: Outcome,
}

/// An MTYPE as text shows it, amdgpu's names (`UC`, `RSVD`), from its JSON name.
fn text_mtype(json: &str) -> String {
    match json {
        "reserved" => "RSVD".to_owned(),
        m => m.to_ascii_uppercase(),
    }
}

fn mt(p: &PtesJson) -> String {
    format!("{:>8} {:>8} {:>8} {:>8}", p.nc, p.wc, p.cc, p.uc)
}

/// The human-readable report.
pub fn render_text(r: &VerifyJson, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "verify: {:.1} s (ended by {}), policy mode {} scope {} vm scope {} classes {}{}",
        r.duration_s,
        r.ended_by.name(),
        r.policy.mode,
        r.policy.scope,
        r.policy.vm_scope,
        r.policy.classes,
        if r.policy_changed {
            " (CHANGED during the window: judged by the policy at the start)"
        } else {
            ""
        }
    )?;
    if let Some(p) = r.pid_filter {
        writeln!(
            out,
            "only pid {p} ({} updates of other pids ignored)",
            r.decoded.filtered
        )?;
    }
    writeln!(
        out,
        "trace:  instance {} on {} CPUs, {}; {} updates decoded ({:.1}/s), {} module events",
        r.tracefs.instance,
        r.tracefs.cpus,
        if r.tracefs.removed {
            "removed"
        } else {
            "NOT removed"
        },
        r.decoded.updates,
        r.decoded.updates_per_s,
        r.module_events_read
    )?;
    if !r.tracefs.stale_removed.is_empty() {
        writeln!(
            out,
            "        removed stale instances: {}",
            r.tracefs.stale_removed.join(" ")
        )?;
    }
    let l = &r.lost;
    if l.any() {
        writeln!(
            out,
            "LOST:   trace ring overrun {} commit-overrun {} dropped {} ({} pages flagged, {} counted); module events {}: the counts below are incomplete",
            l.ring.overrun,
            l.ring.commit_overrun,
            l.ring.dropped,
            l.flagged_pages,
            l.flagged_events,
            l.module_events
        )?;
    } else {
        writeln!(out, "lost:   none")?;
    }
    if r.decoded.foreign + r.decoded.malformed > 0 {
        writeln!(
            out,
            "        {} records of other events and {} malformed records skipped",
            r.decoded.foreign, r.decoded.malformed
        )?;
    }
    writeln!(out)?;
    if r.rows.is_empty() {
        writeln!(out, "no page-table update seen")?;
    } else {
        writeln!(
            out,
            "{:<14} {:>7} {:<16} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10}  NOTE",
            "DEVICE", "PID", "COMM", "UPDATES", "NC", "WC", "CC", "UC", "UNMAP", "VIOLATIONS"
        )?;
        for row in &r.rows {
            let mut note = Vec::new();
            if !row.in_scope {
                note.push("out of scope".to_owned());
            }
            if row.would_violate > 0 {
                note.push(format!("{} would violate in enforce", row.would_violate));
            }
            if row.outside_vm_scope > 0 {
                note.push(format!(
                    "{} outside the VM scope (no compute VM logged)",
                    row.outside_vm_scope
                ));
            }
            for (why, n) in &row.explained {
                note.push(format!("{n} kept: {why}"));
            }
            if row.ptes.reserved > 0 {
                note.push(format!("{} reserved-MTYPE PTEs", row.ptes.reserved));
            }
            writeln!(
                out,
                "{:<14} {:>7} {:<16} {:>8} {} {:>8} {:>10}  {}",
                row.label(),
                row.pid,
                row.comm.as_deref().unwrap_or("?"),
                row.updates,
                mt(&row.ptes),
                row.other_ptes,
                row.violations,
                note.join("; ")
            )?;
        }
        writeln!(
            out,
            "(NC..UC, UNMAP: PTEs; UNMAP = invalid or PRT, not subject to the policy)"
        )?;
    }
    writeln!(out)?;
    if r.stats.is_empty() {
        writeln!(out, "module: no device counted")?;
    }
    for c in &r.stats {
        let skipped: Vec<String> = c
            .skipped
            .iter()
            .filter(|&(_, &n)| n > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        writeln!(
            out,
            "module {} [{}:{}] over the window: calls +{}, rewritten WC {} CC {} UC {}, would-rewrite WC {} CC {} UC {}, skipped {}",
            c.label(),
            c.vendor_id.trim_start_matches("0x"),
            c.device_id.trim_start_matches("0x"),
            c.calls,
            c.rewritten.wc,
            c.rewritten.cc,
            c.rewritten.uc,
            c.would_rewrite.wc,
            c.would_rewrite.cc,
            c.would_rewrite.uc,
            if skipped.is_empty() { "0".to_owned() } else { skipped.join(", ") }
        )?;
    }
    if !r.listed.is_empty() {
        let total = r.violations + r.would_violate;
        writeln!(
            out,
            "\n{} ({total}, {} listed):",
            if r.violations > 0 {
                "violations"
            } else {
                "would violate in enforce"
            },
            r.listed.len()
        )?;
        for v in &r.listed {
            writeln!(
                out,
                "  pid {} ({}) device {} vm_ctx {:#x} pages {:#012x}..{:#012x} ({} PTEs) flags {} MTYPE {}",
                v.pid,
                v.comm.as_deref().unwrap_or("exited"),
                v.pci_addresses.join(","),
                v.vm_ctx,
                v.start,
                v.end,
                v.ptes,
                v.flags,
                text_mtype(v.mtype)
            )?;
        }
    }
    writeln!(out)?;
    match r.result {
        Outcome::Ok => writeln!(
            out,
            "result: ok, no violation{}",
            if l.any() {
                " among the events not lost"
            } else {
                ""
            }
        ),
        Outcome::Violations => writeln!(
            out,
            "result: {} violations of the policy in force",
            r.violations
        ),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::commands::verify::attribution::Source;

    /// A whole report, with one row and one listed violation (judge's tests put theirs in).
    pub(in crate::commands::verify) fn doc(lost: LostJson, violations: u64) -> VerifyJson {
        VerifyJson {
            duration_s: 2.0,
            ended_by: EndedBy::Duration,
            pid_filter: None,
            policy: PolicyJson {
                mode: "enforce",
                scope: "rdna1".into(),
                classes: "coherent".into(),
                vm_scope: "compute",
            },
            policy_changed: false,
            tracefs: TracefsJson {
                instance: "rdna1ctl-verify-7".into(),
                removed: true,
                stale_removed: vec![],
                cpus: 2,
            },
            decoded: DecodedJson {
                pages: 1,
                updates: 3,
                updates_per_s: 1.5,
                foreign: 0,
                malformed: 0,
                filtered: 0,
            },
            lost,
            module_events_read: 0,
            rows: vec![RowJson {
                pci_addresses: vec!["0000:03:00.0".into()],
                attribution: Source::ModuleEvents,
                in_scope: true,
                pid: 42,
                comm: Some("python3".into()),
                updates: 3,
                ptes: PtesJson {
                    nc: 8,
                    uc: 1,
                    ..PtesJson::default()
                },
                other_ptes: 0,
                violations,
                would_violate: 0,
                explained: Default::default(),
                out_of_scope: 0,
                vm_kinds: vec!["compute"],
                outside_vm_scope: 0,
            }],
            stats: vec![],
            violations,
            would_violate: 0,
            outside_vm_scope: 0,
            listed: vec![ViolationJson {
                pid: 42,
                comm: Some("python3".into()),
                pci_addresses: vec!["0000:03:00.0".into()],
                vm_ctx: 9,
                start: 0x200,
                end: 0x201,
                ptes: 1,
                flags: "0x3000000000067".into(),
                mtype: "uc",
            }],
            result: if violations > 0 {
                Outcome::Violations
            } else {
                Outcome::Ok
            },
        }
    }

    fn text(d: &VerifyJson) -> String {
        let mut v = Vec::new();
        render_text(d, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn the_document_matches_its_schema() {
        let mut d = doc(LostJson::default(), 1);
        d.pid_filter = Some(42);
        d.stats = vec![CounterSetJson::of(&Default::default())];
        crate::schema::assert_valid("verify", &d);
    }

    #[test]
    fn text_keeps_amdgpus_short_mtype_names() {
        let mut d = doc(LostJson::default(), 1);
        d.listed[0].mtype = "reserved";
        let t = text(&d);
        assert!(t.contains("flags 0x3000000000067 MTYPE RSVD"), "{t}");
    }

    #[test]
    fn a_pid_is_one_type_everywhere() {
        // As `events`' pid: a u32 (a command imports no other command, so not compared).
        let (_, verify) = crate::schema::document::<VerifyJson>("verify");
        let want = &serde_json::json!({"type": "integer", "format": "uint32", "minimum": 0});
        for at in [
            "/$defs/RowJson/properties/pid",
            "/$defs/ViolationJson/properties/pid",
        ] {
            assert_eq!(verify.pointer(at), Some(want), "{at}: {verify}");
        }
        let filter = &verify["properties"]["pid_filter"];
        assert_eq!(filter["format"], "uint32", "{filter}");
    }

    #[test]
    fn a_name_means_one_thing() {
        let j = serde_json::to_value(doc(LostJson::default(), 0)).unwrap();
        // Module events read (top level) and lost (under `lost`) have different names; the
        // counter sets are `stats`, as in status.
        assert!(
            j["module_events_read"].is_u64() && j.get("module_events").is_none(),
            "{j}"
        );
        assert!(j["lost"]["module_events"].is_u64(), "{j}");
        assert!(j["stats"].is_array() && j.get("counters").is_none(), "{j}");
    }

    #[test]
    fn violations_are_listed_and_counted() {
        let t = text(&doc(LostJson::default(), 1));
        assert!(t.contains("lost:   none"), "{t}");
        assert!(
            t.contains("pid 42 (python3) device 0000:03:00.0 vm_ctx 0x9 pages 0x0000000200..0x0000000201 (1 PTEs) flags 0x3000000000067 MTYPE UC"),
            "{t}"
        );
        assert!(
            t.contains("result: 1 violations of the policy in force"),
            "{t}"
        );
    }

    #[test]
    fn losses_are_never_silent() {
        let lost = LostJson {
            ring: Lost {
                overrun: 5,
                ..Lost::default()
            },
            ..LostJson::default()
        };
        let t = text(&doc(lost, 0));
        assert!(t.contains("LOST:   trace ring overrun 5"), "{t}");
        assert!(
            t.contains("result: ok, no violation among the events not lost"),
            "{t}"
        );
        let mut v = Vec::new();
        crate::output::json(
            "verify",
            &doc(
                LostJson {
                    module_events: 2,
                    ..LostJson::default()
                },
                0,
            ),
            &mut v,
        )
        .unwrap();
        let j = String::from_utf8(v).unwrap();
        assert!(j.contains("\"lost\":{\"overrun\":0,\"commit_overrun\":0,\"dropped\":0,\"flagged_pages\":0,\"flagged_events\":0,\"module_events\":2}"), "{j}");
    }
}
