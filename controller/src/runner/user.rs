//! Who runs the owner's command: never root. The user who invoked rdna1ctl through sudo
//! (SUDO_UID/SUDO_GID) or pkexec (PKEXEC_UID), or the one `--user` names, with that user's
//! supplementary groups (render/video give /dev/kfd), home and name.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use nix::unistd::{Gid, Uid};
use serde::Serialize;

use super::{exec_as, user_db};
use crate::exit::{coded, Code};

/// What the environment and the command line say about who invoked rdna1ctl.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Invoker {
    /// `--user`.
    pub user: Option<String>,
    pub sudo_uid: Option<String>,
    pub sudo_gid: Option<String>,
    pub pkexec_uid: Option<String>,
}

impl Invoker {
    /// From `--user` and this process's environment.
    pub fn from_env(user: Option<String>) -> Invoker {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        Invoker {
            user,
            sudo_uid: var("SUDO_UID"),
            sudo_gid: var("SUDO_GID"),
            pkexec_uid: var("PKEXEC_UID"),
        }
    }
}

/// Whom to run as, before the user database is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `--user NAME`.
    Name(String),
    /// A uid (with the group sudo recorded, if any), and where it came from.
    Uid {
        uid: u32,
        gid: Option<u32>,
        source: &'static str,
    },
}

const FIX: &str = "give --user NAME (the user whose desktop session owns the GPU, in groups \
                   render and video), or run rdna1ctl through sudo as that user";

/// The decision (pure: the tests run every case): `--user` wins, then SUDO_UID, then
/// PKEXEC_UID; root (uid 0) is never a target; as root with nobody named, it refuses
/// (exit 2) rather than run the command as root.
pub fn decide(inv: &Invoker) -> anyhow::Result<Target> {
    let usage = |m: String| coded(Code::Usage, m);
    if let Some(name) = &inv.user {
        let target = match name.parse::<u32>() {
            Ok(uid) => Target::Uid {
                uid,
                gid: None,
                source: "--user",
            },
            Err(_) if name == "root" => Target::Uid {
                uid: 0,
                gid: None,
                source: "--user",
            },
            Err(_) if name.is_empty() || name.contains(['\0', '/', ':']) => {
                return Err(usage(format!("--user {name:?} is not a user name: {FIX}")));
            }
            Err(_) => Target::Name(name.clone()),
        };
        if matches!(target, Target::Uid { uid: 0, .. }) {
            return Err(usage(format!(
                "--user {name}: rdna1ctl never runs the command as root: {FIX}"
            )));
        }
        return Ok(target);
    }
    let parse = |var: &str, v: &str| {
        v.parse::<u32>()
            .map_err(|_| usage(format!("{var}={v:?} is not a uid: {FIX}")))
    };
    if let Some(v) = &inv.sudo_uid {
        let uid = parse("SUDO_UID", v)?;
        if uid != 0 {
            let gid = match &inv.sudo_gid {
                Some(g) => Some(parse("SUDO_GID", g)?),
                None => None,
            };
            return Ok(Target::Uid {
                uid,
                gid,
                source: "SUDO_UID",
            });
        }
    }
    if let Some(v) = &inv.pkexec_uid {
        let uid = parse("PKEXEC_UID", v)?;
        if uid != 0 {
            return Ok(Target::Uid {
                uid,
                gid: None,
                source: "PKEXEC_UID",
            });
        }
    }
    Err(usage(format!(
        "rdna1ctl runs your command as the user who invoked it, and root invoked it (no SUDO_UID \
         or PKEXEC_UID): {FIX}"
    )))
}

/// A user from the user database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
}

/// The user database: the process's (nix, NSS), or a table in tests.
pub trait Accounts {
    fn by_name(&self, name: &str) -> Option<Account>;
    fn by_uid(&self, uid: u32) -> Option<Account>;
    /// Every group of `name` with primary group `gid`.
    fn groups(&self, name: &str, gid: u32) -> Option<Vec<u32>>;
    /// What an error about a user this database lacks should add: which users it cannot know.
    fn limits(&self) -> Option<&'static str> {
        None
    }
}

/// The system's user database.
pub struct System;

fn account(u: nix::unistd::User) -> Account {
    Account {
        name: u.name,
        uid: u.uid.as_raw(),
        gid: u.gid.as_raw(),
        home: u.dir,
    }
}

