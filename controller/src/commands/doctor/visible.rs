//! `ROCR_VISIBLE_DEVICES`, `HIP_VISIBLE_DEVICES` and `CUDA_VISIBLE_DEVICES`: whether they hide
//! the RDNA1 GPU or name an index that does not exist.
//!
//! ROCr numbers the GPU agents in KFD topology order (ascending node number, CPU nodes left
//! out) and keeps those `ROCR_VISIBLE_DEVICES` lists; HIP then numbers what ROCr exposes and
//! keeps those `HIP_VISIBLE_DEVICES` lists (`CUDA_VISIBLE_DEVICES` when HIP_ ... is unset). An
//! empty value or `-1` hides every GPU. Entries that are not indices (ROCr's `GPU-<uuid>`)
//! are not judged. torch's `cuda:0` is the first GPU left.

use rdna1_mtype_shared::pci::PciAddr;

use super::{Check, Input};
use crate::gpus::kfd::NODES;

/// GPU nodes in KFD order: (node number, PCI domain << 16 | location_id).
fn gpu_nodes(input: &Input) -> Option<Vec<(u32, u32)>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(input.root.path(NODES)).ok()?.flatten() {
        let Some(n) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(e.path().join("properties")) else {
            continue;
        };
        let field = |k: &str| {
            text.lines().find_map(|l| {
                l.strip_prefix(k)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse::<u32>()
                    .ok()
            })
        };
        if field("gfx_target_version").unwrap_or(0) == 0 {
            continue;
        }
        let (Some(d), Some(l)) = (field("domain"), field("location_id")) else {
            continue;
        };
        v.push((n, (d << 16) | (l & 0xffff)));
    }
    v.sort();
    Some(v)
}

/// Applies one variable's list to `visible`; `Err` names an index out of range.
fn apply(
    name: &str,
    value: &str,
    visible: &mut Vec<u32>,
    skipped: &mut Vec<String>,
) -> Result<(), String> {
    let value = value.trim();
    if value.is_empty() || value == "-1" {
        visible.clear();
        return Ok(());
    }
    let mut kept = Vec::new();
    for item in value.split(',').map(str::trim) {
        match item.parse::<usize>() {
            Ok(i) => match visible.get(i) {
                Some(k) => kept.push(*k),
                None => {
                    return Err(format!(
                        "{name}={value} names GPU {i}, but only {} exist{} at that point (0..{})",
                        visible.len(),
                        if visible.len() == 1 { "s" } else { "" },
                        visible.len().saturating_sub(1)
                    ));
                }
            },
            Err(_) => {
                skipped.push(format!("{name}: {item}"));
                return Ok(());
            }
        }
    }
    *visible = kept;
    Ok(())
}

pub fn checks(input: &Input) -> Vec<Check> {
    vec![visible(input)]
}

