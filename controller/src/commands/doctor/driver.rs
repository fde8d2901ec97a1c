//! The GPUs, amdgpu and rdna1_mtype as loaded, and the amdgpu parameters that bear on RDNA1
//! compute faults.

use crate::gpus;
use crate::module::params::{self, ModuleState};
use crate::module::verdict::{self, Reason};

use super::{Check, Input};

pub fn checks(input: &Input) -> Vec<Check> {
    let mut out = vec![gpu_check(input), amdgpu_check(input)];
    out.extend(module_checks(input));
    out.extend(param_checks(input));
    out
}

fn amdgpu_loaded(input: &Input) -> bool {
    // Also there when amdgpu is built in (its parameters live below it).
    input.root.path("/sys/module/amdgpu").is_dir()
}

fn gpu_check(input: &Input) -> Check {
    let id = "gpu.rdna1";
    let gpus = match &input.facts.gpus {
        Ok(g) => g,
        Err(e) => {
            return Check::fail(
                id,
                format!("cannot list PCI devices: {e}"),
                "run doctor as a user who can read /sys/bus/pci",
            );
        }
    };
    let rdna1: Vec<_> = gpus.iter().filter(|g| g.rdna1.is_some()).collect();
    if rdna1.is_empty() {
        let seen = if gpus.is_empty() {
            "no AMD GPU".to_owned()
        } else {
            gpus.iter()
                .map(|g| format!("{} [1002:{:04x}]", g.address, g.device_id))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Check::fail(
            id,
            format!("no RDNA1 GPU ({seen}): nothing to do on this machine"),
            "rdna1_mtype is for Navi 10/12/14 (RX 5500/5600/5700, gfx1010/1011/1012) only; unload it here",
        );
    }
    let list = rdna1
        .iter()
        .map(|g| {
            let chip = g.rdna1.expect("filtered");
            format!("{} {} {}", g.address, chip.name(), chip.gfx_target())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let unbound: Vec<&str> = rdna1
        .iter()
        .filter(|g| g.driver.as_deref() != Some("amdgpu"))
        .map(|g| g.address.as_str())
        .collect();
    if unbound.is_empty() {
        Check::ok(id, format!("RDNA1 on amdgpu: {list}"))
    } else {
        Check::warn(
            id,
            format!("RDNA1: {list}; not bound to amdgpu: {}", unbound.join(", ")),
            "check `lspci -k` and dmesg for amdgpu's probe error (firmware, vfio binding, blacklist)",
        )
    }
}

fn amdgpu_check(input: &Input) -> Check {
    if amdgpu_loaded(input) {
        Check::ok("amdgpu.loaded", "amdgpu is loaded")
    } else {
        Check::fail(
            "amdgpu.loaded",
            "amdgpu is not loaded: no GPU driver, nothing for ROCm or rdna1_mtype",
            "sudo modprobe amdgpu, then read dmesg (missing firmware-amd-graphics? blacklisted? nomodeset?)",
        )
    }
}

/// `module.loaded` and `module.layout`, judged by status's own [`verdict::module_reasons`]:
/// doctor and status cannot disagree on the module's state or its fix.
fn module_checks(input: &Input) -> Vec<Check> {
    let id = "module.loaded";
    let state = match params::read(input.root) {
        Ok(state) => state,
        Err(e) => {
            return vec![Check::fail(
                id,
                format!(
                    "rdna1_mtype is loaded but unreadable: {}",
                    crate::exit::message(&e)
                ),
                "install the rdna1ctl that matches the loaded module's version",
            )];
        }
    };
    let gpus = input.facts.gpus.as_deref().unwrap_or_default();
    let reasons = verdict::module_reasons(&state, gpus::amdgpu_loaded(input.root, gpus));
    let check = |id, r: &Reason, fail: bool, what: String| {
        let fix = r.fix().unwrap_or_default();
        if fail {
            Check::fail(id, what, fix)
        } else {
            Check::warn(id, what, fix)
        }
    };
    let ModuleState::Loaded(m) = &state else {
        let r = &reasons[0];
        return vec![check(
            id,
            r,
            true,
            format!("{}: no PTE is changed", r.what()),
        )];
    };
    let v = &m.version;
    let loaded = match reasons.first() {
        Some(r @ Reason::NotArmed { amdgpu_bound }) => check(
            id,
            r,
            *amdgpu_bound,
            format!("rdna1_mtype {v} is loaded, {}", r.what()),
        ),
        Some(r @ Reason::ModeOff) => check(
            id,
            r,
            false,
            format!("rdna1_mtype {v} is armed in mode off: it counts calls, changes nothing"),
        ),
        Some(Reason::ModeAudit) => Check::ok(
            id,
            format!(
                "rdna1_mtype {v} is armed in mode audit (counts what enforce would change), scope {}",
                m.scope
            ),
        ),
        _ => Check::ok(
            id,
            format!(
                "rdna1_mtype {v} is armed in mode {}, scope {}, VM scope {}",
                m.mode.name(),
                m.scope,
                m.vm_scope.name()
            ),
        ),
    };
    let layout_id = "module.layout";
    let layout = match reasons.last() {
        Some(r @ Reason::LayoutUnset) => check(layout_id, r, false, r.what()),
        _ => Check::ok(layout_id, "amdgpu_bo layout set: BOs are classified"),
    };
    vec![loaded, layout]
}

/// amdgpu parameters whose effect on gfx10 is read from the 7.2 source; see
/// docs/CLI.md (doctor) for what is known and what is assumed.
fn param_checks(input: &Input) -> Vec<Check> {
    let dir = input.root.path("/sys/module/amdgpu/parameters");
    if !dir.is_dir() {
        return vec![Check::warn(
            "amdgpu.params",
            "amdgpu parameters not checked: amdgpu is not loaded",
            "see amdgpu.loaded",
        )];
    }
    let param = |name: &str| -> Option<i64> {
        input
            .root
            .read_attr(&dir.join(name))
            .ok()
            .flatten()
            .and_then(|v| v.parse().ok())
    };
    let mut out = Vec::new();
    // noretry: see noretry.rs.
    // Only gmc_v9_0 (GFX 9.4.3) and gmc_v12_1 read mtype_local; gmc_v10_0 never does.
    out.push(match param("mtype_local") {
        Some(v) if v != -1 => Check::warn(
            "amdgpu.mtype_local",
            format!("mtype_local={v} has no effect on RDNA1: only GFX 9.4.3 and 12.1 read it; gfx10 MTYPE comes from gmc_v10_0_get_vm_pte, which rdna1_mtype hooks"),
            "remove amdgpu.mtype_local from the kernel command line (it changes nothing here)",
        ),
        _ => Check::ok("amdgpu.mtype_local", "mtype_local unset (it does not apply to gfx10)"),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    fn check(t: &Tree, id: &str) -> Check {
        run_check(t, &FakeHost::default(), checks, id)
    }

    fn module(t: &Tree, mode: &str, armed: &str, layout_status: &str) {
        let p = "sys/module/rdna1_mtype/parameters";
        t.write("sys/module/rdna1_mtype/version", "0.1.0\n");
        t.write(&format!("{p}/mode"), &format!("{mode}\n"));
        t.write(&format!("{p}/armed"), &format!("{armed}\n"));
        t.write(&format!("{p}/scope"), "rdna1\n");
        t.write(&format!("{p}/classes"), "coherent\n");
        t.write(&format!("{p}/vm_scope"), "compute\n");
        // As the module shows it: a layout exactly when its status is ok.
        let layout = match layout_status {
            "ok" => "size=1336 preferred_domains=0 tbo=56 flags=1240",
            _ => "none",
        };
        t.write(&format!("{p}/bo_layout"), &format!("{layout}\n"));
        t.write(&format!("{p}/bo_layout_source"), "set\n");
        t.write(&format!("{p}/arm_error"), "\n");
        t.write(&format!("{p}/rejected"), "0\n");
        t.write(
            &format!("{p}/bo_layout_status"),
            &format!("{layout_status}\n"),
        );
    }

    #[test]
    fn rdna1_gpu_present_absent_unbound() {
        let t = Tree::new();
        assert_check(
            &check(&t, "gpu.rdna1"),
            Status::Fail,
            &["no AMD GPU", "nothing to do"],
        );
        t.gpu("0000:0c:00.0", 0x73bf); // Navi 21: RDNA2
        assert_check(
            &check(&t, "gpu.rdna1"),
            Status::Fail,
            &["0000:0c:00.0 [1002:73bf]", "nothing to do"],
        );
        t.gpu("0000:03:00.0", 0x731f);
        assert_check(
            &check(&t, "gpu.rdna1"),
            Status::Ok,
            &["0000:03:00.0 navi10 gfx1010"],
        );
        std::fs::remove_file(t.path("sys/bus/pci/devices/0000:03:00.0/driver")).unwrap();
        assert_check(
            &check(&t, "gpu.rdna1"),
            Status::Warn,
            &["not bound to amdgpu: 0000:03:00.0"],
        );
    }

    #[test]
    fn amdgpu_loaded_or_not() {
        let t = Tree::new();
        assert_check(&check(&t, "amdgpu.loaded"), Status::Fail, &["not loaded"]);
        assert_check(&check(&t, "amdgpu.params"), Status::Warn, &["not loaded"]);
        t.mkdir("sys/module/amdgpu/parameters");
        assert_check(&check(&t, "amdgpu.loaded"), Status::Ok, &[]);
    }

    /// Doctor and status agree on every module state: doctor's module checks are ok exactly
    /// when status finds no module-level reason, and carry status's fix otherwise.
    #[test]
    fn module_checks_agree_with_status() {
        for amdgpu in [false, true] {
            for mode in ["off", "audit", "enforce"] {
                for armed in ["N", "Y"] {
                    for layout in ["unset", "ok"] {
                        let t = Tree::new();
                        if amdgpu {
                            t.mkdir("sys/module/amdgpu");
                        }
                        module(&t, mode, armed, layout);
                        let state = params::read(&t.root()).unwrap();
                        let reasons = verdict::module_reasons(&state, amdgpu);
                        let loaded = check(&t, "module.loaded");
                        let lay = check(&t, "module.layout");
                        let case = format!("{amdgpu} {mode} {armed} {layout}: {reasons:?}");
                        let module_level: Vec<_> = reasons
                            .iter()
                            .filter(|r| !matches!(r, Reason::LayoutUnset))
                            .collect();
                        match module_level.first() {
                            None | Some(Reason::ModeAudit) => {
                                assert_eq!(loaded.status, Status::Ok, "{case}")
                            }
                            Some(r) => {
                                assert_ne!(loaded.status, Status::Ok, "{case}");
                                assert_eq!(loaded.fix.as_deref(), r.fix(), "{case}");
                            }
                        }
                        match reasons.last() {
                            Some(r @ Reason::LayoutUnset) => {
                                assert_ne!(lay.status, Status::Ok, "{case}");
                                assert_eq!(lay.fix.as_deref(), r.fix(), "{case}");
                            }
                            _ => assert_eq!(lay.status, Status::Ok, "{case}"),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn module_states() {
        let t = Tree::new();
        assert_check(&check(&t, "module.loaded"), Status::Fail, &["not loaded"]);
        module(&t, "enforce", "N", "unset");
        assert_check(
            &check(&t, "module.loaded"),
            Status::Warn,
            &["waiting for amdgpu"],
        );
        t.mkdir("sys/module/amdgpu");
        assert_check(&check(&t, "module.loaded"), Status::Fail, &["not armed"]);
        module(&t, "off", "Y", "unset");
        assert_check(&check(&t, "module.loaded"), Status::Warn, &["mode off"]);
        module(&t, "audit", "Y", "unset");
        assert_check(&check(&t, "module.loaded"), Status::Ok, &["mode audit"]);
        module(&t, "enforce", "Y", "unset");
        assert_check(
            &check(&t, "module.loaded"),
            Status::Ok,
            &["mode enforce", "scope rdna1"],
        );
        module(&t, "turbo", "Y", "unset");
        assert_check(&check(&t, "module.loaded"), Status::Fail, &["unknown mode"]);
    }

    #[test]
    fn layout_states() {
        let t = Tree::new();
        module(&t, "enforce", "Y", "unset");
        assert_check(
            &check(&t, "module.layout"),
            Status::Warn,
            &["unset", "only SVM"],
        );
        module(&t, "enforce", "Y", "ok");
        assert_check(&check(&t, "module.layout"), Status::Ok, &[]);
        // ABI 1 modules had a status `invalid` (no BO classified after one broke an
        // invariant); none has it now: the word is a version skew.
        module(&t, "enforce", "Y", "invalid");
        assert_check(
            &check(&t, "module.loaded"),
            Status::Fail,
            &["unknown bo_layout_status \"invalid\""],
        );
    }

    #[test]
    fn mtype_local() {
        let t = Tree::new();
        let p = "sys/module/amdgpu/parameters";
        t.write(&format!("{p}/mtype_local"), "-1\n");
        assert_check(&check(&t, "amdgpu.mtype_local"), Status::Ok, &[]);
        t.write(&format!("{p}/mtype_local"), "1\n");
        assert_check(
            &check(&t, "amdgpu.mtype_local"),
            Status::Warn,
            &["no effect on RDNA1"],
        );
    }
}
