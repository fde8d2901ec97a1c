//! A configuration the owner's command runs under (what `search` tries and `run` applies), and
//! what it needs for one run, removed after it: a private MIOpen kernel cache and user database
//! (the user's, mode 0700), and the in-process check: the shipped `python/` directory first on
//! PYTHONPATH (its sitecustomize.py loads rdna1_check.py, which bypasses MIOpen when asked and
//! records every convolution and batch norm) with a directory the user's processes write their
//! records to (the user's, mode 0700), inside a directory of root's when root made it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use serde::Serialize;

use super::user::RunAs;
use super::workload::EnvChanges;

/// What a configuration changes for the command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Changes {
    /// Variables set for the command.
    pub set: Vec<(String, String)>,
    /// Variables removed from the command's environment.
    pub unset: Vec<String>,
    /// The module's mode during the run; null without the module.
    pub mtype: Option<&'static str>,
    /// A private, empty MIOpen kernel cache and user database for the run
    /// (MIOPEN_CUSTOM_CACHE_DIR, MIOPEN_USER_DB_PATH), removed afterwards.
    pub fresh_miopen: bool,
    /// PyTorch's own GPU convolution instead of MIOpen's (torch.backends.cudnn.enabled =
    /// False, set by rdna1ctl's sitecustomize.py when the command imports torch: Python
    /// commands only, and only credited where the check saw it in effect).
    pub miopen_bypassed: bool,
    /// MIOpen bypassed for these layer kinds only (the check's words: `BatchNorm2d training`,
    /// `Conv2d 1x1`; a kind matches every layer whose kind starts with it): PyTorch's own GPU
    /// kernels for them, MIOpen for the rest (Python commands only, credited where seen).
    pub bypass_kinds: Vec<String>,
    /// Private, empty Triton and Inductor caches for the run (TRITON_CACHE_DIR,
    /// TORCHINDUCTOR_CACHE_DIR), removed afterwards: kernels compiled before, under other
    /// settings, are not reused (unsloth #11614: a stale cache brings the broken ones back).
    pub fresh_triton: bool,
}

/// Variables rdna1ctl's in-process check reads to make a kernel choice inside the program
/// (dist/field-kit/python/rdna1_check/switches.py): attention kernels off, bfloat16 answered
/// with float16 or float32. A configuration that sets one needs the check loaded.
pub const IN_PROCESS: [&str; 2] = ["RDNA1_SDPA_OFF", "RDNA1_BF16_AS"];

/// The Triton and Inductor cache variables, and the directory each gets.
pub const TRITON_DIRS: [(&str, &str); 2] = [
    ("TRITON_CACHE_DIR", "triton-cache"),
    ("TORCHINDUCTOR_CACHE_DIR", "inductor-cache"),
];

impl Changes {
    /// Whether it needs rdna1ctl's check inside the program: MIOpen bypassed, or a kernel
    /// choice of switches.py.
    pub fn in_process(&self) -> bool {
        self.miopen_bypassed || !self.bypass_kinds.is_empty() || self.switches()
    }

    /// Whether it sets a kernel choice of switches.py.
    pub fn switches(&self) -> bool {
        self.set
            .iter()
            .any(|(k, _)| IN_PROCESS.contains(&k.as_str()))
    }
}

/// The in-process check for a run: where it is installed, and whether it checks numbers
/// (else it only records each layer's device and backend).
#[derive(Clone, Debug)]
pub struct CheckSetup {
    pub python_dir: PathBuf,
    pub numerics: bool,
}

/// The check's variables rdna1ctl sets: whatever the invoking environment had is replaced (its
/// test switches, RDNA1_CHECK_SELF_TEST_CPU and RDNA1_CHECK_TEST_WRONG, pass through).
const CHECK_VARS: [&str; 4] = [
    "RDNA1_CHECK_DIR",
    "RDNA1_CHECK",
    "RDNA1_MIOPEN_BYPASS",
    "RDNA1_MIOPEN_BYPASS_KINDS",
];

/// The environment changes of one run, and the directory that backs them.
pub struct Prepared {
    pub env: EnvChanges,
    dir: Option<PathBuf>,
    records: Option<PathBuf>,
}

