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
use kernel::miscdevice::{MiscDeviceOptions, MiscDeviceRegistration};
use kernel::prelude::*;
use kernel::sync::atomic::{Acquire, Atomic, Relaxed, Release};

#[path = "../shared/src/abi.rs"]
#[allow(dead_code)]
/// The /dev/rdna1_mtype ioctl ABI (shared with rdna1ctl).
pub mod abi;
#[path = "../shared/src/bo.rs"]
#[allow(dead_code)]
/// BO classes and the `amdgpu_bo` layout (shared with rdna1ctl).
pub mod bo;
#[path = "../shared/src/btf_id.rs"]
/// The id of an amdgpu build's BTF (shared with rdna1ctl).
pub mod btf_id;
#[path = "../shared/src/devices.rs"]
#[allow(dead_code)]
/// RDNA1 PCI ids (shared with rdna1ctl).
pub mod devices;
#[path = "../shared/src/named.rs"]
/// The macro that defines the named enums (shared with rdna1ctl).
pub mod named;
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

mod control;
mod events;
mod stats;

use bo::{BoClass, BoFields, BoLayout};
use pci::{DeviceId, PciAddr, SliceWriter};
use policy::{Call, Classes, Decision, Mode, Policy, Scope};

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
    bo: *const u8,
    vm_flags: u32,
    dev_addr: u32,
    dev_vendor: u16,
    dev_device: u16,
    dev_known: u8,
}
const _: () = assert!(core::mem::size_of::<PteCall>() == 32);

/// `enum rdna1_policy_field` of hook.h.
const FIELD_MODE: u32 = 0;
const FIELD_SCOPE: u32 = 1;
const FIELD_CLASSES: u32 = 2;
const FIELD_BO_LAYOUT: u32 = 3;
const FIELD_BO_LAYOUT_STATUS: u32 = 4;
const FIELD_BO_LAYOUT_SOURCE: u32 = 5;

unsafe extern "C" {
    static rdna1_ttm_bo_size: u32;
    static rdna1_ttm_bo_type_offset: u32;
    static rdna1_builtin_bo_layout: [u32; 4];
    static rdna1_mtype_version: [u8; 24];
    fn rdna1_mtype_policy_lock();
    fn rdna1_mtype_policy_unlock();
}

/// The module version, NUL-padded.
pub(crate) fn version() -> [u8; 24] {
    // SAFETY: a constant defined in hook.c.
    unsafe { rdna1_mtype_version }
}

/// Everything the hook reads per call, published as one unit.
#[derive(Clone, Copy, PartialEq, Eq)]
struct State {
    policy: Policy,
    /// Checked with [`BoLayout::check`] before it was published.
    bo_layout: Option<BoLayout>,
    bo_layout_source: LayoutSource,
}

/// Where the layout in force came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LayoutSource {
    /// Nothing written yet (only before init picks the built-in one).
    Unset,
    /// The module's own copy of `struct amdgpu_bo` (amdgpu_bo_layout.h).
    Builtin,
    /// Written by root (`bo_layout=` parameter), `none` included.
    Set,
}

impl LayoutSource {
    fn name(self) -> &'static str {
        match self {
            LayoutSource::Unset => "none",
            LayoutSource::Builtin => "builtin",
            LayoutSource::Set => "set",
        }
    }
}

/// The built-in layout, if it passes [`BoLayout::check`] on this kernel.
fn builtin_layout() -> Option<BoLayout> {
    // SAFETY: constants defined in hook.c.
    let (b, ttm) = unsafe { (rdna1_builtin_bo_layout, rdna1_ttm_bo_size) };
    let l = BoLayout {
        size: b[0],
        preferred_domains: b[1],
        tbo: b[2],
        flags: b[3],
    };
    l.check(ttm).ok().map(|()| l)
}