impl Accounts for System {
    fn by_name(&self, name: &str) -> Option<Account> {
        nix::unistd::User::from_name(name)
            .ok()
            .flatten()
            .map(account)
    }
    fn by_uid(&self, uid: u32) -> Option<Account> {
        nix::unistd::User::from_uid(Uid::from_raw(uid))
            .ok()
            .flatten()
            .map(account)
    }
    fn groups(&self, name: &str, gid: u32) -> Option<Vec<u32>> {
        let c = CString::new(name).ok()?;
        let list = nix::unistd::getgrouplist(&c, Gid::from_raw(gid)).ok()?;
        Some(list.into_iter().map(Gid::as_raw).collect())
    }
    fn limits(&self) -> Option<&'static str> {
        user_db::FILES_ONLY.then_some(user_db::FILES_ONLY_HINT)
    }
}

/// Whom `search` and `run` run the command as: as root, the invoking user (`--user`,
/// SUDO_UID, PKEXEC_UID: [`decide`], [`resolve`]); otherwise `None`, rdna1ctl's own user.
pub fn for_command(user: Option<String>) -> anyhow::Result<Option<RunAs>> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    let target = decide(&Invoker::from_env(user))?;
    Ok(Some(resolve(&target, &System)?))
}

/// Whom the command runs as, resolved (the report's `run_as`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
    /// Every group the command gets (the primary one included).
    pub groups: Vec<u32>,
    /// The user's name, or null for a uid the user database does not know.
    pub name: Option<String>,
    pub home: Option<PathBuf>,
    /// What named the user: `--user`, `SUDO_UID` or `PKEXEC_UID`.
    pub source: &'static str,
}

/// `target` looked up in `db`. A uid the database does not know (a container, an initramfs)
/// still runs, with the group sudo recorded and no other: then the run has no render/video
/// groups unless that group is one, which the report shows.
pub fn resolve(target: &Target, db: &impl Accounts) -> anyhow::Result<RunAs> {
    let limits = db.limits().map(|l| format!(" ({l})")).unwrap_or_default();
    let (acct, uid, gid, source) = match target {
        Target::Name(n) => {
            let a = db.by_name(n).ok_or_else(|| {
                coded(
                    Code::Usage,
                    format!(
                        "--user {n}: no such user: give an existing user's name or uid{limits}"
                    ),
                )
            })?;
            let (uid, gid) = (a.uid, a.gid);
            (Some(a), uid, gid, "--user")
        }
        Target::Uid { uid, gid, source } => {
            let a = db.by_uid(*uid);
            let gid = match (gid, &a) {
                (Some(g), _) => *g,
                (None, Some(a)) => a.gid,
                (None, None) => {
                    return Err(coded(
                        Code::Usage,
                        format!(
                            "{source}: uid {uid} is not in the user database and no SUDO_GID \
                             says its group: give --user NAME{limits}"
                        ),
                    ));
                }
            };
            (a, *uid, gid, *source)
        }
    };
    if uid == 0 {
        return Err(coded(
            Code::Usage,
            format!("{source} names root: rdna1ctl never runs the command as root: {FIX}"),
        ));
    }
    let mut groups = acct
        .as_ref()
        .and_then(|a| db.groups(&a.name, gid))
        .unwrap_or_else(|| vec![gid]);
    if !groups.contains(&gid) {
        groups.insert(0, gid);
    }
    groups.dedup();
    Ok(RunAs {
        uid,
        gid,
        groups,
        name: acct.as_ref().map(|a| a.name.clone()),
        home: acct.map(|a| a.home),
        source,
    })
}

impl RunAs {
    /// `prog args` to run as this user: `exe` (rdna1ctl) started with [`exec_as::ENV`], which
    /// drops root and execs them (exec_as.rs says why not a fork). In a process group of its
    /// own (so that a timeout or Ctrl-C ends all of it), with HOME/USER/LOGNAME of the user
    /// and sudo's/pkexec's variables removed; the rest of this process's environment stays.
    /// `exe` is `/proc/self/exe` in use: the running binary even if a package upgrade replaced
    /// or removed its file meanwhile.
    pub fn command(&self, exe: &Path, prog: &OsStr, args: &[OsString]) -> Command {
        let mut cmd = self.command_in_my_group(exe, prog, args);
        cmd.process_group(0);
        cmd
    }

