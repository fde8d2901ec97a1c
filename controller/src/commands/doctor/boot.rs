//! Secure Boot, lockdown and module signing: can the kernel load a DKMS-built rdna1_mtype.
//!
//! What the kernel does (7.2, kernel/module/signing.c): a module without a valid signature is
//! refused if `module.sig_enforce` is on (CONFIG_MODULE_SIG_FORCE, or set at boot) or, with
//! CONFIG_MODULE_SIG, if lockdown forbids unsigned modules (integrity and confidentiality
//! both do). Distributions turn lockdown on when booted with Secure Boot
//! (CONFIG_LOCK_DOWN_IN_EFI_SECURE_BOOT), which is how Secure Boot usually reaches modules.
//! Confidentiality also locks tracefs, which `rdna1ctl verify` needs.

use std::path::PathBuf;

use super::{dkms, Check, Input};

/// EFI global variable GUID (UEFI spec): SecureBoot-<guid> in efivarfs.
const SECURE_BOOT_VAR: &str =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
/// shim's MOK list, as shim mirrors it at runtime: efivarfs, and the config-table copy
/// newer kernels expose when the list is too big for a variable.
const MOK_LISTS: &[&str] = &[
    "/sys/firmware/efi/efivars/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23",
    "/sys/firmware/efi/mok-variables/MokListRT",
];
/// DER certificates DKMS signs with: Debian's dkms default, then Ubuntu's shim-signed key.
const DKMS_CERTS: &[&str] = &["/var/lib/dkms/mok.pub", "/var/lib/shim-signed/mok/MOK.der"];
/// What scripts/sign-file appends to a signed module.
const SIG_MAGIC: &[u8] = b"~Module signature appended~\n";

#[derive(Debug, PartialEq, Eq)]
enum SecureBoot {
    NoEfi,
    Unknown,
    Off,
    On,
}

fn secure_boot(input: &Input) -> SecureBoot {
    if !input.root.path("/sys/firmware/efi").is_dir() {
        return SecureBoot::NoEfi;
    }
    // efivarfs: 4 bytes of attributes, then the value (1 byte, 1 = enabled).
    match std::fs::read(input.root.path(SECURE_BOOT_VAR)) {
        Ok(b) if b.len() >= 5 => {
            if b[4] == 1 {
                SecureBoot::On
            } else {
                SecureBoot::Off
            }
        }
        _ => SecureBoot::Unknown,
    }
}

/// The bracketed mode of `/sys/kernel/security/lockdown` ("none [integrity] confidentiality");
/// `None` without the lockdown LSM.
fn lockdown(input: &Input) -> Option<String> {
    let p = input.root.path("/sys/kernel/security/lockdown");
    let text = input.root.read_attr(&p).ok()??;
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_owned())
}

pub fn checks(input: &Input) -> Vec<Check> {
    vec![lockdown_check(input), signing_check(input)]
}

fn lockdown_check(input: &Input) -> Check {
    let id = "boot.lockdown";
    match lockdown(input).as_deref() {
        None | Some("none") => Check::ok(id, "kernel lockdown is off"),
        Some("integrity") => Check::ok(
            id,
            "kernel lockdown: integrity (modules must be signed, see boot.module_signing; tracefs stays usable)",
        ),
        Some(mode) => Check::warn(
            id,
            format!("kernel lockdown: {mode}: tracefs is locked, so `rdna1ctl verify` cannot trace amdgpu's page-table updates"),
            "boot with lockdown=integrity (or Secure Boot off) to use `rdna1ctl verify`; status and events still work",
        ),
    }
}

