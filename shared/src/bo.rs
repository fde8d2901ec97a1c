//! What kind of buffer object a mapping maps, read from amdgpu's private `struct amdgpu_bo`.
//!
//! Out-of-tree code cannot include amdgpu's headers, and the struct's layout depends on the
//! kernel's configuration (lockdep changes the size of the `dma_resv` inside `tbo`), so the
//! offsets come from outside: from the module BTF of the running kernel
//! (`/sys/kernel/btf/amdgpu`, read by rdna1ctl) or given by root. The module checks them when
//! they are set ([`BoLayout::check`]) and checks every BO it reads through them against
//! invariants ([`classify`]); until a layout is set, no BO is classified, and a BO that breaks
//! an invariant is unknown for that call only.

use core::fmt;

use crate::named::named_enum;

/// `AMDGPU_GEM_DOMAIN_CPU`.
pub const DOMAIN_CPU: u32 = 0x1;
/// `AMDGPU_GEM_DOMAIN_GTT`.
pub const DOMAIN_GTT: u32 = 0x2;
/// `AMDGPU_GEM_DOMAIN_VRAM`.
pub const DOMAIN_VRAM: u32 = 0x4;
/// `AMDGPU_GEM_DOMAIN_DOORBELL`.
pub const DOMAIN_DOORBELL: u32 = 0x40;
/// `AMDGPU_GEM_DOMAIN_MASK`: every domain amdgpu defines.
pub const DOMAIN_MASK: u32 = 0x7f;

/// `AMDGPU_GEM_CREATE_COHERENT`.
pub const CREATE_COHERENT: u64 = 1 << 13;
/// `AMDGPU_GEM_CREATE_UNCACHED`.
pub const CREATE_UNCACHED: u64 = 1 << 14;
/// `AMDGPU_GEM_CREATE_EXT_COHERENT`.
pub const CREATE_EXT_COHERENT: u64 = 1 << 15;
/// `AMDGPU_AMDKFD_CREATE_USERPTR_BO` (amdgpu_object.h, kernel-internal).
pub const KFD_CREATE_USERPTR: u64 = 1 << 63;
/// Every creation flag a 7.2 `amdgpu_bo` can carry: uapi bits 0..16 and the KFD userptr bit.
pub const CREATE_KNOWN: u64 = 0x1_ffff | KFD_CREATE_USERPTR;

/// `enum ttm_bo_type` (include/drm/ttm/ttm_bo.h).
pub const TTM_BO_TYPE_DEVICE: u32 = 0;
/// `ttm_bo_type_kernel`.
pub const TTM_BO_TYPE_KERNEL: u32 = 1;
/// `ttm_bo_type_sg`: built from an sg table (KFD doorbell, MMIO-remap, imported dma-bufs).
pub const TTM_BO_TYPE_SG: u32 = 2;

named_enum! {
    /// The class of what a mapping maps.
    pub enum BoClass: u32 {
        /// No BO: a KFD SVM range (or a PRT mapping).
        None = 0 => "none",
        /// Memory BO (VRAM, GTT, userptr), neither coherent nor uncached.
        Memory = 1 => "memory",
        /// Memory BO created COHERENT or EXT_COHERENT: hipHostMalloc, KFD coherent
        /// allocations. amdgpu forces UC on it.
        Coherent = 2 => "coherent",
        /// Memory BO created UNCACHED: amdgpu forces UC; rewritten only if the policy opts in.
        Uncached = 3 => "uncached",
        /// Never rewritten: sg BOs (KFD doorbell and MMIO-remap BOs, imports), doorbell-domain
        /// and on-chip (GDS/GWS/OA) BOs. Caching doorbell or register writes in the GPU would
        /// be wrong.
        Never = 4 => "never",
        /// A BO, but no layout to read it with, or its fields broke an invariant.
        Unknown = 5 => "unknown",
        /// A kernel-type TTM BO: amdgpu's own (seq64, rings, firmware). Never rewritten.
        Kernel = 6 => "kernel",
        /// An sg BO created COHERENT, EXT_COHERENT or UNCACHED: a peer GPU's dma-buf or
        /// userptr attachment of coherent memory, or a KFD MMIO/doorbell BO allocated
        /// coherent; nothing in the BO tells them apart (docs/DESIGN.md), so never rewritten.
        CoherentSg = 7 => "coherent_sg",
    }
}

/// What [`classify`] reads from one BO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoFields {
    /// `bo->preferred_domains`.
    pub preferred_domains: u32,
    /// `bo->flags`.
    pub flags: u64,
    /// `bo->tbo.type`.
    pub ttm_type: u32,
}

