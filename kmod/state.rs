// SPDX-License-Identifier: GPL-2.0

//! The published state: the policy and the `amdgpu_bo` layout the probe handler reads on every
//! call, and the one way to change them ([`publish`], under `rdna1_policy_lock`).
//!
//! Readers take no lock: a writer fills the inactive one of two slots, makes it active with one
//! release store and waits an RCU grace period, so every call sees one whole state, old or new.

use core::cell::UnsafeCell;
use core::marker::PhantomData;

use kernel::prelude::*;
use kernel::sync::atomic::{Acquire, Atomic, Relaxed, Release};
use kernel::sync::rcu;

use crate::bo::{BoLayout, CheckedLayout, LayoutSource, LayoutStatus};
use crate::ffi::{self, PolicyLocked};
use crate::policy::Policy;

/// Everything the hook reads per call, published as one unit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) policy: Policy,
    /// Checked against this kernel's `struct ttm_buffer_object` ([`check_layout`]).
    pub(crate) bo_layout: Option<CheckedLayout>,
    pub(crate) bo_layout_source: LayoutSource,
}

const INITIAL: State = State {
    policy: Policy::DEFAULT,
    bo_layout: None,
    bo_layout_source: LayoutSource::Unset,
};

/// Two state slots; [`ACTIVE`] names the one in force.
///
/// # Invariants
///
/// Only [`publish`] writes a slot, with `rdna1_policy_lock` held (one writer at a time), and
/// only the slot `ACTIVE` does not name; before it returns it waits an RCU grace period after
/// making that slot active, so the next writer's slot is read by no one.
struct PolicySlots([UnsafeCell<State>; 2]);

// SAFETY: per the type invariant, a slot is written only by one writer at a time, and only
// when no reader can be reading it; everything else only reads.
unsafe impl Sync for PolicySlots {}

static SLOTS: PolicySlots = PolicySlots([UnsafeCell::new(INITIAL), UnsafeCell::new(INITIAL)]);
/// The index (bit 0) of the slot in force.
static ACTIVE: Atomic<u32> = Atomic::new(0);

/// Proof of an RCU read-side critical section that lasts as long as the value: what
/// [`publish`]'s `synchronize_rcu()` waits for.
///
/// # Safety
///
/// While a value of the implementing type exists, the current CPU is inside such a section.
pub(crate) unsafe trait ReadSide {}

// SAFETY: `rcu::Guard` holds rcu_read_lock() while it exists (its type invariant).
unsafe impl ReadSide for rcu::Guard {}

/// The probe's handlers: fprobe_fgraph_entry() runs the entry handler and fprobe_return() the
/// exit handler inside `guard(rcu_sched_notrace)` (preemption off), which `synchronize_rcu()`
/// waits for (one RCU since Linux 4.20). Saves the handlers an `rcu_read_lock()` of their own.
///
/// # Invariants
///
/// Exists only inside such a section, and not beyond it (not `Send`, made per call).
pub(crate) struct InProbeHandler(PhantomData<*mut ()>);

impl InProbeHandler {
    /// # Safety
    ///
    /// Called from the fprobe entry or exit handler, and the value dropped before it returns.
    pub(crate) unsafe fn assume() -> InProbeHandler {
        // INVARIANT: per this function's contract.
        InProbeHandler(PhantomData)
    }
}

// SAFETY: by the type invariant, inside a probe handler's rcu_sched section.
unsafe impl ReadSide for InProbeHandler {}

/// The state in force, borrowed for as long as `_rcu` proves an RCU read-side section: only
/// a reader can call it. Any context but NMI.
pub(crate) fn current<R: ReadSide>(_rcu: &R) -> &State {
    let i = (ACTIVE.load(Acquire) & 1) as usize;
    // SAFETY: slot `i` was active inside the RCU read-side section `_rcu` proves, which lasts
    // as long as the returned borrow; by the invariant of `PolicySlots`, no writer touches the
    // slot until a grace period after it stopped being active, which cannot end before it.
    unsafe { &*SLOTS.0[i].get() }
}

