//! Test helpers: a temporary root tree removed on drop, and a [`Host`] with a fixed
//! environment and rustc.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::sysroot::SysRoot;

use super::host::{Host, User};
use super::{Check, Facts, Input, Status};

/// Options of a kernel rdna1_mtype works on, as in tests/kernel/config/base.config.
pub const KCONFIG_GOOD: &str =
    "CONFIG_RUST=y\nCONFIG_MODULES=y\nCONFIG_FPROBE=y\nCONFIG_FUNCTION_TRACER=y\n\
    CONFIG_FUNCTION_GRAPH_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\nCONFIG_DYNAMIC_FTRACE_WITH_ARGS=y\n\
    CONFIG_KPROBES=y\nCONFIG_DRM_AMDGPU=m\nCONFIG_HSA_AMD=y\nCONFIG_DEBUG_INFO_BTF_MODULES=y\n";

/// A fresh directory below the system temp dir, unique per process and test.
pub struct Tree {
    dir: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Tree {
    pub fn new() -> Tree {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rdna1ctl-doctor-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tree { dir }
    }

    pub fn root(&self) -> SysRoot {
        SysRoot::new(self.dir.clone())
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        self.write_bytes(rel, text.as_bytes());
    }

    pub fn write_bytes(&self, rel: &str, bytes: &[u8]) {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    pub fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.dir.join(rel)).unwrap();
    }

    pub fn symlink(&self, rel: &str, target: &str) {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(Path::new(target), p).unwrap();
    }

    /// An AMD display function at `addr` with `device` id, bound to amdgpu.
    pub fn gpu(&self, addr: &str, device: u16) {
        let d = format!("sys/bus/pci/devices/{addr}");
        self.write(&format!("{d}/vendor"), "0x1002\n");
        self.write(&format!("{d}/device"), &format!("0x{device:04x}\n"));
        self.write(&format!("{d}/class"), "0x030000\n");
        std::fs::create_dir_all(self.path("sys/bus/pci/drivers/amdgpu")).unwrap();
        self.symlink(&format!("{d}/driver"), "../../drivers/amdgpu");
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A host with the given variables, `rustc --version` output, user (default uid 1000 in
/// no supplementary group) and interpreter answer (default: none can be run).
#[derive(Default)]
pub struct FakeHost {
    pub vars: BTreeMap<String, String>,
    pub rustc: Option<String>,
    pub user: Option<User>,
    pub python: Option<Result<String, String>>,
}

impl FakeHost {
    pub fn with_var(mut self, name: &str, value: &str) -> Self {
        self.vars.insert(name.to_owned(), value.to_owned());
        self
    }
}

impl Host for FakeHost {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    fn rustc_version(&self) -> Result<String, String> {
        self.rustc
            .clone()
            .ok_or_else(|| "cannot run rustc from PATH: not found".to_owned())
    }

    fn user(&self) -> User {
        self.user.clone().unwrap_or(User {
            uid: 1000,
            gid: 1000,
            groups: Some(vec![1000]),
            via_sudo: false,
        })
    }

    fn find_torch(&self, python: &Path) -> Result<String, String> {
        self.python
            .clone()
            .unwrap_or_else(|| Err(format!("cannot run {}: not found", python.display())))
    }
}

/// Runs `group` on `tree` with `host` and returns the check named `id`.
pub fn run_check(tree: &Tree, host: &dyn Host, group: fn(&Input) -> Vec<Check>, id: &str) -> Check {
    let root = tree.root();
    let facts = Facts::gather(&root);
    let input = Input::new(&root, host, &facts, None);
    let checks = group(&input);
    let ids: Vec<_> = checks.iter().map(|c| c.id).collect();
    checks
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id} among {ids:?}"))
}

/// Asserts `c` has `status` and its message contains every one of `words`.
#[track_caller]
pub fn assert_check(c: &Check, status: Status, words: &[&str]) {
    assert_eq!(c.status, status, "{c:?}");
    for w in words {
        assert!(c.message.contains(w), "{w:?} not in {c:?}");
    }
    assert_eq!(
        c.fix.is_some(),
        status != Status::Ok,
        "fix iff not ok: {c:?}"
    );
}
