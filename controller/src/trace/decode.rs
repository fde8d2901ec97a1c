//! Decoding pages of `per_cpu/cpuN/trace_pipe_raw` into `amdgpu_vm_update_ptes` updates.
//!
//! A page is `struct buffer_data_page` (`kernel/trace/ring_buffer.c`): the header described by
//! `events/header_page`, then records, each a 4-byte header `type_len:5, time_delta:27` and
//! data (`include/linux/ring_buffer.h`, `enum ring_buffer_type`). No crate decodes these pages
//! (docs/DEPENDENCIES.md), so this is the one hand-written decoder; it checks every length
//! against the page and stops at anything it cannot account for.
//!
//! Also run by `benches/verify_decode.rs`.

use rdna1_mtype_shared::pte::{self, Mtype};

use crate::trace::format::{Field, PageLayout, UpdatePtesLayout};

/// `RB_MISSED_EVENTS`: events were lost before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// `RB_MISSED_STORED`: the number lost is stored after the data.
const MISSED_STORED: u64 = 1 << 30;
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;

/// One `amdgpu_vm_update_ptes` event: a run of PTEs written with the same flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Update {
    /// First and end GPU page (4 KiB units) of the range.
    pub start: u64,
    pub end: u64,
    /// The PTE flags written.
    pub flags: u64,
    /// PTE count as the event records it (amdgpu caps it at 32).
    pub nptes: u32,
    /// Bytes mapped per PTE.
    pub incr: u64,
    /// Thread-group id of the VM's owner (0 if amdgpu does not know it).
    pub pid: i32,
    /// The VM's fence context: tells VMs apart.
    pub vm_ctx: u64,
}

impl Update {
    pub fn mtype(&self) -> Mtype {
        pte::mtype_of(self.flags)
    }

    /// A valid, non-PRT PTE: the only kind the policy rewrites.
    pub fn maps_a_page(&self) -> bool {
        self.flags & pte::PTE_VALID != 0 && self.flags & pte::PTE_PRT == 0
    }

    /// How many PTEs the update writes. amdgpu caps `nptes` in the event at 32, so it is
    /// recomputed from the range when `incr` is a power-of-two multiple of 4 KiB (what
    /// `amdgpu_vm_ptes_update` uses: `nptes = (end - start) >> shift`, at least 1).
    pub fn ptes(&self) -> u64 {
        if self.incr >= 4096 && self.incr.is_power_of_two() && self.end >= self.start {
            let shift = (self.incr / 4096).trailing_zeros();
            ((self.end - self.start) >> shift).max(1)
        } else {
            u64::from(self.nptes)
        }
    }
}

/// What one page held besides updates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageInfo {
    /// `amdgpu_vm_update_ptes` records decoded.
    pub updates: u64,
    /// Records of other events (none are enabled in our instance; counted, not trusted away).
    pub foreign: u64,
    /// Records too short for the format, or a length that overruns the page.
    pub malformed: u64,
    /// Events the kernel says were lost before this page: `Some(0)` when it flagged a loss but
    /// had no room to store the number.
    pub missed: Option<u64>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

/// Decodes one record's data, if it is an `amdgpu_vm_update_ptes` record.
#[inline]
pub fn decode_record(ev: &UpdatePtesLayout, rec: &[u8]) -> Option<Update> {
    if rec.len() < ev.min_len || ev.common_type.read(rec)? != ev.id {
        return None;
    }
    Some(Update {
        start: ev.start.read(rec)?,
        end: ev.end.read(rec)?,
        flags: ev.flags.read(rec)?,
        nptes: ev.nptes.read(rec)? as u32,
        incr: ev.incr.read(rec)?,
        pid: ev.pid.read(rec)? as u32 as i32,
        vm_ctx: ev.vm_ctx.read(rec)?,
    })
}

