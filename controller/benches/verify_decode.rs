//! Throughput of `rdna1ctl verify`'s decoder: synthetic `trace_pipe_raw` pages of
//! `amdgpu_vm_update_ptes` records (7.2's real format and header_page), decoded by the same
//! `decode_page` verify runs, with a per-pid/MTYPE tally as the sink. Prints numbers; asserts
//! only that every record was decoded. Run: `cargo bench -p rdna1ctl --bench verify_decode`.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use rdna1ctl::trace::decode::{decode_page, encode_page, Update};
use rdna1ctl::trace::format::{PageLayout, UpdatePtesLayout};

fn main() {
    let ev = UpdatePtesLayout::parse(include_str!(
        "../src/trace/fixtures/amdgpu_vm_update_ptes.format"
    ))
    .expect("format");
    let pl =
        PageLayout::parse(include_str!("../src/trace/fixtures/header_page")).expect("header_page");
    // Records as the kernel writes them: the 72-byte entry (64 bytes of fields, the 4-byte
    // __data_loc of dst, padding) plus nptes * 8 bytes of dst; nptes 32 needs array[0].
    for (label, rec_len) in [
        ("nptes=1, 80-byte records", 80),
        ("nptes=32, 328-byte records", 328),
    ] {
        let ups: Vec<Update> = (0..4096u64)
            .map(|i| Update {
                start: i * 4,
                end: i * 4 + 4,
                flags: 0x67 | ((i % 4) << 48),
                nptes: 4,
                incr: 4096,
                pid: (i % 7) as i32 + 100,
                vm_ctx: i % 3,
            })
            .collect();
        let mut pages = Vec::new();
        let mut per_page = 0;
        for chunk in 0..64 {
            let mut page = vec![0u8; pl.page_size()];
            per_page = encode_page(&pl, &ev, &ups[chunk * 8..], rec_len, &mut page);
            pages.push(page);
        }
        let mut best = f64::MAX;
        let mut total = 0u64;
        for _round in 0..5 {
            let mut tally: HashMap<(i32, u8), u64> = HashMap::new();
            let t = Instant::now();
            let mut n = 0u64;
            for _ in 0..200 {
                for p in &pages {
                    n += decode_page(&pl, &ev, black_box(p), |u| {
                        *tally.entry((u.pid, (u.flags >> 48) as u8 & 7)).or_default() += u.ptes();
                    })
                    .updates;
                }
            }
            let s = t.elapsed().as_secs_f64();
            best = best.min(s / n as f64);
            total = n;
            black_box(&tally);
        }
        assert_eq!(total, 200 * 64 * per_page as u64, "every record decoded");
        println!(
            "verify_decode {label}: {per_page} records/page, {:.1} M events/s, {:.0} MB/s of pages (best of 5 rounds of {total} events)",
            1e-6 / best,
            pl.page_size() as f64 / per_page as f64 / best / 1e6
        );
    }
}
