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

/// The optional classes enforce rewrites, beyond a requested WC or CC on memory BOs and on
/// mappings without a BO (always in). [`BoClass::Never`], [`BoClass::Kernel`],
/// [`BoClass::CoherentSg`] and [`BoClass::Unknown`] can never be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classes {
    /// COHERENT / EXT_COHERENT memory BOs, whose UC amdgpu forces, and coherent SVM ranges,
    /// whose UC KFD requests (on by default).
    pub coherent: bool,
    /// UNCACHED memory BOs, whose UC amdgpu forces (off by default).
    pub uncached: bool,
    /// Mappings of memory BOs that *request* UC (`AMDGPU_VM_MTYPE_UC`): Mesa's GL2_BYPASS
    /// buffers (off by default: whoever asks for UC means it). A UC request without a BO is a
    /// coherent KFD SVM range and follows `coherent`.
    pub uc_request: bool,
}

impl Classes {
    /// The default: coherent memory BOs only.
    pub const DEFAULT: Classes = Classes {
        coherent: true,
        uncached: false,
        uc_request: false,
    };

    /// No optional class.
    pub const NONE: Classes = Classes {
        coherent: false,
        uncached: false,
        uc_request: false,
    };

    /// The names, in the order they print.
    pub const NAMES: [&'static str; 3] = ["coherent", "uncached", "uc_request"];

    fn slots(&mut self) -> [&mut bool; 3] {
        [&mut self.coherent, &mut self.uncached, &mut self.uc_request]
    }

    fn flags(&self) -> [bool; 3] {
        [self.coherent, self.uncached, self.uc_request]
    }

    /// Parses a comma-separated list of `coherent`, `uncached`, `uc_request` (any order, each
    /// once) or `none`; one trailing newline allowed.
    pub fn parse(input: &[u8]) -> Option<Classes> {
        let s = strip_newline(input);
        let mut c = Classes::NONE;
        if s == b"none" {
            return Some(c);
        }
        for part in s.split(|&b| b == b',') {
            let i = Classes::NAMES.iter().position(|n| n.as_bytes() == part)?;
            let slot = c.slots().into_iter().nth(i)?;
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
        let mut first = true;
        for (on, name) in self.flags().into_iter().zip(Classes::NAMES) {
            if on {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

named_enum! {
    /// Which GPU VMs the policy applies to.
    pub enum VmScope: u32 {
        /// Compute VMs only (`amdgpu_vm.is_compute_context`: KFD, so ROCm/HIP): the default.
        /// Graphics clients (the compositor, games, video) are never changed.
        Compute = 0 => "compute",
        /// Every VM, graphics included (opt-in).
        All = 1 => "all",
    }
}

named_enum! {
    /// What kind of VM a mapping is in, as the hook read it.
    pub enum VmKind: u32 {
        /// A DRM client's VM (graphics): `is_compute_context` false.
        Graphics = 0 => "graphics",
        /// A VM KFD acquired (ROCm/HIP): `is_compute_context` true.
        Compute = 1 => "compute",
        /// Not known: no VM was passed, or the module has no `amdgpu_vm` layout to read it.
        Unknown = 2 => "unknown",
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
    /// Which VMs it applies to.
    pub vm_scope: VmScope,
}

impl Policy {
    /// The policy of a freshly loaded module: off, RDNA1 only, coherent BOs included, compute
    /// VMs only.
    pub const DEFAULT: Policy = Policy {
        mode: Mode::Off,
        scope: Scope::Rdna1,
        classes: Classes::DEFAULT,
        vm_scope: VmScope::Compute,
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
        /// A BO that cannot be classified: no `amdgpu_bo` layout is set, or this BO's fields
        /// break an invariant (this call only). It might be a doorbell, so it is not touched.
        LayoutUnknown = 5 => "layout_unknown",
        /// A BO that must stay as amdgpu maps it ([`BoClass::Never`]: sg, doorbell, on-chip;
        /// [`BoClass::Kernel`]: amdgpu's own BOs).
        NeverClass = 6 => "never_class",
        /// A coherent or uncached BO, or a UC request, whose class the policy does not include.
        ClassNotEnabled = 7 => "class_not_enabled",
        /// The MTYPE is not what the request or the BO's class explains: something this policy
        /// does not know set it, so it is left alone.
        NotRequested = 8 => "not_requested",
        /// A graphics VM under VM scope `compute`.
        GraphicsVm = 9 => "graphics_vm",
        /// A VM of unknown kind under VM scope `compute`: it might be a graphics client's.
        VmUnknown = 10 => "vm_unknown",
        /// An sg BO created coherent or uncached ([`BoClass::CoherentSg`]): a peer GPU's view
        /// of coherent memory cannot be told from a KFD MMIO/doorbell BO, so it is not covered.
        CoherentSg = 11 => "coherent_sg",
    }
}

/// One hooked call, as the hook sees it after the original function returned, without the
/// kind of its VM and the class of its BO: [`decide`] asks for those only when the decision
/// depends on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// The mapping request (`AMDGPU_VM_PAGE_*`, `AMDGPU_VM_MTYPE_*`).
    pub vm_flags: u32,
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

/// Decides what to do with one call under `policy`. `vm` gives the kind of VM the mapping is
/// in; it is called at most once, and never when the mode is off, the device is out of scope
/// or unknown, or the VM scope is `all`. `bo` gives the class of the call's BO
/// ([`BoClass::None`] for KFD SVM ranges and PRT); it is called at most once, and never in
/// those cases nor when the VM is out of the VM scope. The module reads nothing the decision
/// does not need.
pub fn decide(
    policy: &Policy,
    call: &Call,
    vm: impl FnOnce() -> VmKind,
    bo: impl FnOnce() -> BoClass,
) -> Decision {
    if matches!(policy.mode, Mode::Off) {
        return Decision::Keep(Skip::ModeOff);
    }
    let Some(dev) = call.device else {
        return Decision::Keep(Skip::DeviceUnknown);
    };
    if !policy.scope.contains(&dev) {
        return Decision::Keep(Skip::OutOfScope);
    }
    if policy.vm_scope == VmScope::Compute {
        match vm() {
            VmKind::Compute => {}
            VmKind::Graphics => return Decision::Keep(Skip::GraphicsVm),
            VmKind::Unknown => return Decision::Keep(Skip::VmUnknown),
        }
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
    let uc = matches!(now, Mtype::Uc);
    match bo() {
        BoClass::Unknown => return Decision::Keep(Skip::LayoutUnknown),
        BoClass::Never | BoClass::Kernel => return Decision::Keep(Skip::NeverClass),
        BoClass::CoherentSg => return Decision::Keep(Skip::CoherentSg),
        BoClass::None | BoClass::Memory if !requested => return Decision::Keep(Skip::NotRequested),
        // No BO is a KFD SVM range: on gfx10 KFD requests UC exactly for coherent ranges
        // (kfd_svm.c, svm_range_get_pte_flags), so they follow the coherent class.
        BoClass::None if uc && !policy.classes.coherent => {
            return Decision::Keep(Skip::ClassNotEnabled)
        }
        BoClass::Memory if uc && !policy.classes.uc_request => {
            return Decision::Keep(Skip::ClassNotEnabled)
        }
        BoClass::None | BoClass::Memory => {}
        BoClass::Coherent | BoClass::Uncached if !uc => return Decision::Keep(Skip::NotRequested),
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

    /// A call with the class of its BO, as the old eager `decide` took it.
    #[derive(Clone, Copy, Debug)]
    struct C {
        vm_flags: u32,
        bo: BoClass,
        flags: u64,
        device: Option<DeviceId>,
        vm: VmKind,
    }

    fn head(c: &C) -> Call {
        Call {
            vm_flags: c.vm_flags,
            flags: c.flags,
            device: c.device,
        }
    }

    /// `super::decide` with the call's VM kind and class.
    fn decide(p: &Policy, c: &C) -> Decision {
        super::decide(p, &head(c), || c.vm, || c.bo)
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

    /// A call in a compute VM on the RX 5700 XT.
    fn call_on(req: VmMtype, bo: BoClass) -> C {
        C {
            vm_flags: req.to_vm_flags(),
            bo,
            flags: computed(req, bo),
            device: Some(RX5700XT),
            vm: VmKind::Compute,
        }
    }

    fn enforce(c: &C) -> Decision {
        decide(&policy(Mode::Enforce), c)
    }

    fn nc(c: &C) -> Decision {
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
                } else if matches!(req.gfx10_pte_mtype(), Mtype::Uc) && bo == BoClass::Memory {
                    // Whoever asks for UC on a BO (Mesa's GL2_BYPASS) keeps it by default.
                    Decision::Keep(Skip::ClassNotEnabled)
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
            for (bo, skip) in [
                (BoClass::Never, Skip::NeverClass),
                (BoClass::Kernel, Skip::NeverClass),
                (BoClass::CoherentSg, Skip::CoherentSg),
            ] {
                let c = call_on(req, bo);
                let want = if asks_nc {
                    Decision::Keep(Skip::AlreadyNc)
                } else {
                    Decision::Keep(skip)
                };
                assert_eq!(enforce(&c), want, "{req:?} {bo:?}");
            }
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
                uc_request: true,
            },
            vm_scope: VmScope::All,
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
        let prt_req = C {
            vm_flags: base.vm_flags | VM_PAGE_PRT,
            ..base
        };
        let prt_pte = C {
            flags: base.flags | PTE_PRT,
            ..base
        };
        let invalid = C {
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

    #[test]
    fn uc_requests_are_kept_unless_their_class_is_on() {
        let c = call_on(VmMtype::Uc, BoClass::Memory);
        assert_eq!(enforce(&c), Decision::Keep(Skip::ClassNotEnabled));
        let mut p = policy(Mode::Enforce);
        p.classes.uc_request = true;
        assert_eq!(decide(&p, &c), nc(&c));
        // A coherent SVM range (no BO): the coherent class, on by default.
        let svm = call_on(VmMtype::Uc, BoClass::None);
        assert_eq!(enforce(&svm), nc(&svm));
        p.classes = Classes::parse(b"uc_request").unwrap();
        assert_eq!(decide(&p, &svm), Decision::Keep(Skip::ClassNotEnabled));
    }

    #[test]
    fn vm_scope_compute_leaves_graphics_and_unknown_vms_alone() {
        let mut c = call_on(VmMtype::Cc, BoClass::Memory);
        assert_eq!(enforce(&c), nc(&c));
        c.vm = VmKind::Graphics;
        assert_eq!(enforce(&c), Decision::Keep(Skip::GraphicsVm));
        c.vm = VmKind::Unknown;
        assert_eq!(enforce(&c), Decision::Keep(Skip::VmUnknown));
        let mut all = policy(Mode::Enforce);
        all.vm_scope = VmScope::All;
        for vm in VmKind::ALL {
            c.vm = vm;
            assert_eq!(decide(&all, &c), nc(&c), "{vm:?}");
        }
    }

    /// The module reads no VM and no BO when the decision does not depend on it.
    #[test]
    fn the_vm_and_the_bo_are_read_only_when_the_decision_needs_them() {
        // (decision, VM reads, BO reads)
        let reads = |p: &Policy, c: &C| {
            let (mut vm, mut bo) = (0, 0);
            let d = super::decide(
                p,
                &head(c),
                || {
                    vm += 1;
                    c.vm
                },
                || {
                    bo += 1;
                    c.bo
                },
            );
            (d, vm, bo)
        };
        let c = call_on(VmMtype::Cc, BoClass::Unknown);
        assert_eq!(
            reads(&policy(Mode::Off), &c),
            (Decision::Keep(Skip::ModeOff), 0, 0)
        );
        let mut out = c;
        out.device = Some(RX6800);
        assert_eq!(
            reads(&policy(Mode::Enforce), &out),
            (Decision::Keep(Skip::OutOfScope), 0, 0)
        );
        let mut unknown = c;
        unknown.device = None;
        assert_eq!(
            reads(&policy(Mode::Enforce), &unknown),
            (Decision::Keep(Skip::DeviceUnknown), 0, 0)
        );
        let mut gfx = c;
        gfx.vm = VmKind::Graphics;
        assert_eq!(
            reads(&policy(Mode::Enforce), &gfx),
            (Decision::Keep(Skip::GraphicsVm), 1, 0)
        );
        let mut all = policy(Mode::Enforce);
        all.vm_scope = VmScope::All;
        assert_eq!(
            reads(&all, &gfx),
            (Decision::Keep(Skip::LayoutUnknown), 0, 1)
        );
        assert_eq!(
            reads(&policy(Mode::Enforce), &c),
            (Decision::Keep(Skip::LayoutUnknown), 1, 1)
        );
    }

    #[test]
    fn classes_parse_all_names_in_any_order() {
        let c = Classes::parse(b"uc_request,coherent\n").unwrap();
        assert_eq!(c.to_string(), "coherent,uc_request");
        assert_eq!(Classes::parse(b"uc_request,uc_request"), None);
        assert_eq!(Classes::NONE.to_string(), "none");
    }
}
