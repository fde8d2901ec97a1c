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
    /// UC with a BO mapped: amdgpu forces UC for BOs created COHERENT, EXT_COHERENT or
    /// UNCACHED, and those include KFD doorbell and MMIO-remap BOs, which must stay uncached.
    /// Telling them apart needs the BO's layout, so this cut never rewrites UC on a BO (even
    /// when the request also asked UC: the two cannot be told apart from the flags).
    BoUncached,
    /// The MTYPE is not what the request asked for, and not a BO's UC: something this policy
    /// does not know set it, so it is left alone.
    NotRequested,
}

impl Skip {
    /// Short stable name for logs and tests.
    pub const fn name(self) -> &'static str {
        match self {
            Skip::ModeOff => "mode-off",
            Skip::AlreadyNc => "already-nc",
            Skip::NotAValidPage => "not-a-valid-page",
            Skip::BoUncached => "bo-uncached",
            Skip::NotRequested => "not-requested",
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
/// request `vm_flags`, with a BO (`has_bo`) or without (KFD SVM ranges, PRT).
pub const fn decide(mode: Mode, vm_flags: u32, has_bo: bool, flags: u64) -> Decision {
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
    if has_bo && matches!(now, Mtype::Uc) {
        return Decision::Keep(Skip::BoUncached);
    }
    let requested = VmMtype::from_vm_flags(vm_flags).gfx10_pte_mtype();
    if requested as u8 != now as u8 {
        return Decision::Keep(Skip::NotRequested);
    }
    Decision::Rewrite(pte::with_mtype(flags, Mtype::Nc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pte::*;

    const VALID_GTT: u64 = PTE_VALID | PTE_SYSTEM | PTE_SNOOPED | PTE_READABLE | PTE_WRITEABLE;

    /// What gmc_v10_0_get_vm_pte computes for `req`, with a coherent/uncached BO or not.
    fn computed(req: VmMtype, bo_uc: bool) -> u64 {
        let m = if bo_uc {
            Mtype::Uc
        } else {
            req.gfx10_pte_mtype()
        };
        with_mtype(VALID_GTT, m)
    }

    fn enforce(vm_flags: u32, has_bo: bool, flags: u64) -> Decision {
        decide(Mode::Enforce, vm_flags, has_bo, flags)
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
            for has_bo in [false, true] {
                let d = decide(Mode::Off, req.to_vm_flags(), has_bo, computed(req, has_bo));
                assert_eq!(d, Decision::Keep(Skip::ModeOff));
            }
        }
    }

    #[test]
    fn enforce_rewrites_requested_mtypes_to_nc_touching_nothing_else() {
        for (req, has_bo) in [
            (VmMtype::Wc, false),
            (VmMtype::Cc, false),
            (VmMtype::Uc, false),
            (VmMtype::Wc, true),
            (VmMtype::Cc, true),
        ] {
            let f = computed(req, false);
            let vm = req.to_vm_flags() | VM_PAGE_EXECUTABLE;
            let want = Decision::Rewrite(with_mtype(f, Mtype::Nc));
            assert_eq!(enforce(vm, has_bo, f), want, "{req:?} has_bo={has_bo}");
        }
    }

    #[test]
    fn enforce_keeps_nc() {
        for req in [
            VmMtype::Default,
            VmMtype::Nc,
            VmMtype::Rw,
            VmMtype::Other(9),
        ] {
            for has_bo in [false, true] {
                let d = enforce(req.to_vm_flags(), has_bo, computed(req, false));
                assert_eq!(d, Decision::Keep(Skip::AlreadyNc));
            }
        }
    }

    #[test]
    fn enforce_leaves_uc_on_a_bo_alone() {
        // KFD maps every BO with MTYPE_DEFAULT; doorbell/MMIO BOs get UC from their COHERENT
        // flag. A UC request on a BO looks the same, so it is left alone too.
        for req in VmMtype::ALL {
            let d = enforce(req.to_vm_flags(), true, computed(req, true));
            assert_eq!(d, Decision::Keep(Skip::BoUncached), "{req:?}");
        }
    }

    #[test]
    fn enforce_leaves_an_mtype_nobody_requested_alone() {
        let f = with_mtype(VALID_GTT, Mtype::Cc);
        let d = enforce(VmMtype::Wc.to_vm_flags(), false, f);
        assert_eq!(d, Decision::Keep(Skip::NotRequested));
    }

    #[test]
    fn enforce_never_touches_prt_or_invalid_entries() {
        let cc = VmMtype::Cc.to_vm_flags();
        let f = computed(VmMtype::Cc, false);
        for (vm, pte) in [
            (cc | VM_PAGE_PRT, f),
            (cc, f | PTE_PRT),
            (cc, f & !PTE_VALID),
        ] {
            assert_eq!(enforce(vm, false, pte), Decision::Keep(Skip::NotAValidPage));
        }
    }
}
