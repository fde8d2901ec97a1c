//! The winning configuration as an environment file, and reading one back for `rdna1ctl run`.
//!
//! Plain `NAME=value` lines (shell- and systemd-`EnvironmentFile`-compatible) for the variables
//! the command gets, and `RDNA1_*` lines that `rdna1ctl run` acts on itself:
//! `RDNA1_UNSET` (names removed from the environment), `RDNA1_MTYPE_MODE` (the module's mode
//! for the command's run: needs root), `RDNA1_MIOPEN=bypassed` (the sitecustomize.py that turns
//! MIOpen off in PyTorch), `RDNA1_MIOPEN_BYPASS_FOR` (the same for some layer kinds only,
//! `|`-separated in the check's words), `RDNA1_SDPA_OFF` and `RDNA1_BF16_AS` (kernel choices the
//! check makes inside the program: switches.py). Read as systemd reads an `EnvironmentFile=` (`env_file`): literally,
//! no `$` expansion.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use rdna1_mtype_shared::policy::Mode;

use super::changes::{Changes, IN_PROCESS, TRITON_DIRS};
use super::env_file;
use crate::exit::{coded, Code};

/// What a kept configuration says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    pub set: Vec<(String, String)>,
    pub unset: Vec<String>,
    pub mtype: Option<Mode>,
    pub miopen_bypassed: bool,
    /// MIOpen bypassed for these layer kinds only.
    pub bypass_kinds: Vec<String>,
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
    if arm.fresh_triton {
        if let Some(n) = base.note.as_ref().filter(|_| !arm.fresh_miopen) {
            v.push(format!("# {n}"));
        }
        for (var, sub) in TRITON_DIRS {
            v.push(format!(
                "{var}={}",
                quote(&base.dir.join(sub).to_string_lossy())
            ));
        }
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
    } else if !arm.bypass_kinds.is_empty() {
        v.push(format!(
            "RDNA1_MIOPEN_BYPASS_FOR={}",
            quote(&arm.bypass_kinds.join("|"))
        ));
    }
    v
}

/// `s` as it is when plain, else single-quoted: read literally by systemd, `rdna1ctl run` and
/// `sh` (no `$`, backtick or backslash expansion). A value holding a single quote or a line
/// break cannot be single-quoted: it is double-quoted, with the four characters both the shell
/// and systemd unescape there (`\`, `"`, `$` and `` ` ``) escaped.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        s.to_owned()
    } else if !s.contains(['\'', '\n']) {
        format!("'{s}'")
    } else {
        let mut q = String::from('"');
        for c in s.chars() {
            if matches!(c, '\\' | '"' | '$' | '`') {
                q.push('\\');
            }
            q.push(c);
        }
        q.push('"');
        q
    }
}

/// Checks `search --keep FILE` before the first run, so a search of minutes does not end in a
/// file it cannot write: FILE's directory exists (as `search` resolves it: relative to the
/// working directory) and FILE is not a directory. A FILE that cannot be is a usage error.
pub fn check_target(path: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let shown = path.display();
    let usage = |m: String| Err(coded(Code::Usage, m));
    if path.as_os_str().is_empty() {
        return usage("--keep needs a file name, e.g. --keep ~/.config/rdna1-gpu.env".into());
    }
    let example = path.join("rdna1-gpu.env");
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return usage(format!(
            "--keep {shown} is a directory: give a file in it, e.g. --keep {}",
            example.display()
        ));
    }
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return usage(format!(
            "--keep {shown} names a directory (it ends in /): give a file, e.g. --keep {}",
            example.display()
        ));
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = abs.parent().unwrap_or(Path::new("/"));
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => usage(format!(
            "--keep {shown}: {} is not a directory: give a file in a directory",
            dir.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => usage(format!(
            "--keep {shown}: the directory {0} does not exist: create it (mkdir -p {0}) or give \
             a file in an existing directory",
            dir.display()
        )),
        Err(e) => {
            let what = format!(
                "--keep {shown}: cannot look at the directory {}: {e}: give a file in a \
                 directory you can write",
                dir.display()
            );
            Err(anyhow::Error::new(e).context(what))
        }
    }
}