/// The state in force, for a writer: borrowed from `_lock`, so no [`publish`] (which needs the
/// lock mutably) can run while it is used.
pub(crate) fn current_locked(_lock: &PolicyLocked) -> &State {
    let i = (ACTIVE.load(Relaxed) & 1) as usize;
    // SAFETY: only `publish` changes `ACTIVE` or writes a slot, and only the inactive one; it
    // needs `&mut PolicyLocked`, which the shared borrow of `_lock` excludes for as long as the
    // returned one lives, and the lock excludes writers of other tasks (type invariant of
    // `PolicyLocked`).
    unsafe { &*SLOTS.0[i].get() }
}

/// Makes `new` the state in force, all at once; sleeps for an RCU grace period. Takes the
/// lock's proof mutably: no borrow from [`current_locked`] lives across it.
pub(crate) fn publish(_lock: &mut PolicyLocked, new: State) {
    let next = ((ACTIVE.load(Relaxed) & 1) ^ 1) as usize;
    // SAFETY: `next` is inactive and the previous writer waited a grace period after making it
    // inactive (invariant of `PolicySlots`), so no reader holds it; the lock (`_lock`)
    // excludes other writers, and its exclusive borrow any `current_locked` borrow.
    unsafe { *SLOTS.0[next].get() = new };
    // INVARIANT: `next` becomes active; the slot that was active is reused only after the
    // grace period below.
    ACTIVE.store(next as u32, Release);
    // SAFETY: may sleep: `_lock` proves process context holding a mutex. After it, no reader
    // still uses the old slot.
    unsafe { kernel::bindings::synchronize_rcu() };
}

/// `bo_layout_status`.
pub(crate) fn layout_status(s: &State) -> LayoutStatus {
    LayoutStatus::of(s.bo_layout.as_ref())
}

/// `l`, if it passes [`BoLayout::check`] on this kernel: every [`CheckedLayout`] the module
/// holds is made here, so all were checked with this kernel's `struct ttm_buffer_object`.
pub(crate) fn check_layout(l: BoLayout) -> Option<CheckedLayout> {
    CheckedLayout::new(l, ffi::ttm_bo_size()).ok()
}

/// The built-in layout, if it passes its check on this kernel.
pub(crate) fn builtin_layout() -> Option<CheckedLayout> {
    check_layout(ffi::builtin_bo_layout())
}

/// Picks the built-in layout unless a `bo_layout=` parameter was given at load. Called from
/// module init, before the hook is armed: the first hooked call already classifies BOs.
pub(crate) fn init_layout() {
    let mut lock = PolicyLocked::lock();
    let old = *current_locked(&lock);
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
    publish(&mut lock, new);
    pr_info!("amdgpu_bo layout: built-in {}\n", format_args!("{}", l));
}

/// Sets the policy (`SET_POLICY`) to what `f` makes of the one in force, in one step under
/// the lock (a version 1 caller keeps what it cannot express), keeping the layout.
pub(crate) fn update_policy<E>(f: impl FnOnce(&Policy) -> Result<Policy, E>) -> Result<(), E> {
    let mut lock = PolicyLocked::lock();
    let old = *current_locked(&lock);
    let policy = f(&old.policy)?;
    if old.policy != policy {
        publish(&mut lock, State { policy, ..old });
        log_policy(&policy, &old.policy);
    }
    Ok(())
}

/// Logs a policy change.
pub(crate) fn log_policy(n: &Policy, o: &Policy) {
    pr_info!(
        "policy: mode {} scope {} classes {} vm_scope {} (was mode {} scope {} classes {} vm_scope {})\n",
        n.mode.name(),
        format_args!("{}", n.scope),
        format_args!("{}", n.classes),
        n.vm_scope.name(),
        o.mode.name(),
        format_args!("{}", o.scope),
        format_args!("{}", o.classes),
        o.vm_scope.name()
    );
}

/// Logs the policy in force at load.
pub(crate) fn log_loaded() {
    let p = current(&rcu::read_lock()).policy;
    pr_info!(
        "loaded, mode {}, scope {}, classes {}, vm_scope {}\n",
        p.mode.name(),
        format_args!("{}", p.scope),
        format_args!("{}", p.classes),
        p.vm_scope.name()
    );
}
