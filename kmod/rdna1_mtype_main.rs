// SPDX-License-Identifier: GPL-2.0

//! rdna1_mtype: forces MTYPE_NC in the GPU page-table entries of RDNA1 VM mappings.
//!
//! amdgpu computes the PTE flags of every GFX10 user-VM mapping in `gmc_v10_0_get_vm_pte`.
//! `hook.c` probes that function; after it returns, [`rdna1_mtype_on_pte`] applies the policy
//! of the shared crate to the flags it wrote. The policy and PTE definitions are the very files
//! `rdna1ctl` is built from (`../shared/src`), so the two can never disagree.

use core::cell::UnsafeCell;
use core::fmt::Write;

use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::sync::atomic::{Acquire, Atomic, Relaxed, Release};

#[path = "../shared/src/devices.rs"]
#[allow(dead_code)]
/// RDNA1 PCI ids (shared with rdna1ctl).
pub mod devices;
#[path = "../shared/src/pci.rs"]
#[allow(dead_code)]
/// PCI addresses (shared with rdna1ctl).
pub mod pci;
#[path = "../shared/src/policy.rs"]
#[allow(dead_code)]
/// The MTYPE policy (shared with rdna1ctl).
pub mod policy;
#[path = "../shared/src/pte.rs"]
#[allow(dead_code)]
/// GFX10 PTE bits (shared with rdna1ctl).
pub mod pte;

mod stats;

use pci::{DeviceId, PciAddr, SliceWriter};
use policy::{Call, Decision, Mode, Policy, Scope};

module! {
    type: Rdna1Mtype,
    name: "rdna1_mtype",
    authors: ["rdna1-mtype developers"],
    description: "Forces MTYPE_NC in RDNA1 (GFX10) GPU page-table entries",
    license: "GPL",
}

/// `struct rdna1_pte_call` of hook.h.
#[repr(C)]
struct PteCall {
    flags: *mut u64,
    vm_flags: u32,
    dev_addr: u32,
    dev_vendor: u16,
    dev_device: u16,
    has_bo: u8,
    dev_known: u8,
}
const _: () = assert!(core::mem::size_of::<PteCall>() == 24);

/// `enum rdna1_policy_field` of hook.h.
const FIELD_MODE: u32 = 0;
const FIELD_SCOPE: u32 = 1;

/// Two policy slots; `ACTIVE` names the one in force. A writer fills the other slot, publishes
/// it with one release store and waits an RCU grace period before it returns, so the next
/// writer never overwrites a slot a reader may still be copying. Every call therefore sees one
/// whole policy, old or new.
struct PolicySlots([UnsafeCell<Policy>; 2]);

// SAFETY: slots are written only by `publish` (callers hold rdna1_policy_lock, so one writer at
// a time) and only the inactive slot, which no reader uses once a grace period has passed.
unsafe impl Sync for PolicySlots {}

static SLOTS: PolicySlots = PolicySlots([
    UnsafeCell::new(Policy::DEFAULT),
    UnsafeCell::new(Policy::DEFAULT),
]);
static ACTIVE: Atomic<u32> = Atomic::new(0);

/// The policy in force. Called from the probe handler (an RCU-sched read-side section) or with
/// rdna1_policy_lock held.
fn current_policy() -> Policy {
    let i = (ACTIVE.load(Acquire) & 1) as usize;
    // SAFETY: slot `i` is active: no writer touches it until a grace period after it stops
    // being active, and our caller is inside a read-side section or holds the writer lock.
    unsafe { *SLOTS.0[i].get() }
}

/// Makes `new` the policy in force, all at once.
///
/// # Safety
///
/// The caller holds rdna1_policy_lock and may sleep.
unsafe fn publish(new: Policy) {
    let next = ((ACTIVE.load(Relaxed) & 1) ^ 1) as usize;
    // SAFETY: `next` is inactive and the previous writer waited a grace period after making
    // it inactive, so no reader holds it; the lock excludes other writers.
    unsafe { *SLOTS.0[next].get() = new };
    ACTIVE.store(next as u32, Release);
    // SAFETY: may sleep, which the caller allows. After it, no reader still uses the old slot.
    unsafe { kernel::bindings::synchronize_rcu() };
}

unsafe extern "C" {
    fn rdna1_mtype_hook_init() -> c_int;
    fn rdna1_mtype_hook_exit();
}

struct Rdna1Mtype;

impl kernel::Module for Rdna1Mtype {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: called once, from module init, before anything else of hook.c is used
        // (module parameters only touch the policy and the stats).
        kernel::error::to_result(unsafe { rdna1_mtype_hook_init() })?;
        let p = current_policy();
        pr_info!(
            "loaded, mode {}, scope {}\n",
            p.mode.name(),
            format_args!("{}", p.scope)
        );
        Ok(Rdna1Mtype)
    }
}

