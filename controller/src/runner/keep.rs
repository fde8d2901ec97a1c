//! The winning configuration as an environment file, and reading one back for `rdna1ctl run`.
//!
//! Plain `NAME=value` lines (shell- and systemd-`EnvironmentFile`-compatible) for the variables
//! the command gets, and `RDNA1_*` lines that `rdna1ctl run` acts on itself:
//! `RDNA1_UNSET` (names removed from the environment), `RDNA1_MTYPE_MODE` (the module's mode
//! for the command's run: needs root), `RDNA1_MIOPEN=bypassed` (the sitecustomize.py that turns
//! MIOpen off in PyTorch). Read with `dotenvy`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rdna1_mtype_shared::policy::Mode;

use super::changes::Changes;

/// What a kept configuration says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    pub set: Vec<(String, String)>,
    pub unset: Vec<String>,
    pub mtype: Option<Mode>,
    pub miopen_bypassed: bool,
}

/// Where a kept configuration's private MIOpen cache lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheBase {
    pub dir: PathBuf,
    /// Why it is not below the user's home, when it is not.
    pub note: Option<String>,
}

/// The user's `~/.cache/rdna1-mtype` when that home exists; else beside the kept file (a
/// directory the user chose: `rdna1-mtype-cache` next to it); else the home's path all the
/// same, with a note to edit it (a user whose home does not exist, and nothing kept).
pub fn cache_base(home: Option<&Path>, keep_to: Option<&Path>) -> CacheBase {
    if let Some(h) = home.filter(|h| h.is_absolute() && h.is_dir()) {
        return CacheBase {
            dir: h.join(".cache/rdna1-mtype"),
            note: None,
        };
    }
    let shown = home.map_or_else(|| "(none)".into(), |h| h.display().to_string());
    if let Some(dir) = keep_to
        .map(|k| std::path::absolute(k).unwrap_or_else(|_| k.to_path_buf()))
        .and_then(|k| k.parent().map(Path::to_path_buf))
    {
        return CacheBase {
            dir: dir.join("rdna1-mtype-cache"),
            note: Some(format!(
                "the home directory {shown} does not exist: MIOpen's cache is kept beside this file"
            )),
        };
    }
    CacheBase {
        dir: home
            .map_or_else(|| PathBuf::from("/nonexistent"), Path::to_path_buf)
            .join(".cache/rdna1-mtype"),
        note: Some(format!(
            "the home directory {shown} does not exist: edit the two MIOpen paths below to a \
             directory you own"
        )),
    }
}

/// The lines for configuration `id` (`what` it is). A fresh MIOpen cache becomes a private,
/// kept one below `base` (empty at first, then reused: stale kernels of other runs are not;
/// `rdna1ctl run` makes it as the user).
pub fn lines(id: &str, what: &str, arm: &Changes, base: &CacheBase) -> Vec<String> {
    let mut v = vec![format!("# rdna1ctl search: {id}: {what}")];
    for (k, val) in &arm.set {
        v.push(format!("{k}={}", quote(val)));
    }
    if arm.fresh_miopen {
        if let Some(n) = &base.note {
            v.push(format!("# {n}"));
        }
        let base = &base.dir;
        v.push(format!(
            "MIOPEN_CUSTOM_CACHE_DIR={}",
            quote(&base.join("miopen-cache").to_string_lossy())
        ));
        v.push(format!(
            "MIOPEN_USER_DB_PATH={}",
            quote(&base.join("miopen-db").to_string_lossy())
        ));
    }
    if !arm.unset.is_empty() {
        v.push(format!("RDNA1_UNSET={}", quote(&arm.unset.join(" "))));
    }
    // The mode the run had, off too: `run` reproduces it (or says it needs root to).
    if let Some(m) = arm.mtype {
        v.push(format!("RDNA1_MTYPE_MODE={m}"));
    }
    if arm.miopen_bypassed {
        v.push("RDNA1_MIOPEN=bypassed".into());
    }
    v
}

