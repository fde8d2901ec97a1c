//! Where a kernel's amdgpu and image are, as installed: the amdgpu.ko modprobe would load and
//! the vmlinuz its base BTF is in.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::sysroot::SysRoot;

/// Module file names, in the order tried within one directory.
const MODULE_NAMES: [&str; 4] = ["amdgpu.ko", "amdgpu.ko.zst", "amdgpu.ko.xz", "amdgpu.ko.gz"];

/// `/lib/modules/KVER` and `/usr/lib/modules/KVER` that exist under `root` (one if they are
/// the same directory, as with merged /usr).
pub fn module_dirs(root: &SysRoot, kver: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut seen = Vec::new();
    for base in ["/lib/modules", "/usr/lib/modules"] {
        let d = root.path(&format!("{base}/{kver}"));
        if let Ok(c) = d.canonicalize()
            && !seen.contains(&c)
        {
            seen.push(c);
            dirs.push(d);
        }
    }
    dirs
}

/// The amdgpu module modprobe would load for `kver`: the one `modules.dep` names if depmod has
/// run; otherwise the first found in `updates/` (kmod's default search: `updates built-in`),
/// `extra/` (where Fedora's and some DKMS packages put theirs) and then the kernel's own.
pub fn amdgpu_module(root: &SysRoot, kver: &str) -> Result<PathBuf> {
    let dirs = module_dirs(root, kver);
    if dirs.is_empty() {
        bail!(
            "kernel {kver} is not installed: neither /lib/modules/{kver} nor \
             /usr/lib/modules/{kver} exists{}",
            root_note(root)
        );
    }
    for dir in &dirs {
        if let Some(p) = from_modules_dep(dir) {
            return Ok(p);
        }
    }
    for dir in &dirs {
        for sub in ["updates", "extra"] {
            if let Some(p) = find_module(&dir.join(sub), 0) {
                return Ok(p);
            }
        }
        if let Some(p) = first_existing(&dir.join("kernel/drivers/gpu/drm/amd/amdgpu")) {
            return Ok(p);
        }
    }
    bail!(
        "kernel {kver} has no amdgpu module under {}: install its modules package \
         (Debian/Ubuntu: linux-modules-{kver}; Fedora: kernel-modules; Arch: the kernel package)",
        dirs[0].display()
    )
}

fn root_note(root: &SysRoot) -> String {
    let base = root.path("/");
    if base == Path::new("/") {
        String::new()
    } else {
        format!(" under {}", base.display())
    }
}

fn from_modules_dep(dir: &Path) -> Option<PathBuf> {
    let dep = std::fs::read_to_string(dir.join("modules.dep")).ok()?;
    dep.lines().find_map(|line| {
        let (module, _) = line.split_once(':')?;
        let name = Path::new(module).file_name()?.to_str()?;
        if !MODULE_NAMES.contains(&name) {
            return None;
        }
        // Paths are relative to the modules directory (absolute in old depmod output).
        let p = dir.join(module.trim_start_matches('/'));
        p.exists().then_some(p)
    })
}

fn first_existing(dir: &Path) -> Option<PathBuf> {
    MODULE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

fn find_module(dir: &Path, depth: u32) -> Option<PathBuf> {
    if depth > 8 {
        return None;
    }
    if let Some(p) = first_existing(dir) {
        return Some(p);
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    subdirs.into_iter().find_map(|d| find_module(&d, depth + 1))
}

/// The kernel image of `kver`: `/boot/vmlinuz-KVER` (as installed by Debian's and Ubuntu's
/// maintainer scripts) or `/usr/lib/modules/KVER/vmlinuz` (where Debian's 7.x packages, Fedora
/// and Arch ship it).
pub fn kernel_image(root: &SysRoot, kver: &str) -> Result<PathBuf> {
    let candidates = [
        format!("/boot/vmlinuz-{kver}"),
        format!("/usr/lib/modules/{kver}/vmlinuz"),
        format!("/lib/modules/{kver}/vmlinuz"),
    ];
    for c in &candidates {
        let p = root.path(c);
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "no image of kernel {kver} ({}){}: its base BTF is in the image. Install the kernel \
         image package, or run check-kernel while {kver} is running",
        candidates.join(", "),
        root_note(root)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rdna1ctl-locate-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"x").unwrap();
    }

    #[test]
    fn updates_before_the_kernels_own() {
        let d = tree("updates");
        let m = d.join("usr/lib/modules/7.3.4");
        touch(&m.join("kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.xz"));
        touch(&m.join("updates/dkms/amdgpu.ko.zst"));
        let got = amdgpu_module(&SysRoot::new(d.clone()), "7.3.4").unwrap();
        assert_eq!(got, m.join("updates/dkms/amdgpu.ko.zst"));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn modules_dep_decides_when_present() {
        let d = tree("dep");
        let m = d.join("lib/modules/7.2.13");
        touch(&m.join("kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.xz"));
        touch(&m.join("extra/amdgpu.ko"));
        std::fs::write(
            m.join("modules.dep"),
            "kernel/drivers/gpu/drm/drm.ko.xz:\n\
             kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.xz: kernel/drivers/gpu/drm/drm.ko.xz\n",
        )
        .unwrap();
        let got = amdgpu_module(&SysRoot::new(d.clone()), "7.2.13").unwrap();
        assert_eq!(
            got,
            m.join("kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko.xz")
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn missing_kernel_and_image_say_what_to_install() {
        let d = tree("none");
        let root = SysRoot::new(d.clone());
        let e = format!("{:#}", amdgpu_module(&root, "7.0.0-5-generic").unwrap_err());
        assert!(e.contains("is not installed"), "{e}");
        touch(&d.join("lib/modules/7.0.0-5-generic/modules.order"));
        let e = format!("{:#}", amdgpu_module(&root, "7.0.0-5-generic").unwrap_err());
        assert!(e.contains("linux-modules-7.0.0-5-generic"), "{e}");
        let e = format!("{:#}", kernel_image(&root, "7.0.0-5-generic").unwrap_err());
        assert!(e.contains("/boot/vmlinuz-7.0.0-5-generic"), "{e}");
        touch(&d.join("usr/lib/modules/7.0.0-5-generic/vmlinuz"));
        assert!(kernel_image(&root, "7.0.0-5-generic").is_ok());
        std::fs::remove_dir_all(d).unwrap();
    }
}
