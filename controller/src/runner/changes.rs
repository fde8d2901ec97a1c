//! A configuration the owner's command runs under (what `search` tries and `run` applies), and
//! what it needs on disk for one run, removed after it: a private MIOpen kernel cache and user
//! database (the user's, mode 0700), and the `sitecustomize.py` that turns MIOpen off in
//! PyTorch (root's when root made it: the user reads it, and cannot swap it for a link).

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
    /// False, set by a sitecustomize.py on PYTHONPATH: Python commands only).
    pub miopen_bypassed: bool,
}

/// Imported by Python at start-up from PYTHONPATH: PyTorch's own convolution instead of
/// MIOpen's. `torch.backends.cudnn.enabled` is what ROCm builds check before MIOpen
/// (aten/src/ATen/native/Convolution.cpp, `use_miopen`). Importing torch here costs every
/// Python process of the run torch's start-up time.
pub const SITECUSTOMIZE: &str = "\
# Written by rdna1ctl: PyTorch's own GPU convolution instead of MIOpen's.
try:
    import torch
    torch.backends.cudnn.enabled = False
except Exception:
    pass
";

/// The environment changes of one run, and the directory that backs them.
pub struct Prepared {
    pub env: EnvChanges,
    dir: Option<PathBuf>,
}

impl Prepared {
    /// Makes what `arm` needs for a command run as `user` (None: this process's user).
    /// `python_path` is the PYTHONPATH the command would get.
    pub fn make(
        arm: &Changes,
        user: Option<&RunAs>,
        python_path: Option<OsString>,
    ) -> Result<Prepared> {
        let mut p = Prepared {
            env: EnvChanges {
                set: arm.set.iter().map(|(k, v)| (k.into(), v.into())).collect(),
                unset: arm.unset.iter().map(Into::into).collect(),
            },
            dir: None,
        };
        if !(arm.fresh_miopen || arm.miopen_bypassed) {
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
        if arm.miopen_bypassed {
            // Root's, readable by all: the user cannot swap it or the directory it is in.
            let d = dir.join("python");
            std::fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
            let file = d.join("sitecustomize.py");
            std::fs::File::options()
                .write(true)
                .create_new(true)
                .open(&file)
                .and_then(|mut f| std::io::Write::write_all(&mut f, SITECUSTOMIZE.as_bytes()))
                .with_context(|| format!("writing {}", file.display()))?;
            let mut path = d.into_os_string();
            if let Some(old) = python_path.filter(|o| !o.is_empty()) {
                path.push(":");
                path.push(old);
            }
            p.env.set.push(("PYTHONPATH".into(), path));
        }
        Ok(p)
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

/// A directory the user's MIOpen writes in: made here, then given to the user (mode 0700);
/// nothing is written into it from here.
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

    /// As root for another user: what the command reads (the sitecustomize.py and the
    /// directories above it) stays root's, so the user cannot turn root's own writes into
    /// writes through a link; only the MIOpen directories are the user's.
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
        let p = Prepared::make(&arm, Some(&user), None).unwrap();
        let dir = p.dir.clone().unwrap();
        let meta = |rel: &str| std::fs::symlink_metadata(dir.join(rel)).unwrap();
        for rel in ["", "python", "python/sitecustomize.py"] {
            let m = meta(rel);
            assert_eq!(
                (m.uid(), m.mode() & 0o022),
                (0, 0),
                "{rel:?} must be root's, not writable by others"
            );
        }
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
        for rel in ["miopen-cache", "miopen-db"] {
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
        let p = Prepared::make(&arm, None, Some("/opt/lib".into())).unwrap();
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
        let pp = get("PYTHONPATH");
        let first = pp.to_str().unwrap().split(':').next().unwrap().to_owned();
        assert!(pp.to_str().unwrap().ends_with(":/opt/lib"));
        assert_eq!(
            std::fs::read_to_string(Path::new(&first).join("sitecustomize.py")).unwrap(),
            SITECUSTOMIZE
        );
        let dir = p.dir.clone().unwrap();
        drop(p);
        assert!(!dir.exists());
    }
}
