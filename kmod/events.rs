// SPDX-License-Identifier: GPL-2.0

//! The event ring: the most recent decisions, read through `READ_EVENTS`.
//!
//! Readers keep their own cursor (a sequence number), so several can read independently and a
//! reader learns how many events were overwritten before it read them (`dropped`): nothing is
//! lost silently. Calls that were already NC, made in mode `off`, for a device out of scope, in a
//! VM out of the VM scope, or for no valid page (every unmap) are counted in the stats but not
//! logged: the ring holds what matters.
//!
//! Lock-free: the probe handler runs with preemption off, where a `spinlock_t` sleeps on
//! PREEMPT_RT, and it must never wait for a reader. A writer takes a sequence number with one
//! atomic add and fills its slot between two stamps (a seqcount per slot); a reader keeps a
//! slot's event only if the stamp said "whole, this sequence number" before and after it copied.
//!
//! The event's words are WRITE_ONCE/READ_ONCE accesses (volatile, as `rust/kernel/fs/file.rs`
//! reads `f_flags`), not `Atomic`s: without CONFIG_RUST_INLINE_HELPERS (distributions do not
//! set it) every `Atomic` operation is a call to a C helper, and these seven stores are most of
//! a logged call's cost on top of the fprobe (docs/MEASUREMENTS.md).

use core::cell::UnsafeCell;
use core::mem::size_of;

use kernel::prelude::*;
use kernel::sync::atomic::{Acquire, Atomic, Relaxed, Release};

use crate::abi::Event;

/// `smp_wmb()`. The kernel crate names it `sync::barrier::smp_wmb()` up to 7.2 and
/// `smp_mb(Write)` from 7.3; the C helper behind both is the same in every release.
#[inline]
fn smp_wmb() {
    // SAFETY: a memory barrier has no precondition.
    unsafe { kernel::bindings::smp_wmb() }
}

/// `smp_rmb()`, for the same reason as [`smp_wmb`].
#[inline]
fn smp_rmb() {
    // SAFETY: a memory barrier has no precondition.
    unsafe { kernel::bindings::smp_rmb() }
}

/// Events kept; a power of two.
const RING: u64 = 1024;
/// An [`Event`] in 64-bit words: how a slot holds it, so that a reader racing a writer reads
/// atomics, never a torn Rust value.
const WORDS: usize = size_of::<Event>() / 8;
const _: () = assert!(size_of::<Event>() == WORDS * 8);
/// How long a writer waits for the writer of an older lap still filling the same slot (which
/// runs with preemption off, so within a few stores) before it gives its own event up.
const CLAIM_SPINS: u32 = 1000;

/// One entry of the ring.
///
/// # Invariants
///
/// `stamp` is 0 while the slot was never written, `2 * seq + 1` while event `seq` is being
/// written into `words`, `2 * seq + 2` once `words` holds all of it. It only grows, and only a
/// writer that moved it to an odd value writes `words`, until it makes it even again.
/// `given_up` is `seq + 1` of the last event whose writer gave the slot up without writing it.
/// `words` is only accessed with volatile loads and stores of whole `u64`s.
struct Slot {
    stamp: Atomic<u64>,
    words: UnsafeCell<[u64; WORDS]>,
    given_up: Atomic<u64>,
}

// SAFETY: `words` is written only by the one writer the stamp admits (type invariant) and read
// and written only with volatile accesses of whole words, the kernel's READ_ONCE/WRITE_ONCE,
// which LKMM lets race (a racing reader may see a torn event, and the stamp tells it to drop
// it); the other fields are atomics.
unsafe impl Sync for Slot {}

static SLOTS: [Slot; RING as usize] = [const {
    Slot {
        stamp: Atomic::new(0),
        words: UnsafeCell::new([0; WORDS]),
        given_up: Atomic::new(0),
    }
}; RING as usize];

/// Sequence number of the next event.
static NEXT: Atomic<u64> = Atomic::new(0);

fn slot(seq: u64) -> &'static Slot {
    &SLOTS[(seq % RING) as usize]
}

