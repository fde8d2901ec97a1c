//! GFX10 (NV10) page-table-entry bits and the mapping-request flags that select an MTYPE.
//!
//! Values are amdgpu's own: `AMDGPU_PTE_*` and `AMDGPU_PTE_MTYPE_NV10` in
//! `drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h`, `MTYPE_*` in `navi10_enum.h`, and
//! `AMDGPU_VM_PAGE_*` / `AMDGPU_VM_MTYPE_*` in `include/uapi/drm/amdgpu_drm.h`.
//! This file is compiled into the kernel module as well: `core` only, no panics.

use crate::named::named_enum;

/// PTE maps a valid page.
pub const PTE_VALID: u64 = 1 << 0;
/// PTE points to system memory.
pub const PTE_SYSTEM: u64 = 1 << 1;
/// Accesses snoop CPU caches.
pub const PTE_SNOOPED: u64 = 1 << 2;
/// Page is executable.
pub const PTE_EXECUTABLE: u64 = 1 << 4;
/// Page is readable.
pub const PTE_READABLE: u64 = 1 << 5;
/// Page is writeable.
pub const PTE_WRITEABLE: u64 = 1 << 6;
/// Partially-resident-texture entry.
pub const PTE_PRT: u64 = 1 << 51;
/// Do not allocate in the last-level cache.
pub const PTE_NOALLOC: u64 = 1 << 58;

/// First bit of the NV10 MTYPE field.
pub const MTYPE_NV10_SHIFT: u32 = 48;
/// The three NV10 MTYPE bits (48..50).
pub const MTYPE_NV10_MASK: u64 = 7 << MTYPE_NV10_SHIFT;

/// `AMDGPU_VM_PAGE_EXECUTABLE` in a mapping request.
pub const VM_PAGE_EXECUTABLE: u32 = 1 << 3;
/// `AMDGPU_VM_PAGE_PRT` in a mapping request.
pub const VM_PAGE_PRT: u32 = 1 << 4;
/// First bit of the MTYPE field of a mapping request.
pub const VM_MTYPE_SHIFT: u32 = 5;
/// `AMDGPU_VM_MTYPE_MASK`: bits 5..8 of a mapping request.
pub const VM_MTYPE_MASK: u32 = 0xf << VM_MTYPE_SHIFT;
/// `AMDGPU_VM_PAGE_NOALLOC` in a mapping request.
pub const VM_PAGE_NOALLOC: u32 = 1 << 9;

named_enum! {
    /// Memory type of a GFX10 PTE (the 3-bit field; 4..7 are not defined by the hardware).
    /// Names are amdgpu's, upper case.
    pub enum Mtype: u8 {
        /// Non-coherent: cached in the GPU L2, no coherence with other agents.
        Nc = 0 => "NC",
        /// Write-combined.
        Wc = 1 => "WC",
        /// Cache-coherent.
        Cc = 2 => "CC",
        /// Uncached.
        Uc = 3 => "UC",
        /// A raw value 4..7 that GFX10 does not define.
        Reserved = 7 => "RSVD",
    }
}

impl Mtype {
    /// The MTYPE for a raw 3-bit field value.
    pub const fn from_bits(bits: u8) -> Mtype {
        match Mtype::from_u32((bits & 7) as u32) {
            Some(m) => m,
            None => Mtype::Reserved,
        }
    }
}

/// The raw NV10 MTYPE field of PTE flags.
pub const fn mtype_bits(flags: u64) -> u8 {
    ((flags & MTYPE_NV10_MASK) >> MTYPE_NV10_SHIFT) as u8
}

/// The NV10 MTYPE of PTE flags.
pub const fn mtype_of(flags: u64) -> Mtype {
    Mtype::from_bits(mtype_bits(flags))
}

/// `flags` with its NV10 MTYPE field replaced, every other bit untouched
/// (`AMDGPU_PTE_MTYPE_NV10(flags, mtype)`).
pub const fn with_mtype(flags: u64, mtype: Mtype) -> u64 {
    (flags & !MTYPE_NV10_MASK) | ((mtype as u64) << MTYPE_NV10_SHIFT)
}

