//! Whether the invoking user may open /dev/kfd and the RDNA1 GPU's render node
//! (/dev/dri/renderD*) for reading and writing, as ROCm must; if not, which group to join.
//!
//! The user is [`super::host::User`]: the process's, or under sudo SUDO_UID/SUDO_GID with the
//! groups /etc/group gives that user. The render node of a GPU is the `renderD*` entry in its
//! `/sys/bus/pci/devices/ADDR/drm/`. Permission is decided from the device file's owner, group
//! and mode as the kernel does for a process without capabilities (ACLs from logind's
//! `uaccess` are not read: a user granted access only by an ACL is told to join the group,
//! which also covers ssh and systemd sessions).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::host::User;
use super::{Check, Input};

fn read_small(p: &Path) -> String {
    use std::io::Read;
    let mut s = String::new();
    if let Ok(f) = std::fs::File::open(p) {
        let _ = f.take(1 << 20).read_to_string(&mut s);
    }
    s
}

/// The user's name (/etc/passwd) and every group they are in: the primary one, and the
/// process's supplementary groups, or those /etc/group lists them in.
fn groups_of(input: &Input, user: &User) -> (Option<String>, Vec<u32>) {
    let passwd = read_small(&input.root.path("/etc/passwd"));
    let name = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 3 && f[2].parse() == Ok(user.uid)).then(|| f[0].to_owned())
    });
    let mut groups = vec![user.gid];
    match &user.groups {
        Some(g) => groups.extend(g),
        None => {
            if let Some(n) = &name {
                for l in read_small(&input.root.path("/etc/group")).lines() {
                    let f: Vec<&str> = l.split(':').collect();
                    if f.len() >= 4
                        && f[3].split(',').any(|m| m == n)
                        && let Ok(gid) = f[2].parse()
                    {
                        groups.push(gid);
                    }
                }
            }
        }
    }
    (name, groups)
}

fn group_name(input: &Input, gid: u32) -> String {
    read_small(&input.root.path("/etc/group"))
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 3 && f[2].parse() == Ok(gid)).then(|| f[0].to_owned())
        })
        .unwrap_or_else(|| format!("group {gid}"))
}

/// Whether `user` in `groups` may read and write a file with this owner, group and mode.
pub fn may_rw(uid: u32, gid: u32, mode: u32, user: u32, groups: &[u32]) -> bool {
    if user == 0 {
        return true;
    }
    let bits = if uid == user {
        mode >> 6
    } else if groups.contains(&gid) {
        mode >> 3
    } else {
        mode
    };
    bits & 0o6 == 0o6
}

/// Render nodes of the RDNA1 GPUs, below the root; all of /dev/dri/renderD* if sysfs names
/// none.
fn render_nodes(input: &Input) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for (addr, _) in input.facts.rdna1() {
        let drm = input.root.path(&format!("/sys/bus/pci/devices/{addr}/drm"));
        for e in std::fs::read_dir(drm).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("renderD") {
                v.push(input.root.path(&format!("/dev/dri/{n}")));
            }
        }
    }
    if v.is_empty() {
        v = std::fs::read_dir(input.root.path("/dev/dri"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("renderD"))
            .map(|e| e.path())
            .collect();
    }
    v.sort();
    v
}

pub fn checks(input: &Input) -> Vec<Check> {
    vec![access(input)]
}

