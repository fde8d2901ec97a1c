//! The gfx targets in HIP code-object bundles: clang offload bundles, plain or compressed, as
//! they sit in a file (a `.co`/`.hsaco` of rocBLAS or hipBLASLt) or in the `.hip_fatbin`
//! section of a shared library (libtorch_hip.so, libMIOpen.so).
//!
//! Formats, from LLVM (clang/lib/Driver/OffloadBundler.cpp, and the same header in
//! llvm/lib/Object/OffloadBundle.cpp), all little endian:
//! - plain: `__CLANG_OFFLOAD_BUNDLE__`, u64 entry count, then per entry u64 offset, u64 size,
//!   u64 id length and the id (`hipv4-amdgcn-amd-amdhsa--gfx1010`, `host-x86_64-unknown-
//!   linux-gnu-`); offsets count from the bundle's start.
//! - compressed: `CCOB`, u16 version, u16 method (`llvm::compression::Format`: 0 zlib,
//!   1 zstd), then v1: u32 uncompressed size, u64 hash; v2: u32 total size, u32 uncompressed
//!   size, u64 hash; v3: u64 total size, u64 uncompressed size, u64 hash. The payload
//!   decompresses to a plain bundle; the total size counts the header.
//!
//! Reads are bounded: only a bundle's entry table is read (4 KiB, doubled while it is cut
//! short, at most [`HEAD`] bytes, decompressed as far as needed: a zstd frame is decoded with
//! a [`HEAD`]-byte window, see [`bounded_zstd_header`]), a section is scanned in [`CHUNK`]
//! pieces skipping every bundle it has parsed, and at most [`MAX_BUNDLES`] bundles are looked
//! at. Garbage yields errors, never a panic.

use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};

pub const PLAIN_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const CCOB_MAGIC: &[u8] = b"CCOB";

/// Bytes of a (decompressed) bundle read to find its entry ids.
pub const HEAD: usize = 256 * 1024;
/// Bytes read at a time while looking for the next bundle.
const CHUNK: usize = 1 << 20;
/// Bundles looked at per scan.
pub const MAX_BUNDLES: usize = 20_000;
/// Entries believed in one bundle; more means garbage.
const MAX_ENTRIES: u64 = 4096;

