//! The MTYPE policy: what the hook does with the PTE flags `gmc_v10_0_get_vm_pte` computed.
//!
//! [`decide`] is the whole per-call decision: the kernel module calls it on every hooked call,
//! and the controller and the tests call it to predict what the module must have done.

use core::fmt;

use crate::bo::BoClass;
use crate::devices::{rdna1_chip, PCI_VENDOR_AMD};
use crate::named::named_enum;
use crate::pci::{DeviceId, PciAddr};
use crate::pte::{self, Mtype, VmMtype};

named_enum! {
    /// What the hook does.
    pub enum Mode: u32 {
        /// Pass through: PTE flags stay as amdgpu computed them (calls are still counted).
        Off = 0 => "off",
        /// Classify and count what enforce would change; change nothing.
        Audit = 1 => "audit",
        /// Rewrite the MTYPE of eligible mappings to NC.
        Enforce = 2 => "enforce",
    }
}

fn strip_newline(input: &[u8]) -> &[u8] {
    match input.split_last() {
        Some((b'\n', rest)) => rest,
        _ => input,
    }
}

/// Most PCI addresses an explicit scope can list.
pub const MAX_SCOPE_DEVICES: usize = 8;

/// Which devices the policy applies to. Devices out of scope are never modified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// RDNA1 devices: Navi 10, 12, 14 (amdgpu's own PCI id table).
    Rdna1,
    /// Every AMD device whose PTEs go through GMC v10 (RDNA1 and RDNA2).
    Gfx10,
    /// Exactly these PCI addresses (the first `len` of `addrs`).
    List {
        /// The addresses; only the first `len` count.
        addrs: [PciAddr; MAX_SCOPE_DEVICES],
        /// How many of `addrs` are used (1..=MAX_SCOPE_DEVICES).
        len: u8,
    },
}

impl Scope {
    /// Parses `rdna1`, `gfx10`, or a comma-separated list of 1 to 8 PCI addresses
    /// (`0000:03:00.0,0000:04:00.0`); one trailing newline allowed.
    pub fn parse(input: &[u8]) -> Option<Scope> {
        let s = strip_newline(input);
        if s == b"rdna1" {
            return Some(Scope::Rdna1);
        }
        if s == b"gfx10" {
            return Some(Scope::Gfx10);
        }
        let mut addrs = [PciAddr::default(); MAX_SCOPE_DEVICES];
        let mut len = 0;
        for part in s.split(|&c| c == b',') {
            let addr = PciAddr::parse(part)?;
            *addrs.get_mut(len)? = addr;
            len += 1;
        }
        if len == 0 {
            return None;
        }
        Some(Scope::List {
            addrs,
            len: len as u8,
        })
    }

    /// The addresses of an explicit list (empty for the named scopes).
    pub fn addrs(&self) -> &[PciAddr] {
        match self {
            Scope::List { addrs, len } => addrs.get(..*len as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Whether `dev` is in scope.
    pub fn contains(&self, dev: &DeviceId) -> bool {
        if dev.vendor != PCI_VENDOR_AMD {
            return false;
        }
        match self {
            Scope::Rdna1 => rdna1_chip(dev.vendor, dev.device).is_some(),
            Scope::Gfx10 => true,
            Scope::List { .. } => self.addrs().contains(&dev.addr),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Rdna1 => f.write_str("rdna1"),
            Scope::Gfx10 => f.write_str("gfx10"),
            Scope::List { .. } => {
                for (i, a) in self.addrs().iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{a}")?;
                }
                Ok(())
            }
        }
    }
}

/// The BO classes whose forced UC enforce rewrites (requested MTYPEs of memory BOs and of
/// mappings without a BO are always in). [`BoClass::Never`] and [`BoClass::Unknown`] can never
/// be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classes {
    /// COHERENT / EXT_COHERENT memory BOs (on by default).
    pub coherent: bool,
    /// UNCACHED memory BOs (off by default).
    pub uncached: bool,
}

impl Classes {
    /// The default: coherent memory BOs, not uncached ones.
    pub const DEFAULT: Classes = Classes {
        coherent: true,
        uncached: false,
    };

    /// Parses `coherent`, `uncached`, `coherent,uncached` (either order) or `none`; one
    /// trailing newline allowed.
    pub fn parse(input: &[u8]) -> Option<Classes> {
        let s = strip_newline(input);
        let mut c = Classes {
            coherent: false,
            uncached: false,
        };
        if s == b"none" {
            return Some(c);
        }
        for part in s.split(|&b| b == b',') {
            let slot = match part {
                b"coherent" => &mut c.coherent,
                b"uncached" => &mut c.uncached,
                _ => return None,
            };
            if *slot {
                return None;
            }
            *slot = true;
        }
        Some(c)
    }
}

impl fmt::Display for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match (self.coherent, self.uncached) {
            (false, false) => "none",
            (true, false) => "coherent",
            (false, true) => "uncached",
            (true, true) => "coherent,uncached",
        })
    }
}

