//! The `/dev/rdna1_mtype` ioctl ABI, version 2 (documented in docs/ABI.md).
//!
//! Every argument struct is `#[repr(C)]`, has no implicit padding (asserted below) and starts
//! with `size` (the struct's size as the caller was built with) and `version`
//! ([`ABI_VERSION`]). The module refuses a wrong size or version with `-EINVAL`, so a future
//! version can grow a struct without old callers reading garbage.
//!
//! Version 2 added the VM scope to the policy ([`PolicyArg`] grew), the `uc_request` class,
//! [`Event::vm_kind`] and new class and skip values. Version 1 callers keep working: their
//! policy struct ([`PolicyArgV1`]) is still answered (a v1 `SET_POLICY` keeps what v1 cannot
//! express), and `GET_STATS` / `READ_EVENTS` accept version 1 (their structs did not change).

use crate::bo::BoClass;
use crate::pci::PciAddr;
use crate::policy::{
    Classes, Decision, Mode, Policy, Scope, Skip, VmKind, VmScope, MAX_SCOPE_DEVICES,
};

/// The ABI version this crate describes.
pub const ABI_VERSION: u32 = 2;
/// The oldest version the module still answers.
pub const ABI_VERSION_MIN: u32 = 1;
/// `/dev/<DEVICE_NAME>`.
pub const DEVICE_NAME: &str = "rdna1_mtype";
/// ioctl type byte ('M' is taken by many; 0xE7 is unused in ioctl-number.rst).
pub const IOC_MAGIC: u32 = 0xE7;

/// ioctl number of `GET_VERSION` (`_IOWR(0xE7, 0, VersionArg)`).
pub const NR_GET_VERSION: u32 = 0;
/// ioctl number of `GET_POLICY`.
pub const NR_GET_POLICY: u32 = 1;
/// ioctl number of `SET_POLICY` (root only).
pub const NR_SET_POLICY: u32 = 2;
/// ioctl number of `GET_STATS`.
pub const NR_GET_STATS: u32 = 3;
/// ioctl number of `READ_EVENTS`.
pub const NR_READ_EVENTS: u32 = 4;

const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

/// `_IOC(dir, IOC_MAGIC, nr, size)` in the generic encoding (x86, arm64).
pub const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | (IOC_MAGIC << 8) | nr
}

/// `_IOWR(IOC_MAGIC, nr, T)`.
pub const fn iowr<T>(nr: u32) -> u32 {
    ioc(IOC_READ | IOC_WRITE, nr, core::mem::size_of::<T>())
}

/// `_IOW(IOC_MAGIC, nr, T)`.
pub const fn iow<T>(nr: u32) -> u32 {
    ioc(IOC_WRITE, nr, core::mem::size_of::<T>())
}

/// Request code of `GET_VERSION`.
pub const IOC_GET_VERSION: u32 = iowr::<VersionArg>(NR_GET_VERSION);
/// Request code of `GET_POLICY`.
pub const IOC_GET_POLICY: u32 = iowr::<PolicyArg>(NR_GET_POLICY);
/// Request code of `SET_POLICY`.
pub const IOC_SET_POLICY: u32 = iow::<PolicyArg>(NR_SET_POLICY);
/// Request code of a version 1 caller's `GET_POLICY` (its smaller struct).
pub const IOC_GET_POLICY_V1: u32 = iowr::<PolicyArgV1>(NR_GET_POLICY);
/// Request code of a version 1 caller's `SET_POLICY`.
pub const IOC_SET_POLICY_V1: u32 = iow::<PolicyArgV1>(NR_SET_POLICY);
/// Request code of `GET_STATS`.
pub const IOC_GET_STATS: u32 = iowr::<StatsArg>(NR_GET_STATS);
/// Request code of `READ_EVENTS`.
pub const IOC_READ_EVENTS: u32 = iowr::<EventsArg>(NR_READ_EVENTS);