/// One bundle's entry ids and how many bytes it spans from its magic, when known.
#[derive(Debug, PartialEq, Eq)]
pub struct Bundle {
    pub ids: Vec<String>,
    pub span: Option<u64>,
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

/// A plain bundle from its first bytes (`head` starts at the magic).
pub fn parse_plain(head: &[u8]) -> Result<Bundle, String> {
    if !head.starts_with(PLAIN_MAGIC) {
        return Err("no __CLANG_OFFLOAD_BUNDLE__ magic".into());
    }
    let mut at = PLAIN_MAGIC.len();
    let n = u64_at(head, at).ok_or("bundle header cut short")?;
    if n == 0 || n > MAX_ENTRIES {
        return Err(format!("implausible bundle entry count {n}"));
    }
    at += 8;
    let mut ids = Vec::new();
    let mut end = 0u64;
    for _ in 0..n {
        let (Some(offset), Some(size), Some(len)) = (
            u64_at(head, at),
            u64_at(head, at + 8),
            u64_at(head, at + 16),
        ) else {
            return Err("bundle entry table cut short".into());
        };
        at += 24;
        let len = usize::try_from(len).map_err(|_| "bundle id length too large")?;
        let id = at
            .checked_add(len)
            .and_then(|e| head.get(at..e))
            .ok_or("bundle entry id cut short")?;
        at += len;
        ids.push(String::from_utf8_lossy(id).into_owned());
        end = end.max(offset.saturating_add(size));
    }
    Ok(Bundle {
        ids,
        span: Some(end.max(at as u64)),
    })
}

/// The header of a compressed bundle: (header length, method, total size if recorded).
fn ccob_header(head: &[u8]) -> Result<(usize, u16, Option<u64>), String> {
    if !head.starts_with(CCOB_MAGIC) {
        return Err("no CCOB magic".into());
    }
    let short = || "compressed bundle header cut short".to_owned();
    let version = u16_at(head, 4).ok_or_else(short)?;
    let method = u16_at(head, 6).ok_or_else(short)?;
    let (len, total) = match version {
        1 => (20, None),
        2 => (24, Some(u64::from(u32_at(head, 8).ok_or_else(short)?))),
        3 => (32, Some(u64_at(head, 8).ok_or_else(short)?)),
        v => return Err(format!("unknown compressed bundle version {v}")),
    };
    if head.len() < len {
        return Err(short());
    }
    if method > 1 {
        return Err(format!("unknown compression method {method}"));
    }
    if let Some(t) = total
        && t < len as u64
    {
        return Err(format!("compressed bundle size {t} below its header"));
    }
    Ok((len, method, total))
}

/// A compressed bundle read from `r`, positioned at its magic: its header, then as much of
/// the payload as its entry table needs (at most [`HEAD`] decompressed bytes, at most `limit`
/// compressed bytes read).
pub fn parse_ccob(r: &mut impl Read, limit: u64) -> Result<Bundle, String> {
    let mut head = [0u8; 32];
    let got = read_up_to(r, &mut head).map_err(|e| e.to_string())?;
    let head = &head[..got];
    // The v1/v2 header is shorter than 32 bytes: what was read beyond it is payload.
    let (len, method, total) = ccob_header(head)?;
    let payload_limit = total.unwrap_or(limit).min(limit).saturating_sub(len as u64);
    let mut payload = std::io::Cursor::new(head[len..].to_vec())
        .chain(r)
        .take(payload_limit);
    let mut dec: Box<dyn Read + '_> = if method == 0 {
        Box::new(flate2::read::ZlibDecoder::new(payload))
    } else {
        let header = std::io::Cursor::new(bounded_zstd_header(&mut payload)?);
        match ruzstd::decoding::StreamingDecoder::new_with_max_window_size(
            header.chain(payload),
            HEAD as u64,
        ) {
            Ok(d) => Box::new(d),
            Err(e) => return Err(format!("compressed bundle does not decompress (zstd: {e})")),
        }
    };
    // Only the entry table is wanted: decompress 4 KiB, then twice as much while the table is
    // cut short, up to HEAD. A bundle of many code objects costs a few KiB, not its size.
    let mut out = Vec::new();
    let mut want = 4096usize;
    let plain = loop {
        let before = out.len();
        let res = (&mut dec)
            .take((want - before) as u64)
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: {e}", if method == 0 { "zlib" } else { "zstd" }));
        match parse_plain(&out) {
            Ok(p) => break p,
            Err(e)
                if e.contains("cut short") && res.is_ok() && out.len() > before && want < HEAD =>
            {
                want = (want * 2).min(HEAD);
            }
            Err(e) => {
                return Err(match res {
                    Err(d) => format!("compressed bundle does not decompress ({d})"),
                    Ok(_) => format!("compressed bundle holds no plain bundle: {e}"),
                });
            }
        }
    };
    Ok(Bundle {
        ids: plain.ids,
        span: total,
    })
}

