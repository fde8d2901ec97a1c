//! KFD (the ROCm side of amdgpu) and PCIe atomics, per RDNA1 GPU, from the KFD topology.
//!
//! From amdkfd (Linux 7.2): every Navi1x sets `needs_pci_atomics` with `no_atomic_fw_version`
//! 145 (kfd_device.c), so without PCIe atomics KFD *skips* the GPU unless its MEC firmware is
//! 145 or newer ("skipped device ..., PCI rejects atomics"). When it does run without atomics,
//! the GPU's own io_link carries CRAT_IOLINK_FLAGS_NO_ATOMICS_32_BIT | _64_BIT (bits 2 and 3,
//! kfd_crat.h; set in kfd_topology.c:kfd_set_iolink_no_atomics). Topology files are
//! `nodes/<n>/properties` ("name value" lines, with `domain` and `location_id` =
//! bus << 8 | devfn) and `nodes/<n>/io_links/<m>/properties` (`type`, `node_from`, `flags`).

use rdna1_mtype_shared::pci::PciAddr;

use super::{Check, Input};
use crate::gpus::kfd;

const NO_ATOMICS: u64 = (1 << 2) | (1 << 3);

pub fn checks(input: &Input) -> Vec<Check> {
    vec![atomics(input)]
}

fn atomics(input: &Input) -> Check {
    let id = "kfd.atomics";
    let rdna1 = input.facts.rdna1();
    if rdna1.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let Some(nodes) = kfd::topology(input.root) else {
        return Check::fail(
            id,
            "no KFD topology (/sys/class/kfd/kfd/topology/nodes): KFD is not running, ROCm sees no GPU",
            "load amdgpu on a kernel with CONFIG_HSA_AMD=y; read dmesg for kfd errors",
        );
    };
    let mut skipped = Vec::new();
    let mut no_atomics = Vec::new();
    let mut good = Vec::new();
    for (addr, chip) in rdna1 {
        let Some(pci) = PciAddr::parse(addr.as_bytes()) else {
            skipped.push(addr.to_owned());
            continue;
        };
        match kfd::node_at(&nodes, pci) {
            None => skipped.push(addr.to_owned()),
            Some(n) if n.link_flags.iter().any(|f| f & NO_ATOMICS != 0) => {
                no_atomics.push(format!("{addr} {}", chip.gfx_target()))
            }
            Some(_) => good.push(addr.to_owned()),
        }
    }
    if !skipped.is_empty() {
        return Check::fail(
            id,
            format!("KFD has no node for {}: it skipped the GPU; on Navi1x the usual cause is no PCIe atomics with MEC firmware older than 145 (dmesg: \"PCI rejects atomics\")", skipped.join(", ")),
            "put the card in a slot wired to the CPU with PCIe atomics (not behind a chipset/bridge without AtomicOps), or update firmware-amd-graphics",
        );
    }
    if !no_atomics.is_empty() {
        return Check::warn(
            id,
            format!("KFD runs {} without PCIe atomics (newer MEC firmware allows it): device-side atomics on host memory do not work", no_atomics.join(", ")),
            "if a workload needs host atomics, move the card to a CPU-attached slot with AtomicOps support",
        );
    }
    Check::ok(
        id,
        format!("KFD node with PCIe atomics for {}", good.join(", ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    /// CPU node 0, GPU node 1 at 0000:03:00.0 (location_id 0x300 = 768) with one PCIe link
    /// to node 0 carrying `flags`.
    fn tree(flags: u32) -> Tree {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        let n = &kfd::NODES[1..];
        t.write(
            &format!("{n}/0/properties"),
            "cpu_cores_count 8\nsimd_count 0\nlocation_id 0\ndomain 0\n",
        );
        t.write(
            &format!("{n}/1/properties"),
            "cpu_cores_count 0\nsimd_count 80\ngfx_target_version 100100\nlocation_id 768\ndomain 0\n",
        );
        t.write(
            &format!("{n}/1/io_links/0/properties"),
            &format!("type 2\nversion_major 0\nnode_from 1\nnode_to 0\nweight 20\nflags {flags}\n"),
        );
        t
    }

    fn check(t: &Tree) -> Check {
        run_check(t, &FakeHost::default(), checks, "kfd.atomics")
    }

    #[test]
    fn atomics_present() {
        // ENABLED | BI_DIRECTIONAL, as a CPU-attached slot reports.
        assert_check(&check(&tree(1 | (1 << 31))), Status::Ok, &["0000:03:00.0"]);
    }

    #[test]
    fn no_atomics_flags_warn() {
        for flags in [1 | 4, 1 | 8, 1 | 4 | 8] {
            assert_check(
                &check(&tree(flags)),
                Status::Warn,
                &["without PCIe atomics", "gfx1010"],
            );
        }
    }

    #[test]
    fn links_of_other_nodes_do_not_count() {
        let t = tree(1);
        t.write(
            &format!("{}/1/io_links/1/properties", &kfd::NODES[1..]),
            "type 2\nnode_from 0\nnode_to 1\nflags 13\n",
        );
        assert_check(&check(&t), Status::Ok, &[]);
    }

    #[test]
    fn gpu_without_node_fails() {
        let t = tree(1);
        t.write(
            &format!("{}/1/properties", &kfd::NODES[1..]),
            "simd_count 80\nlocation_id 1024\ndomain 0\n",
        );
        assert_check(
            &check(&t),
            Status::Fail,
            &["no node for 0000:03:00.0", "atomics"],
        );
    }

    #[test]
    fn no_topology_fails_and_no_rdna1_warns() {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        assert_check(&check(&t), Status::Fail, &["no KFD topology"]);
        assert_check(&check(&Tree::new()), Status::Warn, &["no RDNA1"]);
    }
}
