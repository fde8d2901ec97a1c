//! amdkfd's topology, the one reader of it: `/sys/class/kfd/kfd/topology/nodes/N/properties`
//! and `nodes/N/io_links/M/properties`.
//!
//! amdkfd (kfd_topology.c, `node_show`) prints one `name value` pair per line, values in
//! decimal. GPU nodes carry `gfx_target_version` (major * 10000 + minor * 100 + stepping),
//! `location_id` (`pci_dev_id()`: bus << 8 | devfn, with the partition number OR-ed in on
//! multi-partition GPUs) and `domain` (the PCI domain); CPU nodes have `gfx_target_version 0`.
//! A link's `properties` carry `node_from` and `flags` (kfd_crat.h `CRAT_IOLINK_FLAGS_*`).

use std::collections::BTreeMap;
use std::path::Path;

use rdna1_mtype_shared::pci::PciAddr;

use crate::sysroot::SysRoot;

pub const NODES: &str = "/sys/class/kfd/kfd/topology/nodes";

/// A GPU node: what identifies it and the flags of its own links.
#[derive(Debug, PartialEq, Eq)]
pub struct Node {
    domain: u32,
    location_id: u32,
    gfx_target_version: u32,
    /// `flags` of the io_links that leave this node (its own view of the bus).
    pub link_flags: Vec<u64>,
}

/// One `properties` file as `name -> value`; values that are not numbers are left out.
fn properties(text: &str) -> BTreeMap<&str, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k, v.trim().parse().ok()?))
        })
        .collect()
}

/// Parses one node's `properties`; `None` for a CPU node or one that lacks a field.
fn parse(text: &str) -> Option<Node> {
    let p = properties(text);
    let field = |name: &str| p.get(name).and_then(|&v| u32::try_from(v).ok());
    let node = Node {
        domain: field("domain")?,
        location_id: field("location_id")?,
        gfx_target_version: field("gfx_target_version")?,
        link_flags: Vec::new(),
    };
    (node.gfx_target_version != 0).then_some(node)
}

/// The flags of the links in `dir/io_links` that leave node `id`.
fn link_flags(dir: &Path, id: Option<u64>) -> Vec<u64> {
    let Ok(links) = std::fs::read_dir(dir.join("io_links")) else {
        return Vec::new();
    };
    links
        .flatten()
        .filter_map(|l| std::fs::read_to_string(l.path().join("properties")).ok())
        .filter_map(|text| {
            let p = properties(&text);
            (id.is_none() || p.get("node_from").copied() == id)
                .then(|| p.get("flags").copied())
                .flatten()
        })
        .collect()
}

/// Every GPU node KFD lists, or `None` without a topology (amdgpu not loaded, or built
/// without KFD). A node that cannot be read (amdkfd returns EPERM to a device cgroup that hides
/// the GPU) is skipped.
pub fn topology(root: &SysRoot) -> Option<Vec<Node>> {
    let entries = std::fs::read_dir(root.path(NODES)).ok()?;
    let mut nodes: Vec<(Option<u64>, Node)> = entries
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let p = dir.join("properties");
            let mut node = match std::fs::read_to_string(&p) {
                Ok(t) => parse(&t)?,
                Err(err) => {
                    tracing::debug!("{}: {err}", p.display());
                    return None;
                }
            };
            let id = dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse().ok());
            node.link_flags = link_flags(&dir, id);
            Some((id, node))
        })
        .collect();
    // In node order: the order ROCr numbers its GPU agents in.
    nodes.sort_by_key(|(id, _)| *id);
    Some(nodes.into_iter().map(|(_, n)| n).collect())
}

/// `ROCR_VISIBLE_DEVICES` that leaves only the RDNA1 GPUs visible, where ROCm sees other GPUs
/// too (None: only RDNA1 GPUs, or none). ROCr numbers its GPU agents in KFD's node order.
pub fn only_rdna1(root: &SysRoot) -> Option<String> {
    let nodes = topology(root)?;
    let rdna1: Vec<String> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| (100100..100200).contains(&n.gfx_target_version))
        .map(|(i, _)| i.to_string())
        .collect();
    (!rdna1.is_empty() && rdna1.len() < nodes.len()).then(|| rdna1.join(","))
}

/// Every GPU node KFD lists; none without a topology. The gfx target is extra information for
/// discovery, never a reason to fail.
pub fn nodes(root: &SysRoot) -> Vec<Node> {
    topology(root).unwrap_or_default()
}

/// The node of the GPU at `addr`, if KFD lists it.
pub fn node_at(nodes: &[Node], addr: PciAddr) -> Option<&Node> {
    let raw = addr.raw();
    nodes
        .iter()
        .find(|n| n.domain == raw >> 16 && n.location_id == raw & 0xffff)
}

/// The LLVM target name of a `gfx_target_version`: 100300 is gfx1030, 90010 gfx90a (the
/// stepping is one hex digit).
pub fn target_name(version: u32) -> String {
    let (major, minor, stepping) = (version / 10000, version / 100 % 100, version % 100);
    format!("gfx{major}{minor}{stepping:x}")
}

/// The gfx target of the GPU at `addr`, if KFD lists it.
pub fn gfx_target(nodes: &[Node], addr: PciAddr) -> Option<String> {
    node_at(nodes, addr).map(|n| target_name(n.gfx_target_version))
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
                gfx_target_version: 100300,
                link_flags: Vec::new(),
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

    #[test]
    fn only_the_rdna1_gpu_is_made_visible_by_its_place_in_node_order() {
        let dir = std::env::temp_dir().join(format!("rdna1ctl-kfd-{}", std::process::id()));
        let nodes = dir.join(NODES.trim_start_matches('/'));
        let node = |id: u32, gfx: u32, bus: u32| {
            let d = nodes.join(id.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("properties"),
                format!(
                    "gfx_target_version {gfx}\nlocation_id {}\ndomain 0\n",
                    bus << 8
                ),
            )
            .unwrap();
        };
        node(0, 0, 0); // the CPU
        node(2, 100100, 3); // an RX 5700 XT, the second GPU in node order
        node(1, 110000, 8); // a gfx1100
        let root = SysRoot::new(dir.clone());
        assert_eq!(only_rdna1(&root).as_deref(), Some("1"));
        std::fs::remove_dir_all(nodes.join("1")).unwrap();
        assert_eq!(only_rdna1(&root), None, "one GPU: nothing to hide");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
