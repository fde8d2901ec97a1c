//! Packaging: is rdna1_mtype built by DKMS for the running kernel, and can this machine build
//! it (rustc must be the one that built the kernel).
//!
//! Paths are dkms 3.0's (Debian 12 `dkms` 3.0.10, /usr/sbin/dkms): the build is kept in
//! `$dkms_tree/<module>/<version>/<kernelver>/<arch>/module/<name>.ko[.gz|.xz|.zst]`
//! (dkms_tree=/var/lib/dkms) and installed to `$install_tree/<kernelver><DEST_MODULE_LOCATION>`
//! (install_tree=/lib/modules). Debian, Ubuntu and Arch override the location with
//! `/updates/dkms`, Fedora with `/extra`, SUSE with `/updates` (dkms's
//! `override_dest_module_location`), so all three are looked at.

use std::path::{Path, PathBuf};

use super::{Check, Input};

/// dkms.conf's PACKAGE_NAME and BUILT_MODULE_NAME.
const PACKAGE: &str = "rdna1-mtype";
const MODULE: &str = "rdna1_mtype";
/// rdna1ctl's version is the module's (one workspace version, checked against dkms.conf).
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where dkms installs, by distribution.
const INSTALL_DIRS: &[&str] = &["updates/dkms", "extra", "updates"];

/// `rdna1_mtype.ko`, `.ko.xz`, `.ko.zst`, `.ko.gz` in `dir`.
fn module_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.strip_prefix(MODULE).is_some_and(|r| r.starts_with(".ko")))
        })
        .collect();
    found.sort();
    found
}

/// The rdna1_mtype module files installed for `release` (by DKMS or by hand into a DKMS
/// location).
pub fn installed_modules(input: &Input, release: &str) -> Vec<PathBuf> {
    INSTALL_DIRS
        .iter()
        .flat_map(|d| module_files(&input.root.path(&format!("/lib/modules/{release}/{d}"))))
        .collect()
}

/// Module files DKMS built for `release` from `version`, any architecture.
fn built_modules(input: &Input, version: &str, release: &str) -> Vec<PathBuf> {
    let dir = input
        .root
        .path(&format!("/var/lib/dkms/{PACKAGE}/{version}/{release}"));
    let Ok(arches) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    arches
        .filter_map(Result::ok)
        .flat_map(|a| module_files(&a.path().join("module")))
        .collect()
}

/// Other versions DKMS built for `release`.
fn other_versions(input: &Input, release: &str) -> Vec<String> {
    let dir = input.root.path(&format!("/var/lib/dkms/{PACKAGE}"));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|v| v != VERSION && !v.starts_with("kernel-"))
        .filter(|v| !built_modules(input, v, release).is_empty())
        .collect();
    v.sort();
    v
}

fn module_loaded(input: &Input) -> bool {
    input.root.path("/sys/module/rdna1_mtype").is_dir()
}

pub fn checks(input: &Input) -> Vec<Check> {
    let Ok(release) = &input.facts.release else {
        let why = "kernel release unknown: DKMS state and rustc not checked";
        let fix = "see kernel.release";
        return vec![
            Check::warn("dkms.module", why, fix),
            Check::warn("toolchain.rustc", why, fix),
        ];
    };
    let built = !built_modules(input, VERSION, release).is_empty()
        || !installed_modules(input, release).is_empty();
    vec![dkms_check(input, release), rustc_check(input, built)]
}

