// SPDX-License-Identifier: GPL-2.0

//! Per-device counters, updated lock-free from the probe handler.
//!
//! A fixed table: the hook runs in atomic context and must not allocate. A device claims a slot
//! the first time it is seen (one compare-and-exchange); slot 0 counts calls whose device could
//! not be identified, and the last slot counts devices beyond the table's capacity.

use core::fmt::{self, Write};

use kernel::sync::atomic::{Atomic, Relaxed};

use crate::abi::{self, StatsArg};
use crate::pci::{DeviceId, PciAddr, SliceWriter};
use crate::policy::{Decision, Skip};

const SLOTS: usize = 16;
/// Key of a free slot.
const FREE: u64 = 0;
/// Keys: `CLAIMED | pci address`.
const CLAIMED: u64 = 1 << 32;
const UNKNOWN_SLOT: usize = 0;
const OVERFLOW_SLOT: usize = SLOTS - 1;

struct DevStats {
    key: Atomic<u64>,
    /// `vendor << 16 | device`, set by the CPU that claimed the slot.
    ident: Atomic<u32>,
    /// Every call lands in exactly one of the counters below, so the calls are their sum: no
    /// counter of its own, which would be one more atomic operation (a call into C) per call.
    /// Rewritten to NC, by the MTYPE field before (raw 3-bit value).
    rewritten: [Atomic<u64>; 8],
    /// What audit mode saw enforce would rewrite, by the MTYPE field before.
    would_rewrite: [Atomic<u64>; 8],
    /// Left alone, by reason (`Skip as usize`).
    skipped: [Atomic<u64>; Skip::COUNT],
}

impl DevStats {
    const fn new() -> Self {
        DevStats {
            key: Atomic::new(FREE),
            ident: Atomic::new(0),
            rewritten: [const { Atomic::new(0) }; 8],
            would_rewrite: [const { Atomic::new(0) }; 8],
            skipped: [const { Atomic::new(0) }; Skip::COUNT],
        }
    }

    /// The counters, read one by one (not an atomic snapshot).
    fn counts(&self) -> Counts {
        let load = |c: &Atomic<u64>| c.load(Relaxed);
        Counts {
            rewritten: self.rewritten.each_ref().map(load),
            would_rewrite: self.would_rewrite.each_ref().map(load),
            skipped: self.skipped.each_ref().map(load),
        }
    }
}

/// A device's counters as read once: what one line or one `GET_STATS` reply shows, so that its
/// `calls` is the sum of the counters it was read with (those shown, plus the MTYPE values 4 to
/// 7 no line shows: amdgpu never computes them).
struct Counts {
    rewritten: [u64; 8],
    would_rewrite: [u64; 8],
    skipped: [u64; Skip::COUNT],
}

impl Counts {
    fn calls(&self) -> u64 {
        self.rewritten
            .iter()
            .chain(&self.would_rewrite)
            .chain(&self.skipped)
            .fold(0u64, |sum, &c| sum.wrapping_add(c))
    }
}

static TABLE: [DevStats; SLOTS] = [const { DevStats::new() }; SLOTS];

fn slot_for(dev: Option<&DeviceId>) -> &'static DevStats {
    let Some(dev) = dev else {
        return &TABLE[UNKNOWN_SLOT];
    };
    let key = CLAIMED | u64::from(dev.addr.raw());
    for s in &TABLE[UNKNOWN_SLOT + 1..OVERFLOW_SLOT] {
        let k = s.key.load(Relaxed);
        if k == key {
            return s;
        }
        if k == FREE {
            // Claim it, unless another CPU just claimed it (for this device or another).
            match s.key.cmpxchg(FREE, key, Relaxed) {
                Ok(_) => {
                    s.ident
                        .store(u32::from(dev.vendor) << 16 | u32::from(dev.device), Relaxed);
                    return s;
                }
                Err(other) if other == key => return s,
                Err(_) => continue,
            }
        }
    }
    &TABLE[OVERFLOW_SLOT]
}

/// Counts one call: `before` is the MTYPE field amdgpu computed.
///
/// Inlined into both probe handlers: a call of its own measured 40 to 60 instructions more per
/// hooked call (`make bench`).
#[inline(always)]
pub(crate) fn record(dev: Option<&DeviceId>, before: u8, decision: Decision) {
    let s = slot_for(dev);
    let by_mtype = (before & 7) as usize;
    match decision {
        Decision::Rewrite(_) => s.rewritten[by_mtype].add(1, Relaxed),
        Decision::WouldRewrite(_) => s.would_rewrite[by_mtype].add(1, Relaxed),
        Decision::Keep(why) => s.skipped[why as usize].add(1, Relaxed),
    }
}

