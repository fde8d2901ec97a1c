// SPDX-License-Identifier: GPL-2.0

//! The event ring: the most recent decisions, read through `READ_EVENTS`.
//!
//! Readers keep their own cursor (a sequence number), so several can read independently and a
//! reader learns how many events were overwritten before it read them (`dropped`): nothing is
//! lost silently. Calls that were already NC, made in mode `off`, for a device out of scope, in a
//! VM out of the VM scope, or for no valid page (every unmap) are counted in the stats but not
//! logged: the ring holds what matters, and neither a busy GPU outside the scope nor a desktop's
//! graphics VMs take its lock.

use kernel::prelude::*;

use crate::abi::Event;

/// Events kept; a power of two.
const RING: usize = 1024;

pub(crate) struct Ring {
    events: [Event; RING],
    /// Sequence number of the next event.
    next: u64,
}

impl Ring {
    const fn new() -> Self {
        Ring {
            events: [Event {
                seq: 0,
                time_ns: 0,
                pid: 0,
                dev_addr: 0,
                vendor: 0,
                device: 0,
                vm_flags: 0,
                comm: [0; 16],
                before: 0,
                written: 0,
                class: 0,
                action: 0,
                skip: 0,
                dev_known: 0,
                vm_kind: 0,
                reserved: 0,
            }; RING],
            next: 0,
        }
    }
}

kernel::sync::global_lock! {
    // SAFETY: initialised by `init()` in module init, before the hook is armed or the device
    // registered, the only users.
    unsafe(uninit) static EVENTS: SpinLock<Ring> = Ring::new();
}

/// # Safety
///
/// Called once, from module init, before [`push`] or [`read`].
pub(crate) unsafe fn init() {
    // SAFETY: per this function's contract.
    unsafe { EVENTS.init() };
}

/// Logs one decision; `ev.seq` is assigned here.
pub(crate) fn push(mut ev: Event) {
    let mut ring = EVENTS.lock();
    ev.seq = ring.next;
    let i = (ring.next % RING as u64) as usize;
    ring.events[i] = ev;
    ring.next += 1;
}

/// Copies events with `seq >= cursor`, oldest first, at most `max` (for which `out` has
/// capacity reserved). Returns the cursor to continue from and how many events after `cursor`
/// were already overwritten.
pub(crate) fn read(cursor: u64, max: usize, out: &mut KVec<Event>) -> (u64, u64) {
    let ring = EVENTS.lock();
    let oldest = ring.next.saturating_sub(RING as u64);
    let start = cursor.max(oldest);
    let dropped = start - cursor.min(start);
    let mut seq = start;
    while seq < ring.next && out.len() < max {
        // Cannot fail: the capacity was reserved before the lock was taken.
        if out
            .push_within_capacity(ring.events[(seq % RING as u64) as usize])
            .is_err()
        {
            break;
        }
        seq += 1;
    }
    (seq, dropped)
}