impl Prepared {
    /// Makes what `arm` needs for a command run as `user` (None: this process's user).
    /// `python_path` is the PYTHONPATH the command would get; `check` the in-process check
    /// (needed for a bypass).
    pub fn make(
        arm: &Changes,
        user: Option<&RunAs>,
        python_path: Option<OsString>,
        check: Option<&CheckSetup>,
    ) -> Result<Prepared> {
        let mut p = Prepared {
            env: EnvChanges {
                set: arm.set.iter().map(|(k, v)| (k.into(), v.into())).collect(),
                unset: arm.unset.iter().map(Into::into).collect(),
                mkdir: Vec::new(),
            },
            dir: None,
            records: None,
        };
        if arm.in_process() && check.is_none() {
            anyhow::bail!(
                "{} needs rdna1ctl's check in the program, and its python/sitecustomize.py is \
                 not installed (reinstall rdna1-mtype)",
                if arm.switches() {
                    "a kernel choice made inside the program (RDNA1_SDPA_OFF, RDNA1_BF16_AS)"
                } else {
                    "MIOpen's bypass"
                }
            );
        }
        if !(arm.fresh_miopen || arm.fresh_triton || check.is_some()) {
            return Ok(p);
        }
        let dir = private_dir(user)?;
        p.dir = Some(dir.clone());
        if arm.fresh_miopen {
            for (var, sub) in [
                ("MIOPEN_CUSTOM_CACHE_DIR", "miopen-cache"),
                ("MIOPEN_USER_DB_PATH", "miopen-db"),
            ] {
                let d = dir.join(sub);
                mkdir_for(&d, user)?;
                p.env.set.push((var.into(), d.into_os_string()));
            }
        }
        if arm.fresh_triton {
            for (var, sub) in TRITON_DIRS {
                let d = dir.join(sub);
                mkdir_for(&d, user)?;
                p.env.set.push((var.into(), d.into_os_string()));
            }
        }
        if let Some(c) = check {
            let records = dir.join("check");
            mkdir_for(&records, user)?;
            p.env.unset.extend(CHECK_VARS.iter().map(OsString::from));
            p.env
                .set
                .push(("RDNA1_CHECK_DIR".into(), records.clone().into_os_string()));
            if c.numerics {
                p.env.set.push(("RDNA1_CHECK".into(), "numerics".into()));
            }
            if arm.miopen_bypassed {
                p.env.set.push(("RDNA1_MIOPEN_BYPASS".into(), "1".into()));
            } else if !arm.bypass_kinds.is_empty() {
                p.env.set.push((
                    "RDNA1_MIOPEN_BYPASS_KINDS".into(),
                    arm.bypass_kinds.join("|").into(),
                ));
            }
            let mut path = c.python_dir.clone().into_os_string();
            if let Some(old) = python_path.filter(|o| !o.is_empty()) {
                path.push(":");
                path.push(old);
            }
            p.env.set.push(("PYTHONPATH".into(), path));
            p.records = Some(records);
        }
        Ok(p)
    }

    /// The check's records of the run so far (none without the check).
    pub fn records(&self) -> Vec<serde_json::Value> {
        self.records
            .as_deref()
            .map(super::check::read_dir)
            .unwrap_or_default()
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some(d) = self.dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A new directory for one run, mode 0755 and owned by whoever made it, so the user reads what
/// is in it and cannot replace any of it. For another user (root runs the command as them):
/// below /tmp, never a TMPDIR from that user's environment.
fn private_dir(user: Option<&RunAs>) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let base = match user {
        Some(_) => PathBuf::from("/tmp"),
        None => std::env::temp_dir(),
    };
    let template = base.join("rdna1ctl-search.XXXXXX");
    let dir = nix::unistd::mkdtemp(&template)
        .with_context(|| format!("creating a directory like {}", template.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("opening {} to the user", dir.display()))?;
    Ok(dir)
}

/// A directory the user's processes write in: made here, then given to the user (mode
/// 0700); nothing is written into it from here.
fn mkdir_for(d: &Path, user: Option<&RunAs>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir(d).with_context(|| format!("creating {}", d.display()))?;
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))?;
    chown(d, user)
}

