//! What the CLI tests share: running the built rdna1ctl as a process.

use std::path::Path;
use std::process::{Command, Output};

/// rdna1ctl with `args`, never under a root inherited from the environment.
pub fn rdna1ctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(args)
        .env_remove("RDNA1CTL_ROOT")
        .output()
        .expect("run rdna1ctl")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// rdna1ctl (`bin`) as the search tests run it: from `dir` on the fixture root `dir/root`, with
/// nothing of the invoking environment that would change what it does, the in-process check from
/// the tree, and the stand-ins' kmsg and KFD process list in that root. As root the command runs
/// as nobody (SUDO_UID 65534, whose home /nonexistent does not exist); otherwise as the test's
/// own user with HOME in `dir/home`.
/// The tree's dist/field-kit, copied once per test process into a world-readable directory of
/// its own under the temporary directory: the command may run as nobody, who cannot reach a
/// tree in a 0700 home.
#[allow(dead_code)]
pub fn share_copy() -> std::path::PathBuf {
    static SHARE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    SHARE
        .get_or_init(|| {
            let share = std::env::temp_dir().join(format!("rdna1ctl-share-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&share);
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/field-kit");
            let ok = Command::new("cp")
                .arg("-R")
                .arg(&src)
                .arg(&share)
                .status()
                .expect("run cp");
            assert!(
                ok.success(),
                "copy {} to {}",
                src.display(),
                share.display()
            );
            let ok = Command::new("chmod")
                .args(["-R", "a+rX"])
                .arg(&share)
                .status()
                .expect("run chmod");
            assert!(ok.success());
            share
        })
        .clone()
}

#[allow(dead_code)]
pub fn fixture_command(bin: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(bin);
    c.current_dir(dir)
        .arg("--root")
        .arg(dir.join("root"))
        .args(args)
        .env_remove("RDNA1CTL_ROOT")
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .env_remove("PKEXEC_UID")
        .env_remove("HSA_OVERRIDE_GFX_VERSION")
        .env_remove("PYTHONPATH")
        .env_remove("VIRTUAL_ENV")
        .env_remove("CONDA_PREFIX")
        .env("RDNA1CTL_SHARE", share_copy())
        .env("STANDIN_KMSG", dir.join("root/dev/kmsg"))
        .env("STANDIN_KFD", dir.join("root/sys/class/kfd/kfd/proc"));
    if nix::unistd::geteuid().is_root() {
        c.env("SUDO_UID", "65534").env("SUDO_GID", "65534");
    } else {
        // The test's own user: its home here, not the machine's.
        c.env("HOME", dir.join("home"));
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}