fn signing_check(input: &Input) -> Check {
    let id = "boot.module_signing";
    let sb = secure_boot(input);
    let lock = lockdown(input);
    let config = input.facts.config();
    let sig_compiled = config.is_none_or(|c| c.is_set("CONFIG_MODULE_SIG"));
    let enforce = match input
        .root
        .read_attr(&input.root.path("/sys/module/module/parameters/sig_enforce"))
    {
        Ok(Some(v)) => v == "Y",
        _ => config.is_some_and(|c| c.is_set("CONFIG_MODULE_SIG_FORCE")),
    };
    let locked = matches!(lock.as_deref(), Some("integrity" | "confidentiality"));
    let sb_text = match sb {
        SecureBoot::NoEfi => "not booted with EFI",
        SecureBoot::Unknown => "Secure Boot state unknown",
        SecureBoot::Off => "Secure Boot off",
        SecureBoot::On => "Secure Boot on",
    };
    if !(enforce || (sig_compiled && locked)) {
        return Check::ok(
            id,
            format!("{sb_text}, signatures not enforced: an unsigned rdna1_mtype loads"),
        );
    }
    let why = if enforce {
        "module.sig_enforce is on".to_owned()
    } else {
        format!("lockdown {}", lock.unwrap_or_default())
    };
    let release = input.facts.release.as_deref().unwrap_or("");
    let unsigned: Vec<PathBuf> = dkms::installed_modules(input, release)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "ko"))
        .filter(|p| std::fs::read(p).is_ok_and(|b| !b.ends_with(SIG_MAGIC)))
        .collect();
    if let Some(p) = unsigned.first() {
        return Check::fail(
            id,
            format!("{sb_text}, {why}: modules must be signed, and {} is not: the kernel refuses it", input.show(p)),
            "configure DKMS signing (mok_signing_key/mok_certificate in /etc/dkms/framework.conf) and rebuild: sudo dkms autoinstall --force",
        );
    }
    let Some((cert_path, cert)) = DKMS_CERTS.iter().find_map(|c| {
        std::fs::read(input.root.path(c))
            .ok()
            .filter(|b| !b.is_empty())
            .map(|b| (*c, b))
    }) else {
        return Check::warn(
            id,
            format!("{sb_text}, {why}: modules must be signed, and no DKMS signing key exists yet"),
            "let DKMS create its key (first `dkms build`), then: sudo mokutil --import /var/lib/dkms/mok.pub, reboot, enrol it in MokManager",
        );
    };
    let lists: Vec<Vec<u8>> = MOK_LISTS
        .iter()
        .filter_map(|l| std::fs::read(input.root.path(l)).ok())
        .collect();
    if lists.iter().any(|l| contains(l, &cert)) {
        Check::ok(
            id,
            format!("{sb_text}, {why}: DKMS signs with {cert_path}, which is enrolled as a MOK"),
        )
    } else if lists.is_empty() {
        Check::warn(
            id,
            format!("{sb_text}, {why}: modules must be signed; cannot read shim's MokListRT to tell whether {cert_path} is enrolled"),
            format!("check with `mokutil --test-key {cert_path}`; if not enrolled: sudo mokutil --import {cert_path}, reboot, enrol it in MokManager"),
        )
    } else {
        Check::warn(
            id,
            format!("{sb_text}, {why}: modules must be signed, and DKMS's key {cert_path} is not enrolled: the kernel will refuse rdna1_mtype"),
            format!("sudo mokutil --import {cert_path}, reboot, enrol it in MokManager"),
        )
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    const REL: &str = "7.2.13-amd64";
    const CERT: &[u8] = b"\x30\x82\x03\x1bDKMS module signing key";

    fn tree(secure_boot: Option<u8>, lockdown: &str) -> Tree {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", &format!("{REL}\n"));
        t.write(&format!("boot/config-{REL}"), "CONFIG_MODULE_SIG=y\n");
        if let Some(v) = secure_boot {
            t.write_bytes(&SECURE_BOOT_VAR[1..], &[6, 0, 0, 0, v]);
        }
        if !lockdown.is_empty() {
            t.write("sys/kernel/security/lockdown", &format!("{lockdown}\n"));
        }
        t
    }

    fn check(t: &Tree, id: &str) -> Check {
        run_check(t, &FakeHost::default(), checks, id)
    }

    #[test]
    fn parses_efivar_and_lockdown() {
        let t = tree(Some(1), "none [integrity] confidentiality");
        let root = t.root();
        let facts = crate::commands::doctor::Facts::gather(&root);
        let host = FakeHost::default();
        let input = Input::new(&root, &host, &facts, None);
        assert_eq!(secure_boot(&input), SecureBoot::On);
        assert_eq!(lockdown(&input).as_deref(), Some("integrity"));
        t.write_bytes(&SECURE_BOOT_VAR[1..], &[6, 0, 0, 0, 0]);
        assert_eq!(secure_boot(&input), SecureBoot::Off);
        t.write_bytes(&SECURE_BOOT_VAR[1..], &[6, 0, 0]);
        assert_eq!(secure_boot(&input), SecureBoot::Unknown);
        std::fs::remove_dir_all(t.path("sys/firmware")).unwrap();
        assert_eq!(secure_boot(&input), SecureBoot::NoEfi);
    }

    #[test]
    fn lockdown_levels() {
        assert_check(
            &check(&tree(None, ""), "boot.lockdown"),
            Status::Ok,
            &["off"],
        );
        let t = tree(None, "[none] integrity confidentiality");
        assert_check(&check(&t, "boot.lockdown"), Status::Ok, &["off"]);
        let t = tree(Some(1), "none [integrity] confidentiality");
        assert_check(&check(&t, "boot.lockdown"), Status::Ok, &["integrity"]);
        let t = tree(Some(1), "none integrity [confidentiality]");
        assert_check(
            &check(&t, "boot.lockdown"),
            Status::Warn,
            &["rdna1ctl verify"],
        );
    }

    #[test]
    fn unsigned_modules_load_without_enforcement() {
        let t = tree(Some(0), "[none] integrity confidentiality");
        t.write("sys/module/module/parameters/sig_enforce", "N\n");
        assert_check(
            &check(&t, "boot.module_signing"),
            Status::Ok,
            &["Secure Boot off"],
        );
    }

    #[test]
    fn lockdown_without_key_warns_with_mok_fix() {
        let t = tree(Some(1), "none [integrity] confidentiality");
        let c = check(&t, "boot.module_signing");
        assert_check(&c, Status::Warn, &["Secure Boot on", "no DKMS signing key"]);
        assert!(c
            .fix
            .unwrap()
            .contains("mokutil --import /var/lib/dkms/mok.pub"));
    }

    #[test]
    fn sig_enforce_alone_requires_signing() {
        let t = tree(None, "");
        t.write("sys/module/module/parameters/sig_enforce", "Y\n");
        assert_check(
            &check(&t, "boot.module_signing"),
            Status::Warn,
            &["sig_enforce"],
        );
    }

    #[test]
    fn enrolled_key_is_ok_and_unenrolled_warns() {
        let t = tree(Some(1), "none [integrity] confidentiality");
        t.write_bytes("var/lib/dkms/mok.pub", CERT);
        let mut list = vec![7, 0, 0, 0, 0xa1, 0x59];
        t.write_bytes(&MOK_LISTS[0][1..], &list);
        assert_check(
            &check(&t, "boot.module_signing"),
            Status::Warn,
            &["not enrolled"],
        );
        list.extend_from_slice(CERT);
        t.write_bytes(&MOK_LISTS[0][1..], &list);
        assert_check(&check(&t, "boot.module_signing"), Status::Ok, &["enrolled"]);
        std::fs::remove_file(t.path(&MOK_LISTS[0][1..])).unwrap();
        assert_check(
            &check(&t, "boot.module_signing"),
            Status::Warn,
            &["cannot read shim's MokListRT"],
        );
    }

    #[test]
    fn unsigned_installed_module_fails_signed_passes() {
        let t = tree(Some(1), "none [integrity] confidentiality");
        t.write_bytes("var/lib/dkms/mok.pub", CERT);
        t.write_bytes(&MOK_LISTS[1][1..], CERT);
        let ko = format!("lib/modules/{REL}/updates/dkms/rdna1_mtype.ko");
        t.write(&ko, "\x7fELF...");
        assert_check(&check(&t, "boot.module_signing"), Status::Fail, &["is not"]);
        let mut signed = b"\x7fELF...".to_vec();
        signed.extend_from_slice(SIG_MAGIC);
        t.write_bytes(&ko, &signed);
        assert_check(&check(&t, "boot.module_signing"), Status::Ok, &["enrolled"]);
    }
}