/// Classifies a BO from its fields; `None` if they break an invariant every amdgpu BO keeps
/// (a known TTM type, known creation flags, at least one and only known domains), which
/// means the layout they were read with is wrong.
pub const fn classify(f: BoFields) -> Option<BoClass> {
    if f.ttm_type > TTM_BO_TYPE_SG
        || f.flags & !CREATE_KNOWN != 0
        || f.preferred_domains == 0
        || f.preferred_domains & !DOMAIN_MASK != 0
    {
        return None;
    }
    if f.ttm_type == TTM_BO_TYPE_KERNEL {
        return Some(BoClass::Kernel);
    }
    if f.ttm_type == TTM_BO_TYPE_SG
        && f.flags & (CREATE_COHERENT | CREATE_EXT_COHERENT | CREATE_UNCACHED) != 0
    {
        return Some(BoClass::CoherentSg);
    }
    if f.ttm_type == TTM_BO_TYPE_SG
        || f.preferred_domains & !(DOMAIN_CPU | DOMAIN_GTT | DOMAIN_VRAM) != 0
    {
        return Some(BoClass::Never);
    }
    if f.flags & (CREATE_COHERENT | CREATE_EXT_COHERENT) != 0 {
        return Some(BoClass::Coherent);
    }
    if f.flags & CREATE_UNCACHED != 0 {
        return Some(BoClass::Uncached);
    }
    Some(BoClass::Memory)
}

/// The `bo_layout` parameter's word for no layout, also what it shows when none is in force.
pub const BO_LAYOUT_NONE: &str = "none";
/// The `bo_layout` parameter's word for the module's built-in layout.
pub const BO_LAYOUT_BUILTIN: &str = "builtin";

/// Byte offsets of the fields [`classify`] needs in `struct amdgpu_bo`, and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoLayout {
    /// `sizeof(struct amdgpu_bo)`.
    pub size: u32,
    /// `offsetof(struct amdgpu_bo, preferred_domains)` (u32).
    pub preferred_domains: u32,
    /// `offsetof(struct amdgpu_bo, tbo)` (struct ttm_buffer_object).
    pub tbo: u32,
    /// `offsetof(struct amdgpu_bo, flags)` (u64).
    pub flags: u32,
}

/// Why a layout was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// Larger than any plausible `amdgpu_bo` (64 KiB).
    Size,
    /// A field lies (partly) outside the struct.
    OutOfBounds,
    /// A field is not aligned to its type.
    Misaligned,
    /// Two fields overlap.
    Overlap,
}

impl BoLayout {
    /// The largest `amdgpu_bo` accepted.
    pub const MAX_SIZE: u32 = 64 * 1024;

    /// Checks that the fields fit, do not overlap and are aligned, given the size of
    /// `struct ttm_buffer_object` (known to the module from the kernel's public headers).
    pub const fn check(&self, ttm_bo_size: u32) -> Result<(), LayoutError> {
        let l = self;
        if l.size > Self::MAX_SIZE || ttm_bo_size > Self::MAX_SIZE {
            return Err(LayoutError::Size);
        }
        // All sums below are of values <= 64 KiB: no overflow.
        if l.preferred_domains + 4 > l.size || l.flags + 8 > l.size || l.tbo + ttm_bo_size > l.size
        {
            return Err(LayoutError::OutOfBounds);
        }
        // `%`, not `is_multiple_of`: that is rustc 1.87's, and the module is compiled by the
        // kernel's own rustc, 1.85.1 for Debian's 7.3.4 (tests/kernel/rustc-floor.sh).
        #[allow(clippy::manual_is_multiple_of)]
        let misaligned = l.preferred_domains % 4 != 0 || l.flags % 8 != 0 || l.tbo % 8 != 0;
        if misaligned {
            return Err(LayoutError::Misaligned);
        }
        if overlaps(l.preferred_domains, 4, l.flags, 8)
            || overlaps(l.preferred_domains, 4, l.tbo, ttm_bo_size)
            || overlaps(l.flags, 8, l.tbo, ttm_bo_size)
        {
            return Err(LayoutError::Overlap);
        }
        Ok(())
    }

    /// Parses `size=N preferred_domains=N tbo=N flags=N` (decimal, any order, each once, all
    /// four), as [`fmt::Display`] prints it; one trailing newline allowed.
    pub fn parse(input: &[u8]) -> Option<BoLayout> {
        let input = match input.split_last() {
            Some((b'\n', rest)) => rest,
            _ => input,
        };
        let mut v: [Option<u32>; 4] = [None; 4];
        for item in input.split(|&c| c == b' ') {
            let eq = item.iter().position(|&c| c == b'=')?;
            let (key, val) = (&item[..eq], &item[eq + 1..]);
            let i = match key {
                b"size" => 0,
                b"preferred_domains" => 1,
                b"tbo" => 2,
                b"flags" => 3,
                _ => return None,
            };
            if v[i].is_some() {
                return None;
            }
            v[i] = Some(decimal(val)?);
        }
        Some(BoLayout {
            size: v[0]?,
            preferred_domains: v[1]?,
            tbo: v[2]?,
            flags: v[3]?,
        })
    }
}