fn chown(p: &Path, user: Option<&RunAs>) -> Result<()> {
    if let Some(u) = user {
        std::os::unix::fs::chown(p, Some(u.uid), Some(u.gid))
            .with_context(|| format!("giving {} to uid {}", p.display(), u.uid))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn setup() -> CheckSetup {
        CheckSetup {
            python_dir: "/usr/share/rdna1-mtype/python".into(),
            numerics: true,
        }
    }

    /// As root for another user: the directory above stays root's, so the user cannot turn
    /// root's own writes into writes through a link; only the MIOpen and record directories
    /// are the user's.
    #[test]
    fn as_root_the_user_owns_only_the_miopen_directories() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: needs root (chown)");
            return;
        }
        let user = RunAs {
            uid: 65534,
            gid: 65534,
            groups: vec![65534],
            name: None,
            home: None,
            source: "--user",
        };
        let arm = Changes {
            fresh_miopen: true,
            miopen_bypassed: true,
            ..Changes::default()
        };
        let p = Prepared::make(&arm, Some(&user), None, Some(&setup())).unwrap();
        let dir = p.dir.clone().unwrap();
        let meta = |rel: &str| std::fs::symlink_metadata(dir.join(rel)).unwrap();
        let m = meta("");
        assert_eq!(
            (m.uid(), m.mode() & 0o022),
            (0, 0),
            "the run's directory must be root's, not writable by others"
        );
        assert!(
            dir.starts_with("/tmp"),
            "not below a TMPDIR the user chose: {}",
            dir.display()
        );
        assert_eq!(
            meta("").mode() & 0o005,
            0o005,
            "the user must reach the files"
        );
        for rel in ["miopen-cache", "miopen-db", "check"] {
            assert_eq!(meta(rel).uid(), 65534, "{rel}");
        }
    }

    #[test]
    fn dirs_are_made_and_removed() {
        let arm = Changes {
            fresh_miopen: true,
            miopen_bypassed: true,
            set: vec![("MIOPEN_DEBUG_CONV_FFT".into(), "0".into())],
            ..Changes::default()
        };
        let p = Prepared::make(&arm, None, Some("/opt/lib".into()), Some(&setup())).unwrap();
        let get = |k: &str| {
            p.env
                .set
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| PathBuf::from(v))
                .unwrap()
        };
        assert!(get("MIOPEN_CUSTOM_CACHE_DIR").is_dir());
        assert!(get("MIOPEN_USER_DB_PATH").is_dir());
        assert_eq!(
            get("PYTHONPATH"),
            Path::new("/usr/share/rdna1-mtype/python:/opt/lib")
        );
        assert!(get("RDNA1_CHECK_DIR").is_dir());
        assert_eq!(get("RDNA1_MIOPEN_BYPASS"), Path::new("1"));
        assert_eq!(get("RDNA1_CHECK"), Path::new("numerics"));
        // An inherited setting of the check's is replaced, not mixed in.
        assert!(p.env.unset.iter().any(|v| v == "RDNA1_MIOPEN_BYPASS"));
        // A bypass needs the check's sitecustomize.
        let e = Prepared::make(&arm, None, None, None).err().unwrap();
        assert!(e.to_string().contains("not installed"), "{e}");
        let dir = p.dir.clone().unwrap();
        drop(p);
        assert!(!dir.exists());
    }

    #[test]
    fn triton_caches_are_made_and_removed_and_a_switch_needs_the_check() {
        let arm = Changes {
            fresh_triton: true,
            set: vec![("AMDGCN_USE_BUFFER_OPS".into(), "0".into())],
            ..Changes::default()
        };
        let p = Prepared::make(&arm, None, None, None).unwrap();
        let dirs: Vec<PathBuf> = TRITON_DIRS
            .iter()
            .map(|(k, _)| {
                p.env
                    .set
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| PathBuf::from(v))
                    .unwrap_or_else(|| panic!("{k} not set"))
            })
            .collect();
        assert!(dirs.iter().all(|d| d.is_dir()), "{dirs:?}");
        drop(p);
        assert!(dirs.iter().all(|d| !d.exists()), "{dirs:?}");
        let switch = Changes {
            set: vec![("RDNA1_SDPA_OFF".into(), "flash".into())],
            ..Changes::default()
        };
        assert!(switch.in_process());
        let e = Prepared::make(&switch, None, None, None).err().unwrap();
        assert!(e.to_string().contains("RDNA1_SDPA_OFF"), "{e}");
    }
}
