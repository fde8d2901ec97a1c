//! The module's counter sets (GET_STATS) as every JSON document carries them: `status` per GPU
//! and in `stats.other`, `verify` as deltas over its window. One shape, one set of names.

use std::collections::BTreeMap;

use rdna1_mtype_shared::abi::{StatsArg, STATS_DEVICE, STATS_OTHER_DEVICES};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::Skip;
use schemars::JsonSchema;
use serde::Serialize;

use crate::output::{pci_id, JsonNames};

/// One counter set (docs/CLI.md, "counter set").
#[derive(Serialize, JsonSchema, Debug, PartialEq, Eq)]
pub struct CounterSetJson {
    /// What the set counts.
    pub kind: CounterKind,
    /// The GPU's PCI address (`0000:03:00.0`) for kind `device`; null otherwise.
    pub pci_address: Option<String>,
    /// PCI vendor id, `0x1002`.
    pub vendor_id: String,
    /// PCI device id, `0x731f`.
    pub device_id: String,
    /// Hook calls.
    pub calls: u64,
    /// Rewritten to NC, by the MTYPE amdgpu computed (NC is never rewritten).
    pub rewritten: ByMtypeJson,
    /// What enforce would have rewritten (mode audit), by the MTYPE before.
    pub would_rewrite: ByMtypeJson,
    /// Left alone, by every reason name of docs/ABI.md (zeros included).
    #[schemars(schema_with = "crate::schema::counts_by::<Skip>")]
    pub skipped: BTreeMap<&'static str, u64>,
}

/// What a counter set counts (the module's `STATS_*` kinds).
#[derive(Serialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CounterKind {
    /// One GPU, at `pci_address`.
    Device,
    /// Devices beyond the module's table.
    OtherDevices,
    /// Calls whose device the module could not read.
    Unidentified,
}

impl CounterKind {
    /// The kind as JSON names it.
    pub fn name(self) -> &'static str {
        match self {
            CounterKind::Device => "device",
            CounterKind::OtherDevices => "other_devices",
            CounterKind::Unidentified => "unidentified",
        }
    }
}

/// Counts by the MTYPE before a rewrite.
#[derive(Serialize, JsonSchema, Debug, Default, PartialEq, Eq)]
pub struct ByMtypeJson {
    pub wc: u64,
    pub cc: u64,
    pub uc: u64,
}

impl ByMtypeJson {
    /// The counters are indexed by the MTYPE before: NC, WC, CC, UC; `a - b` each.
    fn delta(a: &[u64; 4], b: &[u64; 4]) -> ByMtypeJson {
        let d = |i: usize| a[i].saturating_sub(b[i]);
        ByMtypeJson {
            wc: d(1),
            cc: d(2),
            uc: d(3),
        }
    }
}

impl CounterSetJson {
    /// The set `s` as the module counts it since load.
    pub fn of(s: &StatsArg) -> CounterSetJson {
        CounterSetJson::delta(s, &StatsArg::default())
    }

    /// What set `after` counted since `before` (matched by the caller), `after - before`.
    pub fn delta(after: &StatsArg, before: &StatsArg) -> CounterSetJson {
        let (kind, pci_address) = match after.kind {
            STATS_DEVICE => (
                CounterKind::Device,
                Some(PciAddr::from_raw(after.addr).to_string()),
            ),
            STATS_OTHER_DEVICES => (CounterKind::OtherDevices, None),
            _ => (CounterKind::Unidentified, None),
        };
        let skipped = |s: &StatsArg, i: usize| s.skipped.get(i).copied().unwrap_or(0);
        CounterSetJson {
            kind,
            pci_address,
            vendor_id: pci_id(after.vendor),
            device_id: pci_id(after.device),
            calls: after.calls.saturating_sub(before.calls),
            rewritten: ByMtypeJson::delta(&after.rewritten, &before.rewritten),
            would_rewrite: ByMtypeJson::delta(&after.would_rewrite, &before.would_rewrite),
            skipped: Skip::ALL
                .iter()
                .map(|&w| {
                    let i = w as usize;
                    (
                        w.json_name(),
                        skipped(after, i).saturating_sub(skipped(before, i)),
                    )
                })
                .collect(),
        }
    }

    /// The set's label in text: its PCI address, or its kind.
    pub fn label(&self) -> &str {
        self.pci_address.as_deref().unwrap_or(self.kind.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdna1_mtype_shared::abi::STATS_UNKNOWN_DEVICE;

    #[test]
    fn the_schema_requires_a_count_for_every_skip_reason() {
        let (_, s) = crate::schema::document::<CounterSetJson>("test");
        let required = &s["properties"]["skipped"]["required"];
        let want: Vec<&str> = Skip::ALL.map(Skip::name).to_vec();
        assert_eq!(required, &serde_json::json!(want), "{s}");
    }

    #[test]
    fn ids_are_hex_strings_and_every_reason_is_named() {
        let mut s = StatsArg {
            kind: STATS_DEVICE,
            addr: PciAddr::new(0, 3, 0, 0).unwrap().raw(),
            vendor: 0x1002,
            device: 0x731f,
            calls: 9,
            ..Default::default()
        };
        s.rewritten = [0, 1, 2, 3];
        s.skipped[Skip::AlreadyNc as usize] = 4;
        let j = serde_json::to_value(CounterSetJson::of(&s)).unwrap();
        assert_eq!(j["pci_address"], "0000:03:00.0");
        assert_eq!(
            (j["vendor_id"].as_str(), j["device_id"].as_str()),
            (Some("0x1002"), Some("0x731f"))
        );
        assert_eq!(
            j["rewritten"],
            serde_json::json!({"wc": 1, "cc": 2, "uc": 3})
        );
        assert_eq!(j["skipped"]["already_nc"], 4);
        assert_eq!(j["skipped"].as_object().unwrap().len(), Skip::COUNT);
        let mut later = s;
        later.calls = 12;
        later.skipped[Skip::AlreadyNc as usize] = 6;
        let d = CounterSetJson::delta(&later, &s);
        assert_eq!(
            (d.calls, d.skipped["already_nc"], d.rewritten.uc),
            (3, 2, 0)
        );
        for k in [
            CounterKind::Device,
            CounterKind::OtherDevices,
            CounterKind::Unidentified,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
        for (kind, name) in [
            (STATS_OTHER_DEVICES, "other_devices"),
            (STATS_UNKNOWN_DEVICE, "unidentified"),
        ] {
            let c = CounterSetJson::of(&StatsArg {
                kind,
                ..Default::default()
            });
            assert_eq!(
                (c.kind.name(), c.pci_address.as_deref(), c.label()),
                (name, None, name)
            );
        }
    }
}
