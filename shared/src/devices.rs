//! RDNA1 PCI device ids, copied from amdgpu's own table (`pciidlist` in
//! `drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c`, Linux 7.2): every entry with CHIP_NAVI10,
//! CHIP_NAVI14 or CHIP_NAVI12.

/// AMD's PCI vendor id.
pub const PCI_VENDOR_AMD: u16 = 0x1002;

/// An RDNA1 chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rdna1Chip {
    /// Navi 10 (RX 5600/5700 series), gfx1010.
    Navi10,
    /// Navi 14 (RX 5500 series), gfx1012.
    Navi14,
    /// Navi 12 (Radeon Pro 5600M, V520), gfx1011.
    Navi12,
}

impl Rdna1Chip {
    /// amdgpu's chip name.
    pub const fn name(self) -> &'static str {
        match self {
            Rdna1Chip::Navi10 => "navi10",
            Rdna1Chip::Navi14 => "navi14",
            Rdna1Chip::Navi12 => "navi12",
        }
    }

    /// The LLVM/ROCm gfx target of the chip.
    pub const fn gfx_target(self) -> &'static str {
        match self {
            Rdna1Chip::Navi10 => "gfx1010",
            Rdna1Chip::Navi12 => "gfx1011",
            Rdna1Chip::Navi14 => "gfx1012",
        }
    }
}

/// The RDNA1 chip of an AMD PCI device id, if it is one.
pub const fn rdna1_chip(vendor: u16, device: u16) -> Option<Rdna1Chip> {
    if vendor != PCI_VENDOR_AMD {
        return None;
    }
    match device {
        0x7310 | 0x7312 | 0x7318 | 0x7319 | 0x731A | 0x731B | 0x731E | 0x731F => {
            Some(Rdna1Chip::Navi10)
        }
        0x7340 | 0x7341 | 0x7347 | 0x734F => Some(Rdna1Chip::Navi14),
        0x7360 | 0x7362 => Some(Rdna1Chip::Navi12),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_amdgpu_pciidlist() {
        assert_eq!(rdna1_chip(0x1002, 0x731F), Some(Rdna1Chip::Navi10)); // RX 5700 XT
        assert_eq!(rdna1_chip(0x1002, 0x7340), Some(Rdna1Chip::Navi14)); // RX 5500 XT
        assert_eq!(rdna1_chip(0x1002, 0x7362), Some(Rdna1Chip::Navi12));
        assert_eq!(rdna1_chip(0x1002, 0x73BF), None); // Navi 21 (RDNA2)
        assert_eq!(rdna1_chip(0x10de, 0x731F), None); // right id, wrong vendor
        let n = (0..=u16::MAX)
            .filter(|d| rdna1_chip(0x1002, *d).is_some())
            .count();
        assert_eq!(n, 14, "amdgpu_drv.c lists 14 RDNA1 ids");
    }
}

/// The udev rule that loads the module lists exactly the RDNA1 ids of this table.
#[cfg(test)]
mod udev_rule {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn udev_rule_ids_equal_the_table() {
        let rules = include_str!("../../udev/70-rdna1-mtype.rules");
        let line = rules
            .lines()
            .find(|l| l.contains("RUN{builtin}+=\"kmod load rdna1_mtype\""))
            .expect("the load rule");
        let ids = line
            .split("ATTR{device}==\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("ATTR{device} in the load rule");
        let mut from_rule: Vec<u16> = ids
            .split('|')
            .map(|h| u16::from_str_radix(h.trim_start_matches("0x"), 16).expect("hex id"))
            .collect();
        from_rule.sort_unstable();
        let from_table: Vec<u16> = (0..=u16::MAX)
            .filter(|d| rdna1_chip(PCI_VENDOR_AMD, *d).is_some())
            .collect();
        assert_eq!(from_rule, from_table);
    }
}