const fn overlaps(a: u32, alen: u32, b: u32, blen: u32) -> bool {
    a < b + blen && b < a + alen
}

fn decimal(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let mut n: u32 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(c - b'0');
    }
    Some(n)
}

impl fmt::Display for BoLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "size={} preferred_domains={} tbo={} flags={}",
            self.size, self.preferred_domains, self.tbo, self.flags
        )
    }
}

/// A [`BoLayout`] that passed [`BoLayout::check`]: the only kind the module reads BOs with.
///
/// # Invariants
///
/// The layout passed [`BoLayout::check`] for the `ttm_bo_size` given to [`CheckedLayout::new`]:
/// `size` is at most [`BoLayout::MAX_SIZE`]; `preferred_domains` (4 bytes), `flags` (8 bytes)
/// and `tbo` (`ttm_bo_size` bytes) lie within `size` bytes, aligned for their types, and do
/// not overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckedLayout(BoLayout);

impl CheckedLayout {
    /// `layout`, if it passes [`BoLayout::check`] for a `struct ttm_buffer_object` of
    /// `ttm_bo_size` bytes.
    pub const fn new(layout: BoLayout, ttm_bo_size: u32) -> Result<CheckedLayout, LayoutError> {
        match layout.check(ttm_bo_size) {
            // INVARIANT: just checked, with this `ttm_bo_size`.
            Ok(()) => Ok(CheckedLayout(layout)),
            Err(e) => Err(e),
        }
    }

    /// The offsets and size.
    pub const fn get(&self) -> BoLayout {
        self.0
    }
}

impl fmt::Display for CheckedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

named_enum! {
    /// Where the `amdgpu_bo` layout in force came from: the module's `bo_layout_source`
    /// parameter.
    pub enum LayoutSource: u32 {
        /// None was ever set: before module init picks the built-in layout, or when that
        /// layout failed its check on this kernel.
        Unset = 0 => "none",
        /// The module's own copy of `struct amdgpu_bo` (amdgpu_bo_layout.h, or the target
        /// amdgpu's BTF when the DKMS build read it).
        Builtin = 1 => "builtin",
        /// Written by root (the `bo_layout` parameter), `none` included.
        Set = 2 => "set",
    }
}

named_enum! {
    /// Whether BOs are classified through the layout in force: the module's
    /// `bo_layout_status` parameter.
    pub enum LayoutStatus: u32 {
        /// No layout: BOs are not classified.
        Unset = 0 => "unset",
        /// A checked layout: BOs are classified through it. A BO whose fields break an
        /// invariant is [`BoClass::Unknown`] for that call only: no BO, whoever made it, can
        /// stop the classification of the others.
        Ok = 1 => "ok",
    }
}