impl Drop for Rdna1Mtype {
    fn drop(&mut self) {
        // SAFETY: init succeeded (this value exists), so the hook state is initialised;
        // this runs once, at module exit. It waits until no probe handler runs.
        unsafe { rdna1_mtype_hook_exit() };
        pr_info!("unloaded: nothing armed\n");
    }
}

/// Applies the policy to the PTE flags `gmc_v10_0_get_vm_pte` just computed, and counts.
///
/// # Safety
///
/// `call` is valid; `call.flags` is the function's `u64 *flags` argument, called from its
/// return probe: null or valid for reads and writes, and not accessed concurrently.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_on_pte(call: *const PteCall) {
    // SAFETY: per this function's contract.
    let Some(c) = (unsafe { call.as_ref() }) else {
        return;
    };
    if c.flags.is_null() {
        return;
    }
    // SAFETY: per this function's contract; every amdgpu caller passes its own local u64,
    // live until the hooked function has returned to it, which has not happened yet.
    let computed = unsafe { c.flags.read() };
    let device = (c.dev_known != 0).then(|| DeviceId {
        addr: PciAddr::from_raw(c.dev_addr),
        vendor: c.dev_vendor,
        device: c.dev_device,
    });
    let call = Call {
        vm_flags: c.vm_flags,
        has_bo: c.has_bo != 0,
        flags: computed,
        device,
    };
    let decision = policy::decide(&current_policy(), &call);
    if let Decision::Rewrite(new) = decision {
        // SAFETY: as above.
        unsafe { c.flags.write(new) };
    }
    stats::record(device.as_ref(), pte::mtype_bits(computed), decision);
}

/// Borrows a C string parameter value.
///
/// # Safety
///
/// `val` is null or points to `len` readable bytes that outlive the returned slice.
unsafe fn input<'a>(val: *const c_char, len: usize) -> Option<&'a [u8]> {
    if val.is_null() {
        return None;
    }
    // SAFETY: per this function's contract.
    Some(unsafe { core::slice::from_raw_parts(val.cast::<u8>(), len) })
}

/// Parameter write of a policy field (load-time argument or sysfs). An invalid value returns
/// `-EINVAL` and leaves the policy as it was.
///
/// # Safety
///
/// `val` points to `len` readable bytes; the caller holds rdna1_policy_lock and may sleep.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_policy_store(field: u32, val: *const c_char, len: usize) -> c_int {
    // SAFETY: per this function's contract.
    let Some(input) = (unsafe { input(val, len) }) else {
        return EINVAL.to_errno();
    };
    let old = current_policy();
    let mut new = old;
    match field {
        FIELD_MODE => match Mode::parse(input) {
            Some(m) => new.mode = m,
            None => return EINVAL.to_errno(),
        },
        FIELD_SCOPE => match Scope::parse(input) {
            Some(s) => new.scope = s,
            None => return EINVAL.to_errno(),
        },
        _ => return EINVAL.to_errno(),
    }
    if new != old {
        // SAFETY: the caller holds rdna1_policy_lock and may sleep.
        unsafe { publish(new) };
        pr_info!(
            "policy: mode {} scope {} (was mode {} scope {})\n",
            new.mode.name(),
            format_args!("{}", new.scope),
            old.mode.name(),
            format_args!("{}", old.scope)
        );
    }
    0
}

/// Writes `f` plus a newline into the C buffer `buf` of `len` bytes; returns the length or
/// `-EINVAL` if it does not fit.
///
/// # Safety
///
/// `buf` is null or points to `len` writable bytes.
unsafe fn show(
    buf: *mut c_char,
    len: usize,
    f: impl FnOnce(&mut SliceWriter<'_>) -> core::fmt::Result,
) -> c_int {
    if buf.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    let mut w = SliceWriter::new(out);
    if f(&mut w).is_err() {
        return EINVAL.to_errno();
    }
    // A sysfs page is 4 KiB: the length always fits a c_int.
    c_int::try_from(w.len()).unwrap_or(0)
}

/// Parameter read of a policy field: its value and a newline.
///
/// # Safety
///
/// `buf` points to `len` writable bytes; the caller holds rdna1_policy_lock.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_policy_show(field: u32, buf: *mut c_char, len: usize) -> c_int {
    let p = current_policy();
    // SAFETY: per this function's contract.
    unsafe {
        show(buf, len, |w| match field {
            FIELD_MODE => writeln!(w, "{}", p.mode.name()),
            FIELD_SCOPE => writeln!(w, "{}", p.scope),
            _ => Err(core::fmt::Error),
        })
    }
}

/// Parameter read of the per-device counters.
///
/// # Safety
///
/// `buf` points to `len` writable bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_stats_show(buf: *mut c_char, len: usize) -> c_int {
    // SAFETY: per this function's contract.
    unsafe { show(buf, len, stats::write_all) }
}
