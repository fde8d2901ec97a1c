// SPDX-License-Identifier: GPL-2.0

//! hook.c's arming glue, seen from Rust: the arm lock as a proof type, the fprobe's
//! registration, the module notifier, and what amdgpu says of itself (its `struct module`
//! while it notifies, else its sysfs files). Safe wrappers only; `arming.rs` decides.

use core::ffi::c_void;
use core::marker::PhantomData;
use core::ptr::NonNull;

use kernel::prelude::*;

mod c {
    use kernel::ffi::{c_char, c_int, c_void};

    unsafe extern "C" {
        pub(super) static rdna1_kernel_version: u32;
        pub(super) static rdna1_kernel_release: [u8; 65];
        pub(super) static rdna1_kernel_min: u32;
        pub(super) static rdna1_kernel_end: u32;
        pub(super) static rdna1_amdgpu_builtin: u8;
        pub(super) static rdna1_built_btf_id: u64;
        pub(super) fn rdna1_mtype_arm_lock();
        pub(super) fn rdna1_mtype_arm_unlock();
        pub(super) fn rdna1_notifier_register() -> c_int;
        pub(super) fn rdna1_notifier_unregister();
        pub(super) fn rdna1_probe_register_by_name() -> c_int;
        pub(super) fn rdna1_probe_register_at(addr: usize) -> c_int;
        pub(super) fn rdna1_probe_sites(addrs: *mut usize, max: u32) -> u32;
        pub(super) fn rdna1_probe_site_name(addr: usize, buf: *mut c_char, len: usize);
        pub(super) fn rdna1_probe_enable();
        pub(super) fn rdna1_probe_unregister();
        pub(super) fn rdna1_module_oot(module: *const c_void) -> bool;
        pub(super) fn rdna1_module_btf(module: *const c_void, id: *mut u64) -> u32;
        pub(super) fn rdna1_live_btf_id(id: *mut u64) -> c_int;
        pub(super) fn rdna1_amdgpu_sysfs_read(attr: u32, buf: *mut c_char, len: usize) -> c_int;
        pub(super) fn rdna1_sysfs_modules_reachable() -> bool;
        pub(super) fn rdna1_set_arm_error(text: *const c_char, len: usize);
    }
}

/// Room for a symbol's "name [module]": `KSYM_SYMBOL_LEN` (hook.c writes nothing to a shorter
/// buffer) is under 1024 with every configuration (`KSYM_NAME_LEN` 512, `MODULE_NAME_LEN` 56).
pub(crate) const SYM_LEN: usize = 1024;

/// What this build was made for (hook.c's constants).
pub(crate) struct Build {
    /// `LINUX_VERSION_CODE`.
    pub(crate) version: u32,
    /// The first release it loads on, and the first it does not.
    pub(crate) min: u32,
    pub(crate) end: u32,
    /// `CONFIG_DRM_AMDGPU=y`: amdgpu is part of vmlinux, never a module that notifies.
    pub(crate) amdgpu_builtin: bool,
    /// The id of the amdgpu BTF the DKMS build checked the contract on; 0 if none (a build
    /// with one needs CONFIG_DEBUG_INFO_BTF_MODULES: hook.c's #error).
    pub(crate) btf_id: u64,
}

/// The constants of this build.
pub(crate) fn build() -> Build {
    // SAFETY: constants defined in hook.c.
    unsafe {
        Build {
            version: c::rdna1_kernel_version,
            min: c::rdna1_kernel_min,
            end: c::rdna1_kernel_end,
            amdgpu_builtin: c::rdna1_amdgpu_builtin != 0,
            btf_id: c::rdna1_built_btf_id,
        }
    }
}

/// `UTS_RELEASE` of the kernel this was built for (the one it runs on: vermagic).
pub(crate) fn release() -> &'static str {
    // SAFETY: a constant defined in hook.c, NUL-padded.
    let bytes: &'static [u8; 65] = unsafe { &c::rdna1_kernel_release };
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    core::str::from_utf8(&bytes[..len]).unwrap_or("?")
}

/// Proof that the current task holds `rdna1_arm_lock` (hook.c), under which the arming state
/// lives and the fprobe is registered and unregistered.
///
/// # Invariants
///
/// While an `ArmLocked` exists, the current task holds `rdna1_arm_lock`, taken by this value
/// (so it runs in process context and may sleep), and no other `ArmLocked` exists.
pub(crate) struct ArmLocked {
    /// The lock belongs to this task: the proof must not move to another.
    _not_send: PhantomData<*mut ()>,
}