fn write_slot(w: &mut SliceWriter<'_>, name: fmt::Arguments<'_>, s: &DevStats) -> fmt::Result {
    let c = s.counts();
    write!(w, "{name} calls={}", c.calls())?;
    for (i, m) in ["nc", "wc", "cc", "uc"].iter().enumerate() {
        write!(w, " rewritten_{m}={}", c.rewritten[i])?;
    }
    for (i, m) in ["nc", "wc", "cc", "uc"].iter().enumerate() {
        write!(w, " would_rewrite_{m}={}", c.would_rewrite[i])?;
    }
    for why in Skip::ALL {
        write!(w, " skip_{}={}", why.name(), c.skipped[why as usize])?;
    }
    w.write_str("\n")
}

/// Room the last line needs when lines are left out.
const TRUNCATED_RESERVE: usize = 128;

/// Writes the lines `write_all` describes that end within `limit` bytes of `w`, in order, and
/// returns how many were left out: from the first that does not fit, every line after it too.
fn write_lines(w: &mut SliceWriter<'_>, limit: usize) -> usize {
    let mut left_out = 0;
    let mut line = |w: &mut SliceWriter<'_>, name: fmt::Arguments<'_>, s: &DevStats| {
        if left_out == 0 {
            let mark = w.len();
            if write_slot(w, name, s).is_ok() && w.len() <= limit {
                return;
            }
            w.truncate(mark);
        }
        left_out += 1;
    };
    for s in &TABLE[UNKNOWN_SLOT + 1..OVERFLOW_SLOT] {
        let k = s.key.load(Relaxed);
        if k == FREE {
            continue;
        }
        let addr = PciAddr::from_raw(k as u32);
        let ident = s.ident.load(Relaxed);
        let (vendor, device) = (ident >> 16, ident & 0xffff);
        line(w, format_args!("{addr} {vendor:04x}:{device:04x}"), s);
    }
    if TABLE[UNKNOWN_SLOT].counts().calls() != 0 {
        line(w, format_args!("unknown-device -"), &TABLE[UNKNOWN_SLOT]);
    }
    if TABLE[OVERFLOW_SLOT].counts().calls() != 0 {
        line(w, format_args!("other-devices -"), &TABLE[OVERFLOW_SLOT]);
    }
    left_out
}

/// One line per device seen (address, vendor:device, counters), then the unidentified calls
/// and the overflow slot if they counted anything. Counters are read one by one, not as a
/// snapshot. Lines that do not fit `w` (a parameter's page: about ten devices) are left out
/// whole, and a last line `truncated: N more lines ...` says how many; `GET_STATS` has them all.
pub(crate) fn write_all(w: &mut SliceWriter<'_>) -> fmt::Result {
    if write_lines(w, w.capacity()) == 0 {
        return Ok(());
    }
    w.truncate(0);
    let left_out = write_lines(w, w.capacity().saturating_sub(TRUNCATED_RESERVE));
    if left_out == 0 {
        // Counters only grow and slots are only claimed: no shorter now; kept for safety.
        return Ok(());
    }
    writeln!(
        w,
        "truncated: {left_out} more lines than a page holds; the GET_STATS ioctl has every one"
    )
}

/// Fills `out` with the `out.index`-th counter set in use, in the order `write_all` prints
/// them (devices, then unidentified, then overflow); false past the last.
pub(crate) fn fill(out: &mut StatsArg) -> bool {
    let in_use = |&i: &usize| match i {
        UNKNOWN_SLOT | OVERFLOW_SLOT => TABLE[i].counts().calls() != 0,
        _ => TABLE[i].key.load(Relaxed) != FREE,
    };
    let Some(i) = (UNKNOWN_SLOT + 1..OVERFLOW_SLOT)
        .chain([UNKNOWN_SLOT, OVERFLOW_SLOT])
        .filter(in_use)
        .nth(out.index as usize)
    else {
        return false;
    };
    let s = &TABLE[i];
    let ident = s.ident.load(Relaxed);
    out.kind = match i {
        UNKNOWN_SLOT => abi::STATS_UNKNOWN_DEVICE,
        OVERFLOW_SLOT => abi::STATS_OTHER_DEVICES,
        _ => abi::STATS_DEVICE,
    };
    out.addr = s.key.load(Relaxed) as u32;
    out.vendor = (ident >> 16) as u16;
    out.device = ident as u16;
    out.skip_count = Skip::COUNT as u32;
    out.reserved = 0;
    let c = s.counts();
    out.calls = c.calls();
    out.rewritten.copy_from_slice(&c.rewritten[..4]);
    out.would_rewrite.copy_from_slice(&c.would_rewrite[..4]);
    out.skipped = [0; abi::STATS_SKIP_SLOTS];
    for (dst, src) in out.skipped.iter_mut().zip(c.skipped) {
        *dst = src;
    }
    true
}