/// The whole policy; the module publishes it as one unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// What the hook does.
    pub mode: Mode,
    /// Which devices it does it for.
    pub scope: Scope,
    /// Which optional BO classes it covers.
    pub classes: Classes,
}

impl Policy {
    /// The policy of a freshly loaded module: off, RDNA1 only, coherent BOs included.
    pub const DEFAULT: Policy = Policy {
        mode: Mode::Off,
        scope: Scope::Rdna1,
        classes: Classes::DEFAULT,
    };
}

named_enum! {
    /// Why a call was left alone.
    pub enum Skip: u32 {
        /// The mode is `off`.
        ModeOff = 0 => "mode_off",
        /// The device could not be identified from amdgpu's `adev` (layout check failed).
        DeviceUnknown = 1 => "device_unknown",
        /// The device is not in the policy's scope.
        OutOfScope = 2 => "out_of_scope",
        /// A PRT entry or a PTE that maps nothing: never rewritten.
        NotAValidPage = 3 => "not_a_valid_page",
        /// The MTYPE is already NC: nothing to do.
        AlreadyNc = 4 => "already_nc",
        /// A BO that cannot be classified: no `amdgpu_bo` layout is set, or it failed validation.
        /// Any BO might be a doorbell, so none is touched.
        LayoutUnknown = 5 => "layout_unknown",
        /// A BO that must stay as amdgpu maps it ([`BoClass::Never`]: sg, doorbell, on-chip).
        NeverClass = 6 => "never_class",
        /// A coherent or uncached BO whose class the policy does not include.
        ClassNotEnabled = 7 => "class_not_enabled",
        /// The MTYPE is not what the request or the BO's class explains: something this policy
        /// does not know set it, so it is left alone.
        NotRequested = 8 => "not_requested",
    }
}

/// One hooked call, as the hook sees it after the original function returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The mapping request (`AMDGPU_VM_PAGE_*`, `AMDGPU_VM_MTYPE_*`).
    pub vm_flags: u32,
    /// The class of the BO mapped ([`BoClass::None`] for KFD SVM ranges and PRT).
    pub bo: BoClass,
    /// The PTE flags the function computed.
    pub flags: u64,
    /// The device, if the layout check could identify it.
    pub device: Option<DeviceId>,
}

/// The outcome of one hooked call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Write these PTE flags instead (enforce).
    Rewrite(u64),
    /// Enforce would write these flags; audit leaves the call alone.
    WouldRewrite(u64),
    /// Leave the flags as they are.
    Keep(Skip),
}