/// Decodes every record of `page` (one read of `trace_pipe_raw`), calling `sink` for each
/// update, in order.
pub fn decode_page(
    pl: &PageLayout,
    ev: &UpdatePtesLayout,
    page: &[u8],
    mut sink: impl FnMut(Update),
) -> PageInfo {
    let mut info = PageInfo::default();
    let Some(commit) = pl.commit.read(page) else {
        info.malformed += 1;
        return info;
    };
    let len = (commit & !(MISSED_EVENTS | MISSED_STORED) & 0xffff_ffff) as usize;
    let start = pl.data.offset;
    let end = start + len.min(pl.data.size);
    if len > pl.data.size || end > page.len() {
        info.malformed += 1;
    }
    let end = end.min(page.len());
    if commit & MISSED_EVENTS != 0 {
        // The count, when stored, is a `long` right after the committed data.
        let stored = (commit & MISSED_STORED != 0)
            .then(|| {
                Field {
                    offset: end,
                    size: pl.commit.size,
                }
                .read(page)
            })
            .flatten();
        info.missed = Some(stored.unwrap_or(0));
    }
    let mut pos = start;
    while pos + 4 <= end {
        let Some(h) = u32_at(page, pos) else { break };
        let type_len = h & 0x1f;
        let time_delta = h >> 5;
        let (data, size) = match type_len {
            0 => {
                // array[0] holds the length, counting itself; data follows it.
                let Some(n) = u32_at(page, pos + 4) else {
                    break;
                };
                let n = n as usize;
                if n < 4 {
                    info.malformed += 1;
                    break;
                }
                (pos + 8..pos + 4 + n, 4 + n)
            }
            1..=28 => {
                let n = type_len as usize * 4;
                (pos + 4..pos + 4 + n, 4 + n)
            }
            TYPE_PADDING => {
                if time_delta == 0 {
                    break; // The rest of the page is padding.
                }
                let Some(n) = u32_at(page, pos + 4) else {
                    break;
                };
                pos += 4 + n as usize;
                continue;
            }
            TYPE_TIME_EXTEND | TYPE_TIME_STAMP => {
                pos += 8;
                continue;
            }
            _ => unreachable!("type_len is 5 bits"),
        };
        if pos + size > end {
            info.malformed += 1;
            break;
        }
        match decode_record(ev, &page[data.clone()]) {
            Some(u) => {
                info.updates += 1;
                sink(u);
            }
            None => {
                if ev.common_type.read(&page[data]) == Some(ev.id) {
                    info.malformed += 1;
                } else {
                    info.foreign += 1;
                }
            }
        }
        pos += size;
    }
    info
}

