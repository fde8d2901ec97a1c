//! What rdna1ctl ships for the runs, and the command they execute: the owner's, or the layer
//! battery (`battery.py`) run by `--python` or python3; and the in-process check
//! (`python/sitecustomize.py`, `python/rdna1_check.py`) that Python commands load. Installed in
//! /usr/share/rdna1-mtype/; in the source tree, dist/field-kit/.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::exit::{coded, Code};

/// Where `make install` puts the files, relative to the prefix.
pub const SHARE: &str = "share/rdna1-mtype";
/// The same files in the source tree.
const IN_TREE: &str = "dist/field-kit";
/// The battery, in that directory.
pub const BATTERY: &str = "battery.py";
/// The check's directory (put on PYTHONPATH), in that directory.
pub const PYTHON_DIR: &str = "python";
/// Names the shipped directory instead (a source tree's dist/field-kit, for a binary built
/// elsewhere): looked at first.
pub const SHARE_ENV: &str = "RDNA1CTL_SHARE";

/// Where to look for the shipped directory, in order, for the binary at `exe`: `$RDNA1CTL_SHARE`,
/// beside the prefix the binary is installed in (`/usr/bin` → `/usr/share/...`),
/// `/usr/share/...`, then the source tree the binary was built in (target/debug,
/// target/vm/TRIPLE/release: up to five levels up).
pub fn candidates(exe: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os(SHARE_ENV)
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    let dir = exe.parent();
    if let Some(prefix) = dir.and_then(Path::parent) {
        out.push(prefix.join(SHARE));
    }
    out.push(Path::new("/usr").join(SHARE));
    let mut up = dir;
    for _ in 0..5 {
        let Some(d) = up else { break };
        out.push(d.join(IN_TREE));
        up = d.parent();
    }
    out.dedup();
    out
}

/// The first of [`candidates`] that holds `rel`.
fn shipped(exe: &Path, rel: &str) -> Option<PathBuf> {
    candidates(exe)
        .into_iter()
        .map(|d| d.join(rel))
        .find(|p| p.exists())
}

/// The in-process check's directory (holding `sitecustomize.py`), if installed.
pub fn python_dir(exe: &Path) -> Option<PathBuf> {
    shipped(exe, &format!("{PYTHON_DIR}/sitecustomize.py"))
        .and_then(|p| p.parent().map(Path::to_path_buf))
}

/// The argv the runs execute: `command` if given, else `python battery.py` with the script
/// given (`--script`) or the shipped one.
pub fn argv(
    command: &[OsString],
    python: Option<&Path>,
    script: Option<&Path>,
    exe: &Path,
) -> anyhow::Result<Vec<OsString>> {
    if !command.is_empty() {
        return Ok(command.to_vec());
    }
    let script = match script {
        Some(s) => {
            if !s.is_file() {
                return Err(coded(
                    Code::Usage,
                    format!("--script {}: no such file", s.display()),
                ));
            }
            s.to_path_buf()
        }
        None => shipped(exe, BATTERY).ok_or_else(|| {
            coded(
                Code::Error,
                format!(
                    "the layer battery is not installed (looked for /usr/{SHARE}/{BATTERY} and \
                     beside {}): reinstall rdna1-mtype, or give --script PATH or -- COMMAND",
                    exe.display()
                ),
            )
        })?,
    };
    // Absolute: the command runs in the current directory, as another user.
    let script = std::path::absolute(&script).unwrap_or(script);
    let python = python.map_or_else(|| OsString::from("python3"), |p| p.as_os_str().to_owned());
    Ok(vec![python, script.into_os_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_then_system_then_source_tree() {
        let c = candidates(Path::new("/usr/local/bin/rdna1ctl"));
        assert_eq!(c[0], Path::new("/usr/local/share/rdna1-mtype"));
        assert_eq!(c[1], Path::new("/usr/share/rdna1-mtype"));
        let c = candidates(Path::new("/src/rdna1-mtype/target/debug/rdna1ctl"));
        assert!(
            c.contains(&PathBuf::from("/src/rdna1-mtype/dist/field-kit")),
            "{c:?}"
        );
    }

    #[test]
    fn the_shipped_files_are_found_from_a_build_in_the_tree() {
        // A binary where cargo puts it by default (target/debug/deps): the tree's
        // dist/ is found from there. (Not this test's own path: make test keeps cargo's
        // target directory in its cache, outside the tree.)
        let tree = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let exe = tree.join("target/debug/deps/rdna1ctl-0");
        let a = argv(&[], None, None, &exe).unwrap();
        assert_eq!(a[0], "python3");
        assert!(
            Path::new(&a[1]).ends_with("dist/field-kit/battery.py"),
            "{a:?}"
        );
        assert!(python_dir(&exe).unwrap().ends_with("dist/field-kit/python"));
        let a = argv(&[], Some(Path::new("/venv/bin/python")), None, &exe).unwrap();
        assert_eq!(a[0], "/venv/bin/python");
        let own = vec![OsString::from("./train.sh"), OsString::from("--epochs=1")];
        assert_eq!(argv(&own, None, None, &exe).unwrap(), own);
        let e = argv(&[], None, Some(Path::new("/nonexistent.py")), &exe).unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::Usage);
        let e = argv(&[], None, None, Path::new("/nonexistent/bin/rdna1ctl"));
        // Only where no battery is installed system-wide.
        if !Path::new("/usr/share/rdna1-mtype/battery.py").exists() {
            assert!(e.unwrap_err().to_string().contains("--script"));
        }
    }
}
