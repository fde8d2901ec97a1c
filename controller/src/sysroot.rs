//! The filesystem root that every /sys and /proc path is read under.

use std::io;
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
}
