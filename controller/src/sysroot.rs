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
