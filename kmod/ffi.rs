// SPDX-License-Identifier: GPL-2.0

//! hook.h, seen from Rust: every symbol the Rust half imports from hook.c, the types the two
//! halves share, and safe wrappers around them.
//!
//! hook.h is the interface. `PteCall` and `Field` mirror it by hand (bindgen runs on the
//! kernel's headers, not a module's), so both sides assert the same sizes and offsets and a
//! change on one side alone fails the build. What Rust exports to hook.c is declared in hook.h
//! and defined next to its logic: `probe.rs` (the probe handlers, the BTF id) and `params.rs`
//! (the parameters).

use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::{offset_of, size_of};

use crate::bo::BoLayout;
use crate::policy::VmKind;

/// `struct rdna1_pte_call` of hook.h: one hooked call of `gmc_v10_0_get_vm_pte` (its arguments
/// and device, filled at entry; `*flags` is computed when it returns).
#[repr(C)]
pub(crate) struct PteCall {
    /// The function's `u64 *flags` argument.
    pub(crate) flags: *mut u64,
    /// Its `struct amdgpu_bo *bo` argument, may be null.
    pub(crate) bo: *const u8,
    /// Its `struct amdgpu_vm *vm` argument, may be null: read only through [`vm_kind`].
    pub(crate) vm: *const c_void,
    /// `AMDGPU_VM_PAGE_*` | `AMDGPU_VM_MTYPE_*`.
    pub(crate) vm_flags: u32,
    /// PCI `domain << 16 | bus << 8 | devfn`.
    pub(crate) dev_addr: u32,
    pub(crate) dev_vendor: u16,
    pub(crate) dev_device: u16,
    /// Non-zero if the `dev_*` fields are valid (adev passed hook.c's layout check).
    pub(crate) dev_known: u8,
}

// The same numbers as hook.h's static_asserts.
const _: () = {
    assert!(size_of::<PteCall>() == 40);
    assert!(offset_of!(PteCall, flags) == 0);
    assert!(offset_of!(PteCall, bo) == 8);
    assert!(offset_of!(PteCall, vm) == 16);
    assert!(offset_of!(PteCall, vm_flags) == 24);
    assert!(offset_of!(PteCall, dev_addr) == 28);
    assert!(offset_of!(PteCall, dev_vendor) == 32);
    assert!(offset_of!(PteCall, dev_device) == 34);
    assert!(offset_of!(PteCall, dev_known) == 36);
};

// hook.h's RDNA1_VM_* are `VmKind`'s values.
const _: () = {
    assert!(crate::policy::VmKind::Graphics as u32 == 0);
    assert!(crate::policy::VmKind::Compute as u32 == 1);
    assert!(crate::policy::VmKind::Unknown as u32 == 2);
};

/// `enum rdna1_bad_bo` of hook.h: which invariant a BO broke (hook.c words it in the log).
#[derive(Clone, Copy)]
#[repr(u32)]
pub(crate) enum BadBo {
    TtmType = 0,
    Flags = 1,
    NoDomain = 2,
    Domain = 3,
    /// A field the layout places at an address that cannot be read (past the BO's end).
    Unreadable = 4,
}

/// `enum rdna1_policy_field` of hook.h: which parameter a store or show is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Mode,
    Scope,
    Classes,
    BoLayout,
    /// Read-only.
    BoLayoutStatus,
    /// Read-only.
    BoLayoutSource,
    VmScope,
}

impl Field {
    /// The field for hook.h's value (`RDNA1_FIELD_*`).
    pub(crate) fn from_raw(v: u32) -> Option<Field> {
        Some(match v {
            0 => Field::Mode,
            1 => Field::Scope,
            2 => Field::Classes,
            3 => Field::BoLayout,
            4 => Field::BoLayoutStatus,
            5 => Field::BoLayoutSource,
            6 => Field::VmScope,
            _ => return None,
        })
    }
}

mod c {
    use kernel::ffi::{c_int, c_void};

    unsafe extern "C" {
        pub(super) static rdna1_ttm_bo_size: u32;
        pub(super) static rdna1_ttm_bo_type_offset: u32;
        pub(super) static rdna1_builtin_bo_layout: [u32; 4];
        pub(super) static rdna1_mtype_version: [u8; 24];
        pub(super) fn rdna1_mtype_policy_lock();
        pub(super) fn rdna1_mtype_policy_unlock();
        pub(super) fn rdna1_mtype_report_bad_bo(why: u32);
        pub(super) fn rdna1_mtype_vm_kind(vm: *const c_void) -> u8;
        pub(super) fn rdna1_mtype_vm_owner(
            vm: *const c_void,
            tgid: *mut u32,
            name: *mut u8,
        ) -> c_int;
    }
}

/// `sizeof(struct ttm_buffer_object)`, from the kernel's public TTM header.
pub(crate) fn ttm_bo_size() -> u32 {
    // SAFETY: a constant defined in hook.c.
    unsafe { c::rdna1_ttm_bo_size }
}

/// `offsetof(struct ttm_buffer_object, type)`; the field is an `enum ttm_bo_type` (4 bytes).
pub(crate) fn ttm_bo_type_offset() -> u32 {
    // SAFETY: a constant defined in hook.c.
    unsafe { c::rdna1_ttm_bo_type_offset }
}