/// `GET_VERSION`: in `size` (and `version` may be 0: the caller asks which it is); out the
/// rest.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VersionArg {
    /// `size_of::<VersionArg>()`.
    pub size: u32,
    /// Out: [`ABI_VERSION`] of the module.
    pub version: u32,
    /// Out: the module's version, NUL-padded (e.g. `0.1.0`).
    pub module_version: [u8; 24],
}

/// `SCOPE_*` values of [`PolicyArg::scope_kind`].
pub const SCOPE_RDNA1: u32 = 0;
/// Every GMC v10 device.
pub const SCOPE_GFX10: u32 = 1;
/// The listed PCI addresses.
pub const SCOPE_LIST: u32 = 2;
/// [`PolicyArg::classes`] bit: coherent BOs.
pub const CLASS_COHERENT: u32 = 1;
/// [`PolicyArg::classes`] bit: uncached BOs.
pub const CLASS_UNCACHED: u32 = 2;
/// [`PolicyArg::classes`] bit: UC requests on memory BOs (version 2).
pub const CLASS_UC_REQUEST: u32 = 4;

/// `GET_POLICY` (out) and `SET_POLICY` (in): the whole policy, set in one atomic step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolicyArg {
    /// `size_of::<PolicyArg>()`.
    pub size: u32,
    /// [`ABI_VERSION`].
    pub version: u32,
    /// `Mode as u32`: 0 off, 1 audit, 2 enforce.
    pub mode: u32,
    /// `CLASS_*` bits.
    pub classes: u32,
    /// `SCOPE_*`.
    pub scope_kind: u32,
    /// Number of `scope_addrs` used: 1..=8 for `SCOPE_LIST`, 0 otherwise.
    pub scope_len: u32,
    /// PCI addresses, `domain << 16 | bus << 8 | devfn`; unused entries 0.
    pub scope_addrs: [u32; MAX_SCOPE_DEVICES],
    /// `VmScope as u32`: 0 compute, 1 all.
    pub vm_scope: u32,
    /// Reserved, 0.
    pub reserved: u32,
}

/// A version 1 caller's `GET_POLICY` / `SET_POLICY` argument: [`PolicyArg`] without
/// `vm_scope` and `reserved`, classes `CLASS_COHERENT | CLASS_UNCACHED` only.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PolicyArgV1 {
    /// `size_of::<PolicyArgV1>()`.
    pub size: u32,
    /// 1.
    pub version: u32,
    /// As [`PolicyArg::mode`].
    pub mode: u32,
    /// `CLASS_COHERENT | CLASS_UNCACHED` bits.
    pub classes: u32,
    /// As [`PolicyArg::scope_kind`].
    pub scope_kind: u32,
    /// As [`PolicyArg::scope_len`].
    pub scope_len: u32,
    /// As [`PolicyArg::scope_addrs`].
    pub scope_addrs: [u32; MAX_SCOPE_DEVICES],
}

/// Why an argument was refused (the module answers `-EINVAL` for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbiError {
    /// `size` is not the size of the struct this ABI version defines.
    Size,
    /// `version` is not one the struct is answered for.
    Version,
    /// A field holds a value this version does not define.
    Value,
}

/// Checks the common header of an argument struct of type `T` of this version.
pub const fn check_header<T>(size: u32, version: u32) -> Result<(), AbiError> {
    check_header_since::<T>(size, version, ABI_VERSION)
}

/// Checks the common header of a struct of type `T` that versions `since..=ABI_VERSION` share.
pub const fn check_header_since<T>(size: u32, version: u32, since: u32) -> Result<(), AbiError> {
    if size as usize != core::mem::size_of::<T>() {
        return Err(AbiError::Size);
    }
    if version < since || version > ABI_VERSION {
        return Err(AbiError::Version);
    }
    Ok(())
}

fn class_bits(c: &Classes) -> u32 {
    (if c.coherent { CLASS_COHERENT } else { 0 })
        | (if c.uncached { CLASS_UNCACHED } else { 0 })
        | (if c.uc_request { CLASS_UC_REQUEST } else { 0 })
}