/// The zstd frame header at the start of `payload`, read, and the header ruzstd is given in
/// its place: the same frame with a [`HEAD`]-byte window and no content size.
///
/// ruzstd's streaming decoder hands out decoded bytes only beyond the window's worth it keeps
/// for back-references, and LLVM's bundler writes single-segment frames (libzstd's choice when
/// it knows the size: the window is the whole bundle) or frames with a 128 MiB window. Read as
/// written, every bundle was decompressed to its end, holding up to a window of it, to read
/// its first KiB. With a [`HEAD`]-byte window, bytes come out once [`HEAD`] and at most one
/// block (128 KiB) more are decoded. The first [`HEAD`] bytes, all that is read, still decode
/// exactly: the decoder drops history only beyond the declared window, so every block that
/// starts within it has all of its history. A back-reference further than that, later in the
/// frame, is an error in ruzstd (offset too big), never wrong bytes.
fn bounded_zstd_header(payload: &mut impl Read) -> Result<Vec<u8>, String> {
    const MAGIC: [u8; 4] = 0xfd2f_b528u32.to_le_bytes();
    const _: () = assert!(HEAD.is_power_of_two() && HEAD >= 1 << 17);
    // Window_Descriptor: exponent (log2 - 10) in the top five bits, mantissa 0.
    const WINDOW: u8 = ((HEAD.ilog2() - 10) as u8) << 3;
    let short = |e: Option<std::io::Error>| match e {
        Some(e) => format!("compressed bundle does not decompress (zstd: {e})"),
        None => "compressed bundle's zstd frame header cut short".to_owned(),
    };
    let mut fixed = [0u8; 5];
    if read_up_to(payload, &mut fixed).map_err(|e| short(Some(e)))? < fixed.len() {
        return Err(short(None));
    }
    if fixed[..4] != MAGIC {
        return Err("compressed bundle holds no zstd frame".into());
    }
    // Frame_Header_Descriptor: content size field size (2 bits), single segment, unused,
    // reserved (must be 0), checksum, dictionary id size (2 bits).
    let descriptor = fixed[4];
    if descriptor & 0b1000 != 0 {
        return Err("compressed bundle's zstd frame header has its reserved bit set".into());
    }
    let single = descriptor & 0b10_0000 != 0;
    let window_len = usize::from(!single);
    let dict_len = [0, 1, 2, 4][usize::from(descriptor & 0b11)];
    let size_len = [usize::from(single), 2, 4, 8][usize::from(descriptor >> 6)];
    let mut rest = [0u8; 1 + 4 + 8];
    let rest = &mut rest[..window_len + dict_len + size_len];
    if read_up_to(payload, rest).map_err(|e| short(Some(e)))? < rest.len() {
        return Err(short(None));
    }
    let mut out = MAGIC.to_vec();
    // The checksum flag and the dictionary id stay; the window is ours; no content size.
    out.push(descriptor & 0b111);
    out.push(WINDOW);
    out.extend(&rest[window_len..window_len + dict_len]);
    Ok(out)
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The gfx processor an entry id names: `hipv4-amdgcn-amd-amdhsa--gfx1010:xnack-` is
/// `gfx1010`, `...--gfx10-1-generic` is `gfx10-1-generic`; host entries name none.
pub fn target_of(id: &str) -> Option<String> {
    if !id.contains("amdgcn-amd-amdhsa") {
        return None;
    }
    let (_, tail) = id.rsplit_once("--")?;
    let proc = tail.split(':').next()?;
    (proc.starts_with("gfx") && proc.len() > 3).then(|| proc.to_owned())
}

/// What a scan found: the targets, the bundles parsed, and the first problems.
#[derive(Debug, Default)]
pub struct Scan {
    pub targets: BTreeSet<String>,
    pub bundles: usize,
    pub errors: Vec<String>,
}

impl Scan {
    fn error(&mut self, e: String) {
        if self.errors.len() < 5 {
            self.errors.push(e);
        }
    }

    fn add(&mut self, b: &Bundle) {
        self.bundles += 1;
        self.targets
            .extend(b.ids.iter().filter_map(|i| target_of(i)));
    }
}

/// Where the first bundle magic, plain or compressed, starts in `hay`: one pass that stops
/// there. (Two searches, one per magic, each ran to the end of the 1 MiB chunk when the
/// other magic was there: most of a debug build's time on librocblas4 and 5.)
fn find_magic(hay: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = hay[from..].iter().position(|&b| b == b'C' || b == b'_') {
        let i = from + k;
        if hay[i..].starts_with(CCOB_MAGIC) || hay[i..].starts_with(PLAIN_MAGIC) {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// The plain bundle at `at`: 4 KiB read, then twice as much while its entry table is cut
/// short, up to [`HEAD`].
fn read_plain<R: Read + Seek>(r: &mut R, at: u64, end: u64) -> Result<Bundle, String> {
    let room = usize::try_from(end - at).unwrap_or(HEAD).min(HEAD);
    let mut want = 4096.min(room);
    loop {
        let mut head = vec![0u8; want];
        let n = r
            .seek(SeekFrom::Start(at))
            .and_then(|_| read_up_to(r, &mut head))
            .map_err(|e| e.to_string())?;
        match parse_plain(&head[..n]) {
            Err(e) if e.contains("cut short") && n == want && want < room => {
                want = (want * 2).min(room);
            }
            other => return other,
        }
    }
}

/// Every bundle in `r` between `start` and `end` (a section or a whole file).
pub fn scan<R: Read + Seek>(r: &mut R, start: u64, end: u64) -> Scan {
    let mut s = Scan::default();
    let mut pos = start;
    let mut buf = vec![0u8; CHUNK];
    while pos < end && s.bundles < MAX_BUNDLES {
        let want = usize::try_from((end - pos).min(CHUNK as u64)).unwrap_or(CHUNK);
        let got = match r
            .seek(SeekFrom::Start(pos))
            .and_then(|_| read_up_to(r, &mut buf[..want]))
        {
            Ok(n) => n,
            Err(e) => {
                s.error(format!("read at {pos}: {e}"));
                break;
            }
        };
        if got == 0 {
            break;
        }
        let hay = &buf[..got];
        let Some(i) = find_magic(hay) else {
            if got < want {
                break;
            }
            // Keep an overlap so a magic cut by the chunk edge is still seen.
            pos += got.saturating_sub(PLAIN_MAGIC.len() - 1).max(1) as u64;
            continue;
        };
        let at = pos + i as u64;
        let parsed = if hay[i..].starts_with(PLAIN_MAGIC) {
            read_plain(r, at, end)
        } else {
            match r.seek(SeekFrom::Start(at)) {
                Ok(_) => parse_ccob(r, end - at),
                Err(e) => Err(e.to_string()),
            }
        };
        match parsed {
            Ok(b) => {
                s.add(&b);
                let span = b.span.unwrap_or(4).max(4);
                pos = at.saturating_add(span);
            }
            Err(e) => {
                s.error(format!("at offset {at}: {e}"));
                pos = at + 4;
            }
        }
    }
    if s.bundles >= MAX_BUNDLES {
        s.error(format!("stopped after {MAX_BUNDLES} bundles"));
    }
    s
}

/// The bundles of the ELF section `.hip_fatbin` of a shared library: `Ok(None)` if the file is
/// an ELF object without that section.
pub fn scan_elf(path: &std::path::Path) -> Result<Option<Scan>, String> {
    use object::{Object, ObjectSection};
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cache = object::ReadCache::new(file);
    let range = {
        let elf = object::File::parse(&cache)
            .map_err(|e| format!("{} is not an ELF object: {e}", path.display()))?;
        match elf.section_by_name(".hip_fatbin") {
            Some(sec) => sec.file_range(),
            None => return Ok(None),
        }
    };
    let Some((off, size)) = range else {
        return Ok(None);
    };
    let mut file = cache.into_inner();
    Ok(Some(scan(&mut file, off, off.saturating_add(size))))
}

/// Builders of bundles for tests and the benchmark's synthetic input.
#[doc(hidden)]
pub mod build {
    use std::io::Write;

    /// A plain bundle with a host entry and one 16-byte code object per target id.
    pub fn plain(ids: &[&str]) -> Vec<u8> {
        plain_with(ids, b"\x7fELF code object")
    }

    /// A plain bundle with a host entry and one code object, `object`, per target id.
    pub fn plain_with(ids: &[&str], object: &[u8]) -> Vec<u8> {
        let mut all = vec!["host-x86_64-unknown-linux-gnu-".to_owned()];
        all.extend(ids.iter().map(|t| format!("hipv4-amdgcn-amd-amdhsa--{t}")));
        let table: usize = all.iter().map(|i| 24 + i.len()).sum();
        let mut data_at = (super::PLAIN_MAGIC.len() + 8 + table) as u64;
        let mut out = super::PLAIN_MAGIC.to_vec();
        out.extend((all.len() as u64).to_le_bytes());
        for (k, id) in all.iter().enumerate() {
            let size = if k == 0 { 0 } else { object.len() as u64 };
            out.extend(data_at.to_le_bytes());
            out.extend(size.to_le_bytes());
            out.extend((id.len() as u64).to_le_bytes());
            out.extend(id.as_bytes());
            data_at += size;
        }
        for _ in 1..all.len() {
            out.extend(object);
        }
        out
    }

    /// `n` bytes that do not compress (a fixed pseudo-random sequence), for code objects
    /// whose compressed size is their size.
    pub fn noise(n: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    /// The smallest ELF64 shared object `object` reads: a `.hip_fatbin` section holding
    /// `fatbin` and the section-name table. No program headers, no symbols.
    pub fn elf_with_fatbin(fatbin: &[u8]) -> Vec<u8> {
        let names = b"\0.hip_fatbin\0.shstrtab\0";
        let data_at = 64u64;
        let names_at = data_at + fatbin.len() as u64;
        let sh_at = (names_at + names.len() as u64).next_multiple_of(8);
        let mut out = Vec::new();
        out.extend(b"\x7fELF\x02\x01\x01\0");
        out.extend([0u8; 8]);
        out.extend(3u16.to_le_bytes()); // ET_DYN
        out.extend(62u16.to_le_bytes()); // EM_X86_64
        out.extend(1u32.to_le_bytes());
        out.extend(0u64.to_le_bytes()); // entry
        out.extend(0u64.to_le_bytes()); // phoff
        out.extend(sh_at.to_le_bytes());
        out.extend(0u32.to_le_bytes()); // flags
        out.extend(64u16.to_le_bytes()); // ehsize
        out.extend(56u16.to_le_bytes()); // phentsize
        out.extend(0u16.to_le_bytes()); // phnum
        out.extend(64u16.to_le_bytes()); // shentsize
        out.extend(3u16.to_le_bytes()); // shnum
        out.extend(2u16.to_le_bytes()); // shstrndx
        out.extend(fatbin);
        out.extend(names);
        out.resize(sh_at as usize, 0);
        let sh = |out: &mut Vec<u8>, name: u32, ty: u32, flags: u64, off: u64, size: u64| {
            out.extend(name.to_le_bytes());
            out.extend(ty.to_le_bytes());
            out.extend(flags.to_le_bytes());
            out.extend(0u64.to_le_bytes()); // addr
            out.extend(off.to_le_bytes());
            out.extend(size.to_le_bytes());
            out.extend(0u32.to_le_bytes()); // link
            out.extend(0u32.to_le_bytes()); // info
            out.extend(1u64.to_le_bytes()); // addralign
            out.extend(0u64.to_le_bytes()); // entsize
        };
        sh(&mut out, 0, 0, 0, 0, 0);
        sh(&mut out, 1, 1, 2, data_at, fatbin.len() as u64); // PROGBITS, ALLOC
        sh(&mut out, 13, 3, 0, names_at, names.len() as u64); // STRTAB
        out
    }

    /// `plain(ids)` compressed: `version` 2 or 3, `zstd` (a single-segment frame, as LLVM's
    /// bundler writes them) or zlib.
    pub fn ccob(ids: &[&str], version: u16, zstd: bool) -> Vec<u8> {
        let inner = plain(ids);
        let body = match zstd {
            true => zstd_frame(&inner, None),
            false => zlib(&inner),
        };
        wrap(&inner, &body, version, zstd)
    }

    /// `body`, `inner` compressed with zstd or zlib, behind a version 2 or 3 `CCOB` header.
    pub fn wrap(inner: &[u8], body: &[u8], version: u16, zstd: bool) -> Vec<u8> {
        let mut out = super::CCOB_MAGIC.to_vec();
        out.extend(version.to_le_bytes());
        out.extend(u16::from(zstd).to_le_bytes());
        match version {
            2 => {
                out.extend(((24 + body.len()) as u32).to_le_bytes());
                out.extend((inner.len() as u32).to_le_bytes());
            }
            _ => {
                out.extend(((32 + body.len()) as u64).to_le_bytes());
                out.extend((inner.len() as u64).to_le_bytes());
            }
        }
        out.extend(0x1234_5678_9abc_def0u64.to_le_bytes());
        out.extend(body);
        out
    }

    /// `inner` as a zlib stream.
    pub fn zlib(inner: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(inner).unwrap();
        z.finish().unwrap()
    }

    /// `inner` as one zstd frame. With `window_log` None the frame is single-segment, as
    /// libzstd writes a frame whose size it knows (LLVM's bundler does): no window
    /// descriptor, the window is the content size (the whole bundle). Else the window is
    /// 2^`window_log` bytes (at least the 128 KiB ruzstd's encoder uses).
    pub fn zstd_frame(inner: &[u8], window_log: Option<u8>) -> Vec<u8> {
        let frame =
            ruzstd::encoding::compress_to_vec(inner, ruzstd::encoding::CompressionLevel::Fastest);
        // ruzstd writes magic, descriptor (no content size, no dictionary) and a window.
        let (magic, descriptor) = (&frame[..4], frame[4]);
        assert_eq!(descriptor & 0b1110_0011, 0, "ruzstd's frame header changed");
        let checksum = descriptor & 0b100;
        let mut out = magic.to_vec();
        match window_log {
            None => {
                out.push(0b1000_0000 | 0b10_0000 | checksum); // 4-byte size, single segment
                out.extend((inner.len() as u32).to_le_bytes());
            }
            Some(log) => {
                assert!(
                    log >= 17 && frame[5] >> 3 <= 7,
                    "a window below the encoder's"
                );
                out.push(checksum);
                out.push((log - 10) << 3);
            }
        }
        out.extend(&frame[6..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    fn scan_bytes(b: &[u8]) -> Scan {
        scan(&mut Cursor::new(b), 0, b.len() as u64)
    }

    #[test]
    fn ids_name_targets() {
        assert_eq!(
            target_of("hipv4-amdgcn-amd-amdhsa--gfx1010").as_deref(),
            Some("gfx1010")
        );
        assert_eq!(
            target_of("hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").as_deref(),
            Some("gfx90a")
        );
        assert_eq!(
            target_of("hipv4-amdgcn-amd-amdhsa--gfx10-1-generic").as_deref(),
            Some("gfx10-1-generic")
        );
        assert_eq!(target_of("host-x86_64-unknown-linux-gnu-"), None);
        assert_eq!(target_of("hipv4-amdgcn-amd-amdhsa--"), None);
    }

    #[test]
    fn plain_bundle_round_trip() {
        let b = build::plain(&["gfx1010", "gfx1030"]);
        let p = parse_plain(&b).unwrap();
        assert_eq!(p.ids.len(), 3);
        assert_eq!(p.span, Some(b.len() as u64));
        let s = scan_bytes(&b);
        assert_eq!(
            s.targets.iter().map(String::as_str).collect::<Vec<_>>(),
            ["gfx1010", "gfx1030"]
        );
        assert_eq!(s.bundles, 1);
    }

    #[test]
    fn compressed_bundles_every_version_and_method() {
        for (v, z) in [(2, true), (2, false), (3, true), (3, false)] {
            let b = build::ccob(&["gfx10-1-generic"], v, z);
            let s = scan_bytes(&b);
            assert_eq!(s.bundles, 1, "v{v} zstd {z}: {s:?}");
            assert!(s.targets.contains("gfx10-1-generic"), "{s:?}");
            assert!(s.errors.is_empty(), "{s:?}");
        }
    }

    #[test]
    fn a_long_entry_table_is_decompressed_as_far_as_needed() {
        let ids: Vec<String> = (0..400).map(|i| format!("gfx{}", 1000 + i)).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        for zstd in [true, false] {
            let b = build::ccob(&refs, 3, zstd);
            let s = scan_bytes(&b);
            assert_eq!(s.targets.len(), 400, "{:?}", s.errors);
        }
        let s = scan_bytes(&build::plain(&refs));
        assert_eq!(s.targets.len(), 400, "{:?}", s.errors);
    }

    /// Counts the bytes read through it.
    struct Counting<R> {
        inner: R,
        read: u64,
    }

    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read += n as u64;
            Ok(n)
        }
    }

    #[test]
    fn a_compressed_bundle_is_read_only_as_far_as_its_entry_table() {
        // LLVM's bundler writes single-segment zstd frames, whose window is the whole bundle,
        // or frames with a 128 MiB window: ruzstd's streaming decoder hands out nothing while
        // it holds less than a window, so every bundle was decompressed whole to read its first
        // KiB (librocblas5: 65 bundles, 1 GB, up to 158 MB each). A 2 MiB code object that
        // does not compress: the reader must stop well before its end.
        let inner = build::plain_with(&["gfx1010", "gfx1012"], &build::noise(1 << 20));
        let single = build::zstd_frame(&inner, None);
        let windowed = build::zstd_frame(&inner, Some(22));
        // A window above 128 MiB was refused; none is needed.
        let huge = build::zstd_frame(&inner, Some(30));
        let zlib = build::zlib(&inner);
        for (what, body, zstd) in [
            ("zstd, single segment", single, true),
            ("zstd, 4 MiB window", windowed, true),
            ("zstd, 1 GiB window", huge, true),
            ("zlib", zlib, false),
        ] {
            for version in [2, 3] {
                let b = build::wrap(&inner, &body, version, zstd);
                let mut r = Counting {
                    inner: Cursor::new(&b),
                    read: 0,
                };
                let p = parse_ccob(&mut r, b.len() as u64);
                let ids = p.map(|p| p.ids.len());
                assert_eq!(ids, Ok(3), "{what}, v{version}");
                assert!(
                    r.read < 1 << 20,
                    "{what}, v{version}: {} of the bundle's {} bytes read",
                    r.read,
                    b.len()
                );
            }
        }
    }

    #[test]
    fn several_bundles_with_padding_between() {
        let mut b = vec![0u8; 100];
        b.extend(build::plain(&["gfx1030"]));
        b.extend(vec![0u8; 4096 - 77]);
        b.extend(build::ccob(&["gfx1010"], 3, true));
        b.extend(vec![0xffu8; 33]);
        b.extend(build::ccob(&["gfx1100"], 2, false));
        let s = scan_bytes(&b);
        assert_eq!(s.bundles, 3, "{s:?}");
        assert_eq!(s.targets.len(), 3, "{s:?}");
    }

    #[test]
    fn the_first_whole_magic_is_found() {
        assert_eq!(find_magic(b"_C__CLANG_OFFLOAD CCO CCOB __CLANG"), Some(22));
        let mut b = b"CCO__".to_vec();
        b.extend(PLAIN_MAGIC);
        b.extend(CCOB_MAGIC);
        assert_eq!(find_magic(&b), Some(5));
        assert_eq!(find_magic(b"CCO"), None);
        assert_eq!(find_magic(b""), None);
    }

    #[test]
    fn magic_across_a_chunk_edge_is_found() {
        let mut b = vec![0u8; CHUNK - 10];
        b.extend(build::plain(&["gfx1012"]));
        assert!(scan_bytes(&b).targets.contains("gfx1012"));
    }

    #[test]
    fn elf_fatbin_section_is_scanned() {
        let dir = std::env::temp_dir().join(format!("rdna1ctl-codeobj-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut fatbin = build::plain(&["gfx1030"]);
        fatbin.extend(build::ccob(&["gfx10-1-generic"], 3, true));
        let so = dir.join("lib.so");
        std::fs::write(&so, build::elf_with_fatbin(&fatbin)).unwrap();
        let s = scan_elf(&so).unwrap().expect("has .hip_fatbin");
        assert_eq!(s.bundles, 2, "{s:?}");
        assert!(s.targets.contains("gfx10-1-generic") && s.targets.contains("gfx1030"));
        // Not ELF: an error; ELF without the section: None.
        std::fs::write(&so, b"not an elf").unwrap();
        assert!(scan_elf(&so).is_err());
        std::fs::write(&so, build::elf_with_fatbin(&[])).unwrap();
        assert_eq!(scan_elf(&so).unwrap().map(|s| s.bundles), Some(0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_headers_are_errors() {
        let mut b = CCOB_MAGIC.to_vec();
        b.extend(9u16.to_le_bytes());
        b.extend([0u8; 30]);
        let s = scan_bytes(&b);
        assert_eq!(s.bundles, 0);
        assert!(s.errors[0].contains("version 9"), "{s:?}");
        let mut b = PLAIN_MAGIC.to_vec();
        b.extend(u64::MAX.to_le_bytes());
        assert!(scan_bytes(&b).errors[0].contains("entry count"));
        // A sane count but an id running past the end.
        let mut b = PLAIN_MAGIC.to_vec();
        b.extend(1u64.to_le_bytes());
        b.extend([0u8; 16]);
        b.extend(u64::MAX.to_le_bytes());
        assert!(!scan_bytes(&b).errors.is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Random bytes, also behind each magic, never panic.
        #[test]
        fn garbage_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..600), which in 0u8..3) {
            let mut b = match which {
                0 => PLAIN_MAGIC.to_vec(),
                1 => CCOB_MAGIC.to_vec(),
                _ => Vec::new(),
            };
            b.extend(tail);
            let _ = scan_bytes(&b);
            let _ = parse_plain(&b);
            let _ = parse_ccob(&mut Cursor::new(&b), b.len() as u64);
        }

        /// A valid compressed bundle with random bytes after its header: no panic.
        #[test]
        fn corrupted_ccob_never_panics(flip in 8usize..64, byte in any::<u8>(), v in 2u16..4) {
            let mut b = build::ccob(&["gfx1010"], v, true);
            if flip < b.len() { b[flip] = byte; }
            let _ = scan_bytes(&b);
        }
    }
}
