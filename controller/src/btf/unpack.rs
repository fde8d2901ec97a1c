//! BTF out of a kernel's files as distributions install them: the `.BTF` section of an ELF
//! object (amdgpu.ko, vmlinux), the object compressed (`.ko.xz`, `.ko.zst`, `.ko.gz`), and the
//! vmlinux inside a bzImage (`vmlinuz`: a setup header and a compressed payload).

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};
use object::{Object, ObjectSection};

/// The largest file unpacked: a vmlinux is ~70 MiB, amdgpu.ko ~40 MiB with BTF.
const MAX_UNPACKED: u64 = 1 << 30;

/// The bytes of `path`, decompressed according to its name (`.xz`, `.zst`, `.gz`).
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let out = if name.ends_with(".xz") {
        decompress(Format::Xz, &raw)
    } else if name.ends_with(".zst") {
        decompress(Format::Zstd, &raw)
    } else if name.ends_with(".gz") {
        decompress(Format::Gzip, &raw)
    } else {
        Ok(raw)
    };
    out.with_context(|| format!("decompressing {}", path.display()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Xz,
    Zstd,
    Gzip,
}

fn decompress(format: Format, data: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match format {
        Format::Xz => {
            // A dictionary of at most 256 MiB, as zstd's window limit below: a corrupt header
            // cannot make the decoder allocate more (xz -9 uses 64 MiB). Starts at 1 MiB, what
            // kmod's xz modules use. The reader wants an owned source: the compressed bytes
            // are copied once (a few MiB).
            let decoder = xz4rust::XzDecoder::in_heap_with_alloc_dict_size(1 << 20, 1 << 28);
            let buffer = std::num::NonZeroUsize::new(64 * 1024).expect("not zero");
            xz4rust::XzReader::new_with_buffer_size_and_decoder(
                std::io::Cursor::new(data.to_vec()),
                buffer,
                decoder,
            )
            .take(MAX_UNPACKED)
            .read_to_end(&mut out)?;
        }
        Format::Zstd => {
            // A kernel payload is one frame, compressed with a window up to 128 MiB (zstd -22
            // --ultra); bzImage appends its size after the frame, which is not read.
            ruzstd::decoding::StreamingDecoder::new_with_max_window_size(data, 1 << 28)
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .take(MAX_UNPACKED)
                .read_to_end(&mut out)?;
        }
        Format::Gzip => {
            flate2::read::GzDecoder::new(data)
                .take(MAX_UNPACKED)
                .read_to_end(&mut out)?;
        }
    }
    Ok(out)
}

/// The contents of section `.BTF` of an ELF object.
pub fn btf_section(elf: &[u8], what: &Path) -> Result<Vec<u8>> {
    let file = object::File::parse(elf)
        .with_context(|| format!("{} is not an ELF object", what.display()))?;
    let section = file.section_by_name(".BTF").ok_or_else(|| {
        anyhow::Error::new(super::NotRead::NoBtf(format!(
            "{} has no .BTF section: its kernel was built without CONFIG_DEBUG_INFO_BTF \
             (module BTF needs CONFIG_DEBUG_INFO_BTF_MODULES)",
            what.display()
        )))
    })?;
    let data = section
        .data()
        .with_context(|| format!("reading .BTF of {}", what.display()))?;
    Ok(data.to_vec())
}

/// Whether the ELF object `elf` has a section `name`.
pub fn has_section(elf: &[u8], name: &str, what: &Path) -> Result<bool> {
    let file = object::File::parse(elf)
        .with_context(|| format!("{} is not an ELF object", what.display()))?;
    Ok(file.section_by_name(name).is_some())
}

/// The vmlinux ELF inside a kernel image: a bzImage (x86 boot protocol 2.08+: the payload's
/// place is in the setup header) or a vmlinux itself.
pub fn vmlinux_from_image(image: &[u8], what: &Path) -> Result<Vec<u8>> {
    if image.starts_with(b"\x7fELF") {
        return Ok(image.to_vec());
    }
    // Documentation/arch/x86/boot.rst: "HdrS" at 0x202, setup_sects at 0x1f1 (0 means 4),
    // payload_offset/payload_length at 0x248/0x24c, relative to the protected-mode code, which
    // starts after the (setup_sects + 1) 512-byte sectors.
    let u32_at = |off: usize| -> Option<u32> {
        let b = image.get(off..off + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if image.get(0x202..0x206) != Some(b"HdrS") {
        bail!("{} is neither a bzImage nor an ELF vmlinux", what.display());
    }
    let setup_sects = match image.get(0x1f1) {
        Some(0) => 4,
        Some(n) => usize::from(*n),
        None => bail!("{}: truncated setup header", what.display()),
    };
    let (Some(off), Some(len)) = (u32_at(0x248), u32_at(0x24c)) else {
        bail!("{}: truncated setup header", what.display());
    };
    let start = (setup_sects + 1) * 512 + off as usize;
    let payload = start
        .checked_add(len as usize)
        .and_then(|end| image.get(start..end))
        .with_context(|| format!("{}: payload outside the file", what.display()))?;
    let format = if payload.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Format::Zstd
    } else if payload.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Format::Xz
    } else if payload.starts_with(&[0x1f, 0x8b]) {
        Format::Gzip
    } else {
        let name = match payload.get(..4) {
            Some([0x02, 0x21, 0x4c, 0x18]) => "lz4",
            Some([b'B', b'Z', b'h', _]) => "bzip2",
            Some([0x89, b'L', b'Z', b'O']) => "lzo",
            Some([0x5d, 0, 0, _]) => "lzma",
            _ => "an unknown format",
        };
        bail!(
            "{}: the kernel is compressed with {name}; rdna1ctl reads zstd, xz and gzip. \
             Give the running kernel's BTF instead (boot it: /sys/kernel/btf)",
            what.display()
        );
    };
    decompress(format, payload).with_context(|| format!("decompressing {}", what.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::testbtf::elf_with_btf;

    /// The plaintext of tests/fixtures/xz (its README): an x86 `call rel32` and filler.
    fn x86_pattern() -> Vec<u8> {
        let mut out = Vec::new();
        let mut i: u32 = 0;
        while out.len() < 65536 {
            out.push(0xe8);
            out.extend_from_slice(&i.wrapping_mul(37).to_le_bytes());
            out.extend_from_slice(&[0x90, 0x48, 0x89, 0xc7]);
            i += 1;
        }
        out.truncate(65536);
        out
    }

    fn xz_fixture(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/xz")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The kernel's xz (vmlinuz, kmod's .ko.xz) uses the x86 BCJ filter and CRC32.
    #[test]
    fn xz_with_the_x86_filter_and_either_check() {
        for name in ["bcj-x86-crc32.xz", "lzma2-crc64.xz"] {
            let out = decompress(Format::Xz, &xz_fixture(name)).unwrap();
            assert!(
                out == x86_pattern(),
                "{name}: {} bytes, not the pattern",
                out.len()
            );
        }
    }

    #[test]
    fn corrupt_xz_is_an_error_not_a_panic() {
        let mut data = xz_fixture("bcj-x86-crc32.xz");
        let mid = data.len() / 2;
        data[mid] ^= 0xff;
        assert!(decompress(Format::Xz, &data).is_err());
        assert!(decompress(Format::Xz, &data[..100]).is_err());
        assert!(decompress(Format::Xz, b"not xz at all").is_err());
    }

    #[test]
    fn btf_section_of_an_elf_object() {
        let elf = elf_with_btf(b"BTF bytes");
        assert_eq!(btf_section(&elf, Path::new("x.ko")).unwrap(), b"BTF bytes");
    }

    #[test]
    fn object_without_btf_names_the_config_option() {
        let mut elf = elf_with_btf(b"x");
        // Rename the section to ".BTG".
        let at = elf.windows(5).position(|w| w == b".BTF\0").unwrap();
        elf[at + 3] = b'G';
        let e = format!("{:#}", btf_section(&elf, Path::new("x.ko")).unwrap_err());
        assert!(e.contains("CONFIG_DEBUG_INFO_BTF"), "{e}");
    }

    fn bzimage(payload: &[u8]) -> Vec<u8> {
        let setup_sects = 3u8;
        let mut img = vec![0u8; (usize::from(setup_sects) + 1) * 512];
        img[0x1f1] = setup_sects;
        img[0x202..0x206].copy_from_slice(b"HdrS");
        let off = 100u32;
        img[0x248..0x24c].copy_from_slice(&off.to_le_bytes());
        img[0x24c..0x250].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        img.resize(img.len() + off as usize, 0xcc);
        img.extend_from_slice(payload);
        img.extend_from_slice(&[1, 2, 3, 4]); // the size trailer bzImage carries
        img
    }

    #[test]
    fn vmlinux_from_a_gzip_bzimage() {
        use flate2::write::GzEncoder;
        use std::io::Write;
        let vmlinux = elf_with_btf(b"base");
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&vmlinux).unwrap();
        let img = bzimage(&gz.finish().unwrap());
        let got = vmlinux_from_image(&img, Path::new("vmlinuz")).unwrap();
        assert_eq!(btf_section(&got, Path::new("vmlinux")).unwrap(), b"base");
    }

    #[test]
    fn unsupported_compression_is_named() {
        let img = bzimage(&[0x02, 0x21, 0x4c, 0x18, 0, 0]);
        let e = format!(
            "{:#}",
            vmlinux_from_image(&img, Path::new("vmlinuz")).unwrap_err()
        );
        assert!(e.contains("lz4"), "{e}");
    }

    #[test]
    fn truncated_image_is_an_error_not_a_panic() {
        let mut img = bzimage(b"\x28\xb5\x2f\xfd");
        img.truncate(0x250);
        img[0x24c..0x250].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(vmlinux_from_image(&img, Path::new("vmlinuz")).is_err());
        assert!(vmlinux_from_image(b"HdrS", Path::new("vmlinuz")).is_err());
    }
}