impl ArmLocked {
    /// Takes the lock (may sleep). Never called with it held: it is not recursive, and no
    /// caller takes it twice (module init, exit and the notifier each take it once).
    pub(crate) fn lock() -> ArmLocked {
        // SAFETY: a mutex_lock() in process context; released by `Drop`.
        unsafe { c::rdna1_mtype_arm_lock() };
        // INVARIANT: just taken by this task; the mutex admits one holder at a time.
        ArmLocked {
            _not_send: PhantomData,
        }
    }

    /// Sets the "arm_error" parameter's text (cut at 255 bytes).
    pub(crate) fn set_error(&mut self, text: &[u8]) {
        // SAFETY: `text` is valid for reads of its length; the lock is held (type invariant).
        unsafe { c::rdna1_set_arm_error(text.as_ptr().cast(), text.len()) };
    }

    /// Registers the probe, soft-disabled, on every traceable function named
    /// `gmc_v10_0_get_vm_pte`. `ENOENT`: there is none.
    pub(crate) fn register_by_name(&mut self) -> Result {
        // SAFETY: the lock is held (type invariant), which hook.c asserts; fprobe serialises
        // registrations itself and refuses one of a registered probe (-EEXIST).
        kernel::error::to_result(unsafe { c::rdna1_probe_register_by_name() })
    }

    /// Registers the probe, soft-disabled, on `addr`, a site [`Self::sites`] gave.
    pub(crate) fn register_at(&mut self, addr: usize) -> Result {
        // SAFETY: as in `register_by_name`; fprobe checks `addr` is an ftrace location.
        kernel::error::to_result(unsafe { c::rdna1_probe_register_at(addr) })
    }

    /// The sites of the registered probe: how many, and the first `addrs.len()` of them.
    pub(crate) fn sites(&mut self, addrs: &mut [usize]) -> usize {
        let max = u32::try_from(addrs.len()).unwrap_or(u32::MAX);
        // SAFETY: `addrs` is valid for `max` writes; the lock is held (type invariant).
        unsafe { c::rdna1_probe_sites(addrs.as_mut_ptr(), max) as usize }
    }

    /// Enables the registered probe: its handlers run from now on.
    pub(crate) fn enable(&mut self) {
        // SAFETY: the lock is held (type invariant); enable_fprobe() clears a flag, harmless
        // on a probe that is not registered (arming.rs enables only the one it registered).
        unsafe { c::rdna1_probe_enable() };
    }

    /// Unregisters the probe and waits until no handler runs.
    pub(crate) fn unregister(&mut self) {
        // SAFETY: the lock is held (type invariant), in process context (unregister_fprobe()
        // waits for RCU); on a probe that is not registered fprobe returns -EINVAL, harmless.
        unsafe { c::rdna1_probe_unregister() };
    }
}

impl Drop for ArmLocked {
    fn drop(&mut self) {
        // SAFETY: taken by `lock` (type invariant), on this task (not `Send`).
        unsafe { c::rdna1_mtype_arm_unlock() };
    }
}

/// "name [module]" of the function at `addr` (its name alone if in vmlinux), in `buf`; empty if
/// `buf` is shorter than `KSYM_SYMBOL_LEN`.
pub(crate) fn site_name(addr: usize, buf: &mut [u8; SYM_LEN]) -> &[u8] {
    // SAFETY: `buf` is valid for `SYM_LEN` writes; rdna1_probe_site_name() writes a
    // NUL-terminated string of at most that many bytes (or none to a buffer that is too short,
    // then a NUL), and sprint_symbol_no_offset() looks the address up under RCU.
    unsafe { c::rdna1_probe_site_name(addr, buf.as_mut_ptr().cast(), SYM_LEN) };
    let len = buf.iter().position(|&b| b == 0).unwrap_or(0);
    &buf[..len]
}

/// What a module's `struct module` says of its BTF.
pub(crate) enum ModuleBtf {
    /// Its `.BTF`'s id.
    Id(u64),
    /// It has no `.BTF`.
    None,
    /// Built out of tree: its BTF has a distilled base, which the kernel rewrites.
    Distilled,
}