/// Reads a kept configuration.
pub fn read(path: &Path) -> Result<Kept> {
    let bytes = std::fs::read(path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            ": give the file `rdna1ctl search --keep FILE` wrote"
        } else {
            ""
        };
        let what = format!("reading {}: {e}{hint}", path.display());
        anyhow::Error::new(e).context(what)
    })?;
    let assignments = env_file::parse(&bytes)
        .map_err(|e| anyhow!("{}:{}: {}", path.display(), e.line, e.what))?;
    let mut k = Kept::default();
    for env_file::Assignment { line, name, value } in assignments {
        let at = format!("{}:{line}", path.display());
        match name.as_str() {
            "RDNA1_UNSET" => k.unset.extend(value.split_whitespace().map(str::to_owned)),
            "RDNA1_MTYPE_MODE" => {
                k.mtype = Some(Mode::parse(value.as_bytes()).with_context(|| {
                    format!("{at}: RDNA1_MTYPE_MODE={value}: give off, audit or enforce")
                })?);
            }
            "RDNA1_MIOPEN" if value == "bypassed" => k.miopen_bypassed = true,
            "RDNA1_MIOPEN_BYPASS_FOR" => k.bypass_kinds.extend(
                value
                    .split('|')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            ),
            n if IN_PROCESS.contains(&n) => k.set.push((name, value)),
            n if n.starts_with("RDNA1_") => {
                bail!("{at}: {name} is not a setting rdna1ctl run knows (RDNA1_UNSET, RDNA1_MTYPE_MODE, RDNA1_MIOPEN=bypassed, RDNA1_MIOPEN_BYPASS_FOR, RDNA1_SDPA_OFF, RDNA1_BF16_AS)")
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
    fn a_bypass_for_some_layer_kinds_reads_back_as_written() {
        let arm = Changes {
            bypass_kinds: vec!["BatchNorm2d training".into(), "Conv2d 1x1".into()],
            mtype: Some("off"),
            ..Changes::default()
        };
        let home = CacheBase {
            dir: PathBuf::from("/home/u/.cache/rdna1-mtype"),
            note: None,
        };
        let text = lines("x", "y", &arm, &home).join("\n") + "\n";
        assert!(
            text.contains("RDNA1_MIOPEN_BYPASS_FOR='BatchNorm2d training|Conv2d 1x1'\n"),
            "{text}"
        );
        let f = std::env::temp_dir().join(format!("rdna1ctl-keep-for-{}", std::process::id()));
        std::fs::write(&f, &text).unwrap();
        let k = read(&f).unwrap();
        std::fs::remove_file(&f).unwrap();
        assert_eq!(k.bypass_kinds, ["BatchNorm2d training", "Conv2d 1x1"]);
        assert!(!k.miopen_bypassed && k.set.is_empty());
    }

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
            fresh_triton: true,
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
        assert!(k.set.contains(&(
            "TRITON_CACHE_DIR".into(),
            "/home/u/.cache/rdna1-mtype/triton-cache".into()
        )));
        // A kernel choice of the check's reads back as the variable the check reads.
        let choice = Changes {
            set: vec![("RDNA1_SDPA_OFF".into(), "flash|efficient".into())],
            ..Changes::default()
        };
        std::fs::write(&f, lines("x", "y", &choice, &home).join("\n") + "\n").unwrap();
        let k = read(&f).unwrap();
        assert_eq!(k.set, [("RDNA1_SDPA_OFF".into(), "flash|efficient".into())]);
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
        // Whatever a value holds comes back as it was: shell and systemd specials, a single
        // quote (written double-quoted), a line break.
        for v in [
            "$HOME",
            "${HOME}/x",
            "`id`",
            "$(id)",
            "a\\b\\",
            "say \"hi\"",
            "  two  spaces  ",
            "it's $HOME",
            "it's \"`x`\" \\$y\\",
            "line\nbreak",
            "#not a comment",
            "",
        ] {
            let odd = Changes {
                set: vec![("V".into(), v.into())],
                ..Changes::default()
            };
            std::fs::write(&f, lines("x", "y", &odd, &home).join("\n") + "\n").unwrap();
            let k = read(&f).unwrap_or_else(|e| panic!("{v:?}: {e:#}"));
            assert_eq!(k.set, [("V".to_owned(), v.to_owned())], "{v:?}");
            // And `set -a; . FILE` reads the same.
            let sh = std::process::Command::new("sh")
                .arg("-c")
                .arg("set -a; . \"$1\"; printf %s \"$V\"")
                .arg("sh")
                .arg(&f)
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&sh.stdout), v, "sh: {v:?}");
        }
        std::fs::remove_file(&f).unwrap();
    }

    /// `text` written to a file of this test's own, and read.
    fn read_text(name: &str, text: &[u8]) -> (String, Result<Kept>) {
        let f = std::env::temp_dir().join(format!("rdna1ctl-keep-{name}-{}", std::process::id()));
        std::fs::write(&f, text).unwrap();
        let r = read(&f);
        std::fs::remove_file(&f).unwrap();
        (f.display().to_string(), r)
    }

    fn set_of(k: &Kept) -> Vec<(&str, &str)> {
        k.set
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn the_file_is_read_as_systemd_reads_an_environment_file() {
        let text = "# a comment\n\
                    ; another comment\n\
                    \n\
                    \x20 \t\n\
                    A=$HOME\n\
                    B=\"${HOME}x\"\n\
                    C='$HOME \\n'\n\
                    D=  spaced   value  \n\
                    E=\"a\\\"b\\\\c\\$d\\`e\\qf\"\n\
                    F=one\\\n\
                    two\n\
                    G=x\\ \n\
                    H=\n\
                    \x20 I = 1\n\
                    J=\"multi\n\
                    line\"\n\
                    K=a\\tb\n\
                    L=x # not a comment\n\
                    M=\"cont\\\n\
                    inued\"\n\
                    N=last";
        let (_, r) = read_text("systemd", text.as_bytes());
        let k = r.unwrap();
        assert_eq!(
            set_of(&k),
            [
                ("A", "$HOME"),
                ("B", "${HOME}x"),
                ("C", "$HOME \\n"),
                ("D", "spaced   value"),
                ("E", "a\"b\\c$d`e\\qf"),
                ("F", "onetwo"),
                ("G", "x "),
                ("H", ""),
                ("I", "1"),
                ("J", "multi\nline"),
                ("K", "atb"),
                ("L", "x # not a comment"),
                ("M", "continued"),
                ("N", "last"),
            ]
        );
    }

    #[test]
    fn the_keep_target_is_checked_before_the_search() {
        let d = std::env::temp_dir().join(format!("rdna1ctl-keep-target-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("a-file");
        std::fs::write(&file, "").unwrap();
        let msg = |p: &Path| {
            let e = check_target(p).unwrap_err();
            assert_eq!(crate::exit::code_of(&e), Code::Usage, "{e:#}");
            format!("{e:#}")
        };
        // Fine: a new file or one to replace, in an existing directory.
        check_target(&d.join("gpu.env")).unwrap();
        check_target(&file).unwrap();
        // Relative: in the working directory.
        check_target(Path::new("gpu.env")).unwrap();
        // The directory is missing.
        let m = msg(&d.join("no/such/gpu.env"));
        assert!(m.contains("does not exist"), "{m}");
        assert!(
            m.contains(&format!("mkdir -p {}", d.join("no/such").display())),
            "{m}"
        );
        // The "directory" is a file.
        let m = msg(&file.join("gpu.env"));
        assert!(m.contains("is not a directory"), "{m}");
        // FILE is a directory, or names one with a trailing slash.
        let m = msg(&d);
        assert!(m.contains("is a directory"), "{m}");
        assert!(
            m.contains(&d.join("rdna1-gpu.env").display().to_string()),
            "{m}"
        );
        let m = msg(Path::new(&format!("{}/new/", d.display())));
        assert!(m.contains("names a directory"), "{m}");
        assert!(msg(Path::new("")).contains("needs a file name"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_missing_file_says_which_to_give() {
        let e = read(Path::new("/nonexistent/gpu.env")).unwrap_err();
        let m = crate::exit::message(&e);
        assert!(
            m.starts_with("reading /nonexistent/gpu.env: No such file or directory"),
            "{m}"
        );
        assert!(m.ends_with("`rdna1ctl search --keep FILE` wrote"), "{m}");
    }

    #[test]
    fn no_variable_is_expanded() {
        // HOME is set under cargo test; an expanding reader would put its value in.
        let (_, r) = read_text("expand", b"A=$HOME\nB=\"${HOME}/x\"\n");
        assert_eq!(set_of(&r.unwrap()), [("A", "$HOME"), ("B", "${HOME}/x")]);
    }

    #[test]
    fn rdna1_unset_takes_several_names() {
        let (_, r) = read_text("unset", b"RDNA1_UNSET='A  B\tC'\nRDNA1_UNSET=D E\n");
        assert_eq!(r.unwrap().unset, ["A", "B", "C", "D", "E"]);
    }

    #[test]
    fn a_bad_file_is_named_with_its_line_what_is_wrong_and_what_to_do() {
        let cases: [(&str, &[u8], usize, &str); 11] = [
            ("bom", b"\xef\xbb\xbfA=1\n", 1, "byte order mark"),
            ("crlf", b"A=1\r\nB=2\r\n", 1, "CRLF"),
            ("nul", b"A=1\nB=x\0y\n", 2, "NUL"),
            ("utf8", b"A=1\n\nB=\xff\n", 3, "UTF-8"),
            ("noeq", b"A=1\nJUST_A_NAME\n", 2, "not NAME=value"),
            ("squote", b"A=1\nB='open\nC=2\n", 2, "never closed"),
            ("dquote", b"A=\"open\n", 1, "never closed"),
            ("name", b"A=1\n2B=x\n", 2, "not a valid variable name"),
            ("export", b"export A=1\n", 1, "not a valid variable name"),
            ("cr", b"A=1\n\nB=2\rC=3\n", 3, "carriage return"),
            ("nonchar", "A=1\nB=\u{fffe}\n".as_bytes(), 2, "U+FFFE"),
        ];
        for (name, text, line, what) in cases {
            let (f, r) = read_text(name, text);
            let e = format!("{:#}", r.expect_err(name));
            assert!(e.starts_with(&format!("{f}:{line}: ")), "{name}: {e}");
            assert!(e.contains(what), "{name}: {e}");
        }
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