/// `(scope_kind, scope_len, scope_addrs)` of `scope`.
fn scope_fields(scope: &Scope) -> (u32, u32, [u32; MAX_SCOPE_DEVICES]) {
    let mut addrs = [0; MAX_SCOPE_DEVICES];
    match scope {
        Scope::Rdna1 => (SCOPE_RDNA1, 0, addrs),
        Scope::Gfx10 => (SCOPE_GFX10, 0, addrs),
        Scope::List { .. } => {
            let mut len = 0;
            for (dst, src) in addrs.iter_mut().zip(scope.addrs()) {
                *dst = src.raw();
                len += 1;
            }
            (SCOPE_LIST, len, addrs)
        }
    }
}

/// The mode, classes (of the `allowed` bits) and scope these fields describe, if valid.
fn policy_fields(
    mode: u32,
    classes: u32,
    allowed: u32,
    scope_kind: u32,
    scope_len: u32,
    scope_addrs: &[u32; MAX_SCOPE_DEVICES],
) -> Result<(Mode, Classes, Scope), AbiError> {
    let mode = Mode::from_u32(mode).ok_or(AbiError::Value)?;
    if classes & !allowed != 0 {
        return Err(AbiError::Value);
    }
    let classes = Classes {
        coherent: classes & CLASS_COHERENT != 0,
        uncached: classes & CLASS_UNCACHED != 0,
        uc_request: classes & CLASS_UC_REQUEST != 0,
    };
    let len = scope_len as usize;
    let used = scope_addrs.get(..len).ok_or(AbiError::Value)?;
    let unused = scope_addrs.get(len..).ok_or(AbiError::Value)?;
    if unused.iter().any(|&a| a != 0) {
        return Err(AbiError::Value);
    }
    let scope = match (scope_kind, len) {
        (SCOPE_RDNA1, 0) => Scope::Rdna1,
        (SCOPE_GFX10, 0) => Scope::Gfx10,
        (SCOPE_LIST, 1..=MAX_SCOPE_DEVICES) => {
            let mut addrs = [PciAddr::default(); MAX_SCOPE_DEVICES];
            for (dst, &src) in addrs.iter_mut().zip(used) {
                *dst = PciAddr::from_raw(src);
            }
            Scope::List {
                addrs,
                len: len as u8,
            }
        }
        _ => return Err(AbiError::Value),
    };
    Ok((mode, classes, scope))
}

impl PolicyArg {
    /// The argument describing `p`.
    pub fn from_policy(p: &Policy) -> PolicyArg {
        let (scope_kind, scope_len, scope_addrs) = scope_fields(&p.scope);
        PolicyArg {
            size: core::mem::size_of::<PolicyArg>() as u32,
            version: ABI_VERSION,
            mode: p.mode as u32,
            classes: class_bits(&p.classes),
            scope_kind,
            scope_len,
            scope_addrs,
            vm_scope: p.vm_scope as u32,
            reserved: 0,
        }
    }

    /// The policy this argument describes, if every field is valid (unused fields zero).
    pub fn to_policy(&self) -> Result<Policy, AbiError> {
        check_header::<PolicyArg>(self.size, self.version)?;
        let all = CLASS_COHERENT | CLASS_UNCACHED | CLASS_UC_REQUEST;
        let (mode, classes, scope) = policy_fields(
            self.mode,
            self.classes,
            all,
            self.scope_kind,
            self.scope_len,
            &self.scope_addrs,
        )?;
        let vm_scope = VmScope::from_u32(self.vm_scope).ok_or(AbiError::Value)?;
        if self.reserved != 0 {
            return Err(AbiError::Value);
        }
        Ok(Policy {
            mode,
            scope,
            classes,
            vm_scope,
        })
    }
}

