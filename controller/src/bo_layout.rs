//! `struct amdgpu_bo`'s layout, from the running kernel's module BTF.

use std::path::Path;

use anyhow::{bail, Context, Result};
use btf_rs::{Btf, Type};
use rdna1_mtype_shared::bo::BoLayout;

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
    let mut found = Vec::new();
    for t in btf.resolve_types_by_name("amdgpu_bo").unwrap_or_default() {
        if let Type::Struct(s) = t {
            found.push(s);
        }
    }
    let s = match found.as_slice() {
        [s] => s,
        [] => bail!("no struct amdgpu_bo"),
        _ => bail!("{} definitions of struct amdgpu_bo", found.len()),
    };
    let member = |name: &str| -> Result<u32> {
        let mut hits = s
            .members
            .iter()
            .filter(|m| btf.resolve_name(*m).is_ok_and(|n| n == name));
        let m = hits
            .next()
            .with_context(|| format!("struct amdgpu_bo has no member {name}"))?;
        if m.bitfield_size().is_some_and(|b| b != 0) || m.bit_offset() % 8 != 0 {
            bail!("amdgpu_bo.{name} is a bitfield");
        }
        Ok(m.bit_offset() / 8)
    };
    let size = u32::try_from(s.size()).context("struct amdgpu_bo size")?;
    Ok(BoLayout {
        size,
        preferred_domains: member("preferred_domains")?,
        tbo: member("tbo")?,
        flags: member("flags")?,
    })
}

#[cfg(test)]
pub mod tests {
    //! A synthetic split BTF pair, built byte by byte (BTF format: include/uapi/linux/btf.h).

    use super::*;

    const KIND_INT: u32 = 1;
    const KIND_STRUCT: u32 = 4;

    /// A BTF blob under construction. `str_base`/`id_base` are the base's string section
    /// length and type count for split BTF (0/0 for a base).
    pub struct BtfWriter {
        types: Vec<u8>,
        strings: Vec<u8>,
        str_base: u32,
        next_id: u32,
    }

    impl BtfWriter {
        pub fn new(str_base: u32, id_base: u32) -> Self {
            // A base starts its strings with "", a split one continues the base's.
            let strings = if str_base == 0 { vec![0] } else { Vec::new() };
            BtfWriter {
                types: Vec::new(),
                strings,
                str_base,
                next_id: id_base + 1,
            }
        }

        fn str(&mut self, s: &str) -> u32 {
            let off = self.str_base + self.strings.len() as u32;
            self.strings.extend_from_slice(s.as_bytes());
            self.strings.push(0);
            off
        }

        fn words(&mut self, w: &[u32]) {
            for x in w {
                self.types.extend_from_slice(&x.to_le_bytes());
            }
        }

        pub fn int(&mut self, name: &str, bytes: u32) -> u32 {
            let n = self.str(name);
            self.words(&[n, KIND_INT << 24, bytes, bytes * 8]);
            self.next_id += 1;
            self.next_id - 1
        }

        /// `members`: (name, type id, byte offset).
        pub fn structure(&mut self, name: &str, size: u32, members: &[(&str, u32, u32)]) -> u32 {
            let n = self.str(name);
            self.words(&[n, KIND_STRUCT << 24 | members.len() as u32, size]);
            for (mname, ty, off) in members {
                let mn = self.str(mname);
                self.words(&[mn, *ty, off * 8]);
            }
            self.next_id += 1;
            self.next_id - 1
        }

        pub fn strings_len(&self) -> u32 {
            self.strings.len() as u32
        }

        pub fn bytes(&self) -> Vec<u8> {
            let mut out = Vec::new();
            let (tl, sl) = (self.types.len() as u32, self.strings.len() as u32);
            out.extend_from_slice(&0xeb9f_u16.to_le_bytes());
            out.extend_from_slice(&[1, 0]);
            for w in [24u32, 0, tl, tl, sl] {
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(&self.types);
            out.extend_from_slice(&self.strings);
            out
        }
    }

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

    #[test]
    fn kernel_without_module_btf_says_what_to_do() {
        let d = tmp("nobtf");
        let e = format!("{:#}", from_sysfs(&SysRoot::new(d.clone())).unwrap_err());
        assert!(e.contains("CONFIG_DEBUG_INFO_BTF_MODULES"), "{e}");
        std::fs::remove_dir_all(d).unwrap();
    }
}
