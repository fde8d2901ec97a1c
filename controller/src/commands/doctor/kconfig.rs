//! The running kernel: its release (6.18 or later; without BTF 7.2 and 7.3 only) and the config
//! options the module, amdgpu/KFD and `rdna1ctl layout` need.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rdna1_mtype_shared::contract::{FIRST_RELEASE, SOURCE_VERIFIED};

use super::{Check, Input};
use crate::btf::contract::major_minor;

#[derive(Debug)]
/// A parsed `.config`: `CONFIG_X=value` lines, and `# CONFIG_X is not set` as `n`.
pub struct KernelConfig {
    values: BTreeMap<String, String>,
    /// Where it was read from, for messages.
    pub source: PathBuf,
}

impl KernelConfig {
    pub fn parse(text: &str, source: PathBuf) -> KernelConfig {
        let mut values = BTreeMap::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("# ")
                && let Some(name) = rest.strip_suffix(" is not set")
            {
                values.insert(name.to_owned(), "n".to_owned());
            } else if let Some((name, value)) = line.split_once('=')
                && name.starts_with("CONFIG_")
            {
                values.insert(name.to_owned(), value.to_owned());
            }
        }
        KernelConfig { values, source }
    }

    /// The raw value (`y`, `m`, `"text"`, `42`); `None` if the option is absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Built in or a module.
    pub fn is_set(&self, name: &str) -> bool {
        matches!(self.get(name), Some("y" | "m"))
    }

    /// A string option without its quotes and Kconfig's backslash escapes.
    pub fn string(&self, name: &str) -> Option<String> {
        let raw = self.get(name)?;
        let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            out.push(if c == '\\' { chars.next()? } else { c });
        }
        Some(out)
    }

    /// The options of `names` that are neither `y` nor `m`.
    fn missing<'n>(&self, names: &[&'n str]) -> Vec<&'n str> {
        names.iter().copied().filter(|n| !self.is_set(n)).collect()
    }
}

/// What the fprobe on gmc_v10_0_get_vm_pte needs on Linux 7.2 (kernel/trace/Kconfig: FPROBE
/// depends on DYNAMIC_FTRACE_WITH_ARGS and selects FUNCTION_GRAPH_TRACER). Without FPROBE,
/// `register_fprobe()` is a stub returning -EOPNOTSUPP and the module cannot arm.
const HOOK_OPTIONS: &[&str] = &[
    "CONFIG_FPROBE",
    "CONFIG_FUNCTION_TRACER",
    "CONFIG_FUNCTION_GRAPH_TRACER",
    "CONFIG_DYNAMIC_FTRACE",
    "CONFIG_DYNAMIC_FTRACE_WITH_ARGS",
];

pub fn checks(input: &Input) -> Vec<Check> {
    let mut out = vec![release_check(input)];
    if let Some(c) = contract_check(input) {
        out.push(c);
    }
    let Some(config) = input.facts.config() else {
        let why = match &input.facts.config {
            Err(e) => format!("kernel config unreadable: {e}"),
            Ok(_) => "no kernel config: neither /proc/config.gz nor /boot/config-<release> exists"
                .to_owned(),
        };
        out.push(Check::warn(
            "kernel.config",
            format!("{why}; the kconfig.* checks were skipped"),
            "install the config with the kernel (Debian: in linux-image-*) or boot one with CONFIG_IKCONFIG_PROC=y",
        ));
        return out;
    };
    out.push(Check::ok(
        "kernel.config",
        format!("read {}", input.show(&config.source)),
    ));
    out.extend(config_checks(config));
    out
}

