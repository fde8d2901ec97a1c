//! The workspace version in Cargo.toml is the one version of rdna1-mtype: the module's
//! MODULE_VERSION is read from it by kmod/Kbuild, and dkms.conf, the Arch PKGBUILD and the RPM
//! spec must repeat it (their formats have no way to read it).

/// The value of the first line of FILE (from the repository top) that starts with KEY.
fn value_after(file: &str, key: &str) -> String {
    let path = format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let line = text
        .lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no {key} line in {file}"));
    line[key.len()..].trim().trim_matches('"').to_string()
}

#[test]
fn dkms_conf_version_matches_cargo() {
    assert_eq!(
        value_after("dkms.conf", "PACKAGE_VERSION="),
        env!("CARGO_PKG_VERSION"),
        "dkms.conf PACKAGE_VERSION differs from the workspace version in Cargo.toml"
    );
}

#[test]
fn pkgbuild_version_matches_cargo() {
    assert_eq!(
        value_after("packaging/arch/PKGBUILD", "pkgver="),
        env!("CARGO_PKG_VERSION"),
        "packaging/arch/PKGBUILD pkgver differs from the workspace version in Cargo.toml"
    );
}

#[test]
fn rpm_spec_version_matches_cargo() {
    assert_eq!(
        value_after("packaging/rpm/rdna1-mtype.spec", "Version:"),
        env!("CARGO_PKG_VERSION"),
        "packaging/rpm/rdna1-mtype.spec Version differs from the workspace version in Cargo.toml"
    );
}
