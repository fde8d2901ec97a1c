//! Every crate linked into rdna1ctl has a licence that fits rdna1ctl's own, GPL-2.0-only (Rust
//! links statically: the binary is a combined work). Read from `cargo tree` (the normal
//! dependencies for the target rdna1ctl ships for; build scripts, proc macros and
//! dev-dependencies are not linked) and judged with the `spdx` crate against the licences the
//! FSF lists as compatible with GPLv2 (docs/DEPENDENCIES.md, "Licences"). A crate under
//! Apache-2.0 alone, LGPL-3.0 or GPL-3.0 fails this test, naming the crate; and the packages
//! must declare the licences the binary is under.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Licences whose code may be linked into a GPL-2.0-only program, in the order a package
/// declares them by (the first that serves is taken).
const FITS_GPL2: &[&str] = &[
    "MIT",
    "GPL-2.0-only",
    "GPL-2.0-or-later",
    "LGPL-2.1-only",
    "LGPL-2.1-or-later",
    "MIT-0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "0BSD",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "BSL-1.0",
    "CC0-1.0",
    "Unlicense",
    // MPL-2.0 names GPL-2.0 among its Secondary Licenses (section 1.12).
    "MPL-2.0",
];

/// The target the packages and the static VM binary are built for.
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// (package, licence expression) of every package linked into rdna1ctl: `cargo tree` with
/// the features a build of rdna1ctl alone resolves (`cargo metadata` unifies the workspace's,
/// dev-dependencies' included), normal dependencies only, not through proc macros (they run in
/// the compiler: neither they nor what they use are linked).
fn linked_packages() -> Vec<(String, String)> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--locked", "-p", "rdna1ctl", "--target", TARGET])
        .args([
            "-e",
            "normal,no-proc-macro",
            "--prefix",
            "none",
            "-f",
            "{p}|{l}",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("running cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("cargo tree's output is UTF-8");
    let set: BTreeSet<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once('|'))
        // "(*)": a package already listed above.
        .map(|(p, l)| {
            (
                p.trim_end_matches(" (*)").to_string(),
                l.trim_end_matches(" (*)").trim().to_string(),
            )
        })
        .collect();
    set.into_iter().collect()
}

fn parse(expr: &str) -> Result<spdx::Expression, String> {
    spdx::Expression::parse_mode(expr, spdx::ParseMode::LAX)
        .map_err(|err| format!("{expr:?} is no SPDX expression: {err}"))
}

/// Whether `expr` is satisfied by taking only the licences in `taken`.
fn satisfied_by(e: &spdx::Expression, taken: &[&str]) -> bool {
    e.evaluate(|req| match &req.license {
        spdx::LicenseItem::Spdx { id, .. } => req.addition.is_none() && taken.contains(&id.name),
        spdx::LicenseItem::Other { .. } => false,
    })
}

/// Whether `expr` can be taken under licences that fit GPL-2.0-only.
fn fits(expr: &str) -> Result<bool, String> {
    Ok(satisfied_by(&parse(expr)?, FITS_GPL2))
}

/// The fewest licences, among those that fit, under which `expr` is taken, in `FITS_GPL2`'s
/// order of preference (MIT over Apache-2.0 for a dual licence): what the packages declare.
fn chosen(expr: &str) -> Option<Vec<&'static str>> {
    let e = parse(expr).ok()?;
    let named: Vec<&'static str> = FITS_GPL2
        .iter()
        .copied()
        .filter(|l| {
            e.requirements().any(
                |r| matches!(&r.req.license, spdx::LicenseItem::Spdx { id, .. } if id.name == *l),
            )
        })
        .collect();
    // Every subset, smallest first (an expression names a handful of licences).
    let mut subsets: Vec<Vec<&'static str>> = (1u32..(1 << named.len()))
        .map(|m| {
            named
                .iter()
                .enumerate()
                .filter(|(i, _)| m & (1 << i) != 0)
                .map(|(_, l)| *l)
                .collect()
        })
        .collect();
    subsets.sort_by_key(|s: &Vec<&str>| {
        (
            s.len(),
            s.iter()
                .map(|l| FITS_GPL2.iter().position(|f| f == l))
                .collect::<Vec<_>>(),
        )
    });
    subsets.into_iter().find(|s| satisfied_by(&e, s))
}