impl LayoutStatus {
    /// The status of `layout`.
    pub const fn of(layout: Option<&CheckedLayout>) -> LayoutStatus {
        match layout {
            None => LayoutStatus::Unset,
            Some(_) => LayoutStatus::Ok,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GTT: BoFields = BoFields {
        preferred_domains: DOMAIN_GTT,
        flags: 0,
        ttm_type: TTM_BO_TYPE_DEVICE,
    };

    #[test]
    fn classes_of_the_bos_rocm_makes() {
        let c = |f: BoFields| classify(f);
        assert_eq!(c(GTT), Some(BoClass::Memory));
        let vram = BoFields {
            preferred_domains: DOMAIN_VRAM,
            ..GTT
        };
        assert_eq!(c(vram), Some(BoClass::Memory));
        let userptr = BoFields {
            flags: KFD_CREATE_USERPTR,
            ..GTT
        };
        assert_eq!(c(userptr), Some(BoClass::Memory));
        let host_malloc = BoFields {
            flags: CREATE_COHERENT,
            ..GTT
        };
        assert_eq!(c(host_malloc), Some(BoClass::Coherent));
        let ext = BoFields {
            flags: CREATE_EXT_COHERENT,
            ..vram
        };
        assert_eq!(c(ext), Some(BoClass::Coherent));
        let uncached = BoFields {
            flags: CREATE_UNCACHED,
            ..GTT
        };
        assert_eq!(c(uncached), Some(BoClass::Uncached));
        // KFD doorbell / MMIO-remap: sg BO, created COHERENT by userspace, and a peer GPU's
        // dma-buf import of hipHostMalloc memory (sg, COHERENT copied, domain GTT): the same
        // fields, so both are CoherentSg, never rewritten.
        let doorbell = BoFields {
            ttm_type: TTM_BO_TYPE_SG,
            flags: CREATE_COHERENT,
            ..GTT
        };
        assert_eq!(c(doorbell), Some(BoClass::CoherentSg));
        let sg = BoFields {
            ttm_type: TTM_BO_TYPE_SG,
            ..GTT
        };
        assert_eq!(c(sg), Some(BoClass::Never));
        // amdgpu's seq64 (kernel type, GTT) and other kernel BOs.
        let seq64 = BoFields {
            ttm_type: TTM_BO_TYPE_KERNEL,
            ..GTT
        };
        assert_eq!(c(seq64), Some(BoClass::Kernel));
        let gem_doorbell = BoFields {
            preferred_domains: DOMAIN_DOORBELL,
            ..GTT
        };
        assert_eq!(c(gem_doorbell), Some(BoClass::Never));
        let gds = BoFields {
            preferred_domains: 0x8,
            ..GTT
        };
        assert_eq!(c(gds), Some(BoClass::Never));
    }

    #[test]
    fn fields_read_through_a_wrong_layout_are_refused() {
        for bad in [
            BoFields { ttm_type: 3, ..GTT },
            BoFields {
                flags: 1 << 40,
                ..GTT
            },
            BoFields {
                preferred_domains: 0,
                ..GTT
            },
            BoFields {
                preferred_domains: 0x80,
                ..GTT
            },
        ] {
            assert_eq!(classify(bad), None, "{bad:?}");
        }
    }

    const REAL: BoLayout = BoLayout {
        size: 1344,
        preferred_domains: 0,
        tbo: 56,
        flags: 1256,
    };

    #[test]
    fn layout_check() {
        assert_eq!(REAL.check(1000), Ok(()));
        assert_eq!(REAL.check(1300), Err(LayoutError::OutOfBounds));
        let big = BoLayout {
            size: 70_000,
            ..REAL
        };
        assert_eq!(big.check(1000), Err(LayoutError::Size));
        let mis = BoLayout {
            flags: 1252,
            ..REAL
        };
        assert_eq!(mis.check(1000), Err(LayoutError::Misaligned));
        let ovl = BoLayout { flags: 64, ..REAL };
        assert_eq!(ovl.check(1000), Err(LayoutError::Overlap));
        let ovl2 = BoLayout {
            preferred_domains: 1256,
            ..REAL
        };
        assert_eq!(ovl2.check(1000), Err(LayoutError::Overlap));
    }

    #[test]
    fn checked_layout_is_made_only_through_the_check() {
        assert_eq!(CheckedLayout::new(REAL, 1000).map(|l| l.get()), Ok(REAL));
        assert_eq!(
            CheckedLayout::new(REAL, 1300),
            Err(LayoutError::OutOfBounds)
        );
        let l = CheckedLayout::new(REAL, 1000).unwrap();
        assert_eq!(l.to_string(), REAL.to_string());
    }

    #[test]
    fn layout_words_are_what_the_module_prints() {
        let source = LayoutSource::ALL.map(LayoutSource::name);
        assert_eq!(source, ["none", "builtin", "set"]);
        let status = LayoutStatus::ALL.map(LayoutStatus::name);
        assert_eq!(status, ["unset", "ok"]);
        assert_eq!(LayoutStatus::parse(b"ok\n"), Some(LayoutStatus::Ok));
        assert_eq!(
            LayoutStatus::parse(b"invalid"),
            None,
            "no BO can stop classification"
        );
        let l = CheckedLayout::new(REAL, 1000).ok();
        assert_eq!(LayoutStatus::of(None), LayoutStatus::Unset);
        assert_eq!(LayoutStatus::of(l.as_ref()), LayoutStatus::Ok);
    }

    #[test]
    fn layout_parse_round_trip_and_errors() {
        assert_eq!(BoLayout::parse(REAL.to_string().as_bytes()), Some(REAL));
        assert_eq!(
            BoLayout::parse(b"flags=1256 tbo=56 size=1344 preferred_domains=0\n"),
            Some(REAL)
        );
        for bad in [
            &b""[..],
            b"none",
            b"size=1344 preferred_domains=0 tbo=56",
            b"size=1344 preferred_domains=0 tbo=56 flags=1256 flags=1256",
            b"size=1344 preferred_domains=0 tbo=56 flags=-1",
            b"size=1344 preferred_domains=0 tbo=56 flags=0x10",
            b"size=1344 preferred_domains=0 tbo=56 flags=9999999999",
            b"size=1344 preferred_domains=0 tbo=56 flags=1256 extra=1",
            b"size=1344  preferred_domains=0 tbo=56 flags=1256",
        ] {
            assert_eq!(
                BoLayout::parse(bad),
                None,
                "{:?}",
                core::str::from_utf8(bad)
            );
        }
    }
}