/// Picks the built-in layout unless a `bo_layout=` parameter was given at load.
///
/// # Safety
///
/// Called once from module init, before the hook is armed, with rdna1_policy_lock held.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_layout_init() {
    let old = current();
    if old.bo_layout_source != LayoutSource::Unset {
        return;
    }
    let Some(l) = builtin_layout() else {
        pr_warn!("the built-in amdgpu_bo layout fails its checks on this kernel: BOs are not classified until root sets one (rdna1ctl layout --apply)\n");
        return;
    };
    let new = State {
        bo_layout: Some(l),
        bo_layout_source: LayoutSource::Builtin,
        ..old
    };
    // SAFETY: the caller holds rdna1_policy_lock and may sleep.
    unsafe { publish(new) };
    pr_info!("amdgpu_bo layout: built-in {}\n", format_args!("{}", l));
}

/// Set (once per layout) when a BO read through the layout broke an invariant; cleared when a
/// new layout is published. While set, no BO is classified.
static LAYOUT_FAILED: Atomic<u32> = Atomic::new(0);

/// Two state slots; `ACTIVE` names the one in force. A writer fills the other slot, publishes
/// it with one release store and waits an RCU grace period before it returns, so the next
/// writer never overwrites a slot a reader may still be copying. Every call therefore sees one
/// whole policy, old or new.
struct PolicySlots([UnsafeCell<State>; 2]);

// SAFETY: slots are written only by `publish` (callers hold rdna1_policy_lock, so one writer at
// a time) and only the inactive slot, which no reader uses once a grace period has passed.
unsafe impl Sync for PolicySlots {}

const INITIAL: State = State {
    policy: Policy::DEFAULT,
    bo_layout: None,
    bo_layout_source: LayoutSource::Unset,
};
static SLOTS: PolicySlots = PolicySlots([UnsafeCell::new(INITIAL), UnsafeCell::new(INITIAL)]);
static ACTIVE: Atomic<u32> = Atomic::new(0);

/// The state in force. Called from the probe handler (an RCU-sched read-side section) or with
/// rdna1_policy_lock held.
pub(crate) fn current() -> State {
    let i = (ACTIVE.load(Acquire) & 1) as usize;
    // SAFETY: slot `i` is active: no writer touches it until a grace period after it stops
    // being active, and our caller is inside a read-side section or holds the writer lock.
    unsafe { *SLOTS.0[i].get() }
}

/// Makes `new` the state in force, all at once.
///
/// # Safety
///
/// The caller holds rdna1_policy_lock and may sleep.
unsafe fn publish(new: State) {
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

/// The armed hook (hook.c); dropping it disarms and waits until no handler runs.
struct Hook;

impl Hook {
    fn arm() -> Result<Hook> {
        // SAFETY: called once, from module init, before the hook can run.
        unsafe { events::init() };
        // SAFETY: called once, from module init; undone by `Drop` (and only if it succeeded).
        kernel::error::to_result(unsafe { rdna1_mtype_hook_init() })?;
        Ok(Hook)
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        // SAFETY: `arm` succeeded (this value exists); runs once, at module exit or when
        // registering the device failed. It waits until no probe handler runs.
        unsafe { rdna1_mtype_hook_exit() };
        pr_info!("unloaded: nothing armed\n");
    }
}

#[pin_data]
struct Rdna1Mtype {
    /// Dropped first: no new decision once unloading starts.
    _hook: Hook,
    #[pin]
    _control: MiscDeviceRegistration<control::Control>,
}

impl kernel::InPlaceModule for Rdna1Mtype {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            _hook: Hook::arm()?,
            // c_str!, not c"..": 6.18's MiscDeviceOptions.name is kernel::str::CStr, which only
            // became core::ffi::CStr in 6.19 (docs/KERNELS.md, "Rust API floor").
            _control <- MiscDeviceRegistration::register(MiscDeviceOptions {
                name: kernel::c_str!("rdna1_mtype")
            }),
        })
        .pin_chain(|_| {
            let p = current().policy;
            pr_info!(
                "loaded, mode {}, scope {}, classes {}\n",
                p.mode.name(),
                format_args!("{}", p.scope),
                format_args!("{}", p.classes)
            );
            Ok(())
        })
    }
}

