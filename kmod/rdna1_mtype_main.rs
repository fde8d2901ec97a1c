// SPDX-License-Identifier: GPL-2.0

//! rdna1_mtype: forces MTYPE_NC in the GPU page-table entries of RDNA1 VM mappings.
//!
//! amdgpu computes the PTE flags of every GFX10 user-VM mapping in `gmc_v10_0_get_vm_pte`.
//! `hook.c` probes that function; after it returns, [`rdna1_mtype_on_pte`] applies the policy
//! of the shared crate to the flags it wrote. The policy and PTE definitions are the very files
//! `rdna1ctl` is built from (`../shared/src`), so the two can never disagree.

use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;
use kernel::sync::atomic::{Atomic, Relaxed};

#[path = "../shared/src/devices.rs"]
#[allow(dead_code)]
/// RDNA1 PCI ids (shared with rdna1ctl).
pub mod devices;
#[path = "../shared/src/policy.rs"]
#[allow(dead_code)]
/// The MTYPE policy (shared with rdna1ctl).
pub mod policy;
#[path = "../shared/src/pte.rs"]
#[allow(dead_code)]
/// GFX10 PTE bits (shared with rdna1ctl).
pub mod pte;

use policy::{Decision, Mode};

module! {
    type: Rdna1Mtype,
    name: "rdna1_mtype",
    authors: ["rdna1-mtype developers"],
    description: "Forces MTYPE_NC in RDNA1 (GFX10) GPU page-table entries",
    license: "GPL",
}

/// The mode in force, as `Mode as u32`. One word, so every call sees an old or a new mode,
/// never a mix.
static MODE: Atomic<u32> = Atomic::new(Mode::Off as u32);

fn mode() -> Mode {
    // Only `Mode as u32` values are ever stored; anything else would read as off.
    Mode::from_u32(MODE.load(Relaxed)).unwrap_or(Mode::Off)
}

unsafe extern "C" {
    fn rdna1_mtype_hook_init() -> c_int;
    fn rdna1_mtype_hook_exit();
}

struct Rdna1Mtype;

impl kernel::Module for Rdna1Mtype {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: called once, from module init, before anything else of hook.c is used
        // (module parameters only touch MODE).
        kernel::error::to_result(unsafe { rdna1_mtype_hook_init() })?;
        let name = mode().name();
        pr_info!("loaded, mode {}\n", name);
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

/// Whether the probe needs its exit handler for this call (not in mode off).
#[unsafe(no_mangle)]
extern "C" fn rdna1_mtype_wants_exit() -> bool {
    mode() != Mode::Off
}

/// Applies the policy to the PTE flags `gmc_v10_0_get_vm_pte` just computed.
///
/// # Safety
///
/// `flags` is the function's `u64 *flags` argument, called from its return probe: null or
/// valid for reads and writes, and not accessed concurrently by anyone else.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_on_pte(vm_flags: u32, has_bo: bool, flags: *mut u64) {
    if flags.is_null() {
        return;
    }
    // SAFETY: per this function's contract; every amdgpu caller passes its own local u64,
    // live until the hooked function has returned to it, which has not happened yet.
    let computed = unsafe { flags.read() };
    if let Decision::Rewrite(new) = policy::decide(mode(), vm_flags, has_bo, computed) {
        // SAFETY: as above.
        unsafe { flags.write(new) };
    }
}

/// `mode` parameter write (load-time argument or sysfs); `-EINVAL` leaves the mode as it was.
///
/// # Safety
///
/// `val` points to `len` readable bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_mode_store(val: *const c_char, len: usize) -> c_int {
    if val.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let input = unsafe { core::slice::from_raw_parts(val.cast::<u8>(), len) };
    match Mode::parse(input) {
        Some(m) => {
            let old = mode();
            MODE.store(m as u32, Relaxed);
            if old != m {
                let (from, to) = (old.name(), m.name());
                pr_info!("mode {} -> {}\n", from, to);
            }
            0
        }
        None => EINVAL.to_errno(),
    }
}

/// `mode` parameter read: the mode name and a newline.
///
/// # Safety
///
/// `buf` points to `len` writable bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_mode_show(buf: *mut c_char, len: usize) -> c_int {
    let name = mode().name().as_bytes();
    let n = name.len() + 1;
    if buf.is_null() || n > len {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract, and `n <= len`.
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
    out[..name.len()].copy_from_slice(name);
    out[name.len()] = b'\n';
    // A mode name is a few bytes: always fits.
    n as c_int
}