/// What rdna1ctl's binary is under: the licences its crates are taken under, together.
fn binary_licences() -> BTreeSet<&'static str> {
    linked_packages()
        .iter()
        .flat_map(|(_, l)| chosen(l).unwrap_or_default())
        .collect()
}

fn read(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_crate_linked_into_rdna1ctl_fits_gpl_2_0_only() {
    let mut bad = Vec::new();
    let linked = linked_packages();
    assert!(linked.len() > 20, "too few packages: {linked:?}");
    for (package, licence) in &linked {
        match fits(licence) {
            Ok(true) => {}
            Ok(false) => bad.push(format!("{package}: {licence}")),
            Err(e) => bad.push(format!("{package}: {e}")),
        }
    }
    assert!(
        bad.is_empty(),
        "linked into rdna1ctl (GPL-2.0-only) under licences that do not fit it: {bad:#?} \
         (replace the crate, or see docs/DEPENDENCIES.md, \"Licences\")"
    );
}

#[test]
fn the_judge_refuses_what_does_not_fit() {
    assert_eq!(fits("Apache-2.0"), Ok(false));
    assert_eq!(fits("LGPL-3.0-or-later"), Ok(false));
    assert_eq!(fits("GPL-3.0-only"), Ok(false));
    assert_eq!(fits("MIT OR Apache-2.0"), Ok(true));
    assert_eq!(fits("MIT/Apache-2.0"), Ok(true));
    assert_eq!(fits("(MIT OR Apache-2.0) AND Unicode-3.0"), Ok(true));
    assert_eq!(fits("Apache-2.0 AND MIT"), Ok(false));
    assert!(fits("").is_err(), "a crate without a licence fits nothing");
}

/// The packages say what the binary is under: Arch's `license=()` of rdna1ctl and the RPM's
/// `License:` of rdna1ctl name exactly the licences chosen above.
#[test]
fn the_packages_declare_the_licences_of_the_binary() {
    let want = binary_licences();
    assert!(
        want.contains("GPL-2.0-only") && want.contains("MIT"),
        "{want:?}"
    );
    let pkgbuild = read("packaging/arch/PKGBUILD");
    let arch = pkgbuild
        .split("package_rdna1ctl()")
        .nth(1)
        .and_then(|body| {
            body.lines()
                .find_map(|l| l.trim().strip_prefix("license=("))
        })
        .and_then(|l| l.strip_suffix(')'))
        .expect("a license=(...) line in package_rdna1ctl() of packaging/arch/PKGBUILD");
    let arch: BTreeSet<&str> = arch
        .split_whitespace()
        .map(|l| l.trim_matches(['\'', '"']))
        .collect();
    assert_eq!(
        arch, want,
        "packaging/arch/PKGBUILD, package_rdna1ctl's license=()"
    );
    let spec = read("packaging/rpm/rdna1-mtype.spec");
    let rpm = spec
        .split("%package -n rdna1ctl")
        .nth(1)
        .and_then(|body| {
            body.lines()
                .take_while(|l| !l.starts_with('%'))
                .find_map(|l| l.strip_prefix("License:"))
        })
        .expect("a License: line in %package -n rdna1ctl of packaging/rpm/rdna1-mtype.spec");
    let rpm: BTreeSet<&str> = rpm.split(" AND ").map(str::trim).collect();
    assert_eq!(
        rpm, want,
        "packaging/rpm/rdna1-mtype.spec, rdna1ctl's License:"
    );
}

#[test]
fn the_chosen_licences_are_the_fewest_preferred() {
    assert_eq!(chosen("MIT OR Apache-2.0"), Some(vec!["MIT"]));
    assert_eq!(
        chosen("Apache-2.0 WITH LLVM-exception OR Apache-2.0 OR MIT"),
        Some(vec!["MIT"])
    );
    assert_eq!(
        chosen("(MIT OR Apache-2.0) AND Unicode-3.0"),
        Some(vec!["MIT", "Unicode-3.0"])
    );
    assert_eq!(chosen("LGPL-2.1-or-later"), Some(vec!["LGPL-2.1-or-later"]));
    assert_eq!(chosen("Apache-2.0"), None);
}
