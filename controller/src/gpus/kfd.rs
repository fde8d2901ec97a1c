//! gfx targets from amdkfd's topology: `/sys/class/kfd/kfd/topology/nodes/N/properties`.
//!
//! amdkfd (kfd_topology.c, `node_show`) prints one `name value` pair per line, values in
//! decimal. GPU nodes carry `gfx_target_version` (major * 10000 + minor * 100 + stepping),
//! `location_id` (`pci_dev_id()`: bus << 8 | devfn, with the partition number OR-ed in on
//! multi-partition GPUs) and `domain` (the PCI domain); CPU nodes have `gfx_target_version 0`.

use rdna1_mtype_shared::pci::PciAddr;

use crate::sysroot::SysRoot;

const NODES: &str = "/sys/class/kfd/kfd/topology/nodes";

/// The part of a GPU node's properties that identifies it.
#[derive(Debug, PartialEq, Eq)]
pub struct Node {
    domain: u32,
    location_id: u32,
    gfx_target_version: u32,
}

/// Parses one `properties` file; `None` for a CPU node or one that lacks a field.
fn parse(text: &str) -> Option<Node> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            if k == name {
                v.trim().parse::<u32>().ok()
            } else {
                None
            }
        })
    };
    let node = Node {
        domain: field("domain")?,
        location_id: field("location_id")?,
        gfx_target_version: field("gfx_target_version")?,
    };
    (node.gfx_target_version != 0).then_some(node)
}

/// Every GPU node KFD lists. Missing topology (amdgpu not loaded, or built without KFD) is no
/// node; a node that cannot be read (amdkfd returns EPERM to a device cgroup that hides the GPU)
/// is skipped: the gfx target is extra information, never a reason to fail.
pub fn nodes(root: &SysRoot) -> Vec<Node> {
    let dir = root.path(NODES);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let p = e.path().join("properties");
            match std::fs::read_to_string(&p) {
                Ok(t) => parse(&t),
                Err(err) => {
                    tracing::debug!("{}: {err}", p.display());
                    None
                }
            }
        })
        .collect()
}

/// The LLVM target name of a `gfx_target_version`: 100300 is gfx1030, 90010 gfx90a (the
/// stepping is one hex digit).
pub fn target_name(version: u32) -> String {
    let (major, minor, stepping) = (version / 10000, version / 100 % 100, version % 100);
    format!("gfx{major}{minor}{stepping:x}")
}

/// The gfx target of the GPU at `addr`, if KFD lists it.
pub fn gfx_target(nodes: &[Node], addr: PciAddr) -> Option<String> {
    let raw = addr.raw();
    nodes
        .iter()
        .find(|n| n.domain == raw >> 16 && n.location_id == raw & 0xffff)
        .map(|n| target_name(n.gfx_target_version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_names_follow_llvm() {
        assert_eq!(target_name(100100), "gfx1010");
        assert_eq!(target_name(100102), "gfx1012");
        assert_eq!(target_name(100300), "gfx1030");
        assert_eq!(target_name(100302), "gfx1032");
        assert_eq!(target_name(110000), "gfx1100");
        assert_eq!(target_name(90010), "gfx90a");
        assert_eq!(target_name(90402), "gfx942");
    }

    #[test]
    fn matches_domain_and_location_id_and_skips_cpu_nodes() {
        let gpu = parse(
            "cpu_cores_count 0\ngfx_target_version 100300\nvendor_id 4098\n\
                         location_id 3072\ndomain 1\n",
        )
        .unwrap();
        assert_eq!(
            gpu,
            Node {
                domain: 1,
                location_id: 0x0c00,
                gfx_target_version: 100300
            }
        );
        assert_eq!(
            parse("cpu_cores_count 16\ngfx_target_version 0\nlocation_id 0\ndomain 0\n"),
            None
        );
        assert_eq!(
            parse("gfx_target_version 100300\n"),
            None,
            "no location: unusable"
        );
        let nodes = [gpu];
        let at = |d, b| PciAddr::new(d, b, 0, 0).unwrap();
        assert_eq!(gfx_target(&nodes, at(1, 0x0c)).as_deref(), Some("gfx1030"));
        assert_eq!(gfx_target(&nodes, at(0, 0x0c)), None, "other domain");
        assert_eq!(gfx_target(&nodes, at(1, 0x0d)), None, "other bus");
    }
}
