//! Marketing names from the system's pci.ids, through `pciid-parser`.
//!
//! Cost matters (status's budget is 5 ms per process). `Database::read_from_file` parses all of
//! pci.ids (1.3 MB, 36,000 lines): 11 ms measured. The crate's streaming
//! `find_device_name_with_reader` stops at the end of the vendor's section but starts at the
//! top of the file each time: 170 us per lookup. So we read the file only up to the end of the
//! vendor's section (vendors are sorted: AMD's ends 154 KB in), keep that section (111 KB for
//! AMD) and let the crate parse just it for each GPU: 115 us per lookup. Finding the section
//! is a byte search for line starts (a vendor line starts with a hex digit, every other line
//! with a tab or `#`), not a second parser: the crate parses every line it is given.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::sysroot::SysRoot;

/// Where distributions install pci.ids, in `pciid-parser`'s own order: hwdata (Fedora, Arch,
/// and Debian's `hwdata` package), then Debian's `pci.ids` package.
const PCI_IDS: [&str; 2] = ["/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids"];

/// One vendor's section of the system's pci.ids.
pub struct VendorIds {
    vendor: u16,
    path: PathBuf,
    /// From the vendor's line to the next vendor's line (or the end of the file).
    section: Vec<u8>,
}

/// Where the line `{vendor:04x}  ` starts in `text`, if it is there (at a line start).
fn vendor_line(text: &[u8], vendor: u16) -> Option<usize> {
    let line = format!("{vendor:04x}  ");
    if text.starts_with(line.as_bytes()) {
        return Some(0);
    }
    let needle = format!("\n{line}");
    let at = text
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())?;
    Some(at + 1)
}

/// Where the first line after `from` that starts with a hex digit (the next vendor) begins.
fn next_vendor_line(text: &[u8], from: usize) -> Option<usize> {
    let rest = text.get(from..)?;
    rest.windows(2)
        .position(|w| w[0] == b'\n' && w[1].is_ascii_hexdigit())
        .map(|p| from + p + 1)
}

/// Reads `r` in chunks until `vendor`'s section is complete; returns just that section, empty
/// if the vendor is not listed.
fn read_section(mut r: impl Read, vendor: u16) -> io::Result<Vec<u8>> {
    let mut text = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    let mut start = None;
    loop {
        let n = r.read(&mut chunk)?;
        text.extend_from_slice(chunk.get(..n).unwrap_or_default());
        // Searching the whole buffer again each time is simple and cheap next to parsing.
        start = start.or_else(|| vendor_line(&text, vendor));
        if let Some(s) = start {
            if let Some(end) = next_vendor_line(&text, s + 1) {
                text.truncate(end);
                return Ok(text.split_off(s));
            }
            if n == 0 {
                return Ok(text.split_off(s));
            }
        } else if n == 0 {
            return Ok(Vec::new());
        }
    }
}

impl VendorIds {
    /// `vendor`'s section of the first pci.ids found below `root`; `None` if none is installed
    /// or readable (logged: the caller falls back to the chip name).
    pub fn load(root: &SysRoot, vendor: u16) -> Option<VendorIds> {
        PCI_IDS.iter().find_map(|p| {
            let path = root.path(p);
            match std::fs::File::open(&path).and_then(|f| read_section(f, vendor)) {
                Ok(section) => Some(VendorIds {
                    vendor,
                    path,
                    section,
                }),
                Err(e) => {
                    log_unreadable(&path, &e);
                    None
                }
            }
        })
    }

    /// The name of `device`; `None` if pci.ids lacks it or cannot be parsed (logged).
    pub fn device_name(&self, device: u16) -> Option<String> {
        let found =
            pciid_parser::find_device_name_with_reader(&self.section[..], self.vendor, device);
        match found {
            Ok(name) => name,
            Err(e) => {
                tracing::warn!(
                    "reading {}: {e}: showing the chip name instead (reinstall pci.ids)",
                    self.path.display()
                );
                None
            }
        }
    }
}