/// The `struct module` of the amdgpu notifying.
///
/// # Invariants
///
/// `ptr` is the `struct module` a module notification passed, live while `'a` lasts (the
/// notification's call).
pub(crate) struct Module<'a> {
    ptr: NonNull<c_void>,
    _call: PhantomData<&'a ()>,
}

impl Module<'_> {
    /// # Safety
    ///
    /// `ptr` is the `struct module` passed to a module notifier, and the returned value does
    /// not outlive that call.
    pub(crate) unsafe fn from_notifier(ptr: NonNull<c_void>) -> Self {
        // INVARIANT: per this function's contract.
        Module {
            ptr,
            _call: PhantomData,
        }
    }

    /// Whether it was built out of tree (taint O, set before its COMING notification).
    pub(crate) fn out_of_tree(&self) -> bool {
        // SAFETY: a live `struct module` (type invariant).
        unsafe { c::rdna1_module_oot(self.ptr.as_ptr()) }
    }

    /// Its BTF.
    ///
    /// # Safety
    ///
    /// Called from its COMING notification: load_module() frees the copy `btf_data` points
    /// into before its init runs, hence before LIVE.
    pub(crate) unsafe fn btf(&self) -> ModuleBtf {
        let mut id = 0u64;
        // SAFETY: a live `struct module` (type invariant) whose `btf_data` is valid (this
        // function's contract); `id` is a valid local.
        match unsafe { c::rdna1_module_btf(self.ptr.as_ptr(), &mut id) } {
            0 => ModuleBtf::Id(id),
            2 => ModuleBtf::Distilled,
            _ => ModuleBtf::None,
        }
    }
}

/// The id of the live amdgpu's BTF (`/sys/kernel/btf/amdgpu`), or the errno.
pub(crate) fn live_btf_id(_lock: &mut ArmLocked) -> core::result::Result<u64, i32> {
    let mut id = 0u64;
    // SAFETY: `id` is a valid local; a file read in process context (the lock proves it).
    let ret = unsafe { c::rdna1_live_btf_id(&mut id) };
    if ret < 0 {
        Err(ret)
    } else {
        Ok(id)
    }
}

/// The files of `/sys/module/amdgpu` arming reads (hook.h's `enum rdna1_amdgpu_attr`).
#[derive(Clone, Copy)]
pub(crate) enum Attr {
    InitState = 0,
    Taint = 1,
}

/// Reads `/sys/module/amdgpu/<attr>` into `buf`: the bytes read, or the errno.
pub(crate) fn amdgpu_attr<'b>(
    _lock: &mut ArmLocked,
    attr: Attr,
    buf: &'b mut [u8; 32],
) -> core::result::Result<&'b [u8], i32> {
    // SAFETY: `buf` is valid for 32 writes; a file read in process context (the lock proves
    // it).
    let ret = unsafe { c::rdna1_amdgpu_sysfs_read(attr as u32, buf.as_mut_ptr().cast(), 32) };
    match usize::try_from(ret) {
        Ok(n) if n < buf.len() => Ok(&buf[..n]),
        _ => Err(if ret < 0 { ret } else { EIO.to_errno() }),
    }
}

/// Whether `/sys/module` resolves for the current task (sysfs mounted in its namespace).
pub(crate) fn sysfs_modules_reachable(_lock: &mut ArmLocked) -> bool {
    // SAFETY: a path lookup in process context (the lock proves it).
    unsafe { c::rdna1_sysfs_modules_reachable() }
}

/// hook.c's module notifier, registered: it calls `rdna1_mtype_on_amdgpu` for every amdgpu
/// notification until dropped.
///
/// # Invariants
///
/// `rdna1_notifier_register()` succeeded and `rdna1_notifier_unregister()` was not called.
pub(crate) struct Notifier(());

impl Notifier {
    /// Registers the notifier; waits for a notification in progress to end.
    pub(crate) fn register() -> Result<Notifier> {
        // SAFETY: registers a static notifier_block once (the only caller is module init).
        kernel::error::to_result(unsafe { c::rdna1_notifier_register() })?;
        // INVARIANT: just registered.
        Ok(Notifier(()))
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant); after this returns no notification runs.
        unsafe { c::rdna1_notifier_unregister() };
    }
}
