//! The command the runs execute: the owner's, or the Conv2d script shipped with rdna1ctl
//! (installed as /usr/share/rdna1-mtype/conv2d.py; in the source tree dist/field-kit/conv2d.py)
//! run by `--python` or python3.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::exit::{coded, Code};

/// Where `make install` puts the script, relative to the prefix.
pub const SHARE: &str = "share/rdna1-mtype/conv2d.py";
/// The script in the source tree.
const IN_TREE: &str = "dist/field-kit/conv2d.py";

/// Where to look for the script, in order, for the binary at `exe`: beside the prefix the
/// binary is installed in (`/usr/bin` → `/usr/share/...`), `/usr/share/...`, then the source
/// tree the binary was built in (target/debug, target/vm/TRIPLE/release: up to five levels up).
pub fn candidates(exe: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
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

/// The argv the runs execute: `command` if given, else `python conv2d.py` with the script
/// given (`--script`) or the first of [`candidates`] that exists.
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
        None => candidates(exe)
            .into_iter()
            .find(|p| p.is_file())
            .ok_or_else(|| {
                coded(
                    Code::Error,
                    format!(
                    "the Conv2d script is not installed (looked for /usr/{SHARE} and beside {}): \
                     reinstall rdna1-mtype, or give --script PATH or -- COMMAND",
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
        assert_eq!(c[0], Path::new("/usr/local/share/rdna1-mtype/conv2d.py"));
        assert_eq!(c[1], Path::new("/usr/share/rdna1-mtype/conv2d.py"));
        let c = candidates(Path::new("/src/rdna1-mtype/target/debug/rdna1ctl"));
        assert!(
            c.contains(&PathBuf::from("/src/rdna1-mtype/dist/field-kit/conv2d.py")),
            "{c:?}"
        );
    }

    #[test]
    fn the_shipped_script_is_found_from_a_build_in_the_tree() {
        // A binary where cargo puts it by default (target/debug/deps): the tree's
        // dist/ is found from there. (Not this test's own path: make test keeps cargo's
        // target directory in its cache, outside the tree.)
        let tree = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let exe = tree.join("target/debug/deps/rdna1ctl-0");
        let a = argv(&[], None, None, &exe).unwrap();
        assert_eq!(a[0], "python3");
        assert!(
            Path::new(&a[1]).ends_with("dist/field-kit/conv2d.py"),
            "{a:?}"
        );
        let a = argv(&[], Some(Path::new("/venv/bin/python")), None, &exe).unwrap();
        assert_eq!(a[0], "/venv/bin/python");
        let own = vec![OsString::from("./train.sh"), OsString::from("--epochs=1")];
        assert_eq!(argv(&own, None, None, &exe).unwrap(), own);
        let e = argv(&[], None, Some(Path::new("/nonexistent.py")), &exe).unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::Usage);
        let e = argv(&[], None, None, Path::new("/nonexistent/bin/rdna1ctl"));
        // Only where no script is installed system-wide.
        if !Path::new("/usr/share/rdna1-mtype/conv2d.py").exists() {
            assert!(e.unwrap_err().to_string().contains("--script"));
        }
    }
}