/// `s` as it is when plain, else single-quoted: read literally by dotenvy and by `sh` (no `$`,
/// backtick or backslash expansion). A single quote or a line break cannot be kept so: the
/// line says so instead.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        s.to_owned()
    } else if !s.contains(['\'', '\n']) {
        format!("'{s}'")
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Reads a kept configuration.
pub fn read(path: &Path) -> Result<Kept> {
    let iter =
        dotenvy::from_path_iter(path).with_context(|| format!("reading {}", path.display()))?;
    let mut k = Kept::default();
    for item in iter {
        let (name, value) =
            item.with_context(|| format!("{}: not NAME=value lines", path.display()))?;
        match name.as_str() {
            "RDNA1_UNSET" => k.unset.extend(value.split_whitespace().map(str::to_owned)),
            "RDNA1_MTYPE_MODE" => {
                k.mtype = Some(Mode::parse(value.as_bytes()).with_context(|| {
                    format!(
                        "{}: RDNA1_MTYPE_MODE={value}: give off, audit or enforce",
                        path.display()
                    )
                })?);
            }
            "RDNA1_MIOPEN" if value == "bypassed" => k.miopen_bypassed = true,
            n if n.starts_with("RDNA1_") => {
                bail!("{}: {name} is not a setting rdna1ctl run knows (RDNA1_UNSET, RDNA1_MTYPE_MODE, RDNA1_MIOPEN=bypassed)", path.display())
            }
            _ => k.set.push((name, value)),
        }
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_as_written() {
        let arm = Changes {
            set: vec![
                ("HSA_OVERRIDE_GFX_VERSION".into(), "10.1.0".into()),
                ("A".into(), "two words".into()),
            ],
            unset: vec!["ROCR_VISIBLE_DEVICES".into()],
            mtype: Some("enforce"),
            fresh_miopen: true,
            miopen_bypassed: true,
            bypass_kinds: vec![],
        };
        let home = CacheBase {
            dir: PathBuf::from("/home/u/.cache/rdna1-mtype"),
            note: None,
        };
        let text = lines("x", "y", &arm, &home).join("\n") + "\n";
        let f = std::env::temp_dir().join(format!("rdna1ctl-keep-{}", std::process::id()));
        std::fs::write(&f, &text).unwrap();
        let k = read(&f).unwrap();
        assert_eq!(k.mtype, Some(Mode::Enforce));
        assert!(k.miopen_bypassed);
        assert_eq!(k.unset, ["ROCR_VISIBLE_DEVICES"]);
        assert!(k.set.contains(&("A".into(), "two words".into())));
        assert!(k.set.contains(&(
            "MIOPEN_USER_DB_PATH".into(),
            "/home/u/.cache/rdna1-mtype/miopen-db".into()
        )));
        // Values are read back literally: no $ expansion from the reader's environment.
        let odd = Changes {
            set: vec![("P".into(), "/home/a$HOME/`x` y".into())],
            mtype: Some("off"),
            ..Changes::default()
        };
        std::fs::write(&f, lines("x", "y", &odd, &home).join("\n") + "\n").unwrap();
        let k = read(&f).unwrap();
        assert_eq!(k.set, [("P".to_owned(), "/home/a$HOME/`x` y".to_owned())]);
        // The mode the winner ran under is kept, off too: run then reproduces it.
        assert_eq!(k.mtype, Some(Mode::Off));
        std::fs::write(&f, "RDNA1_MTYPE_MODE=fast\n").unwrap();
        assert!(format!("{:#}", read(&f).unwrap_err()).contains("give off, audit or enforce"));
        std::fs::write(&f, "RDNA1_OTHER=1\n").unwrap();
        assert!(format!("{:#}", read(&f).unwrap_err()).contains("not a setting"));
        std::fs::remove_file(&f).unwrap();
    }

    #[test]
    fn a_user_without_a_home_keeps_the_cache_beside_the_kept_file() {
        let tmp = std::env::temp_dir();
        let b = cache_base(Some(&tmp), Some(Path::new("/elsewhere/gpu.env")));
        assert_eq!((b.dir, b.note), (tmp.join(".cache/rdna1-mtype"), None));
        let none = Path::new("/nonexistent");
        let b = cache_base(Some(none), Some(Path::new("/srv/u/gpu.env")));
        assert_eq!(b.dir, Path::new("/srv/u/rdna1-mtype-cache"));
        assert!(b.note.unwrap().contains("/nonexistent does not exist"));
        let b = cache_base(Some(none), None);
        assert_eq!(b.dir, Path::new("/nonexistent/.cache/rdna1-mtype"));
        assert!(b.note.unwrap().contains("edit the two MIOpen paths"));
    }
}
