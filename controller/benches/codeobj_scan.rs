//! `rdna1ctl doctor`'s code-object bundle reader (commands/doctor/codeobj.rs) on shared
//! libraries: for each path, the bundles of its `.hip_fatbin`, the gfx targets, wall time
//! and peak memory of `codeobj::scan_elf`; then, in the same run, the way zstd bundles were
//! read before the reader bounded the zstd window (ruzstd's streaming decoder on each frame
//! as written, which decompressed every bundle whole to reach its entry table), for
//! comparison. Without a path it runs on a synthetic library written to a temporary file,
//! and says so.
//!
//! Run: `cargo bench -p rdna1ctl --bench codeobj_scan -- [PATH...]`, e.g. Debian's
//! librocblas.so.5 (docs/MEASUREMENTS.md). Each way runs in a process of its own (this
//! program, run again with CODEOBJ_SCAN_CHILD set), so that its peak memory, VmHWM from
//! /proc/self/status, is its own.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rdna1ctl::commands::doctor::codeobj::{self, build};

fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn fatbin_range(path: &Path) -> Result<(u64, u64), String> {
    use object::{Object, ObjectSection};
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).map_err(|e| format!("{}: {e}", path.display()))?;
    elf.section_by_name(".hip_fatbin")
        .and_then(|s| s.file_range())
        .ok_or_else(|| format!("{}: no .hip_fatbin", path.display()))
}

/// A zstd bundle's entry ids as codeobj read them before it bounded the zstd window: ruzstd's
/// streaming decoder on the frame as written (windows up to 128 MiB), 4 KiB read, then twice
/// as much while the entry table is cut short. The decoder hands out nothing while it holds less than a window,
/// and LLVM's frames are single-segment (the window is the whole bundle) or have a 128 MiB
/// window: each bundle is decompressed to its end.
fn old_zstd_ids(payload: impl Read) -> Result<Vec<String>, String> {
    let mut dec = ruzstd::decoding::StreamingDecoder::new_with_max_window_size(payload, 1 << 27)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut want = 4096usize;
    loop {
        let before = out.len();
        let res = (&mut dec)
            .take((want - before) as u64)
            .read_to_end(&mut out);
        match codeobj::parse_plain(&out) {
            Ok(b) => return Ok(b.ids),
            Err(e)
                if e.contains("cut short")
                    && res.is_ok()
                    && out.len() > before
                    && want < codeobj::HEAD =>
            {
                want = (want * 2).min(codeobj::HEAD);
            }
            Err(e) => return Err(format!("{e} ({res:?})")),
        }
    }
}