fn release_check(input: &Input) -> Check {
    let release = match &input.facts.release {
        Ok(r) => r,
        Err(e) => {
            return Check::fail(
                "kernel.release",
                format!("cannot tell the kernel version: {e}"),
                "run doctor on the machine itself (or give --root a tree with proc/sys/kernel/osrelease)",
            );
        }
    };
    // What kmod/hook.c accepts: FIRST_RELEASE and later when built with the contract checked
    // on the kernel's BTF (kernel.contract says whether it holds), else SOURCE_VERIFIED only.
    match major_minor(release) {
        Some(mm) if SOURCE_VERIFIED.contains(&mm) => Check::ok(
            "kernel.release",
            format!("Linux {release}: a release whose source was verified (7.2, 7.3)"),
        ),
        Some(mm) if mm >= FIRST_RELEASE => Check::ok(
            "kernel.release",
            format!(
                "Linux {release}: 6.18 or later; rdna1_mtype loads when DKMS built it with the \
                 contract checked on this kernel's BTF (kernel.contract)"
            ),
        ),
        Some((major, minor)) => Check::fail(
            "kernel.release",
            format!(
                "Linux {release} ({major}.{minor}) predates 6.18: its gmc_v10_0_get_vm_pte is \
                 (adev, mapping, flags), which the hook cannot read; rdna1_mtype refuses to load"
            ),
            "boot Linux 6.18 or later",
        ),
        None => Check::fail(
            "kernel.release",
            format!("kernel release {release:?} has no major.minor version"),
            "boot Linux 6.18 or later",
        ),
    }
}

/// The hook's contract against the running kernel's own amdgpu BTF (`check-kernel`'s check).
fn contract_check(input: &Input) -> Option<Check> {
    let release = input.facts.release.as_ref().ok()?;
    let (v, sources) = crate::btf::assess(input.root, release);
    if v.basis == crate::btf::contract::Basis::Unreadable {
        // The files could not be read: not a verdict on the kernel.
        return Some(Check::warn(
            "kernel.contract",
            format!(
                "cannot check the hook against this kernel's amdgpu: {}",
                v.problems.join("; ")
            ),
            "load amdgpu (its BTF is then in /sys/kernel/btf/amdgpu) and run `rdna1ctl check-kernel`",
        ));
    }
    Some(if v.hookable() {
        Check::ok(
            "kernel.contract",
            match &sources {
                Some(s) => format!(
                    "amdgpu's BTF ({}) matches the hook: gmc_v10_0_get_vm_pte(adev, vm, bo, \
                     vm_flags, flags) and every member the module reads",
                    input.show(&s.amdgpu)
                ),
                None => v.notes.join("; "),
            },
        )
    } else {
        Check::fail(
            "kernel.contract",
            format!(
                "this kernel's amdgpu does not match the hook: {}",
                v.problems.join("; ")
            ),
            "boot a kernel that `rdna1ctl check-kernel KVER` says is hookable",
        )
    })
}