fn access(input: &Input) -> Check {
    let id = "access.devices";
    if input.facts.rdna1().is_empty() {
        return Check::warn(id, "not checked: no RDNA1 GPU", "see gpu.rdna1");
    }
    let user = input.host.user();
    let (name, groups) = groups_of(input, &user);
    let who = match &name {
        Some(n) => format!("{n} (uid {})", user.uid),
        None => format!("uid {}", user.uid),
    };
    let who = if user.via_sudo {
        format!("{who}, who ran sudo")
    } else {
        who
    };
    let mut files = vec![input.root.path("/dev/kfd")];
    files.extend(render_nodes(input));
    let mut missing = Vec::new();
    let mut denied = Vec::new();
    let mut join = Vec::new();
    for f in &files {
        match std::fs::metadata(f) {
            Err(_) => missing.push(input.show(f)),
            Ok(m) => {
                if !may_rw(m.uid(), m.gid(), m.mode(), user.uid, &groups) {
                    let g = group_name(input, m.gid());
                    denied.push(format!(
                        "{} ({:o}, group {g})",
                        input.show(f),
                        m.mode() & 0o777
                    ));
                    if m.mode() & 0o060 == 0o060 && !join.contains(&g) {
                        join.push(g);
                    }
                }
            }
        }
    }
    if files.len() == 1 || !missing.is_empty() {
        let what = if files.len() == 1 {
            "/dev/kfd and any /dev/dri/renderD*".to_owned()
        } else {
            missing.join(", ")
        };
        let kfd_running = input.root.path(crate::gpus::kfd::NODES).is_dir();
        let fix = if kfd_running {
            "KFD runs but the device nodes are missing: check systemd-udevd, or pass --device=/dev/kfd --device=/dev/dri to the container"
        } else {
            "load amdgpu on a kernel with CONFIG_HSA_AMD=y (see kfd.atomics), then udev creates the nodes"
        };
        return Check::fail(
            id,
            format!("{what} missing: ROCm cannot reach the GPU"),
            fix,
        );
    }
    if !denied.is_empty() {
        let fix = if join.is_empty() {
            "give the user read/write access to these device files (udev rule with GROUP=\"render\", MODE=\"0660\")".to_owned()
        } else {
            format!(
                "sudo usermod -aG {} {}, then log out and in again (or run `newgrp {}`)",
                join.join(","),
                name.as_deref().unwrap_or("$USER"),
                join[0]
            )
        };
        return Check::fail(
            id,
            format!("{who} cannot open {} for reading and writing: ROCm sees no GPU (hipErrorNoDevice, torch.cuda.is_available() False)", denied.join(", ")),
            fix,
        );
    }
    Check::ok(
        id,
        format!(
            "{who} may read and write {}",
            files
                .iter()
                .map(|f| input.show(f))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;
    use std::os::unix::fs::PermissionsExt;

    fn tree(mode: u32) -> (Tree, u32, u32) {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        t.mkdir("sys/bus/pci/devices/0000:03:00.0/drm/renderD128");
        t.mkdir("sys/bus/pci/devices/0000:03:00.0/drm/card1");
        for f in ["dev/kfd", "dev/dri/renderD128", "dev/dri/renderD129"] {
            t.write(f, "");
            std::fs::set_permissions(t.path(f), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let m = std::fs::metadata(t.path("dev/kfd")).unwrap();
        t.write(
            "etc/group",
            &format!("render:x:{}:\nvideo:x:44:alice\n", m.gid()),
        );
        t.write(
            "etc/passwd",
            "root:x:0:0::/root:/bin/sh\nalice:x:4242:4242::/home/alice:/bin/bash\n",
        );
        (t, m.uid(), m.gid())
    }

    fn host(uid: u32, groups: Option<Vec<u32>>, via_sudo: bool) -> FakeHost {
        FakeHost {
            user: Some(User {
                uid,
                gid: 4242,
                groups,
                via_sudo,
            }),
            ..FakeHost::default()
        }
    }

    #[test]
    fn permission_bits() {
        assert!(may_rw(0, 5, 0o660, 1, &[5]));
        assert!(!may_rw(0, 5, 0o660, 1, &[6]));
        assert!(may_rw(0, 5, 0o666, 1, &[]));
        assert!(may_rw(1, 5, 0o600, 1, &[]));
        assert!(
            !may_rw(1, 5, 0o060, 1, &[5]),
            "the owner's bits apply to the owner"
        );
        assert!(may_rw(7, 7, 0o000, 0, &[]));
    }

    #[test]
    fn member_of_the_group_may() {
        let (t, _, gid) = tree(0o660);
        let c = run_check(
            &t,
            &host(4242, Some(vec![gid]), false),
            checks,
            "access.devices",
        );
        assert_check(
            &c,
            Status::Ok,
            &["alice (uid 4242)", "/dev/kfd", "/dev/dri/renderD128"],
        );
        assert!(
            !c.message.contains("renderD129"),
            "only the RDNA1 GPU's node: {c:?}"
        );
    }

    #[test]
    fn outsider_is_told_which_group() {
        let (t, _, _) = tree(0o660);
        let c = run_check(
            &t,
            &host(4242, Some(vec![44]), false),
            checks,
            "access.devices",
        );
        assert_check(
            &c,
            Status::Fail,
            &["cannot open /dev/kfd (660, group render)"],
        );
        assert_eq!(
            c.fix.as_deref().unwrap().split(',').next(),
            Some("sudo usermod -aG render alice")
        );
    }

    #[test]
    fn under_sudo_groups_come_from_etc_group() {
        let (t, _, gid) = tree(0o660);
        let c = run_check(&t, &host(4242, None, true), checks, "access.devices");
        assert_check(&c, Status::Fail, &["who ran sudo"]);
        t.write("etc/group", &format!("render:x:{gid}:bob,alice\n"));
        let c = run_check(&t, &host(4242, None, true), checks, "access.devices");
        assert_check(&c, Status::Ok, &["alice"]);
    }

    #[test]
    fn missing_nodes_fail() {
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x731f);
        let c = run_check(
            &t,
            &host(4242, Some(vec![]), false),
            checks,
            "access.devices",
        );
        assert_check(&c, Status::Fail, &["missing"]);
    }
}