impl PolicyArgV1 {
    /// What a version 1 caller reads of `p` (it cannot see the VM scope or `uc_request`).
    pub fn from_policy(p: &Policy) -> PolicyArgV1 {
        let (scope_kind, scope_len, scope_addrs) = scope_fields(&p.scope);
        PolicyArgV1 {
            size: core::mem::size_of::<PolicyArgV1>() as u32,
            version: 1,
            mode: p.mode as u32,
            classes: class_bits(&p.classes) & (CLASS_COHERENT | CLASS_UNCACHED),
            scope_kind,
            scope_len,
            scope_addrs,
        }
    }

    /// `current` with what a version 1 caller sets (mode, scope, coherent and uncached): what
    /// version 1 cannot express (VM scope, `uc_request`) keeps its value.
    pub fn apply_to(&self, current: &Policy) -> Result<Policy, AbiError> {
        check_header_since::<PolicyArgV1>(self.size, self.version, 1)?;
        if self.version != 1 {
            return Err(AbiError::Version);
        }
        let (mode, mut classes, scope) = policy_fields(
            self.mode,
            self.classes,
            CLASS_COHERENT | CLASS_UNCACHED,
            self.scope_kind,
            self.scope_len,
            &self.scope_addrs,
        )?;
        classes.uc_request = current.classes.uc_request;
        Ok(Policy {
            mode,
            scope,
            classes,
            vm_scope: current.vm_scope,
        })
    }
}

/// [`StatsArg::kind`]: a device.
pub const STATS_DEVICE: u32 = 0;
/// Calls whose device could not be identified.
pub const STATS_UNKNOWN_DEVICE: u32 = 1;
/// Devices beyond the module's table.
pub const STATS_OTHER_DEVICES: u32 = 2;
/// Capacity of [`StatsArg::skipped`] (this version uses [`Skip::COUNT`] of them).
pub const STATS_SKIP_SLOTS: usize = 12;

/// `GET_STATS`: in `size`, `version`, `index`; out the `index`-th counter set (`-ENOENT`
/// past the last).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsArg {
    /// `size_of::<StatsArg>()`.
    pub size: u32,
    /// [`ABI_VERSION`].
    pub version: u32,
    /// In: which counter set, from 0.
    pub index: u32,
    /// Out: `STATS_*`.
    pub kind: u32,
    /// Out: PCI address (`STATS_DEVICE`).
    pub addr: u32,
    /// Out: PCI vendor id.
    pub vendor: u16,
    /// Out: PCI device id.
    pub device: u16,
    /// Out: how many of `skipped` this module fills ([`Skip::COUNT`]).
    pub skip_count: u32,
    /// Reserved, 0.
    pub reserved: u32,
    /// Out: calls seen.
    pub calls: u64,
    /// Out: rewritten to NC, indexed by the MTYPE before (NC, WC, CC, UC).
    pub rewritten: [u64; 4],
    /// Out: audit mode's would-rewrite, indexed by the MTYPE before.
    pub would_rewrite: [u64; 4],
    /// Out: left alone, indexed by `Skip as u32`.
    pub skipped: [u64; STATS_SKIP_SLOTS],
}

/// [`Event::action`]: left alone ([`Event::skip`] says why).
pub const ACTION_KEEP: u8 = 0;
/// Rewritten to NC.
pub const ACTION_REWRITE: u8 = 1;
/// Audit: enforce would have rewritten it.
pub const ACTION_WOULD_REWRITE: u8 = 2;

/// One decision of the hook.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// Sequence number, from 0 since the module loaded.
    pub seq: u64,
    /// CLOCK_MONOTONIC in ns, at tick resolution (CLOCK_MONOTONIC_COARSE).
    pub time_ns: u64,
    /// Thread id of the task that made the mapping, or the process id of the VM's owner
    /// ([`Event::origin`] says which).
    pub pid: u32,
    /// PCI address (valid if `dev_known`).
    pub dev_addr: u32,
    /// PCI vendor id.
    pub vendor: u16,
    /// PCI device id.
    pub device: u16,
    /// The mapping request (`AMDGPU_VM_*`); its MTYPE field is what was requested.
    pub vm_flags: u32,
    /// The name of whoever `pid` is, NUL-padded.
    pub comm: [u8; 16],
    /// MTYPE field amdgpu computed.
    pub before: u8,
    /// MTYPE field written to the PTE.
    pub written: u8,
    /// `BoClass as u8`.
    pub class: u8,
    /// `ACTION_*`.
    pub action: u8,
    /// `Skip as u8` when `action` is `ACTION_KEEP`.
    pub skip: u8,
    /// 1 if the device was identified.
    pub dev_known: u8,
    /// `VmKind as u8` (version 2; 0 from a version 1 module).
    pub vm_kind: u8,
    /// `ORIGIN_*`: whose `pid` and `comm` these are (was reserved, 0: a module that predates it
    /// reports every event as [`ORIGIN_TASK`]).
    pub origin: u8,
}

