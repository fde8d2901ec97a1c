//! Marketing names from the system's pci.ids, through `pciid-parser`.
//!
//! `Database::read_from_file` parses all of pci.ids (1.3 MB, 11 ms measured): over status's
//! 5 ms budget. `find_device_name_with_reader` streams the file and stops at the end of the
//! vendor's section: AMD's ends near line 4,400 of 37,000 (0.3 ms).

use std::fs::File;

use crate::sysroot::SysRoot;

/// Where distributions install pci.ids, in `pciid-parser`'s own order: hwdata (Fedora, Arch,
/// and Debian's `hwdata` package), then Debian's `pci.ids` package.
const PCI_IDS: [&str; 2] = ["/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids"];

/// The pci.ids name of `vendor:device`; `None` if no pci.ids is installed, it lacks the device,
/// or it cannot be read (logged: the caller falls back to the chip name).
pub fn device_name(root: &SysRoot, vendor: u16, device: u16) -> Option<String> {
    let (path, file) = PCI_IDS.iter().find_map(|p| {
        let path = root.path(p);
        File::open(&path).ok().map(|f| (path, f))
    })?;
    match pciid_parser::find_device_name_with_reader(file, vendor, device) {
        Ok(name) => name,
        Err(e) => {
            tracing::warn!(
                "reading {}: {e}: showing the chip name instead (reinstall pci.ids)",
                path.display()
            );
            None
        }
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
            "1002 no double space\n",
        );
        assert_eq!(device_name(&root, 0x1002, 0x731f), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