/// Writes `updates` as one page the way the kernel lays it out (tests and the benchmark):
/// small records with `type_len`, records over 112 bytes with the length in `array[0]`.
/// Returns how many updates fit.
pub fn encode_page(
    pl: &PageLayout,
    ev: &UpdatePtesLayout,
    updates: &[Update],
    record_len: usize,
    page: &mut [u8],
) -> usize {
    page.fill(0);
    let rec_len = record_len.max(ev.min_len).next_multiple_of(4);
    let mut pos = pl.data.offset;
    let end = pl.page_size().min(page.len());
    let mut n = 0;
    for u in updates {
        let small = rec_len <= 28 * 4;
        let size = if small { 4 + rec_len } else { 8 + rec_len };
        if pos + size > end {
            break;
        }
        let data = if small {
            page[pos..pos + 4].copy_from_slice(&((rec_len / 4) as u32 | (1 << 5)).to_ne_bytes());
            pos + 4
        } else {
            page[pos..pos + 4].copy_from_slice(&(1u32 << 5).to_ne_bytes());
            page[pos + 4..pos + 8].copy_from_slice(&((rec_len + 4) as u32).to_ne_bytes());
            pos + 8
        };
        let rec = &mut page[data..data + rec_len];
        let mut put = |f: Field, v: u64| {
            rec[f.offset..f.offset + f.size].copy_from_slice(&v.to_ne_bytes()[..f.size]);
        };
        put(ev.common_type, ev.id);
        put(ev.start, u.start);
        put(ev.end, u.end);
        put(ev.flags, u.flags);
        put(ev.nptes, u.nptes.into());
        put(ev.incr, u.incr);
        put(ev.pid, u64::from(u.pid as u32));
        put(ev.vm_ctx, u.vm_ctx);
        pos += size;
        n += 1;
    }
    let commit = (pos - pl.data.offset) as u64;
    page[pl.commit.offset..pl.commit.offset + pl.commit.size]
        .copy_from_slice(&commit.to_ne_bytes()[..pl.commit.size]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::format::tests::{FORMAT_7_2, HEADER_PAGE_7_2};

    fn layouts() -> (PageLayout, UpdatePtesLayout) {
        (
            PageLayout::parse(HEADER_PAGE_7_2).unwrap(),
            UpdatePtesLayout::parse(FORMAT_7_2).unwrap(),
        )
    }

    fn upd(i: u64, mtype: u64) -> Update {
        Update {
            start: 0x100 + i,
            end: 0x104 + i,
            flags: 0x67 | (mtype << 48),
            nptes: 4,
            incr: 4096,
            pid: 1000 + i as i32,
            vm_ctx: 0xabc0 + i,
        }
    }

    fn decode_all(pl: &PageLayout, ev: &UpdatePtesLayout, page: &[u8]) -> (Vec<Update>, PageInfo) {
        let mut v = Vec::new();
        let info = decode_page(pl, ev, page, |u| v.push(u));
        (v, info)
    }

    /// A page read from `per_cpu/cpu1/trace_pipe_raw` of an instance on the 7.2.13 test kernel
    /// after three injected events (`tests/vm`, 2026-11-21; `trace` showed the same values).
    #[test]
    fn real_7_2_page() {
        let (pl, ev) = layouts();
        let page = include_bytes!("fixtures/cpu1.trace_pipe_raw");
        let (got, info) = decode_all(&pl, &ev, page);
        let u = |start, end, flags, nptes, incr, pid, vm_ctx| Update {
            start,
            end,
            flags,
            nptes,
            incr,
            pid,
            vm_ctx,
        };
        assert_eq!(
            got,
            [
                u(0x100, 0x104, 0x67, 4, 4096, 75, 7),
                u(0x200, 0x201, 0x3000000000067, 1, 4096, 4242, 9),
                u(0, 0, 0x1, 0, 0, 1, 0),
            ]
        );
        assert_eq!(
            info,
            PageInfo {
                updates: 3,
                ..PageInfo::default()
            }
        );
        assert_eq!(got[1].mtype(), Mtype::Uc);
        assert_eq!(got[0].ptes(), 4);
    }

    #[test]
    fn round_trip_small_and_large_records() {
        let (pl, ev) = layouts();
        let ups: Vec<Update> = (0..40).map(|i| upd(i, i % 4)).collect();
        // 72 bytes: type_len records; 200 bytes: length in array[0] (type_len 0).
        for rec_len in [72, 200] {
            let mut page = vec![0u8; pl.page_size()];
            let n = encode_page(&pl, &ev, &ups, rec_len, &mut page);
            assert!(n > 10);
            let (got, info) = decode_all(&pl, &ev, &page);
            assert_eq!(got, ups[..n]);
            assert_eq!(
                info,
                PageInfo {
                    updates: n as u64,
                    ..PageInfo::default()
                }
            );
        }
    }

    #[test]
    fn skips_time_records_padding_and_foreign_events() {
        let (pl, ev) = layouts();
        let mut page = vec![0u8; pl.page_size()];
        encode_page(&pl, &ev, &[upd(1, 3)], 64, &mut page);
        let first_len = 4 + 64;
        let mut pos = pl.data.offset + first_len;
        let mut put = |page: &mut Vec<u8>, bytes: &[u8]| {
            page[pos..pos + bytes.len()].copy_from_slice(bytes);
            pos += bytes.len();
        };
        // TIME_EXTEND (30), 8 bytes.
        put(&mut page, &(30u32 | (5 << 5)).to_ne_bytes());
        put(&mut page, &7u32.to_ne_bytes());
        // Discarded event: PADDING with a delta; array[0] = 16 counts itself and 12 bytes.
        put(&mut page, &(29u32 | (1 << 5)).to_ne_bytes());
        put(&mut page, &16u32.to_ne_bytes());
        put(&mut page, &[0xff; 12]);
        // Another event's record (id + 1), 16 bytes.
        put(&mut page, &(4u32 | (1 << 5)).to_ne_bytes());
        let mut other = [0u8; 16];
        other[..2].copy_from_slice(&((ev.id + 1) as u16).to_ne_bytes());
        put(&mut page, &other);
        // Then an update again.
        let mut tail = vec![0u8; pl.page_size()];
        encode_page(&pl, &ev, &[upd(2, 0)], 64, &mut tail);
        let rec = tail[pl.data.offset..pl.data.offset + first_len].to_vec();
        put(&mut page, &rec);
        let commit = (pos - pl.data.offset) as u64;
        page[8..16].copy_from_slice(&commit.to_ne_bytes());
        let (got, info) = decode_all(&pl, &ev, &page);
        assert_eq!(got, [upd(1, 3), upd(2, 0)]);
        assert_eq!((info.foreign, info.malformed, info.missed), (1, 0, None));
    }

    #[test]
    fn missed_events_flag_and_stored_count() {
        let (pl, ev) = layouts();
        let mut page = vec![0u8; pl.page_size()];
        encode_page(&pl, &ev, &[upd(0, 0)], 64, &mut page);
        let len = u64::from_ne_bytes(page[8..16].try_into().unwrap());
        page[8..16].copy_from_slice(&(len | MISSED_EVENTS).to_ne_bytes());
        assert_eq!(decode_all(&pl, &ev, &page).1.missed, Some(0));
        let at = pl.data.offset + len as usize;
        page[at..at + 8].copy_from_slice(&1234u64.to_ne_bytes());
        page[8..16].copy_from_slice(&(len | MISSED_EVENTS | MISSED_STORED).to_ne_bytes());
        let (got, info) = decode_all(&pl, &ev, &page);
        assert_eq!((got.len(), info.missed), (1, Some(1234)));
    }

    #[test]
    fn truncated_and_garbage_pages_never_panic() {
        let (pl, ev) = layouts();
        let mut page = vec![0u8; pl.page_size()];
        encode_page(&pl, &ev, &[upd(0, 1); 30], 64, &mut page);
        // Short read: records past the end are not decoded; the short page and the cut
        // record are both counted.
        let (got, info) = decode_all(&pl, &ev, &page[..pl.data.offset + 3 * 68 + 10]);
        assert_eq!(got.len(), 3);
        assert_eq!(info.malformed, 2);
        // A record shorter than the format: malformed, not an update.
        let mut short = vec![0u8; pl.page_size()];
        short[16..20].copy_from_slice(&(4u32 | (1 << 5)).to_ne_bytes());
        short[20..22].copy_from_slice(&(ev.id as u16).to_ne_bytes());
        short[8..16].copy_from_slice(&20u64.to_ne_bytes());
        assert_eq!(decode_all(&pl, &ev, &short).1.malformed, 1);
        // Pseudo-random pages: any answer, but no panic and no endless loop.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            for b in page.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            let _ = decode_all(&pl, &ev, &page);
        }
    }

    #[test]
    fn ptes_follow_the_range_not_the_capped_count() {
        let mut u = upd(0, 0);
        (u.start, u.end, u.nptes, u.incr) = (0, 100, 32, 4096);
        assert_eq!(u.ptes(), 100, "amdgpu caps nptes at 32");
        (u.start, u.end, u.incr) = (0, 2048, 2 << 20);
        assert_eq!(u.ptes(), 4, "2 MiB PTEs");
        (u.start, u.end, u.incr) = (5, 5, 4096);
        assert_eq!(u.ptes(), 1, "at least one");
        (u.incr, u.nptes) = (0, 7);
        assert_eq!(u.ptes(), 7, "no usable incr: the event's count");
    }

    #[test]
    fn valid_prt_and_mtype_bits() {
        let mut u = upd(0, 3);
        assert_eq!(u.mtype(), Mtype::Uc);
        assert!(u.maps_a_page());
        u.flags |= pte::PTE_PRT;
        assert!(!u.maps_a_page());
        u.flags = 0x66 | (2 << 48);
        assert!(!u.maps_a_page());
        assert_eq!(u.mtype(), Mtype::Cc);
    }
}