/// [`Event::origin`]: a thread of the process making the mapping ran the update; `pid` is
/// its thread id, `comm` its name.
pub const ORIGIN_TASK: u8 = 0;
/// A kernel thread ran the update for the process owning the VM (KFD's restore worker after
/// an eviction, SVM workers): `pid` is that process's id and `comm` its name, as amdgpu
/// recorded them for the VM (`amdgpu_vm.task_info`).
pub const ORIGIN_VM_OWNER: u8 = 1;
/// A kernel thread ran the update and the VM's owner could not be read: `pid` and `comm`
/// are the kernel thread's.
pub const ORIGIN_KERNEL_THREAD: u8 = 2;

impl Event {
    /// `action` and `skip` for a decision.
    pub const fn action_of(d: Decision) -> (u8, u8) {
        match d {
            Decision::Rewrite(_) => (ACTION_REWRITE, 0),
            Decision::WouldRewrite(_) => (ACTION_WOULD_REWRITE, 0),
            Decision::Keep(why) => (ACTION_KEEP, why as u8),
        }
    }

    /// The kind of VM, if valid.
    pub const fn vm(&self) -> Option<VmKind> {
        VmKind::from_u32(self.vm_kind as u32)
    }

    /// The class, if valid.
    pub const fn bo_class(&self) -> Option<BoClass> {
        BoClass::from_u32(self.class as u32)
    }

    /// The skip reason of a kept call.
    pub fn skip_reason(&self) -> Option<Skip> {
        if self.action != ACTION_KEEP {
            return None;
        }
        Skip::ALL.get(self.skip as usize).copied()
    }
}

/// `READ_EVENTS`: copies up to `capacity` events with `seq >= cursor` to `buf`, oldest first.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventsArg {
    /// `size_of::<EventsArg>()`.
    pub size: u32,
    /// [`ABI_VERSION`].
    pub version: u32,
    /// In: room at `buf`, in events (at most [`MAX_EVENTS_PER_READ`]).
    pub capacity: u32,
    /// Out: events written to `buf`.
    pub count: u32,
    /// In: the first sequence number wanted (0 for all). Out: the one to ask for next.
    pub cursor: u64,
    /// Out: events since `cursor` that were overwritten before this read (lost).
    pub dropped: u64,
    /// In: user address of an array of `capacity` [`Event`]s.
    pub buf: u64,
}

/// Most events one `READ_EVENTS` copies.
pub const MAX_EVENTS_PER_READ: u32 = 256;

