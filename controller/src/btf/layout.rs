//! `struct amdgpu_bo`'s layout, from the running kernel's module BTF.

use std::path::Path;

use anyhow::{bail, Context, Result};
use btf_rs::Btf;
use rdna1_mtype_shared::bo::BoLayout;

use crate::btf::query::struct_def;
use crate::sysroot::SysRoot;

pub const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";
pub const AMDGPU_BTF: &str = "/sys/kernel/btf/amdgpu";

/// Reads the layout from `<root>/sys/kernel/btf/{vmlinux,amdgpu}`.
pub fn from_sysfs(root: &SysRoot) -> Result<BoLayout> {
    let (base, split) = (root.path(VMLINUX_BTF), root.path(AMDGPU_BTF));
    if !split.exists() {
        bail!(
            "{} does not exist: amdgpu is not loaded, or this kernel has no module BTF \
             (CONFIG_DEBUG_INFO_BTF_MODULES). Load amdgpu, or give the layout by hand \
             (see docs/DESIGN.md, \"BO classes\")",
            split.display()
        );
    }
    from_files(&base, &split)
}

/// Reads the layout from a base (vmlinux) and a split (amdgpu) BTF file.
pub fn from_files(base: &Path, split: &Path) -> Result<BoLayout> {
    let base_btf =
        Btf::from_file(base).with_context(|| format!("reading BTF {}", base.display()))?;
    let btf = Btf::from_split_file(split, &base_btf)
        .with_context(|| format!("reading BTF {}", split.display()))?;
    layout_of(&btf).with_context(|| format!("in {}", split.display()))
}

fn layout_of(btf: &Btf) -> Result<BoLayout> {
    let s = struct_def(btf, "amdgpu_bo")?;
    Ok(BoLayout {
        size: s.size,
        preferred_domains: s.offset_of("preferred_domains")?,
        tbo: s.offset_of("tbo")?,
        flags: s.offset_of("flags")?,
    })
}

#[cfg(test)]
pub mod tests {
    //! A synthetic split BTF pair.

    use super::*;

    pub use crate::btf::testbtf::BtfWriter;

    /// Writes base + split BTF describing `amdgpu_bo` with the given layout into `dir`.
    pub fn write_pair(
        dir: &Path,
        l: BoLayout,
        with_flags: bool,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let mut base = BtfWriter::new(0, 0);
        let u32_id = base.int("unsigned int", 4);
        let u64_id = base.int("long long unsigned int", 8);
        let ttm = base.structure("ttm_buffer_object", 400, &[("priority", u32_id, 0)]);
        let mut split = BtfWriter::new(base.strings_len(), 3);
        let mut members = vec![
            ("preferred_domains", u32_id, l.preferred_domains),
            ("allowed_domains", u32_id, l.preferred_domains + 4),
            ("tbo", ttm, l.tbo),
        ];
        if with_flags {
            members.push(("flags", u64_id, l.flags));
        }
        split.structure("amdgpu_bo", l.size, &members);
        let (b, s) = (dir.join("vmlinux"), dir.join("amdgpu"));
        std::fs::write(&b, base.bytes()).unwrap();
        std::fs::write(&s, split.bytes()).unwrap();
        (b, s)
    }

    pub const LAYOUT: BoLayout = BoLayout {
        size: 1336,
        preferred_domains: 0,
        tbo: 56,
        flags: 1240,
    };

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rdna1ctl-btf-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_amdgpu_bo_from_split_btf() {
        let d = tmp("ok");
        let (b, s) = write_pair(&d, LAYOUT, true);
        assert_eq!(from_files(&b, &s).unwrap(), LAYOUT);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn missing_member_is_an_error_naming_it() {
        let d = tmp("nomember");
        let (b, s) = write_pair(&d, LAYOUT, false);
        let e = format!("{:#}", from_files(&b, &s).unwrap_err());
        assert!(e.contains("no member flags"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }

    /// A split BTF whose `amdgpu_bo` is defined twice (pahole does not always deduplicate:
    /// Debian 7.3.4's amdgpu.ko has 11 identical definitions), the second at `second`.
    fn write_twice(dir: &Path, second: BoLayout) -> (std::path::PathBuf, std::path::PathBuf) {
        let mut base = BtfWriter::new(0, 0);
        let u32_id = base.int("unsigned int", 4);
        let u64_id = base.int("long long unsigned int", 8);
        let ttm = base.structure("ttm_buffer_object", 400, &[("priority", u32_id, 0)]);
        let mut split = BtfWriter::new(base.strings_len(), 3);
        for l in [LAYOUT, second] {
            split.structure(
                "amdgpu_bo",
                l.size,
                &[
                    ("preferred_domains", u32_id, l.preferred_domains),
                    ("tbo", ttm, l.tbo),
                    ("flags", u64_id, l.flags),
                ],
            );
        }
        let (b, s) = (dir.join("vmlinux"), dir.join("amdgpu"));
        std::fs::write(&b, base.bytes()).unwrap();
        std::fs::write(&s, split.bytes()).unwrap();
        (b, s)
    }

    #[test]
    fn identical_duplicate_definitions_are_one_layout() {
        let d = tmp("dup");
        let (b, s) = write_twice(&d, LAYOUT);
        assert_eq!(from_files(&b, &s).unwrap(), LAYOUT);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn disagreeing_definitions_are_refused_naming_the_member() {
        let d = tmp("dupdiff");
        let (b, s) = write_twice(&d, BoLayout { tbo: 64, ..LAYOUT });
        let e = format!("{:#}", from_files(&b, &s).unwrap_err());
        assert!(
            e.contains("tbo") && e.contains("56") && e.contains("64"),
            "{e}"
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn kernel_without_module_btf_says_what_to_do() {
        let d = tmp("nobtf");
        let e = format!("{:#}", from_sysfs(&SysRoot::new(d.clone())).unwrap_err());
        assert!(e.contains("CONFIG_DEBUG_INFO_BTF_MODULES"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }
}
