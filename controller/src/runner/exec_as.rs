//! The owner's command, started as the invoking user without forking rdna1ctl: `report` starts
//! rdna1ctl itself again with [`ENV`] naming the user, and that process drops root and execs the
//! command ([`exec_from_env`], first thing in `main`).
//!
//! Why not `pre_exec` in a forked child: std's fork path reports the child's errors over an
//! AF_UNIX socket pair, which a kernel without CONFIG_NET (the project's test VM) refuses with
//! ENOSYS, so no command could ever start there; and forking a process that has threads (the
//! signal and output readers) and then running code before exec is fragile. Started this way,
//! the child is spawned with nothing to run before exec (posix_spawn), and drops root while it
//! has a single thread.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::unistd::{setgroups, setresgid, setresuid, Gid, Uid};

/// `uid:gid:group,group,...` of the user to become; set only on the command report starts.
pub const ENV: &str = "RDNA1CTL_EXEC_AS";
/// The command's own environment changes (JSON `{"set": [[name, value]], "unset": [name]}`),
/// applied only once root is dropped: a value from a user's file (`run --env`) never reaches
/// the process that is still root (`LD_PRELOAD`, or [`ENV`] itself).
pub const ENV_CHANGES: &str = "RDNA1CTL_EXEC_ENV";

/// What [`ENV_CHANGES`] carries.
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Changes {
    pub set: Vec<(String, String)>,
    pub unset: Vec<String>,
    /// Directories to make (mode 0700, parents too) as the user, before the command starts:
    /// the MIOpen cache a kept configuration names.
    #[serde(default)]
    pub mkdir: Vec<String>,
}

/// Makes `dirs` (and their parents) with mode 0700 as the calling user: the message of the
/// first that fails.
pub fn make_dirs(dirs: &[String]) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    for d in dirs {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(d)
            .map_err(|e| format!("creating {d}: {e}"))?;
    }
    Ok(())
}
/// The exit code when the command could not be started (as a shell's "cannot execute").
pub const CANNOT_START: i32 = 127;
/// How the one line on stderr starts when the command could not be started.
pub const CANNOT_START_MARK: &str = "rdna1ctl: could not start ";

/// The user in [`ENV`]'s form.
pub fn spec(uid: u32, gid: u32, groups: &[u32]) -> String {
    let groups: Vec<String> = groups.iter().map(u32::to_string).collect();
    format!("{uid}:{gid}:{}", groups.join(","))
}

fn parse(spec: &str) -> Option<(u32, u32, Vec<u32>)> {
    let mut parts = spec.splitn(3, ':');
    let uid = parts.next()?.parse().ok()?;
    let gid = parts.next()?.parse().ok()?;
    let groups = match parts.next()? {
        "" => Vec::new(),
        g => g
            .split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?,
    };
    Some((uid, gid, groups))
}

/// Drops to `uid`, `gid` and `groups` for good: false if any step failed or root could be
/// regained.
fn drop_root(uid: u32, gid: u32, groups: &[u32]) -> Result<(), String> {
    let groups: Vec<Gid> = groups.iter().copied().map(Gid::from_raw).collect();
    // Groups and group first: once the uid is dropped they can no longer be changed.
    setgroups(&groups).map_err(|e| format!("setgroups: {e}"))?;
    let g = Gid::from_raw(gid);
    setresgid(g, g, g).map_err(|e| format!("setresgid {gid}: {e}"))?;
    let u = Uid::from_raw(uid);
    setresuid(u, u, u).map_err(|e| format!("setresuid {uid}: {e}"))?;
    let root = Uid::from_raw(0);
    if setresuid(root, root, root).is_ok() {
        return Err("root could be regained".into());
    }
    Ok(())
}

/// If [`ENV`] is set: becomes that user and execs `argv[1..]` (never returning on success);
/// `Some(exit code)` if it could not, after one line on stderr. `None` without [`ENV`].
pub fn exec_from_env() -> Option<u8> {
    let spec = std::env::var_os(ENV)?;
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    let fail = |what: String| {
        eprintln!("{CANNOT_START_MARK}{what}");
        Some(CANNOT_START as u8)
    };
    let Some((uid, gid, groups)) = spec.to_str().and_then(parse) else {
        return fail(format!("{ENV}={spec:?} is not uid:gid:groups"));
    };
    let Some((prog, args)) = argv.split_first() else {
        return fail("no command given".into());
    };
    let shown = prog.to_string_lossy();
    // Only what report does: root (real and effective, not setuid or file capabilities)
    // becoming someone else. Never a way to run anything as root.
    if uid == 0 {
        return fail(format!(
            "{shown}: {ENV} names root, which report never runs as"
        ));
    }
    // SAFETY: getauxval only reads the auxiliary vector the kernel gave this process.
    let secure = unsafe { nix::libc::getauxval(nix::libc::AT_SECURE) } != 0;
    if secure || !(nix::unistd::getuid().is_root() && nix::unistd::geteuid().is_root()) {
        return fail(format!(
            "{shown}: {ENV} is only for rdna1ctl report run by root (not setuid)"
        ));
    }
    // Read while root, applied after: the text is inert until then.
    let changes: Changes = match std::env::var(ENV_CHANGES) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(c) => c,
            Err(e) => return fail(format!("{shown}: {ENV_CHANGES} is not valid: {e}")),
        },
        Err(_) => Changes::default(),
    };
    if let Err(e) = drop_root(uid, gid, &groups) {
        return fail(format!("{shown} as uid {uid}: {e}"));
    }
    if let Err(e) = make_dirs(&changes.mkdir) {
        return fail(format!(
            "{shown} as uid {uid}: {e} (a directory the kept configuration names: edit it to one \
             this user can write)"
        ));
    }
    let mut cmd = Command::new(prog);
    cmd.args(args).env_remove(ENV).env_remove(ENV_CHANGES);
    for k in &changes.unset {
        cmd.env_remove(k);
    }
    for (k, v) in &changes.set {
        cmd.env(k, v);
    }
    let e = cmd.exec();
    fail(format!("{shown} as uid {uid}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_round_trips_and_garbage_is_refused() {
        assert_eq!(
            parse(&spec(65534, 65533, &[65533, 44])),
            Some((65534, 65533, vec![65533, 44]))
        );
        assert_eq!(parse("1000:1000:"), Some((1000, 1000, vec![])));
        for bad in ["", "x:1:", "1:1", "1:1:a", "1:-1:", "1:1:2,,3"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
