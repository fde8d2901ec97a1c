//! The MTYPE policy: what the hook does with the PTE flags `gmc_v10_0_get_vm_pte` computed.
//!
//! One pure function, [`decide`], is the whole decision: the kernel module calls it on every
//! hooked call and the controller and tests call it to predict what the module must have done.

use crate::pte::{self, Mtype, VmMtype};

/// What the hook does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Mode {
    /// Pass through: PTE flags stay as amdgpu computed them.
    Off = 0,
    /// Rewrite the MTYPE of eligible mappings to NC.
    Enforce = 1,
}

impl Mode {
    /// Every mode, in numeric order.
    pub const ALL: [Mode; 2] = [Mode::Off, Mode::Enforce];

    /// The name used by the `mode=` parameter, sysfs and the controller.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Enforce => "enforce",
        }
    }

    /// The mode for a stored numeric value.
    pub const fn from_u32(v: u32) -> Option<Mode> {
        match v {
            0 => Some(Mode::Off),
            1 => Some(Mode::Enforce),
            _ => None,
        }
    }

    /// Parses a mode name as written to sysfs or on the module command line: exact name, one
    /// trailing newline allowed (what `echo` adds), nothing else.
    pub fn parse(input: &[u8]) -> Option<Mode> {
        let name = match input.split_last() {
            Some((b'\n', rest)) => rest,
            _ => input,
        };
        let mut i = 0;
        while i < Mode::ALL.len() {
            if Mode::ALL[i].name().as_bytes() == name {
                return Some(Mode::ALL[i]);
            }
            i += 1;
        }
        None
    }
}

/// Why a call was left alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// The mode is `off`.
    ModeOff,
    /// The MTYPE is already NC: nothing to do.
    AlreadyNc,
    /// A PRT entry or a PTE that maps nothing: never rewritten.
    NotAValidPage,
    /// The MTYPE was forced by the BO's creation flags (coherent/uncached BOs, which include
    /// KFD doorbell and MMIO-remap BOs), not by the request. Telling those apart needs the
    /// BO's layout, so this cut never rewrites them.
    BoForced,
}

impl Skip {
    /// Short stable name for logs and tests.
    pub const fn name(self) -> &'static str {
        match self {
            Skip::ModeOff => "mode-off",
            Skip::AlreadyNc => "already-nc",
            Skip::NotAValidPage => "not-a-valid-page",
            Skip::BoForced => "bo-forced",
        }
    }
}

/// The outcome of one hooked call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Write these PTE flags instead.
    Rewrite(u64),
    /// Leave the flags as they are.
    Keep(Skip),
}

/// Decides what to do with `flags`, the PTE flags `gmc_v10_0_get_vm_pte` computed for mapping
/// request `vm_flags`.
pub const fn decide(mode: Mode, vm_flags: u32, flags: u64) -> Decision {
    if matches!(mode, Mode::Off) {
        return Decision::Keep(Skip::ModeOff);
    }
    if vm_flags & pte::VM_PAGE_PRT != 0 || flags & pte::PTE_PRT != 0 || flags & pte::PTE_VALID == 0
    {
        return Decision::Keep(Skip::NotAValidPage);
    }
    let now = pte::mtype_of(flags);
    if matches!(now, Mtype::Nc) {
        return Decision::Keep(Skip::AlreadyNc);
    }
    let requested = VmMtype::from_vm_flags(vm_flags).gfx10_pte_mtype();
    if requested as u8 != now as u8 {
        return Decision::Keep(Skip::BoForced);
    }
    Decision::Rewrite(pte::with_mtype(flags, Mtype::Nc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pte::*;

    const VALID_GTT: u64 = PTE_VALID | PTE_SYSTEM | PTE_SNOOPED | PTE_READABLE | PTE_WRITEABLE;

    fn computed(req: VmMtype, bo_uc: bool) -> u64 {
        let m = if bo_uc {
            Mtype::Uc
        } else {
            req.gfx10_pte_mtype()
        };
        with_mtype(VALID_GTT, m)
    }

    #[test]
    fn parse_accepts_names_and_one_newline_only() {
        assert_eq!(Mode::parse(b"enforce"), Some(Mode::Enforce));
        assert_eq!(Mode::parse(b"off\n"), Some(Mode::Off));
        for bad in [
            &b""[..],
            b"\n",
            b"Enforce",
            b"enforce\n\n",
            b" off",
            b"of",
            b"offx",
            b"\xff",
        ] {
            assert_eq!(Mode::parse(bad), None, "{bad:?}");
        }
        for m in Mode::ALL {
            assert_eq!(Mode::from_u32(m as u32), Some(m));
        }
        assert_eq!(Mode::from_u32(2), None);
    }

    #[test]
    fn off_never_rewrites() {
        for req in VmMtype::ALL {
            let f = computed(req, false);
            assert_eq!(
                decide(Mode::Off, req.to_vm_flags(), f),
                Decision::Keep(Skip::ModeOff)
            );
        }
    }

    #[test]
    fn enforce_rewrites_requested_wc_cc_uc_to_nc_and_nothing_else() {
        for req in [VmMtype::Wc, VmMtype::Cc, VmMtype::Uc] {
            let f = computed(req, false);
            let vm = req.to_vm_flags() | VM_PAGE_EXECUTABLE;
            assert_eq!(
                decide(Mode::Enforce, vm, f),
                Decision::Rewrite(with_mtype(f, Mtype::Nc))
            );
        }
        for req in [VmMtype::Default, VmMtype::Nc, VmMtype::Rw] {
            let f = computed(req, false);
            assert_eq!(
                decide(Mode::Enforce, req.to_vm_flags(), f),
                Decision::Keep(Skip::AlreadyNc)
            );
        }
    }

    #[test]
    fn enforce_leaves_bo_forced_uc_alone() {
        // KFD maps every BO with MTYPE_DEFAULT; doorbell/MMIO BOs get UC from their COHERENT flag.
        let f = computed(VmMtype::Default, true);
        assert_eq!(decide(Mode::Enforce, 0, f), Decision::Keep(Skip::BoForced));
        let f = computed(VmMtype::Cc, true);
        assert_eq!(
            decide(Mode::Enforce, VmMtype::Cc.to_vm_flags(), f),
            Decision::Keep(Skip::BoForced)
        );
    }

    #[test]
    fn enforce_never_touches_prt_or_invalid_entries() {
        let cc = VmMtype::Cc.to_vm_flags();
        let f = computed(VmMtype::Cc, false);
        assert_eq!(
            decide(Mode::Enforce, cc | VM_PAGE_PRT, f),
            Decision::Keep(Skip::NotAValidPage)
        );
        assert_eq!(
            decide(Mode::Enforce, cc, f | PTE_PRT),
            Decision::Keep(Skip::NotAValidPage)
        );
        assert_eq!(
            decide(Mode::Enforce, cc, f & !PTE_VALID),
            Decision::Keep(Skip::NotAValidPage)
        );
    }
}