/// The old way over a library's `.hip_fatbin`: every version 2 or 3 zstd bundle, read as
/// [`old_zstd_ids`] does, skipped by its recorded size; plain bundles skipped by their entry
/// table (they, and zlib bundles, were read as they are now). The zstd bundles read and their
/// targets.
fn old_way(path: &Path) -> Result<(usize, BTreeSet<String>), String> {
    let (start, size) = fatbin_range(path)?;
    let end = start + size;
    let mut f = File::open(path).map_err(|e| e.to_string())?;
    let (mut pos, mut n, mut targets) = (start, 0, BTreeSet::new());
    let mut buf = vec![0u8; codeobj::HEAD];
    let read_at = |f: &mut File, at: u64, buf: &mut [u8]| -> Result<usize, String> {
        f.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
        let mut n = 0;
        while n < buf.len() {
            match f.read(&mut buf[n..]).map_err(|e| e.to_string())? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    };
    while pos < end {
        let want = (end - pos).min(1 << 16) as usize;
        let got = read_at(&mut f, pos, &mut buf[..want])?;
        let hay = &buf[..got];
        let hit = (0..got).find(|&i| {
            hay[i..].starts_with(codeobj::CCOB_MAGIC) || hay[i..].starts_with(codeobj::PLAIN_MAGIC)
        });
        let Some(i) = hit else {
            pos += got.saturating_sub(codeobj::PLAIN_MAGIC.len()).max(1) as u64;
            continue;
        };
        let at = pos + i as u64;
        if hay[i..].starts_with(codeobj::PLAIN_MAGIC) {
            let got = read_at(&mut f, at, &mut buf)?;
            let span = codeobj::parse_plain(&buf[..got]).ok().and_then(|b| b.span);
            pos = at + span.unwrap_or(4).max(4);
            continue;
        }
        let mut head = [0u8; 32];
        read_at(&mut f, at, &mut head)?;
        let u16_at = |o: usize| u16::from_le_bytes([head[o], head[o + 1]]);
        let (version, method) = (u16_at(4), u16_at(6));
        let (len, total) = match version {
            2 => (
                24,
                u64::from(u32::from_le_bytes(head[8..12].try_into().unwrap())),
            ),
            3 => (32, u64::from_le_bytes(head[8..16].try_into().unwrap())),
            _ => (0, 0),
        };
        if method != 1 || total <= len {
            pos = at + total.max(4);
            continue;
        }
        f.seek(SeekFrom::Start(at + len))
            .map_err(|e| e.to_string())?;
        let ids = old_zstd_ids((&mut f).take(total - len))
            .map_err(|e| format!("zstd bundle at {at}: {e}"))?;
        n += 1;
        targets.extend(ids.iter().filter_map(|i| codeobj::target_of(i)));
        pos = at + total;
    }
    Ok((n, targets))
}

/// A library like a ROCm 7 one, in a temporary file: 16 single-segment zstd bundles of 4 MiB
/// each (code objects of 64 KiB of noise repeated, so they compress), 4 KiB aligned.
fn synthetic() -> PathBuf {
    let targets = [
        ["gfx1010", "gfx1030"],
        ["gfx1100", "gfx90a"],
        ["gfx942", "gfx1201"],
        ["gfx10-1-generic", "gfx1151"],
    ];
    let object: Vec<u8> = build::noise(64 << 10).repeat(32);
    let mut fatbin = Vec::new();
    for k in 0..16 {
        let inner = build::plain_with(&targets[k % 4], &object);
        let body = build::zstd_frame(&inner, None);
        fatbin.extend(build::wrap(&inner, &body, 3, true));
        fatbin.resize(fatbin.len().next_multiple_of(4096), 0);
    }
    let path = std::env::temp_dir().join(format!("codeobj_scan-{}.so", std::process::id()));
    std::fs::write(&path, build::elf_with_fatbin(&fatbin)).expect("write the synthetic library");
    path
}

fn names(t: &BTreeSet<String>) -> String {
    t.iter().map(String::as_str).collect::<Vec<_>>().join(" ")
}

/// The variable that makes this program one measurement: `new` or `old` on its one path.
const CHILD: &str = "CODEOBJ_SCAN_CHILD";

/// One measurement, in a process of its own so that its peak memory is its own: prints
/// `seconds first best`, `peak KiB`, `bundles N`, `targets ...` and any `error ...` lines.
fn child(way: &str, path: &Path) {
    let mut times = Vec::new();
    let (mut bundles, mut targets, mut errors) = (0, BTreeSet::new(), Vec::new());
    // The new way: a first run (it may read the file from disk), then the best of three;
    // the old way once (seconds per run).
    for _ in 0..if way == "new" { 4 } else { 1 } {
        let t = Instant::now();
        match way {
            "new" => match codeobj::scan_elf(path) {
                Ok(Some(s)) => (bundles, targets, errors) = (s.bundles, s.targets, s.errors),
                Ok(None) => errors = vec!["no .hip_fatbin section".into()],
                Err(e) => errors = vec![e],
            },
            _ => match old_way(path) {
                Ok((n, t)) => (bundles, targets) = (n, t),
                Err(e) => errors = vec![e],
            },
        }
        times.push(t.elapsed().as_secs_f64());
    }
    let rest = times.get(1..).filter(|r| !r.is_empty()).unwrap_or(&times);
    let best = rest.iter().copied().fold(f64::MAX, f64::min);
    println!("seconds {} {best}", times[0]);
    println!("peak {}", status_kib("VmHWM:").unwrap_or(0));
    println!("bundles {bundles}");
    println!("targets {}", names(&targets));
    for e in errors {
        println!("error {e}");
    }
}

/// What a [`child`] printed.
#[derive(Default)]
struct Run {
    first: f64,
    best: f64,
    peak_kib: u64,
    bundles: usize,
    targets: String,
    errors: Vec<String>,
}

fn run(way: &str, path: &Path) -> Result<Run, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .env(CHILD, way)
        .arg(path)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("{way}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let mut r = Run::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let mut nums = value.split(' ').map(|v| v.parse::<f64>().unwrap_or(0.0));
        match key {
            "seconds" => {
                (r.first, r.best) = (nums.next().unwrap_or(0.0), nums.next().unwrap_or(0.0))
            }
            "peak" => r.peak_kib = value.parse().unwrap_or(0),
            "bundles" => r.bundles = value.parse().unwrap_or(0),
            "targets" => r.targets = value.to_owned(),
            "error" => r.errors.push(value.to_owned()),
            _ => {}
        }
    }
    Ok(r)
}

fn mb(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 * 1024.0 / 1e6)
}

fn bench(path: &Path) {
    println!("codeobj_scan {}", path.display());
    let new = match run("new", path) {
        Ok(r) => r,
        Err(e) => return println!("  {e}"),
    };
    let count = new.targets.split_whitespace().count();
    println!(
        "  new: {} bundles, {count} targets: {}",
        new.bundles, new.targets
    );
    if !new.errors.is_empty() {
        println!("  new: errors: {:?}", new.errors);
    }
    println!(
        "  new: {:.4} s (best of 3; first run {:.4} s), peak RSS {}",
        new.best,
        new.first,
        mb(new.peak_kib)
    );
    match run("old", path) {
        Ok(old) if !old.errors.is_empty() => println!("  old: {:?}", old.errors),
        Ok(old) if old.bundles == 0 => println!("  old: no zstd bundles, so no difference"),
        Ok(old) => {
            let agree = match old.targets == new.targets {
                true => "the same as",
                false => "NOT the same as",
            };
            println!(
                "  old: {} zstd bundles decoded the old way: {:.4} s, peak RSS {}; \
                 their targets are {agree} the new way's",
                old.bundles,
                old.first,
                mb(old.peak_kib)
            );
        }
        Err(e) => println!("  old: {e}"),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; the paths are the other arguments.
    let paths: Vec<PathBuf> = std::env::args_os()
        .skip(1)
        .filter(|a| !a.to_string_lossy().starts_with("--"))
        .map(PathBuf::from)
        .collect();
    if let Some(way) = std::env::var_os(CHILD) {
        return child(&way.to_string_lossy(), &paths[0]);
    }
    println!(
        "each way in a process of its own; peak RSS is its VmHWM (/proc/self/status), \
         the process's ~2-3 MB included"
    );
    if paths.is_empty() {
        println!(
            "no PATH given: a synthetic library (16 zstd bundles of 4 MiB, single-segment \
             frames as LLVM writes them); give paths of shared libraries with a .hip_fatbin \
             for real figures"
        );
        let path = synthetic();
        bench(&path);
        let _ = std::fs::remove_file(&path);
    }
    for p in &paths {
        bench(p);
    }
}