fn to_words(ev: Event) -> [u64; WORDS] {
    // SAFETY: `Event` is `AsBytes` (control.rs): every byte is initialised, no padding; the sizes
    // are equal (checked by `transmute` and above), and any bits are a valid `u64`.
    unsafe { core::mem::transmute::<Event, [u64; WORDS]>(ev) }
}

fn from_words(w: [u64; WORDS]) -> Event {
    // SAFETY: the sizes are equal, and every field of `Event` is an integer or an array of
    // them, valid for any bits.
    unsafe { core::mem::transmute::<[u64; WORDS], Event>(w) }
}

/// Logs one decision; `ev.seq` is assigned here. Any context but NMI; never waits for a reader.
pub(crate) fn push(mut ev: Event) {
    let seq = NEXT.fetch_add(1, Relaxed);
    ev.seq = seq;
    let s = slot(seq);
    let writing = 2 * seq + 1;
    let mut spins = 0;
    loop {
        let old = s.stamp.load(Relaxed);
        if old >= writing {
            // A later lap already took the slot (this writer was stalled for a whole ring):
            // this event is lost, and readers count it dropped.
            return;
        }
        if old & 1 == 1 {
            // An older lap's writer is filling the slot on another CPU.
            spins += 1;
            if spins > CLAIM_SPINS {
                // Readers count it dropped instead of waiting for it.
                s.given_up.store(seq + 1, Release);
                return;
            }
            kernel::processor::cpu_relax();
            continue;
        }
        // INVARIANT: the stamp grows to an odd value; only this writer writes `words` now.
        // Acquire: an older lap's words (before its release of `old`) precede ours.
        if s.stamp.cmpxchg(old, writing, Acquire).is_ok() {
            break;
        }
    }
    // The odd stamp is visible before any word changes.
    smp_wmb();
    let words = s.words.get().cast::<u64>();
    for (i, v) in to_words(ev).into_iter().enumerate() {
        // SAFETY: `i < WORDS`, so the word lies in this static slot, aligned; only this writer
        // writes it now (the stamp is ours, odd), and readers race only with volatile reads
        // (the `Sync` impl's argument).
        unsafe { words.add(i).write_volatile(v) };
    }
    // INVARIANT: `words` holds all of event `seq`; the release orders them before the stamp.
    s.stamp.store(writing + 1, Release);
}

/// Copies events with `seq >= cursor`, oldest first, at most `max` (for which `out` has
/// capacity reserved). Returns the cursor to continue from and how many events after `cursor`
/// were overwritten before they could be read.
///
/// Stops at the first event still being written: the caller reads it next time. An event
/// whose writer gave its slot up counts as dropped.
pub(crate) fn read(cursor: u64, max: usize, out: &mut KVec<Event>) -> (u64, u64) {
    let next = NEXT.load(Acquire);
    let start = cursor.max(next.saturating_sub(RING));
    let mut dropped = start - cursor.min(start);
    let mut seq = start;
    while seq < next && out.len() < max {
        let s = slot(seq);
        let whole = 2 * seq + 2;
        let before = s.stamp.load(Acquire);
        if before < whole {
            if s.given_up.load(Acquire) == seq + 1 {
                dropped += 1;
                seq += 1;
                continue;
            }
            break;
        }
        if before == whole {
            let mut w = [0u64; WORDS];
            let words = s.words.get().cast::<u64>();
            for (i, d) in w.iter_mut().enumerate() {
                // SAFETY: `i < WORDS`: a word of this static slot, aligned. A writer may be
                // storing it meanwhile, with a volatile store (the `Sync` impl's argument): the
                // stamp read below tells whether the copy is whole.
                *d = unsafe { words.add(i).read_volatile() };
            }
            // The words are read before the stamp is read again.
            smp_rmb();
            if s.stamp.load(Relaxed) == whole {
                // Cannot fail: the capacity was reserved by the caller.
                if out.push_within_capacity(from_words(w)).is_err() {
                    break;
                }
                seq += 1;
                continue;
            }
        }
        // A later lap overwrote it, before or while it was copied.
        dropped += 1;
        seq += 1;
    }
    (seq, dropped)
}