// No implicit padding anywhere: the sizes are the sums of the fields.
const _: () = assert!(core::mem::size_of::<VersionArg>() == 32);
const _: () = assert!(core::mem::size_of::<PolicyArg>() == 64);
const _: () = assert!(core::mem::size_of::<PolicyArgV1>() == 56);
const _: () = assert!(core::mem::size_of::<StatsArg>() == 200);
const _: () = assert!(core::mem::size_of::<Event>() == 56);
const _: () = assert!(core::mem::size_of::<EventsArg>() == 40);
const _: () = assert!(Skip::COUNT <= STATS_SKIP_SLOTS);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_codes_are_the_linux_encoding() {
        // _IOWR(0xE7, 1, 64 bytes) = 3 << 30 | 64 << 16 | 0xE7 << 8 | 1
        assert_eq!(IOC_GET_POLICY, 0xc040_e701);
        assert_eq!(IOC_SET_POLICY, 0x4040_e702);
        // Version 1's, still answered.
        assert_eq!(IOC_GET_POLICY_V1, 0xc038_e701);
        assert_eq!(IOC_SET_POLICY_V1, 0x4038_e702);
        assert_eq!(IOC_GET_VERSION, 0xc020_e700);
        // As docs/ABI.md lists them.
        assert_eq!(IOC_GET_STATS, 0xc0c8_e703);
        assert_eq!(IOC_READ_EVENTS, 0xc028_e704);
    }

    #[test]
    fn policy_round_trips() {
        for text in ["rdna1", "gfx10", "0000:03:00.0,0001:0a:00.0"] {
            for mode in Mode::ALL {
                let p = Policy {
                    mode,
                    scope: Scope::parse(text.as_bytes()).unwrap(),
                    classes: Classes {
                        coherent: mode != Mode::Off,
                        uncached: mode == Mode::Audit,
                        uc_request: mode == Mode::Enforce,
                    },
                    vm_scope: if mode == Mode::Audit {
                        VmScope::All
                    } else {
                        VmScope::Compute
                    },
                };
                assert_eq!(PolicyArg::from_policy(&p).to_policy(), Ok(p));
            }
        }
    }

    #[test]
    fn version_1_callers_change_only_what_they_know() {
        let current = Policy {
            mode: Mode::Audit,
            scope: Scope::Gfx10,
            classes: Classes::parse(b"coherent,uc_request").unwrap(),
            vm_scope: VmScope::All,
        };
        let v1 = PolicyArgV1::from_policy(&current);
        assert_eq!((v1.size, v1.version, v1.classes), (56, 1, CLASS_COHERENT));
        let mut set = v1;
        set.mode = Mode::Enforce as u32;
        set.classes = CLASS_UNCACHED;
        let p = set.apply_to(&current).unwrap();
        assert_eq!(p.mode, Mode::Enforce);
        assert_eq!(p.classes.to_string(), "uncached,uc_request");
        assert_eq!(p.vm_scope, VmScope::All);
        set.classes = CLASS_UC_REQUEST;
        assert_eq!(
            set.apply_to(&current),
            Err(AbiError::Value),
            "not a v1 class"
        );
        set.classes = 0;
        set.version = 2;
        assert_eq!(set.apply_to(&current), Err(AbiError::Version));
    }

    #[test]
    fn invalid_policy_args_are_refused() {
        let good = PolicyArg::from_policy(&Policy::DEFAULT);
        let bad = |f: fn(&mut PolicyArg), want: AbiError| {
            let mut a = good;
            f(&mut a);
            assert_eq!(a.to_policy(), Err(want), "{a:?}");
        };
        bad(|a| a.size = 56, AbiError::Size);
        bad(|a| a.size = 0, AbiError::Size);
        bad(|a| a.version = 1, AbiError::Version);
        bad(|a| a.version = 3, AbiError::Version);
        bad(|a| a.mode = 3, AbiError::Value);
        bad(|a| a.classes = 8, AbiError::Value);
        bad(|a| a.vm_scope = 2, AbiError::Value);
        bad(|a| a.reserved = 1, AbiError::Value);
        bad(|a| a.scope_kind = 3, AbiError::Value);
        bad(|a| a.scope_len = 1, AbiError::Value);
        bad(|a| a.scope_addrs[7] = 1, AbiError::Value);
        bad(
            |a| {
                a.scope_kind = SCOPE_LIST;
                a.scope_len = 0;
            },
            AbiError::Value,
        );
        bad(
            |a| {
                a.scope_kind = SCOPE_LIST;
                a.scope_len = 9;
            },
            AbiError::Value,
        );
        bad(
            |a| {
                a.scope_kind = SCOPE_LIST;
                a.scope_len = u32::MAX;
            },
            AbiError::Value,
        );
    }
}