/// Sets the whole policy (`SET_POLICY`), keeping the layout.
pub(crate) fn set_policy(policy: Policy) {
    // SAFETY: process context (an ioctl), may sleep; released below on every path.
    unsafe { rdna1_mtype_policy_lock() };
    let old = current();
    if old.policy != policy {
        // SAFETY: we hold rdna1_policy_lock and may sleep.
        unsafe { publish(State { policy, ..old }) };
        log_policy(&policy, &old.policy);
    }
    // SAFETY: taken above.
    unsafe { rdna1_mtype_policy_unlock() };
}

fn log_policy(n: &Policy, o: &Policy) {
    pr_info!(
        "policy: mode {} scope {} classes {} (was mode {} scope {} classes {})\n",
        n.mode.name(),
        format_args!("{}", n.scope),
        format_args!("{}", n.classes),
        o.mode.name(),
        format_args!("{}", o.scope),
        format_args!("{}", o.classes)
    );
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
    let state = current();
    let call = Call {
        vm_flags: c.vm_flags,
        // SAFETY: `c.bo` is the function's `bo` argument, per this function's contract.
        bo: unsafe { bo_class(c.bo, state.bo_layout) },
        flags: computed,
        device,
    };
    let decision = policy::decide(&state.policy, &call);
    if let Decision::Rewrite(new) = decision {
        // SAFETY: as above.
        unsafe { c.flags.write(new) };
    }
    let before = pte::mtype_bits(computed);
    stats::record(device.as_ref(), before, decision);
    if !matches!(
        decision,
        Decision::Keep(policy::Skip::ModeOff | policy::Skip::AlreadyNc | policy::Skip::OutOfScope)
    ) {
        log_event(c, &call, before, decision);
    }
}

/// Appends one decision to the event ring.
fn log_event(c: &PteCall, call: &Call, before: u8, decision: Decision) {
    let written = match decision {
        Decision::Rewrite(f) => pte::mtype_bits(f),
        _ => before,
    };
    let (action, skip) = abi::Event::action_of(decision);
    let task = kernel::task::Task::current_raw();
    // SAFETY: `current` is valid for the whole call; pid and comm are plain fields (comm may
    // change concurrently: a torn name is harmless, as with get_task_comm).
    let (pid, comm) = unsafe { ((*task).pid, (*task).comm) };
    let ev = abi::Event {
        seq: 0,
        // SAFETY: ktime_get() may be called from any context but NMI; this is a probe on a
        // process-context function.
        time_ns: unsafe { kernel::bindings::ktime_get() } as u64,
        pid: pid as u32,
        dev_addr: c.dev_addr,
        vendor: c.dev_vendor,
        device: c.dev_device,
        vm_flags: c.vm_flags,
        comm,
        before,
        written,
        class: call.bo as u8,
        action,
        skip,
        dev_known: c.dev_known,
        reserved: [0; 2],
    };
    events::push(ev);
}