fn visible(input: &Input) -> Check {
    let id = "rocm.visible_devices";
    let vars: Vec<(&str, String)> = [
        "ROCR_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES",
    ]
    .iter()
    .filter_map(|n| input.host.var(n).map(|v| (*n, v)))
    .collect();
    if vars.is_empty() {
        return Check::ok(id, "no *_VISIBLE_DEVICES set: every GPU is visible to ROCm");
    }
    let set = vars
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let rdna1: Vec<(u32, &str)> = input
        .facts
        .rdna1()
        .iter()
        .filter_map(|(a, _)| PciAddr::parse(a.as_bytes()).map(|p| (p.raw(), *a)))
        .collect();
    if rdna1.is_empty() {
        return Check::warn(
            id,
            format!("{set}: not checked, no RDNA1 GPU"),
            "see gpu.rdna1",
        );
    }
    let Some(nodes) = gpu_nodes(input) else {
        return Check::warn(
            id,
            format!("{set}: not checked, no KFD topology"),
            "see kfd.atomics",
        );
    };
    let mut visible: Vec<u32> = nodes.iter().map(|(_, loc)| *loc).collect();
    let mut skipped = Vec::new();
    let hip = vars.iter().find(|(n, _)| *n == "HIP_VISIBLE_DEVICES");
    let cuda = vars.iter().find(|(n, _)| *n == "CUDA_VISIBLE_DEVICES");
    let steps = vars
        .iter()
        .find(|(n, _)| *n == "ROCR_VISIBLE_DEVICES")
        .into_iter()
        .chain(hip.or(cuda));
    for (n, v) in steps {
        if let Err(e) = apply(n, v, &mut visible, &mut skipped) {
            return Check::fail(
                id,
                e,
                "unset it or use an index of `rocminfo`/`amd-smi list` order (ROCR_ over all GPUs, HIP_ over those ROCR_ leaves)",
            );
        }
    }
    if !skipped.is_empty() {
        return Check::warn(
            id,
            format!(
                "{set}: entries that are not indices ({}) not checked",
                skipped.join(", ")
            ),
            "use plain indices if unsure which GPU a UUID is (rocminfo lists both)",
        );
    }
    let pos: Vec<(usize, &str)> = rdna1
        .iter()
        .filter_map(|(raw, a)| visible.iter().position(|v| v == raw).map(|i| (i, *a)))
        .collect();
    let Some((first, addr)) = pos.first() else {
        let where_ = rdna1
            .iter()
            .filter_map(|(raw, a)| {
                nodes
                    .iter()
                    .position(|(_, l)| l == raw)
                    .map(|i| format!("{a} is ROCr GPU {i}"))
            })
            .collect::<Vec<_>>()
            .join(", ");
        return Check::fail(
            id,
            format!("{set} hides the RDNA1 GPU ({where_}): ROCm and torch do not see it"),
            "unset these variables, or list the RDNA1 GPU's index in them",
        );
    };
    if *first == 0 {
        Check::ok(
            id,
            format!("{set}: the RDNA1 GPU {addr} is visible as HIP device 0 (torch's cuda:0)"),
        )
    } else {
        Check::warn(
            id,
            format!("{set}: the RDNA1 GPU {addr} is HIP device {first}; torch's default cuda:0 is another GPU"),
            format!("use torch.device('cuda:{first}'), or make the RDNA1 GPU the only visible one"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    /// CPU node 0; an RX 6600 at 0b:00.0 as node 1; the RX 5700 XT at 03:00.0 as node 2.
    fn tree() -> Tree {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        t.gpu("0000:0b:00.0", 0x73ff);
        let n = &NODES[1..];
        t.write(
            &format!("{n}/0/properties"),
            "cpu_cores_count 8\ngfx_target_version 0\nlocation_id 0\ndomain 0\n",
        );
        t.write(
            &format!("{n}/1/properties"),
            "gfx_target_version 100302\nlocation_id 2816\ndomain 0\n",
        );
        t.write(
            &format!("{n}/2/properties"),
            "gfx_target_version 100100\nlocation_id 768\ndomain 0\n",
        );
        t
    }

    fn check(vars: &[(&str, &str)]) -> Check {
        let mut h = FakeHost::default();
        for (k, v) in vars {
            h = h.with_var(k, v);
        }
        run_check(&tree(), &h, checks, "rocm.visible_devices")
    }

    #[test]
    fn unset_is_ok() {
        assert_check(&check(&[]), Status::Ok, &["every GPU"]);
    }

    #[test]
    fn hiding_or_out_of_range_fails() {
        assert_check(
            &check(&[("HIP_VISIBLE_DEVICES", "0")]),
            Status::Fail,
            &["hides the RDNA1", "ROCr GPU 1"],
        );
        assert_check(
            &check(&[("ROCR_VISIBLE_DEVICES", "")]),
            Status::Fail,
            &["hides"],
        );
        assert_check(
            &check(&[("CUDA_VISIBLE_DEVICES", "-1")]),
            Status::Fail,
            &["hides"],
        );
        assert_check(
            &check(&[("HIP_VISIBLE_DEVICES", "2")]),
            Status::Fail,
            &["names GPU 2", "only 2"],
        );
        // HIP_ counts what ROCR_ leaves: one GPU, so index 1 does not exist.
        assert_check(
            &check(&[("ROCR_VISIBLE_DEVICES", "1"), ("HIP_VISIBLE_DEVICES", "1")]),
            Status::Fail,
            &["names GPU 1"],
        );
    }

    #[test]
    fn visible_as_device_0_or_not() {
        assert_check(
            &check(&[("HIP_VISIBLE_DEVICES", "1")]),
            Status::Ok,
            &["HIP device 0"],
        );
        assert_check(
            &check(&[("ROCR_VISIBLE_DEVICES", "1"), ("HIP_VISIBLE_DEVICES", "0")]),
            Status::Ok,
            &["0000:03:00.0"],
        );
        let c = check(&[("HIP_VISIBLE_DEVICES", "0,1")]);
        assert_check(&c, Status::Warn, &["HIP device 1"]);
        assert!(c.fix.unwrap().contains("cuda:1"));
        // HIP_ wins over CUDA_.
        assert_check(
            &check(&[("HIP_VISIBLE_DEVICES", "1"), ("CUDA_VISIBLE_DEVICES", "0")]),
            Status::Ok,
            &[],
        );
        assert_check(
            &check(&[("ROCR_VISIBLE_DEVICES", "GPU-abc")]),
            Status::Warn,
            &["not indices"],
        );
    }
}
