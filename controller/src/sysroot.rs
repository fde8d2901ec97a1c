//! The filesystem root that every /sys and /proc path is read under.

use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// A root directory: `/` on a live system, a fixture tree in tests.
#[derive(Clone, Debug)]
pub struct SysRoot {
    base: PathBuf,
}

impl SysRoot {
    pub fn new(base: PathBuf) -> Self {
        SysRoot { base }
    }

    /// The directory itself.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Whether this is the running machine's own `/` (then nothing is said about the root).
    pub fn is_host(&self) -> bool {
        self.base == Path::new("/")
            || std::fs::canonicalize(&self.base).is_ok_and(|p| p == Path::new("/"))
    }

    /// Why this root cannot be read, if it cannot: it does not exist, is no directory, or
    /// (with `needs_sys`) has no `sys/`. `/` always passes. A tree without `sys/` would read
    /// as a healthy machine with no module and no GPU, which is worse than refusing it.
    pub fn problem(&self, needs_sys: bool) -> Option<String> {
        if self.is_host() {
            return None;
        }
        let base = &self.base;
        match std::fs::metadata(base) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Some(format!("{} does not exist", base.display()))
            }
            Err(e) => Some(format!("{} cannot be read: {e}", base.display())),
            Ok(m) if !m.is_dir() => Some(format!("{} is not a directory", base.display())),
            Ok(_) if needs_sys && !base.join("sys").is_dir() => Some(format!(
                "{} has no sys/ directory: not the root of a system tree",
                base.display()
            )),
            Ok(_) => None,
        }
    }

    /// `abs` (an absolute path such as `/sys/module`) below this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.base.join(abs.trim_start_matches('/'))
    }

    /// `p` (a path below this root, as [`SysRoot::path`] makes them) with its symbolic links
    /// followed as the root's own machine would follow them: an absolute link
    /// (`libtorch_hip.so -> /usr/lib/...`, `/opt/rocm -> /etc/alternatives/rocm`) leads to the
    /// root's file, never the host's. The kernel resolves it (openat2 with RESOLVE_IN_ROOT,
    /// Linux 5.6), so `..` and absolute links cannot leave the root. Paths on the host's own
    /// `/` or outside the root come back unchanged; one that does not resolve inside the root
    /// (missing, a loop) comes back unchanged when it is missing here too, else as a path that
    /// cannot exist: the caller's read then fails, never reaching the host's file.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if self.is_host() {
            return p.to_path_buf();
        }
        let Ok(rel) = p.strip_prefix(&self.base) else {
            return p.to_path_buf();
        };
        match self.resolve_in_root(rel) {
            Some(real) => real,
            // Not inside the root, yet there on this machine: a link leading out of the
            // root's files (to the host's /opt/rocm-X, say). A path that cannot exist, so the
            // caller finds nothing rather than the host's file.
            None if p.exists() => self.base.join(".rdna1ctl-unresolved-link").join(rel),
            None => p.to_path_buf(),
        }
    }

    fn resolve_in_root(&self, rel: &Path) -> Option<PathBuf> {
        use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};
        let base = std::fs::File::open(&self.base).ok()?;
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        let fd = openat2(&base, rel, how).ok()?;
        // Where the kernel ended up, as a host path; re-rooted on `base` as given, so that
        // messages can still strip it (`base` may itself be reached through a link).
        let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
        let real_base = std::fs::canonicalize(&self.base).ok()?;
        let inside = real.strip_prefix(&real_base).ok()?;
        Some(self.base.join(inside))
    }

    /// A sysfs attribute, trimmed; `Ok(None)` if it does not exist.
    pub fn read_attr(&self, path: &Path) -> io::Result<Option<String>> {
        match std::fs::read_to_string(path) {
            Ok(s) => Ok(Some(s.trim().to_owned())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_names_what_is_wrong_with_a_root() {
        assert_eq!(SysRoot::new("/".into()).problem(true), None);
        assert!(SysRoot::new("/".into()).is_host());
        let dir = std::env::temp_dir().join(format!("rdna1ctl-sysroot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let missing = SysRoot::new(dir.clone()).problem(false).unwrap();
        assert!(missing.ends_with("does not exist"), "{missing}");
        std::fs::create_dir_all(&dir).unwrap();
        let no_sys = SysRoot::new(dir.clone()).problem(true).unwrap();
        assert!(no_sys.contains("has no sys/ directory"), "{no_sys}");
        assert_eq!(SysRoot::new(dir.clone()).problem(false), None);
        std::fs::write(dir.join("file"), "").unwrap();
        let file = SysRoot::new(dir.join("file")).problem(false).unwrap();
        assert!(file.ends_with("is not a directory"), "{file}");
        std::fs::create_dir(dir.join("sys")).unwrap();
        assert_eq!(SysRoot::new(dir.clone()).problem(true), None);
        assert!(!SysRoot::new(dir.clone()).is_host());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn links_resolve_inside_the_root() {
        let dir = std::env::temp_dir().join(format!("rdna1ctl-resolve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("usr/lib/x")).unwrap();
        std::fs::create_dir_all(dir.join("opt/rocm-7.2.0/lib")).unwrap();
        std::fs::write(dir.join("usr/lib/x/libt.so"), "t").unwrap();
        let link = |at: &str, to: &str| std::os::unix::fs::symlink(to, dir.join(at)).unwrap();
        link("usr/lib/abs.so", "/usr/lib/x/libt.so");
        link("usr/lib/up.so", "../../../../../../usr/lib/x/libt.so");
        link("opt/rocm", "/etc/alternatives/rocm");
        std::fs::create_dir_all(dir.join("etc/alternatives")).unwrap();
        link("etc/alternatives/rocm", "/opt/rocm-7.2.0");
        link("loop", "/loop");
        let root = SysRoot::new(dir.clone());
        let r = |p: &str| root.resolve(&root.path(p));
        assert_eq!(r("/usr/lib/abs.so"), dir.join("usr/lib/x/libt.so"));
        // `..` stops at the root, as at `/`.
        assert_eq!(r("/usr/lib/up.so"), dir.join("usr/lib/x/libt.so"));
        // Links in the middle of a path, through the root's /etc/alternatives.
        assert_eq!(r("/opt/rocm/lib"), dir.join("opt/rocm-7.2.0/lib"));
        // A link to something the root lacks but the host has is not followed on the host.
        link("opt/bin", "/usr/bin");
        assert!(Path::new("/usr/bin").exists() && !dir.join("usr/bin").exists());
        assert!(
            !r("/opt/bin").exists(),
            "{} leads to the host's /usr/bin",
            r("/opt/bin").display()
        );
        // Missing files and loops come back as they were.
        assert_eq!(r("/nowhere/x"), dir.join("nowhere/x"));
        assert_eq!(r("/loop"), dir.join("loop"));
        // The host's root and paths outside the root are left alone.
        let host = SysRoot::new("/".into());
        assert_eq!(host.resolve(Path::new("/usr/lib")), Path::new("/usr/lib"));
        assert_eq!(
            root.resolve(Path::new("/elsewhere")),
            Path::new("/elsewhere")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