fn dkms_check(input: &Input, release: &str) -> Check {
    let id = "dkms.module";
    let install = format!("sudo dkms install {PACKAGE}/{VERSION} -k {release}");
    let built = built_modules(input, VERSION, release);
    let installed = installed_modules(input, release);
    match (built.first(), installed.first()) {
        (Some(_), Some(inst)) => Check::ok(
            id,
            format!(
                "{PACKAGE} {VERSION} built by DKMS for {release}, installed as {}",
                input.show(inst)
            ),
        ),
        (Some(b), None) => Check::fail(
            id,
            format!(
                "{PACKAGE} {VERSION} is built for {release} ({}) but not installed: modprobe cannot find it",
                input.show(b)
            ),
            install,
        ),
        (None, Some(inst)) => Check::warn(
            id,
            format!(
                "{} is installed for {release} but DKMS has no {PACKAGE} {VERSION} build for it: \
                 another version, or copied by hand; it will not be rebuilt for the next kernel",
                input.show(inst)
            ),
            format!("sudo dkms add <source of {PACKAGE} {VERSION}> && {install}"),
        ),
        (None, None) => {
            let others = other_versions(input, release);
            let what = if others.is_empty() {
                format!("DKMS has no {PACKAGE} {VERSION} for {release}")
            } else {
                format!(
                    "DKMS has {PACKAGE} {} for {release}, not {VERSION} (rdna1ctl's version)",
                    others.join(", ")
                )
            };
            if module_loaded(input) {
                Check::warn(
                    id,
                    format!("{what}; the loaded rdna1_mtype was built by hand and will not be rebuilt for the next kernel"),
                    format!("sudo dkms add <source of {PACKAGE} {VERSION}> && {install}"),
                )
            } else {
                Check::fail(
                    id,
                    format!("{what}, and rdna1_mtype is not loaded"),
                    format!("sudo dkms add <source of {PACKAGE} {VERSION}> && {install}"),
                )
            }
        }
    }
}

/// A Rust module must be compiled by the very rustc that built the kernel: the kernel's
/// `core` and `kernel` crate metadata only load in the same compiler version. Kbuild records
/// `rustc --version` (without `#`) as CONFIG_RUSTC_VERSION_TEXT.
fn rustc_check(input: &Input, built: bool) -> Check {
    let id = "toolchain.rustc";
    let Some(config) = input.facts.config() else {
        return Check::warn(
            id,
            "no kernel config: cannot tell which rustc built the kernel",
            "see kernel.config",
        );
    };
    let Some(want) = config.string("CONFIG_RUSTC_VERSION_TEXT") else {
        return Check::warn(
            id,
            "the kernel config has no CONFIG_RUSTC_VERSION_TEXT (no Rust support?)",
            "see kconfig.rust",
        );
    };
    let want = want.replace('#', "");
    // Needed to build the module; a machine that already has it built only needs rustc again
    // for the next kernel, so a mismatch is a warning there.
    let bad = |message: String, fix: String| {
        if built {
            Check::warn(
                id,
                format!("{message} (the module is already built for this kernel)"),
                fix,
            )
        } else {
            Check::fail(id, message, fix)
        }
    };
    match input.host.rustc_version() {
        Ok(have) if have.replace('#', "") == want => {
            Check::ok(id, format!("{have} on PATH built the kernel too"))
        }
        Ok(have) => bad(
            format!("rustc on PATH is {have:?}, the kernel was built with {want:?}: DKMS cannot build rdna1_mtype"),
            format!("install that exact rustc for root (e.g. `rustup toolchain install {}` and put it first on PATH)", rustc_release(&want)),
        ),
        Err(e) => bad(
            format!("{e}; the kernel was built with {want:?}, which DKMS needs to build rdna1_mtype"),
            format!("install that exact rustc for root (e.g. `rustup toolchain install {}`)", rustc_release(&want)),
        ),
    }
}

