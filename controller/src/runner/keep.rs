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

/// The lines for configuration `id` (`what` it is). A fresh MIOpen cache becomes a private,
/// kept one below the user's `~/.cache/rdna1-mtype/` (empty at first, then reused: stale
/// kernels of other runs are not).
pub fn lines(id: &str, what: &str, arm: &Changes, home: Option<&Path>) -> Vec<String> {
    let mut v = vec![format!("# rdna1ctl search: {id}: {what}")];
    for (k, val) in &arm.set {
        v.push(format!("{k}={}", quote(val)));
    }
    if arm.fresh_miopen {
        let base = home.map_or_else(|| PathBuf::from("/tmp"), |h| h.join(".cache/rdna1-mtype"));
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
        };
        let text = lines("x", "y", &arm, Some(Path::new("/home/u"))).join("\n") + "\n";
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
        std::fs::write(&f, lines("x", "y", &odd, None).join("\n") + "\n").unwrap();
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
}
