//! MIOpen's per-user caches: compiled kernels and find/perf databases left by runs for another
//! GPU architecture (typically under `HSA_OVERRIDE_GFX_VERSION=10.3.0`, gfx1030).
//!
//! Where MIOpen keeps them (MIOpen's source, docs/CLI.md (doctor) cites the files): compiled
//! kernels in `$MIOPEN_CUSTOM_CACHE_DIR` or `~/.cache/miopen/<version>/`, one SQLite file per
//! device, `<arch>[_<feature>]_<CUs>.ukdb` (CUs in hex without `_` above 64); find and perf
//! databases in `$MIOPEN_USER_DB_PATH` or `~/.config/miopen/`, `<arch>..._<CUs>.HIP.<version>.
//! ufdb.txt` / `.udb.txt`. Every name starts with the architecture MIOpen saw, so by MIOpen's
//! code a gfx1010 run does not load gfx1030's files: they are reported as stale (a warning,
//! with the command that clears them), not as the cause of a fault.

use std::path::{Path, PathBuf};

use super::python::user_home;
use super::rocm::file_names;
use super::torch_libs::wanted_all;
use super::{Check, Input};

/// The directories to look in, as the root's machine names them, with their kind.
fn dirs(input: &Input) -> Vec<(PathBuf, &'static str)> {
    let home = user_home(input);
    let mut v = Vec::new();
    let cache = input
        .host
        .var("MIOPEN_CUSTOM_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".cache/miopen")));
    if let Some(c) = cache {
        // The kernel cache sits in a <version> directory below (or, with a custom directory
        // on older MIOpen, in it directly).
        v.push((c.clone(), "kernel cache"));
        for d in file_names(&input.root.resolve(&input.root.path(&c.to_string_lossy()))) {
            v.push((c.join(d), "kernel cache"));
        }
    }
    let db = input
        .host
        .var("MIOPEN_USER_DB_PATH")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config/miopen")));
    if let Some(d) = db {
        v.push((d, "user find/perf db"));
    }
    v
}

/// The architecture a MIOpen cache file is for: its leading `gfx` name (`gfx1030_40.ukdb` is
/// gfx1030); `None` for files that are not MIOpen's.
fn arch_of(name: &str) -> Option<&str> {
    let is_miopen = [".ukdb", ".ufdb.txt", ".udb.txt", ".udb"]
        .iter()
        .any(|x| name.ends_with(x));
    if !is_miopen || !name.starts_with("gfx") {
        return None;
    }
    let end = name.find(['_', '.']).unwrap_or(name.len());
    Some(&name[..end])
}

/// Whether `name` is a cache file for `target` (its name, then `_` or `.`).
fn is_for(name: &str, target: &str) -> bool {
    name.strip_prefix(target)
        .is_some_and(|rest| rest.starts_with(['_', '.']))
}

pub fn checks(input: &Input) -> Vec<Check> {
    vec![cache_check(input)]
}

fn cache_check(input: &Input) -> Check {
    let id = "rocm.miopen_cache";
    let targets = wanted_all(input);
    if targets.is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let mut ours = 0;
    let mut foreign: Vec<(PathBuf, String)> = Vec::new();
    for (dir, _) in dirs(input) {
        let at = input.root.resolve(&input.root.path(&dir.to_string_lossy()));
        for name in file_names(&at) {
            let Some(arch) = arch_of(&name) else { continue };
            if targets.iter().any(|t| is_for(&name, t)) {
                ours += 1;
            } else {
                foreign.push((dir.join(&name), arch.to_owned()));
            }
        }
    }
    let want = targets.join("/");
    if foreign.is_empty() {
        return Check::ok(
            id,
            if ours == 0 {
                format!("no MIOpen kernel cache or user database yet (MIOpen compiles {want} kernels at first use)")
            } else {
                format!("MIOpen's caches hold {ours} file(s), all for {want}")
            },
        );
    }
    foreign.sort();
    let mut archs: Vec<&str> = foreign.iter().map(|(_, a)| a.as_str()).collect();
    archs.sort_unstable();
    archs.dedup();
    let files: Vec<String> = foreign.iter().map(|(p, _)| shell_quote(p)).collect();
    Check::warn(
        id,
        format!(
            "MIOpen's caches hold kernels or databases for {} ({}), not for this GPU's {want}: left by runs under another HSA_OVERRIDE_GFX_VERSION; by MIOpen's naming a {want} run does not load them, but they are stale",
            archs.join("/"),
            foreign.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
        format!("rm -f {} (as the user who trains)", files.join(" ")),
    )
}

/// `p` quoted for a POSIX shell when it needs it.
fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%~".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    fn tree() -> Tree {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        t.write(
            "etc/passwd",
            "root:x:0:0::/root:/bin/sh\nu:x:1000:1000::/home/u:/bin/bash\n",
        );
        t
    }

    fn check(t: &Tree, host: &FakeHost) -> Check {
        run_check(t, host, checks, "rocm.miopen_cache")
    }

    #[test]
    fn names() {
        assert_eq!(arch_of("gfx1030_40.ukdb"), Some("gfx1030"));
        assert_eq!(
            arch_of("gfx1030_40.HIP.3_4_0_abc.ufdb.txt"),
            Some("gfx1030")
        );
        assert_eq!(arch_of("gfx90a_sramecc_6e.ukdb"), Some("gfx90a"));
        assert_eq!(arch_of("gfx1010_20.HIP.3_4_0.udb.txt"), Some("gfx1010"));
        assert_eq!(arch_of("notes.txt"), None);
        assert_eq!(arch_of("gfx1030_40.ukdb-journal"), None);
        assert!(is_for("gfx1010_20.ukdb", "gfx1010"));
        assert!(!is_for("gfx10101.ukdb", "gfx1010"));
        assert!(!is_for("gfx1030_40.ukdb", "gfx1010"));
    }

    #[test]
    fn stale_gfx1030_files_are_named_with_the_command_that_clears_them() {
        let t = tree();
        assert_check(
            &check(&t, &FakeHost::default()),
            Status::Ok,
            &["no MIOpen kernel cache"],
        );
        t.write("home/u/.cache/miopen/3.4.0.8a2e2f6/gfx1010_20.ukdb", "");
        t.write(
            "home/u/.config/miopen/gfx1010_20.HIP.3_4_0_8a2e2f6.ufdb.txt",
            "",
        );
        assert_check(
            &check(&t, &FakeHost::default()),
            Status::Ok,
            &["2 file(s), all for gfx1010"],
        );
        t.write("home/u/.cache/miopen/3.4.0.8a2e2f6/gfx1030_40.ukdb", "");
        t.write(
            "home/u/.config/miopen/gfx1030_40.HIP.3_4_0_8a2e2f6.ufdb.txt",
            "",
        );
        let c = check(&t, &FakeHost::default());
        assert_check(
            &c,
            Status::Warn,
            &["gfx1030", "HSA_OVERRIDE_GFX_VERSION", "stale"],
        );
        let fix = c.fix.unwrap();
        assert!(
            fix.contains("/home/u/.cache/miopen/3.4.0.8a2e2f6/gfx1030_40.ukdb")
                && fix.contains("/home/u/.config/miopen/gfx1030_40.HIP.3_4_0_8a2e2f6.ufdb.txt")
                && !fix.contains("gfx1010"),
            "{fix}"
        );
    }

    #[test]
    fn the_environment_moves_the_caches_and_the_override_moves_the_target() {
        let t = tree();
        t.write("scratch/kc/gfx1030_40.ukdb", "");
        t.write("scratch/db/gfx1010_20.HIP.3_5_0.udb.txt", "");
        let host = FakeHost::default()
            .with_var("MIOPEN_CUSTOM_CACHE_DIR", "/scratch/kc")
            .with_var("MIOPEN_USER_DB_PATH", "/scratch/db");
        let c = check(&t, &host);
        assert_check(&c, Status::Warn, &["/scratch/kc/gfx1030_40.ukdb"]);
        // A gfx1012 under 10.1.0 runs gfx1010: gfx1010's files are its own.
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x7340);
        t.write("home/u/.cache/miopen/3.5.0/gfx1010_11.ukdb", "");
        let host = FakeHost::default()
            .with_var("HOME", "/home/u")
            .with_var("HSA_OVERRIDE_GFX_VERSION", "10.1.0");
        assert_check(&check(&t, &host), Status::Ok, &["all for gfx1010"]);
    }
}