/// `1.95.0` from `rustc 1.95.0 (59807616e 2026-04-14)`.
fn rustc_release(text: &str) -> &str {
    text.split_whitespace().nth(1).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{
        assert_check, run_check, FakeHost, Tree, KCONFIG_GOOD,
    };
    use crate::commands::doctor::Status;

    const REL: &str = "7.2.13-amd64";
    const RUSTC: &str = "rustc 1.95.0 (59807616e 2026-04-14)";

    fn tree() -> Tree {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", &format!("{REL}\n"));
        t.write(
            &format!("boot/config-{REL}"),
            &format!("{KCONFIG_GOOD}CONFIG_RUSTC_VERSION_TEXT=\"{RUSTC}\"\n"),
        );
        t
    }

    fn build(t: &Tree, version: &str, file: &str) {
        t.write(
            &format!("var/lib/dkms/{PACKAGE}/{version}/{REL}/x86_64/module/{file}"),
            "ko",
        );
    }

    fn dkms(t: &Tree) -> Check {
        run_check(t, &FakeHost::default(), checks, "dkms.module")
    }

    #[test]
    fn built_and_installed_is_ok_with_any_compression() {
        for file in ["rdna1_mtype.ko", "rdna1_mtype.ko.xz", "rdna1_mtype.ko.zst"] {
            let t = tree();
            build(&t, VERSION, file);
            t.write(&format!("lib/modules/{REL}/updates/dkms/{file}"), "ko");
            assert_check(&dkms(&t), Status::Ok, &[file, REL]);
        }
        let t = tree();
        build(&t, VERSION, "rdna1_mtype.ko");
        t.write(&format!("lib/modules/{REL}/extra/rdna1_mtype.ko"), "ko");
        assert_check(&dkms(&t), Status::Ok, &["extra/rdna1_mtype.ko"]);
    }

    #[test]
    fn built_not_installed_fails() {
        let t = tree();
        build(&t, VERSION, "rdna1_mtype.ko.xz");
        let c = dkms(&t);
        assert_check(&c, Status::Fail, &["not installed"]);
        assert!(c.fix.unwrap().contains("dkms install rdna1-mtype/"));
    }

    #[test]
    fn nothing_fails_unless_loaded_by_hand() {
        let t = tree();
        // Another module in the install dir must not count.
        t.write(
            &format!("lib/modules/{REL}/updates/dkms/rdna1_mtypo.ko"),
            "ko",
        );
        assert_check(&dkms(&t), Status::Fail, &["no rdna1-mtype", "not loaded"]);
        t.mkdir("sys/module/rdna1_mtype");
        assert_check(&dkms(&t), Status::Warn, &["built by hand"]);
    }

    #[test]
    fn other_version_is_named() {
        let t = tree();
        build(&t, "0.0.9", "rdna1_mtype.ko");
        assert_check(&dkms(&t), Status::Fail, &["rdna1-mtype 0.0.9", VERSION]);
    }

    #[test]
    fn installed_without_build_warns() {
        let t = tree();
        t.write(
            &format!("lib/modules/{REL}/updates/dkms/rdna1_mtype.ko"),
            "ko",
        );
        assert_check(&dkms(&t), Status::Warn, &["no rdna1-mtype", "by hand"]);
    }

    fn rustc(t: &Tree, have: Option<&str>) -> Check {
        let host = FakeHost {
            rustc: have.map(str::to_owned),
            ..FakeHost::default()
        };
        run_check(t, &host, checks, "toolchain.rustc")
    }

    #[test]
    fn rustc_must_match_the_kernel() {
        let t = tree();
        assert_check(&rustc(&t, Some(RUSTC)), Status::Ok, &["1.95.0"]);
        let other = "rustc 1.96.0 (0123456789 2026-05-28)";
        let c = rustc(&t, Some(other));
        assert_check(&c, Status::Fail, &["1.96.0", "1.95.0"]);
        assert!(c.fix.unwrap().contains("rustup toolchain install 1.95.0"));
        assert_check(&rustc(&t, None), Status::Fail, &["not found"]);
        // Already built: the mismatch only matters for the next build.
        build(&t, VERSION, "rdna1_mtype.ko");
        assert_check(&rustc(&t, Some(other)), Status::Warn, &["already built"]);
    }

    #[test]
    fn rustc_without_rust_kernel_warns() {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", &format!("{REL}\n"));
        t.write(&format!("boot/config-{REL}"), "# CONFIG_RUST is not set\n");
        assert_check(
            &rustc(&t, Some(RUSTC)),
            Status::Warn,
            &["CONFIG_RUSTC_VERSION_TEXT"],
        );
    }
}