fn config_checks(c: &KernelConfig) -> Vec<Check> {
    let mut out = Vec::new();
    let rust = c.missing(&["CONFIG_RUST", "CONFIG_MODULES"]);
    out.push(if rust.is_empty() {
        Check::ok("kconfig.rust", "CONFIG_RUST and CONFIG_MODULES are set")
    } else {
        Check::fail(
            "kconfig.rust",
            format!(
                "{} not set: rdna1_mtype is a loadable Rust module",
                rust.join(", ")
            ),
            "boot a kernel built with CONFIG_RUST=y and CONFIG_MODULES=y",
        )
    });
    let hook = c.missing(HOOK_OPTIONS);
    out.push(if hook.is_empty() {
        Check::ok(
            "kconfig.fprobe",
            "fprobe and its ftrace options are set (the module's hook mechanism)",
        )
    } else {
        Check::fail(
            "kconfig.fprobe",
            format!(
                "{} not set: rdna1_mtype hooks gmc_v10_0_get_vm_pte with an fprobe and cannot arm without it",
                hook.join(", ")
            ),
            format!("boot a kernel built with {}=y", hook.join("=y, ")),
        )
    });
    out.push(if c.is_set("CONFIG_KPROBES") {
        Check::ok("kconfig.kprobes", "CONFIG_KPROBES is set")
    } else {
        Check::warn(
            "kconfig.kprobes",
            "CONFIG_KPROBES is not set: rdna1_mtype does not need it (it uses fprobe), but kprobe-based debugging of amdgpu (perf probe, bpftrace kprobe:) is unavailable",
            "nothing to do for rdna1_mtype; for kprobe debugging boot a kernel with CONFIG_KPROBES=y",
        )
    });
    out.push(match c.get("CONFIG_DRM_AMDGPU") {
        Some("m") => Check::ok("kconfig.amdgpu", "CONFIG_DRM_AMDGPU=m (module)"),
        // A built-in amdgpu sends no module notification: rdna1_mtype refuses to load there
        // (kmod/arming.rs), and kmod/dkms-make.sh refuses to build.
        Some("y") => Check::fail(
            "kconfig.amdgpu",
            "CONFIG_DRM_AMDGPU=y: amdgpu is built into this kernel, and rdna1_mtype hooks only the amdgpu module (armed when it loads)",
            "boot a kernel built with CONFIG_DRM_AMDGPU=m (every distribution kernel we know is)",
        ),
        _ => Check::fail(
            "kconfig.amdgpu",
            "CONFIG_DRM_AMDGPU is not set: no amdgpu driver, nothing to hook",
            "boot a kernel built with CONFIG_DRM_AMDGPU=m",
        ),
    });
    out.push(if c.is_set("CONFIG_HSA_AMD") {
        Check::ok(
            "kconfig.kfd",
            "CONFIG_HSA_AMD is set (KFD, /dev/kfd for ROCm)",
        )
    } else {
        Check::fail(
            "kconfig.kfd",
            "CONFIG_HSA_AMD is not set: amdgpu has no KFD, so ROCm finds no GPU (/dev/kfd missing)",
            "boot a kernel built with CONFIG_HSA_AMD=y",
        )
    });
    out.push(if c.is_set("CONFIG_DEBUG_INFO_BTF_MODULES") {
        Check::ok(
            "kconfig.btf",
            "CONFIG_DEBUG_INFO_BTF_MODULES is set: `rdna1ctl layout` can read amdgpu_bo from /sys/kernel/btf/amdgpu",
        )
    } else {
        Check::warn(
            "kconfig.btf",
            "CONFIG_DEBUG_INFO_BTF_MODULES is not set: no /sys/kernel/btf/amdgpu, so amdgpu_bo's layout cannot be cross-checked against this kernel; the module's built-in layout (checked at set time and on every BO) is used",
            "nothing needed; for a BTF-derived layout boot a kernel with CONFIG_DEBUG_INFO_BTF_MODULES=y",
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{
        assert_check, run_check, FakeHost, Tree, KCONFIG_GOOD as GOOD,
    };
    use crate::commands::doctor::Status;

    fn tree(release: &str, config: &str) -> Tree {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", &format!("{release}\n"));
        t.write(&format!("boot/config-{release}"), config);
        t
    }

    fn check(t: &Tree, id: &str) -> Check {
        run_check(t, &FakeHost::default(), checks, id)
    }

    fn with_btf(t: &Tree, e: crate::btf::testbtf::Edit) {
        let (base, split) = crate::btf::testbtf::kernel(e);
        t.write_bytes("sys/kernel/btf/vmlinux", &base);
        t.write_bytes("sys/kernel/btf/amdgpu", &split);
    }

    #[test]
    fn contract_of_the_running_amdgpu() {
        use crate::btf::testbtf::{Edit, DEBIAN};
        let t = tree("7.2.13-amd64", GOOD);
        with_btf(&t, DEBIAN);
        let c = check(&t, "kernel.contract");
        assert_eq!(c.status, Status::Ok, "{c:?}");
        let t = tree("6.12.117-amd64", GOOD);
        with_btf(
            &t,
            Edit {
                old_signature: true,
                ..DEBIAN
            },
        );
        let c = check(&t, "kernel.contract");
        assert_eq!(c.status, Status::Fail, "{c:?}");
        assert!(c.message.contains("pre-6.18"), "{c:?}");
        let t = tree("7.2.13-amd64", GOOD);
        let c = check(&t, "kernel.contract");
        assert_eq!(c.status, Status::Warn, "{c:?}");
        assert!(
            c.message.contains("kernel 7.2.13-amd64 is not installed"),
            "{c:?}"
        );
    }

    #[test]
    fn parses_values_unset_and_strings() {
        let c = KernelConfig::parse(
            "# comment\nCONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_S=\"rustc 1.95.0 (x \\\"q\\\")\"\n",
            PathBuf::new(),
        );
        assert!(c.is_set("CONFIG_A") && c.is_set("CONFIG_B"));
        assert!(!c.is_set("CONFIG_C") && !c.is_set("CONFIG_D"));
        assert_eq!(c.get("CONFIG_C"), Some("n"));
        assert_eq!(
            c.string("CONFIG_S").as_deref(),
            Some("rustc 1.95.0 (x \"q\")")
        );
    }

    #[test]
    fn release_range() {
        assert_eq!(major_minor("7.2.13-amd64"), Some((7, 2)));
        assert_eq!(major_minor("7.3-rc1"), Some((7, 3)));
        assert_eq!(major_minor("6.12.48+deb13-amd64"), Some((6, 12)));
        assert_eq!(major_minor("garbage"), None);
        for ok in ["7.2.13-amd64", "7.3.4"] {
            assert_check(
                &check(&tree(ok, GOOD), "kernel.release"),
                Status::Ok,
                &[ok, "source was verified"],
            );
        }
        for ok in ["6.18.15-arch1-1", "7.0.0-14-generic", "7.4.0", "8.1.2"] {
            assert_check(
                &check(&tree(ok, GOOD), "kernel.release"),
                Status::Ok,
                &[ok, "kernel.contract"],
            );
        }
        for bad in ["6.12.48+deb13-amd64", "6.17.9"] {
            assert_check(
                &check(&tree(bad, GOOD), "kernel.release"),
                Status::Fail,
                &[bad, "predates 6.18"],
            );
        }
        assert_check(
            &check(&Tree::new(), "kernel.release"),
            Status::Fail,
            &["osrelease"],
        );
    }

    #[test]
    fn good_config_passes_every_option() {
        let t = tree("7.2.13", GOOD);
        for id in [
            "kernel.config",
            "kconfig.rust",
            "kconfig.fprobe",
            "kconfig.kprobes",
            "kconfig.amdgpu",
            "kconfig.kfd",
            "kconfig.btf",
        ] {
            assert_check(&check(&t, id), Status::Ok, &[]);
        }
    }

    #[test]
    fn each_missing_option_is_named() {
        let cases = [
            ("CONFIG_RUST=y", "kconfig.rust", Status::Fail, "CONFIG_RUST"),
            (
                "CONFIG_MODULES=y",
                "kconfig.rust",
                Status::Fail,
                "CONFIG_MODULES",
            ),
            (
                "CONFIG_FPROBE=y",
                "kconfig.fprobe",
                Status::Fail,
                "CONFIG_FPROBE",
            ),
            (
                "CONFIG_DYNAMIC_FTRACE_WITH_ARGS=y",
                "kconfig.fprobe",
                Status::Fail,
                "CONFIG_DYNAMIC_FTRACE_WITH_ARGS",
            ),
            (
                "CONFIG_KPROBES=y",
                "kconfig.kprobes",
                Status::Warn,
                "does not need it",
            ),
            (
                "CONFIG_DRM_AMDGPU=m",
                "kconfig.amdgpu",
                Status::Fail,
                "CONFIG_DRM_AMDGPU",
            ),
            ("CONFIG_HSA_AMD=y", "kconfig.kfd", Status::Fail, "/dev/kfd"),
            (
                "CONFIG_DEBUG_INFO_BTF_MODULES=y",
                "kconfig.btf",
                Status::Warn,
                "built-in layout",
            ),
        ];
        for (line, id, status, word) in cases {
            let name = line.split('=').next().unwrap();
            let config = GOOD.replace(line, &format!("# {name} is not set"));
            assert_ne!(config, GOOD, "{line} is in GOOD");
            assert_check(&check(&tree("7.2.13", &config), id), status, &[word]);
        }
    }

    /// A built-in amdgpu never sends the module notification the hook arms on.
    #[test]
    fn amdgpu_built_in_is_refused_with_the_reason() {
        let t = tree(
            "7.2.13",
            &GOOD.replace("CONFIG_DRM_AMDGPU=m", "CONFIG_DRM_AMDGPU=y"),
        );
        let c = check(&t, "kconfig.amdgpu");
        assert_check(&c, Status::Fail, &["built into", "only the amdgpu module"]);
        assert!(
            c.fix
                .as_deref()
                .unwrap_or("")
                .contains("CONFIG_DRM_AMDGPU=m"),
            "{c:?}"
        );
    }

    #[test]
    fn no_config_is_one_warning() {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", "7.2.13\n");
        assert_check(
            &check(&t, "kernel.config"),
            Status::Warn,
            &["no kernel config"],
        );
        let root = t.root();
        let facts = crate::commands::doctor::Facts::gather(&root);
        let host = FakeHost::default();
        let all = checks(&Input::new(&root, &host, &facts, None));
        assert!(all.iter().all(|c| !c.id.starts_with("kconfig.")), "{all:?}");
    }
}