/// The class of the BO at `bo`, read through `layout`.
///
/// # Safety
///
/// `bo` is null or points to a live `struct amdgpu_bo` (the hooked function's argument, which
/// its caller keeps alive for the call).
unsafe fn bo_class(bo: *const u8, layout: Option<BoLayout>) -> BoClass {
    if bo.is_null() {
        return BoClass::None;
    }
    let Some(l) = layout else {
        return BoClass::Unknown;
    };
    if LAYOUT_FAILED.load(Relaxed) != 0 {
        return BoClass::Unknown;
    }
    // SAFETY: a constant defined in hook.c.
    let type_offset = unsafe { rdna1_ttm_bo_type_offset } as usize;
    // SAFETY: `bo` points to a live amdgpu_bo (contract). `l` passed `BoLayout::check`: each
    // field lies within `l.size` bytes, aligned for its type; `l.size` is sizeof(struct
    // amdgpu_bo) as BTF or root stated it. Volatile: amdgpu owns these fields (READ_ONCE).
    let fields = unsafe {
        BoFields {
            preferred_domains: bo
                .add(l.preferred_domains as usize)
                .cast::<u32>()
                .read_volatile(),
            flags: bo.add(l.flags as usize).cast::<u64>().read_volatile(),
            ttm_type: bo
                .add(l.tbo as usize + type_offset)
                .cast::<u32>()
                .read_volatile(),
        }
    };
    match bo::classify(fields) {
        Some(class) => class,
        None => {
            if LAYOUT_FAILED.cmpxchg(0, 1, Relaxed).is_ok() {
                pr_warn!(
                    "amdgpu_bo layout failed validation (domains {:#x} flags {:#x} type {}): BOs are no longer classified or modified\n",
                    fields.preferred_domains,
                    fields.flags,
                    fields.ttm_type
                );
            }
            BoClass::Unknown
        }
    }
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
    let old = current();
    let mut new = old;
    let p = &mut new.policy;
    let parsed = match field {
        FIELD_MODE => Mode::parse(input).map(|m| p.mode = m),
        FIELD_SCOPE => Scope::parse(input).map(|s| p.scope = s),
        FIELD_CLASSES => Classes::parse(input).map(|c| p.classes = c),
        FIELD_BO_LAYOUT => parse_layout(input).map(|(l, src)| {
            new.bo_layout = l;
            new.bo_layout_source = src;
        }),
        _ => None,
    };
    if parsed.is_none() {
        return EINVAL.to_errno();
    }
    if new != old {
        // SAFETY: the caller holds rdna1_policy_lock and may sleep.
        unsafe { publish(new) };
    }
    // Writing a layout, even the same one again, re-arms its validation.
    if field == FIELD_BO_LAYOUT {
        // publish() waited for every reader of an older layout, so none can set the flag for
        // it after this store.
        LAYOUT_FAILED.store(0, Relaxed);
        match new.bo_layout {
            Some(l) => pr_info!("amdgpu_bo layout set: {}\n", format_args!("{}", l)),
            None => pr_info!("amdgpu_bo layout cleared: BOs are not classified\n"),
        }
    }
    if new.policy != old.policy {
        log_policy(&new.policy, &old.policy);
    }
    0
}

/// `none`, `builtin`, or a layout that passes [`BoLayout::check`].
fn parse_layout(input: &[u8]) -> Option<(Option<BoLayout>, LayoutSource)> {
    let word = input.strip_suffix(b"\n").unwrap_or(input);
    match word {
        b"none" => return Some((None, LayoutSource::Set)),
        b"builtin" => return builtin_layout().map(|l| (Some(l), LayoutSource::Builtin)),
        _ => {}
    }
    let l = BoLayout::parse(input)?;
    // SAFETY: a constant defined in hook.c.
    l.check(unsafe { rdna1_ttm_bo_size }).ok()?;
    Some((Some(l), LayoutSource::Set))
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
    let s = current();
    let p = &s.policy;
    // SAFETY: per this function's contract.
    unsafe {
        show(buf, len, |w| match field {
            FIELD_MODE => writeln!(w, "{}", p.mode.name()),
            FIELD_SCOPE => writeln!(w, "{}", p.scope),
            FIELD_CLASSES => writeln!(w, "{}", p.classes),
            FIELD_BO_LAYOUT => match s.bo_layout {
                Some(l) => writeln!(w, "{l}"),
                None => writeln!(w, "none"),
            },
            FIELD_BO_LAYOUT_SOURCE => writeln!(w, "{}", s.bo_layout_source.name()),
            FIELD_BO_LAYOUT_STATUS => match (s.bo_layout, LAYOUT_FAILED.load(Relaxed)) {
                (None, _) => writeln!(w, "unset"),
                (Some(_), 0) => writeln!(w, "ok"),
                (Some(_), _) => writeln!(w, "invalid"),
            },
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

/// The id of a module's `.BTF` section, for hook.c's check that amdgpu is the build the DKMS
/// build checked (one definition: `shared/src/btf_id.rs`).
///
/// # Safety
///
/// `data` points to `len` readable bytes that stay valid for the call.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_btf_id(data: *const u8, len: usize) -> u64 {
    // SAFETY: per this function's contract. hook.c passes amdgpu's `btf_data` from its
    // MODULE_STATE_COMING notifier, which prepare_coming_module() calls before load_module()
    // frees the file copy the pointer points into, or a vmalloc'd copy of
    // /sys/kernel/btf/amdgpu that it frees after the call.
    let bytes = unsafe { core::slice::from_raw_parts(data, len) };
    btf_id::btf_id(bytes)
}