fn log_unreadable(path: &Path, e: &io::Error) {
    if e.kind() == io::ErrorKind::NotFound {
        tracing::debug!("{}: {e}", path.display());
    } else {
        tracing::warn!(
            "reading {}: {e}: showing chip names instead",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root holding `text` at `path`; `tag` keeps concurrent tests apart.
    fn root_with(tag: &str, path: &str, text: &str) -> (std::path::PathBuf, SysRoot) {
        let dir = std::env::temp_dir().join(format!(
            "rdna1ctl-pciids-{tag}-{}-{}",
            std::process::id(),
            path.replace('/', "_")
        ));
        let file = dir.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        (dir.clone(), SysRoot::new(dir))
    }

    fn device_name(root: &SysRoot, vendor: u16, device: u16) -> Option<String> {
        VendorIds::load(root, vendor)?.device_name(device)
    }

    const EXCERPT: &str = "# comment\n1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\
                           \t731f  Navi 10 [Radeon RX 5700 XT]\n\t\t1da2 e411  Radeon RX 5600 XT\n\
                           \t73bf  Navi 21\n10de  NVIDIA Corporation\n\t731f  not AMD's\n";

    #[test]
    fn finds_the_device_in_its_vendors_section_at_either_path() {
        for p in PCI_IDS {
            let (dir, root) = root_with("find", p, EXCERPT);
            assert_eq!(
                device_name(&root, 0x1002, 0x731f).as_deref(),
                Some("Navi 10 [Radeon RX 5700 XT]"),
                "{p}"
            );
            assert_eq!(device_name(&root, 0x1002, 0x7340), None, "{p}: not listed");
            assert_eq!(
                device_name(&root, 0x10de, 0x731f).as_deref(),
                Some("not AMD's")
            );
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn missing_or_broken_file_is_no_name() {
        let none = SysRoot::new(std::env::temp_dir().join("rdna1ctl-no-pciids"));
        assert_eq!(device_name(&none, 0x1002, 0x731f), None);
        let (dir, root) = root_with(
            "broken",
            "/usr/share/misc/pci.ids",
            "1002  AMD\n\t731f no double space\n",
        );
        assert_eq!(device_name(&root, 0x1002, 0x731f), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_section_is_cut_at_vendor_lines_only() {
        let section = |t: &str, v| {
            let s = read_section(t.as_bytes(), v).unwrap();
            String::from_utf8(s).unwrap()
        };
        assert_eq!(section(EXCERPT, 0x1002).lines().count(), 4, "{EXCERPT}");
        assert!(section(EXCERPT, 0x1002).ends_with("Navi 21\n"));
        assert_eq!(
            section(EXCERPT, 0x10de),
            "10de  NVIDIA Corporation\n\t731f  not AMD's\n"
        );
        assert_eq!(section(EXCERPT, 0x8086), "", "not listed");
        // "1002  " inside a name, or after a comment, is no vendor line; the last section runs
        // to the end of the file even without a final newline.
        let t = "1af4  Red Hat 1002  x\n# 1002  no\n1002  AMD\n\t731f  Navi 10";
        assert_eq!(section(t, 0x1002), "1002  AMD\n\t731f  Navi 10");
    }

    #[test]
    fn sections_longer_than_a_read_chunk_are_whole() {
        let mut t = String::from("0001  A\n1002  AMD\n");
        for d in 0..20_000u32 {
            t.push_str(&format!("\t{:04x}  device {d}\n", d % 0x10000));
        }
        t.push_str("10de  NVIDIA\n");
        let s = read_section(t.as_bytes(), 0x1002).unwrap();
        assert!(s.len() > 64 * 1024);
        assert!(s.starts_with(b"1002  AMD\n") && s.ends_with(b"device 19999\n"));
    }
}