/// The built-in `struct amdgpu_bo` layout (amdgpu_bo_layout.h, or the target amdgpu's BTF),
/// not yet checked.
pub(crate) fn builtin_bo_layout() -> BoLayout {
    // SAFETY: a constant defined in hook.c.
    let b = unsafe { c::rdna1_builtin_bo_layout };
    BoLayout {
        size: b[0],
        preferred_domains: b[1],
        tbo: b[2],
        flags: b[3],
    }
}

/// The module version, NUL-padded.
pub(crate) fn version() -> [u8; 24] {
    // SAFETY: a constant defined in hook.c.
    unsafe { c::rdna1_mtype_version }
}

/// The module version, as text.
pub(crate) fn version_str() -> &'static str {
    // SAFETY: a constant defined in hook.c, NUL-padded.
    let v: &'static [u8; 24] = unsafe { &c::rdna1_mtype_version };
    let len = v.iter().position(|&b| b == 0).unwrap_or(v.len());
    core::str::from_utf8(&v[..len]).unwrap_or("?")
}

/// Logs, rate-limited, that a BO broke an invariant (`why`) and is unknown for this call.
/// Any context but NMI (the probe handler calls it).
pub(crate) fn report_bad_bo(why: BadBo) {
    // SAFETY: a pr_warn_ratelimited() of a constant string picked by `why`.
    unsafe { c::rdna1_mtype_report_bad_bo(why as u32) };
}

/// The kind of the VM at `vm`, read by hook.c. Any context.
///
/// # Safety
///
/// `vm` is null or a live `struct amdgpu_vm` for the call: the hooked function's argument,
/// while its call lasts.
pub(crate) unsafe fn vm_kind(vm: *const c_void) -> VmKind {
    // SAFETY: per this function's contract; hook.c reads one byte at the offset of
    // is_compute_context the target's BTF or the checked copy gives (within the struct), and
    // returns an `enum rdna1_vm_kind`.
    let k = unsafe { c::rdna1_mtype_vm_kind(vm) };
    VmKind::from_u32(u32::from(k)).unwrap_or(VmKind::Unknown)
}

/// The process owning the VM at `vm` (null or a live `struct amdgpu_vm`): its id and name
/// (NUL-terminated), as amdgpu recorded them, read by hook.c without faulting. Any context but
/// NMI.
pub(crate) fn vm_owner(vm: *const c_void) -> Option<(u32, [u8; 16])> {
    let (mut tgid, mut name) = (0u32, [0u8; 16]);
    // SAFETY: the out pointers are valid locals of the sizes hook.h gives; hook.c reads the
    // VM and its task_info with copy_from_kernel_nofault at offsets from BTF or the checked
    // copy, so any `vm` is sound.
    let ret = unsafe { c::rdna1_mtype_vm_owner(vm, &mut tgid, name.as_mut_ptr()) };
    (ret == 0).then_some((tgid, name))
}

/// CLOCK_MONOTONIC at tick resolution (CLOCK_MONOTONIC_COARSE), for events: no clocksource
/// read, which on a VM or a machine without a usable TSC costs microseconds per call.
pub(crate) fn coarse_monotonic_ns() -> u64 {
    let mut ts = kernel::bindings::timespec64::default();
    // SAFETY: `ts` is a valid local; ktime_get_coarse_ts64 reads the timekeeper under its
    // seqcount, in any context but NMI.
    unsafe { kernel::bindings::ktime_get_coarse_ts64(&mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Proof that the current task holds `rdna1_policy_lock` (hook.c), the mutex every policy
/// writer holds: C holds it around parameter writes and reads, Rust around the rest.
///
/// # Invariants
///
/// While a `PolicyLocked` exists, the current task holds `rdna1_policy_lock` (so it runs in
/// process context and may sleep). If `owned`, this value took the lock and releases it when
/// dropped.
pub(crate) struct PolicyLocked {
    owned: bool,
    /// The lock belongs to this task: the proof must not move to another.
    _not_send: PhantomData<*mut ()>,
}

impl PolicyLocked {
    /// Takes the lock (may sleep).
    pub(crate) fn lock() -> PolicyLocked {
        // SAFETY: a mutex_lock(); released by `Drop`.
        unsafe { c::rdna1_mtype_policy_lock() };
        // INVARIANT: just taken, by this task; released by `Drop`.
        PolicyLocked {
            owned: true,
            _not_send: PhantomData,
        }
    }

    /// The proof for a lock C took.
    ///
    /// # Safety
    ///
    /// The current task holds `rdna1_policy_lock` for as long as the returned value lives,
    /// and no other `PolicyLocked` of this task lives meanwhile (the state's `current_locked`
    /// and `publish` rely on one proof per holder).
    pub(crate) unsafe fn assume_held() -> PolicyLocked {
        // INVARIANT: per this function's contract; not released by `Drop`.
        PolicyLocked {
            owned: false,
            _not_send: PhantomData,
        }
    }
}

impl Drop for PolicyLocked {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: taken by `lock` (type invariant), on this task (not `Send`).
            unsafe { c::rdna1_mtype_policy_unlock() };
        }
    }
}