/// Decides what to do with one call under `policy`.
pub fn decide(policy: &Policy, call: &Call) -> Decision {
    if matches!(policy.mode, Mode::Off) {
        return Decision::Keep(Skip::ModeOff);
    }
    let Some(dev) = call.device else {
        return Decision::Keep(Skip::DeviceUnknown);
    };
    if !policy.scope.contains(&dev) {
        return Decision::Keep(Skip::OutOfScope);
    }
    let flags = call.flags;
    if call.vm_flags & pte::VM_PAGE_PRT != 0
        || flags & pte::PTE_PRT != 0
        || flags & pte::PTE_VALID == 0
    {
        return Decision::Keep(Skip::NotAValidPage);
    }
    let now = pte::mtype_of(flags);
    if matches!(now, Mtype::Nc) {
        return Decision::Keep(Skip::AlreadyNc);
    }
    let requested = VmMtype::from_vm_flags(call.vm_flags).gfx10_pte_mtype() as u8 == now as u8;
    // amdgpu forces UC on coherent and uncached BOs, whatever the request.
    let forced_uc = matches!(now, Mtype::Uc);
    match call.bo {
        BoClass::Unknown => return Decision::Keep(Skip::LayoutUnknown),
        BoClass::Never => return Decision::Keep(Skip::NeverClass),
        BoClass::None | BoClass::Memory if !requested => return Decision::Keep(Skip::NotRequested),
        BoClass::None | BoClass::Memory => {}
        BoClass::Coherent | BoClass::Uncached if !forced_uc => {
            return Decision::Keep(Skip::NotRequested)
        }
        BoClass::Coherent if !policy.classes.coherent => {
            return Decision::Keep(Skip::ClassNotEnabled)
        }
        BoClass::Uncached if !policy.classes.uncached => {
            return Decision::Keep(Skip::ClassNotEnabled)
        }
        BoClass::Coherent | BoClass::Uncached => {}
    }
    let new = pte::with_mtype(flags, Mtype::Nc);
    match policy.mode {
        Mode::Audit => Decision::WouldRewrite(new),
        _ => Decision::Rewrite(new),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pte::*;

    const VALID_GTT: u64 = PTE_VALID | PTE_SYSTEM | PTE_SNOOPED | PTE_READABLE | PTE_WRITEABLE;
    const RX5700XT: DeviceId = dev(3, 0x731f);
    const RX6800: DeviceId = dev(4, 0x73bf);

    const fn dev(bus: u8, device: u16) -> DeviceId {
        DeviceId {
            addr: PciAddr::from_raw((bus as u32) << 8),
            vendor: PCI_VENDOR_AMD,
            device,
        }
    }

    fn policy(mode: Mode) -> Policy {
        Policy {
            mode,
            ..Policy::DEFAULT
        }
    }

    /// What gmc_v10_0_get_vm_pte computes for `req` on a BO of class `bo`.
    fn computed(req: VmMtype, bo: BoClass) -> u64 {
        let m = match bo {
            BoClass::Coherent | BoClass::Uncached => Mtype::Uc,
            _ => req.gfx10_pte_mtype(),
        };
        with_mtype(VALID_GTT, m)
    }

    fn call_on(req: VmMtype, bo: BoClass) -> Call {
        Call {
            vm_flags: req.to_vm_flags(),
            bo,
            flags: computed(req, bo),
            device: Some(RX5700XT),
        }
    }

    fn enforce(c: &Call) -> Decision {
        decide(&policy(Mode::Enforce), c)
    }

    fn nc(c: &Call) -> Decision {
        Decision::Rewrite(with_mtype(c.flags, Mtype::Nc))
    }

    #[test]
    fn mode_parse_accepts_names_and_one_newline_only() {
        assert_eq!(Mode::parse(b"enforce"), Some(Mode::Enforce));
        assert_eq!(Mode::parse(b"audit"), Some(Mode::Audit));
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
        assert_eq!(Mode::from_u32(3), None);
    }

    #[test]
    fn scope_parse_and_print_round_trip() {
        assert_eq!(Scope::parse(b"rdna1\n"), Some(Scope::Rdna1));
        assert_eq!(Scope::parse(b"gfx10"), Some(Scope::Gfx10));
        let s = Scope::parse(b"0000:03:00.0,0000:04:00.0").unwrap();
        assert_eq!(s.addrs().len(), 2);
        assert_eq!(s.to_string(), "0000:03:00.0,0000:04:00.0");
        assert_eq!(Scope::parse(s.to_string().as_bytes()), Some(s));
        let nine = ["0000:03:00.0"; 9].join(",");
        assert!(Scope::parse(&nine.as_bytes()[..nine.len() - 13]).is_some());
        for bad in [
            &b""[..],
            b"RDNA1",
            b"all",
            b",",
            b"0000:03:00.0,",
            b"0000:03:00.0,,0000:04:00.0",
            nine.as_bytes(),
        ] {
            assert_eq!(Scope::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn classes_parse_and_print_round_trip() {
        for text in ["none", "coherent", "uncached", "coherent,uncached"] {
            let c = Classes::parse(text.as_bytes()).unwrap();
            assert_eq!(c.to_string(), text);
        }
        assert_eq!(
            Classes::parse(b"uncached,coherent\n"),
            Classes::parse(b"coherent,uncached")
        );
        for bad in [
            &b""[..],
            b"never",
            b"coherent,coherent",
            b"none,coherent",
            b"Coherent",
        ] {
            assert_eq!(Classes::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn scope_membership() {
        let intel = DeviceId {
            vendor: 0x8086,
            ..RX5700XT
        };
        assert!(Scope::Rdna1.contains(&RX5700XT));
        assert!(!Scope::Rdna1.contains(&RX6800));
        assert!(Scope::Gfx10.contains(&RX6800));
        assert!(!Scope::Gfx10.contains(&intel));
        let list = Scope::parse(b"0000:04:00.0").unwrap();
        assert!(list.contains(&RX6800));
        assert!(!list.contains(&RX5700XT));
        let intel_listed = Scope::parse(b"0000:03:00.0").unwrap();
        assert!(
            !intel_listed.contains(&intel),
            "a listed non-AMD device is never in scope"
        );
    }

    #[test]
    fn off_never_rewrites() {
        for req in VmMtype::ALL {
            for bo in BoClass::ALL {
                let d = decide(&policy(Mode::Off), &call_on(req, bo));
                assert_eq!(d, Decision::Keep(Skip::ModeOff));
            }
        }
    }

    /// The class table of docs/DESIGN.md, for every request.
    #[test]
    fn enforce_by_class_and_request() {
        for req in VmMtype::ALL {
            let asks_nc = matches!(req.gfx10_pte_mtype(), Mtype::Nc);
            for bo in [BoClass::None, BoClass::Memory] {
                let c = call_on(req, bo);
                let want = if asks_nc {
                    Decision::Keep(Skip::AlreadyNc)
                } else {
                    nc(&c)
                };
                assert_eq!(enforce(&c), want, "{req:?} {bo:?}");
            }
            let c = call_on(req, BoClass::Coherent);
            assert_eq!(enforce(&c), nc(&c), "{req:?} coherent");
            let c = call_on(req, BoClass::Uncached);
            assert_eq!(
                enforce(&c),
                Decision::Keep(Skip::ClassNotEnabled),
                "{req:?} uncached"
            );
            let c = call_on(req, BoClass::Never);
            let want = if asks_nc {
                Decision::Keep(Skip::AlreadyNc)
            } else {
                Decision::Keep(Skip::NeverClass)
            };
            assert_eq!(enforce(&c), want, "{req:?} never");
            let c = call_on(req, BoClass::Unknown);
            let want = if asks_nc {
                Decision::Keep(Skip::AlreadyNc)
            } else {
                Decision::Keep(Skip::LayoutUnknown)
            };
            assert_eq!(enforce(&c), want, "{req:?} unknown");
        }
    }

    #[test]
    fn never_class_is_never_rewritten_even_with_every_class_enabled() {
        let all = Policy {
            mode: Mode::Enforce,
            scope: Scope::Gfx10,
            classes: Classes {
                coherent: true,
                uncached: true,
            },
        };
        for req in VmMtype::ALL {
            // A doorbell BO: sg, created COHERENT, so amdgpu wrote UC.
            let mut c = call_on(req, BoClass::Never);
            c.flags = with_mtype(VALID_GTT, Mtype::Uc);
            assert_eq!(decide(&all, &c), Decision::Keep(Skip::NeverClass));
        }
    }

    #[test]
    fn classes_opt_in_and_out() {
        let mut p = policy(Mode::Enforce);
        p.classes = Classes::parse(b"uncached").unwrap();
        let c = call_on(VmMtype::Default, BoClass::Uncached);
        assert_eq!(decide(&p, &c), nc(&c));
        let c = call_on(VmMtype::Default, BoClass::Coherent);
        assert_eq!(decide(&p, &c), Decision::Keep(Skip::ClassNotEnabled));
    }

    #[test]
    fn audit_reports_what_enforce_would_do() {
        for req in VmMtype::ALL {
            for bo in BoClass::ALL {
                let c = call_on(req, bo);
                let audit = decide(&policy(Mode::Audit), &c);
                let want = match enforce(&c) {
                    Decision::Rewrite(f) => Decision::WouldRewrite(f),
                    other => other,
                };
                assert_eq!(audit, want, "{req:?} {bo:?}");
            }
        }
    }

    #[test]
    fn an_mtype_nothing_explains_is_left_alone() {
        let mut c = call_on(VmMtype::Wc, BoClass::Memory);
        c.flags = with_mtype(VALID_GTT, Mtype::Cc);
        assert_eq!(enforce(&c), Decision::Keep(Skip::NotRequested));
        let mut c = call_on(VmMtype::Default, BoClass::Coherent);
        c.flags = with_mtype(VALID_GTT, Mtype::Cc);
        assert_eq!(enforce(&c), Decision::Keep(Skip::NotRequested));
    }

    #[test]
    fn enforce_never_touches_prt_or_invalid_entries() {
        let base = call_on(VmMtype::Cc, BoClass::None);
        let prt_req = Call {
            vm_flags: base.vm_flags | VM_PAGE_PRT,
            ..base
        };
        let prt_pte = Call {
            flags: base.flags | PTE_PRT,
            ..base
        };
        let invalid = Call {
            flags: base.flags & !PTE_VALID,
            ..base
        };
        for c in [prt_req, prt_pte, invalid] {
            assert_eq!(enforce(&c), Decision::Keep(Skip::NotAValidPage));
        }
    }

    #[test]
    fn devices_out_of_scope_or_unknown_are_never_modified() {
        let mut c = call_on(VmMtype::Cc, BoClass::None);
        c.device = Some(RX6800);
        assert_eq!(enforce(&c), Decision::Keep(Skip::OutOfScope));
        let gfx10 = Policy {
            scope: Scope::Gfx10,
            ..policy(Mode::Enforce)
        };
        assert!(matches!(decide(&gfx10, &c), Decision::Rewrite(_)));
        c.device = None;
        assert_eq!(decide(&gfx10, &c), Decision::Keep(Skip::DeviceUnknown));
    }
}