    /// [`RunAs::command`] without a process group of its own: in the caller's, so that a
    /// terminal's foreground group (stdin, Ctrl-C) includes it (`rdna1ctl run`).
    pub fn command_in_my_group(&self, exe: &Path, prog: &OsStr, args: &[OsString]) -> Command {
        let mut cmd = Command::new(exe);
        cmd.arg0("rdna1ctl").arg(prog).args(args);
        for v in [
            "SUDO_UID",
            "SUDO_GID",
            "SUDO_USER",
            "SUDO_COMMAND",
            "SUDO_HOME",
            "PKEXEC_UID",
            crate::ROOT_ENV,
        ] {
            cmd.env_remove(v);
        }
        if let Some(home) = &self.home {
            cmd.env("HOME", home);
        }
        if let Some(name) = &self.name {
            cmd.env("USER", name).env("LOGNAME", name);
        }
        cmd.env(
            exec_as::ENV,
            exec_as::spec(self.uid, self.gid, &self.groups),
        );
        cmd
    }

    /// The user in words: `alice (uid 1000, groups 1000,44,109, from SUDO_UID)`.
    pub fn describe(&self) -> String {
        let groups: Vec<String> = self.groups.iter().map(u32::to_string).collect();
        format!(
            "{} (uid {}, groups {}, from {})",
            self.name.as_deref().unwrap_or("(no name)"),
            self.uid,
            groups.join(","),
            self.source
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Db;
    impl Accounts for Db {
        fn by_name(&self, name: &str) -> Option<Account> {
            match name {
                "alice" => self.by_uid(1000),
                "root" => self.by_uid(0),
                _ => None,
            }
        }
        fn by_uid(&self, uid: u32) -> Option<Account> {
            let (name, gid) = match uid {
                1000 => ("alice", 1000),
                0 => ("root", 0),
                _ => return None,
            };
            Some(Account {
                name: name.into(),
                uid,
                gid,
                home: PathBuf::from(format!("/home/{name}")),
            })
        }
        fn groups(&self, name: &str, gid: u32) -> Option<Vec<u32>> {
            (name == "alice").then(|| vec![gid, 44, 109])
        }
    }

    fn inv(user: Option<&str>, sudo: Option<(&str, &str)>, pkexec: Option<&str>) -> Invoker {
        Invoker {
            user: user.map(Into::into),
            sudo_uid: sudo.map(|s| s.0.into()),
            sudo_gid: sudo.map(|s| s.1.into()),
            pkexec_uid: pkexec.map(Into::into),
        }
    }

    fn code(r: anyhow::Result<Target>) -> Code {
        crate::exit::code_of(&r.unwrap_err())
    }

    #[test]
    fn user_option_then_sudo_then_pkexec() {
        let uid = |uid, gid, source| Target::Uid { uid, gid, source };
        assert_eq!(
            decide(&inv(Some("alice"), Some(("1001", "1001")), Some("1002"))).unwrap(),
            Target::Name("alice".into())
        );
        assert_eq!(
            decide(&inv(Some("1005"), None, None)).unwrap(),
            uid(1005, None, "--user")
        );
        assert_eq!(
            decide(&inv(None, Some(("1001", "100")), Some("1002"))).unwrap(),
            uid(1001, Some(100), "SUDO_UID")
        );
        assert_eq!(
            decide(&inv(None, None, Some("1002"))).unwrap(),
            uid(1002, None, "PKEXEC_UID")
        );
        // sudo run by root itself names root: pkexec's user, if any, is next.
        assert_eq!(
            decide(&inv(None, Some(("0", "0")), Some("1002"))).unwrap(),
            uid(1002, None, "PKEXEC_UID")
        );
    }

    #[test]
    fn root_with_nobody_named_or_root_named_is_refused_with_a_fix() {
        for i in [
            inv(None, None, None),
            inv(None, Some(("0", "0")), None),
            inv(None, None, Some("0")),
            inv(Some("root"), None, None),
            inv(Some("0"), Some(("1000", "1000")), None),
            inv(Some(""), None, None),
            inv(Some("a:b"), None, None),
            inv(None, Some(("alice", "1")), None),
            inv(None, Some(("1000", "x")), None),
        ] {
            let e = decide(&i).unwrap_err();
            assert_eq!(crate::exit::code_of(&e), Code::Usage, "{i:?}");
            let m = crate::exit::message(&e);
            assert!(m.contains("--user"), "{i:?}: {m}");
            assert!(!m.contains('\n'), "{m}");
        }
        assert_eq!(code(decide(&inv(None, None, None))), Code::Usage);
    }

    #[test]
    fn resolution_takes_groups_and_home_from_the_database() {
        let r = resolve(&Target::Name("alice".into()), &Db).unwrap();
        assert_eq!(
            r,
            RunAs {
                uid: 1000,
                gid: 1000,
                groups: vec![1000, 44, 109],
                name: Some("alice".into()),
                home: Some("/home/alice".into()),
                source: "--user",
            }
        );
        let t = Target::Uid {
            uid: 1000,
            gid: Some(1000),
            source: "SUDO_UID",
        };
        assert_eq!(resolve(&t, &Db).unwrap().groups, vec![1000, 44, 109]);
        assert!(resolve(&t, &Db)
            .unwrap()
            .describe()
            .contains("alice (uid 1000"));
        // Unknown to the database: sudo's group only.
        let t = Target::Uid {
            uid: 65534,
            gid: Some(65534),
            source: "SUDO_UID",
        };
        let r = resolve(&t, &Db).unwrap();
        assert_eq!(
            (r.uid, r.gid, r.groups, r.name),
            (65534, 65534, vec![65534], None)
        );
        // Unknown, and no group known: refused.
        let t = Target::Uid {
            uid: 65534,
            gid: None,
            source: "PKEXEC_UID",
        };
        assert!(resolve(&t, &Db).is_err());
        let e = resolve(&Target::Name("mallory".into()), &Db).unwrap_err();
        assert_eq!(crate::exit::code_of(&e), Code::Usage);
        assert!(e.to_string().contains("no such user"), "{e}");
        // A name that resolves to root is refused too.
        let mut db_root = resolve(&Target::Name("root".into()), &Db);
        assert!(db_root.is_err());
        db_root = resolve(
            &Target::Uid {
                uid: 0,
                gid: Some(0),
                source: "--user",
            },
            &Db,
        );
        assert!(db_root.is_err());
    }

    /// A database that cannot know every user (a static build's) says so in the errors about
    /// a user it lacks, and only there.
    #[test]
    fn a_limited_database_says_which_users_it_cannot_know() {
        struct Limited;
        impl Accounts for Limited {
            fn by_name(&self, name: &str) -> Option<Account> {
                Db.by_name(name)
            }
            fn by_uid(&self, uid: u32) -> Option<Account> {
                Db.by_uid(uid)
            }
            fn groups(&self, name: &str, gid: u32) -> Option<Vec<u32>> {
                Db.groups(name, gid)
            }
            fn limits(&self) -> Option<&'static str> {
                Some("static build")
            }
        }
        let unknown_uid = Target::Uid {
            uid: 54321,
            gid: None,
            source: "--user",
        };
        for t in [Target::Name("mallory".into()), unknown_uid] {
            let m = crate::exit::message(&resolve(&t, &Limited).unwrap_err());
            assert!(m.ends_with(" (static build)"), "{m}");
            let m = crate::exit::message(&resolve(&t, &Db).unwrap_err());
            assert!(!m.contains("static"), "{m}");
        }
        assert!(resolve(&Target::Name("alice".into()), &Limited).is_ok());
    }

    #[test]
    fn the_environment_names_the_user_and_forgets_sudo() {
        let r = resolve(&Target::Name("alice".into()), &Db).unwrap();
        let cmd = r.command(
            Path::new("/usr/bin/rdna1ctl"),
            OsStr::new("python3"),
            &["train.py".into()],
        );
        let envs: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        assert!(envs.contains(&("HOME".into(), Some("/home/alice".into()))));
        assert!(envs.contains(&("USER".into(), Some("alice".into()))));
        assert!(envs.contains(&("SUDO_UID".into(), None)), "{envs:?}");
        let spec = exec_as::spec(r.uid, r.gid, &r.groups);
        assert!(
            envs.contains(&(exec_as::ENV.into(), Some(spec))),
            "{envs:?}"
        );
        // rdna1ctl itself, told what to run (it drops root, then execs).
        assert_eq!(cmd.get_program(), "/usr/bin/rdna1ctl");
        let args: Vec<&OsStr> = cmd.get_args().collect();
        assert_eq!(args, ["python3", "train.py"]);
    }
}
