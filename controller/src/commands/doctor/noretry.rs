//! `amdgpu.noretry` and whether this kernel has amdgpu's "set noretry=1 as default for GFX
//! 10.1.x" (e47b0056a08d, June 2026; backported to 6.18.36 and 7.0.y, see
//! ../shared/notes/landscape.md). Before it, `amdgpu_gmc_noretry_set()` turned the default -1
//! into noretry=0 on GC 10.1 (only GC 9.x listed parts and GC >= 10.3 got noretry=1), and
//! gfxhub_v2_0 programs RETRY_PERMISSION_OR_INVALID_PAGE_FAULT = !noretry: an RDNA1 page fault
//! is retried until a ~10 s timeout instead of being reported at once.

use super::{Check, Input};

/// Whether `release` (as `uname -r`) has the fix: `Some(true)` for 6.18.36+ in 6.18.y and
/// 7.2 or later (released after June 2026), `Some(false)` for older series, `None` where the
/// backport's exact version is not known (7.0.y, 7.1.y) or the release does not parse.
pub fn has_default_fix(release: &str) -> Option<bool> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    let (major, minor) = (it.next()??, it.next()??);
    let patch = it.next().flatten().unwrap_or(0);
    match (major, minor) {
        (m, _) if m < 6 => Some(false),
        (6, n) if n < 18 => Some(false),
        (6, 18) => Some(patch >= 36),
        (6, _) => Some(false), // 6.19 reached end of life before June 2026
        (7, 0) | (7, 1) => None,
        _ => Some(true),
    }
}

const FIX: &str = "boot with amdgpu.noretry=1 (add it to GRUB_CMDLINE_LINUX_DEFAULT, run update-grub or grub2-mkconfig, reboot), or a kernel with the fix (6.18.36+, 7.2+)";

pub fn checks(input: &Input) -> Vec<Check> {
    let id = "amdgpu.noretry";
    let p = input.root.path("/sys/module/amdgpu/parameters/noretry");
    if !input.root.path("/sys/module/amdgpu/parameters").is_dir() {
        return Vec::new(); // amdgpu.params says amdgpu is not loaded
    }
    let value = input
        .root
        .read_attr(&p)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<i64>().ok());
    let release = input.facts.release.as_deref().unwrap_or("unknown");
    let c = match value {
        None => Check::warn(
            id,
            "cannot read /sys/module/amdgpu/parameters/noretry",
            "check that amdgpu is loaded and /sys is readable",
        ),
        Some(0) => Check::warn(
            id,
            "noretry=0 is set: on RDNA1 a GPU page fault is retried until a ~10 s timeout (a hang) instead of being reported at once",
            "remove amdgpu.noretry=0 from the kernel command line and boot with amdgpu.noretry=1",
        ),
        Some(v) if v > 0 => Check::ok(id, format!("noretry={v}: GPU page faults are reported at once")),
        Some(v) => match has_default_fix(release) {
            Some(true) => Check::ok(
                id,
                format!("noretry={v} (default) on Linux {release}, which has \"set noretry=1 as default for GFX 10.1.x\": faults are reported at once"),
            ),
            Some(false) => Check::warn(
                id,
                format!("noretry={v} (default) on Linux {release}, which predates amdgpu's \"set noretry=1 as default for GFX 10.1.x\": on RDNA1 a GPU page fault hangs ~10 s instead of being reported"),
                FIX,
            ),
            None => Check::warn(
                id,
                format!("noretry={v} (default) on Linux {release}: whether this kernel has amdgpu's \"set noretry=1 as default for GFX 10.1.x\" (backported to 7.0.y) is not known; without it an RDNA1 fault hangs instead of being reported"),
                FIX,
            ),
        },
    };
    vec![c]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    fn check(release: &str, value: Option<&str>) -> Check {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", release);
        t.mkdir("sys/module/amdgpu/parameters");
        if let Some(v) = value {
            t.write("sys/module/amdgpu/parameters/noretry", v);
        }
        run_check(&t, &FakeHost::default(), checks, "amdgpu.noretry")
    }

    #[test]
    fn releases_with_the_fix() {
        assert_eq!(has_default_fix("6.18.36"), Some(true));
        assert_eq!(has_default_fix("6.18.35-arch1-1"), Some(false));
        assert_eq!(has_default_fix("6.12.48+deb13-amd64"), Some(false));
        assert_eq!(has_default_fix("7.2.13-amd64"), Some(true));
        assert_eq!(has_default_fix("7.0.0-15-generic"), None);
        assert_eq!(has_default_fix("garbage"), None);
    }

    #[test]
    fn default_depends_on_the_kernel_and_explicit_values_do_not() {
        assert_check(
            &check("7.2.13-amd64\n", Some("-1\n")),
            Status::Ok,
            &["reported at once"],
        );
        let c = check("6.12.48+deb13-amd64\n", Some("-1\n"));
        assert_check(&c, Status::Warn, &["predates", "6.12.48"]);
        assert!(c.fix.unwrap().contains("amdgpu.noretry=1"));
        assert_check(
            &check("7.0.0-15-generic\n", Some("-1\n")),
            Status::Warn,
            &["not known"],
        );
        assert_check(&check("6.12.48\n", Some("1\n")), Status::Ok, &["noretry=1"]);
        assert_check(
            &check("7.2.13\n", Some("0\n")),
            Status::Warn,
            &["noretry=0", "hang"],
        );
        assert_check(&check("7.2.13\n", None), Status::Warn, &["cannot read"]);
    }
}
