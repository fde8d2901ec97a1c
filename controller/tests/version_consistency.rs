//! The workspace version in Cargo.toml is the one version of rdna1-mtype: the module's
//! MODULE_VERSION is read from it by kmod/Kbuild, and dkms.conf must repeat it.

#[test]
fn dkms_conf_version_matches_cargo() {
    let conf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../dkms.conf"))
        .expect("dkms.conf at the repository top");
    let line = conf
        .lines()
        .find(|l| l.starts_with("PACKAGE_VERSION="))
        .expect("PACKAGE_VERSION in dkms.conf");
    assert_eq!(
        line.trim_start_matches("PACKAGE_VERSION=")
            .trim_matches('"'),
        env!("CARGO_PKG_VERSION"),
        "dkms.conf PACKAGE_VERSION differs from the workspace version in Cargo.toml"
    );
}