named_enum! {
    /// The MTYPE field of a mapping request (`AMDGPU_VM_MTYPE_*`); names as in
    /// `AMDGPU_VM_MTYPE_<NAME>`.
    pub enum VmMtype: u8 {
        /// `AMDGPU_VM_MTYPE_DEFAULT`.
        Default = 0 => "DEFAULT",
        /// `AMDGPU_VM_MTYPE_NC`.
        Nc = 1 => "NC",
        /// `AMDGPU_VM_MTYPE_WC`.
        Wc = 2 => "WC",
        /// `AMDGPU_VM_MTYPE_CC`.
        Cc = 3 => "CC",
        /// `AMDGPU_VM_MTYPE_UC`.
        Uc = 4 => "UC",
        /// `AMDGPU_VM_MTYPE_RW` (GFX9.4.3+; GFX10 treats it as default).
        Rw = 5 => "RW",
    }
    /// A value amdgpu does not define (GFX10 treats it as default).
    other Other => "OTHER";
}

impl VmMtype {
    /// The MTYPE requested by mapping flags `vm_flags`.
    pub const fn from_vm_flags(vm_flags: u32) -> VmMtype {
        VmMtype::from_raw(((vm_flags & VM_MTYPE_MASK) >> VM_MTYPE_SHIFT) as u8)
    }

    /// The value of this request in mapping flags (bits 5..8).
    pub const fn to_vm_flags(self) -> u32 {
        ((self.raw() as u32) << VM_MTYPE_SHIFT) & VM_MTYPE_MASK
    }

    /// The PTE MTYPE that `gmc_v10_0_get_vm_pte` derives from this request alone
    /// (before a coherent/uncached BO overrides it).
    pub const fn gfx10_pte_mtype(self) -> Mtype {
        match self {
            VmMtype::Wc => Mtype::Wc,
            VmMtype::Cc => Mtype::Cc,
            VmMtype::Uc => Mtype::Uc,
            VmMtype::Default | VmMtype::Nc | VmMtype::Rw | VmMtype::Other(_) => Mtype::Nc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtype_field_is_bits_48_to_50() {
        assert_eq!(MTYPE_NV10_MASK, 0x0007_0000_0000_0000);
        assert_eq!(mtype_of(2 << 48), Mtype::Cc);
        assert_eq!(mtype_of(u64::MAX), Mtype::Reserved);
        assert_eq!(with_mtype(u64::MAX, Mtype::Nc), !MTYPE_NV10_MASK);
        assert_eq!(with_mtype(0, Mtype::Uc), 3 << 48);
    }

    #[test]
    fn with_mtype_touches_only_the_field() {
        for flags in [0u64, 0x67, u64::MAX, 0x8000_0000_0000_0001, PTE_PRT | 0x5] {
            for m in [Mtype::Nc, Mtype::Wc, Mtype::Cc, Mtype::Uc] {
                let out = with_mtype(flags, m);
                assert_eq!(out & !MTYPE_NV10_MASK, flags & !MTYPE_NV10_MASK);
                assert_eq!(mtype_of(out), m);
            }
        }
    }

    #[test]
    fn vm_request_round_trips_and_matches_uapi() {
        // AMDGPU_VM_MTYPE_* from amdgpu_drm.h.
        assert_eq!(VmMtype::Cc.to_vm_flags(), 3 << 5);
        assert_eq!(VmMtype::Rw.to_vm_flags(), 5 << 5);
        assert_eq!(VM_MTYPE_MASK, 0x1e0);
        for m in VmMtype::ALL {
            assert_eq!(VmMtype::from_vm_flags(m.to_vm_flags() | 0x1f | (1 << 9)), m);
        }
        assert_eq!(VmMtype::from_vm_flags(9 << 5), VmMtype::Other(9));
    }

    #[test]
    fn gfx10_request_mapping_matches_gmc_v10() {
        assert_eq!(VmMtype::Default.gfx10_pte_mtype(), Mtype::Nc);
        assert_eq!(VmMtype::Rw.gfx10_pte_mtype(), Mtype::Nc);
        assert_eq!(VmMtype::Other(12).gfx10_pte_mtype(), Mtype::Nc);
        assert_eq!(VmMtype::Wc.gfx10_pte_mtype(), Mtype::Wc);
        assert_eq!(VmMtype::Cc.gfx10_pte_mtype(), Mtype::Cc);
        assert_eq!(VmMtype::Uc.gfx10_pte_mtype(), Mtype::Uc);
    }
}
