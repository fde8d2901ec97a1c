//! `rdna1ctl verify` as a process: the errors it gives before it traces anything. The
//! tracing itself needs the module and amdgpu: tests/vm/cases/96-verify.sh.

use std::process::Command;

fn verify(args: &[&str]) -> (Option<i32>, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/no-amd");
    let out = Command::new(env!("CARGO_BIN_EXE_rdna1ctl"))
        .args(["--root", root, "verify"])
        .args(args)
        .output()
        .expect("run rdna1ctl");
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn module_not_loaded_exits_5_and_says_how_to_load() {
    let (code, err) = verify(&["--duration", "1"]);
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("modprobe rdna1_mtype"), "{err}");
}

#[test]
fn bad_duration_is_refused_before_anything_else() {
    // A bad value is a usage error (docs/CLI.md: exit 2), never a panic: 1e20 s overflowed
    // Duration::from_secs_f64.
    // 1e-10 passed the command line and failed later with "--duration Some(1e-10)".
    for d in [
        "0", "-1", "nan", "inf", "1e20", "604800.5", "1s", "", "1e-10", "0.0009",
    ] {
        let (code, err) = verify(&[&format!("--duration={d}")]);
        assert_eq!(code, Some(2), "--duration {d}: {err}");
        assert!(err.contains("is not a duration"), "--duration {d}: {err}");
        assert!(!err.contains("panicked"), "--duration {d}: {err}");
    }
    // The largest allowed one gets past the command line (to the missing module).
    let (code, err) = verify(&["--duration", "604800"]);
    assert_eq!(code, Some(5), "{err}");
    // -1 as its own word: a duration refused, not an unknown option.
    let (code, err) = verify(&["--duration", "-1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not a duration"), "{err}");
    let (code, _) = verify(&["--duration", "1", "--until-interrupt"]);
    assert_eq!(code, Some(2), "conflicting options are a usage error");
}
