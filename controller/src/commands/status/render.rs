//! Human output of `rdna1ctl status`: a labelled column, one block per GPU whose third line is
//! the verdict. Tests (and tests/vm/cases/80, 92) grep these lines: change them with care.

use std::io::{self, Write};

use rdna1_mtype_shared::abi::{StatsArg, STATS_DEVICE, STATS_OTHER_DEVICES};
use rdna1_mtype_shared::bo::{LayoutSource, LayoutStatus};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::Skip;

use super::{Check, Counters, GpuReport, Report};
use crate::module::params::ModuleState;
use crate::output;

/// The last line under `--check`.
pub fn check(c: &Check, out: &mut impl Write) -> io::Result<()> {
    match c {
        Check::Unprotected(_) => writeln!(out, "check:   {} (reasons above)", c.message()),
        _ => writeln!(out, "check:   {}", c.message()),
    }
}

pub fn human(r: &Report, out: &mut impl Write) -> io::Result<()> {
    module(r, out)?;
    if r.gpus.is_empty() {
        writeln!(out, "GPUs:    no AMD GPU found")?;
    }
    for g in &r.gpus {
        gpu(g, &r.counters, out)?;
    }
    match &r.counters {
        Counters::NoModule => {}
        Counters::NeedRoot => writeln!(
            out,
            "stats:   need root: /dev/rdna1_mtype is root's only; `sudo rdna1ctl status` shows \
             the counters"
        )?,
        Counters::Unavailable(e) => writeln!(out, "stats:   unavailable: {e}")?,
        Counters::Read(rest) if rest.is_empty() && r.gpus.is_empty() => {
            writeln!(out, "stats:   no call seen yet")?
        }
        Counters::Read(rest) => {
            for s in rest {
                writeln!(out, "stats:   {}", counters_line(s))?;
            }
        }
    }
    Ok(())
}

fn module(r: &Report, out: &mut impl Write) -> io::Result<()> {
    let m = match &r.module {
        ModuleState::NotLoaded => {
            writeln!(
                out,
                "module:  rdna1_mtype is not loaded: no mapping is changed"
            )?;
            return writeln!(
                out,
                "         load it with: sudo modprobe rdna1_mtype mode=enforce"
            );
        }
        ModuleState::Loaded(m) => m,
    };
    match r.abi_version {
        Some(abi) => writeln!(out, "module:  rdna1_mtype {} loaded, ABI {abi}", m.version)?,
        None => writeln!(out, "module:  rdna1_mtype {} loaded", m.version)?,
    }
    writeln!(out, "mode:    {}", m.mode.name())?;
    writeln!(out, "scope:   {}", m.scope)?;
    if m.predates_vm_scope {
        writeln!(
            out,
            "vm scope: all (this module predates the VM scope: it changes every VM, graphics \
             clients too, and rewrites requested UC; load the module installed with rdna1ctl \
             for compute only)"
        )?;
    } else {
        writeln!(out, "vm scope: {}", output::vm_scope_text(m.vm_scope))?;
    }
    writeln!(out, "classes: {}", m.classes)?;
    match (m.bo_layout_status, m.bo_layout) {
        (LayoutStatus::Ok, Some(l)) => {
            let from = match m.bo_layout_source {
                LayoutSource::Builtin => "the module's built-in copy",
                LayoutSource::Set => "set by root",
                LayoutSource::Unset => "none",
            };
            writeln!(out, "layout:  amdgpu_bo {l} ({from})")?
        }
        _ => writeln!(
            out,
            "layout:  unset: no BO is modified, only SVM ranges; run `sudo rdna1ctl apply` (layout = \"auto\": built-in or BTF)"
        )?,
    }
    if m.rejected > 0 {
        writeln!(
            out,
            "guards:  {} calls refused (PTE flags not on the caller's stack)",
            m.rejected
        )?;
    }
    if let Some(n) = m.missed.filter(|&n| n > 0) {
        writeln!(
            out,
            "missed:  {n} calls fprobe did not hand to the module (kept as amdgpu made them)"
        )?;
    }
    match (m.armed, &m.arm_error) {
        (true, _) => writeln!(out, "hook:    armed on amdgpu gmc_v10_0_get_vm_pte"),
        (false, Some(e)) => writeln!(out, "hook:    NOT armed: {e}"),
        (false, None) => writeln!(
            out,
            "hook:    not armed: amdgpu is not loaded (arms when it loads)"
        ),
    }
}

fn gpu(r: &GpuReport, counters: &Counters, out: &mut impl Write) -> io::Result<()> {
    let g = &r.gpu;
    let name = g.name.as_deref().unwrap_or("(not in pci.ids)");
    writeln!(out, "GPU:     {} {name}", g.address)?;
    let mut facts = vec![format!("[1002:{:04x}]", g.device_id)];
    if let Some((v, d)) = g.subsystem {
        facts.push(format!("board [{v:04x}:{d:04x}]"));
    }
    facts.push(
        g.gfx_target
            .clone()
            .unwrap_or_else(|| "gfx target unknown".into()),
    );
    facts.push(match g.rdna1 {
        Some(chip) => format!("RDNA1 {}", chip.name()),
        None => "not RDNA1".into(),
    });
    facts.push(format!("driver {}", g.driver.as_deref().unwrap_or("none")));
    match r.verdict.in_scope {
        Some(true) => facts.push("in scope".into()),
        Some(false) => facts.push("out of scope".into()),
        None => {}
    }
    writeln!(out, "         {}", facts.join(", "))?;
    writeln!(out, "         {}", r.verdict.line())?;
    match (&r.stats, counters) {
        (Some(s), _) => writeln!(out, "stats:   {}", counters_line(s)),
        (None, Counters::Read(_)) => writeln!(out, "stats:   {}: no call seen yet", g.address),
        _ => Ok(()),
    }
}

/// One counter set: who, calls, rewritten and would-rewrite by MTYPE, non-zero skips.
fn counters_line(s: &StatsArg) -> String {
    let who = match s.kind {
        STATS_DEVICE => format!(
            "{} [{:04x}:{:04x}]",
            PciAddr::from_raw(s.addr),
            s.vendor,
            s.device
        ),
        STATS_OTHER_DEVICES => "other devices".to_owned(),
        _ => "unidentified".to_owned(),
    };
    let r = &s.rewritten;
    let w = &s.would_rewrite;
    let mut line = format!(
        "{who}: {} calls, rewritten WC {} CC {} UC {}, would rewrite WC {} CC {} UC {}",
        s.calls, r[1], r[2], r[3], w[1], w[2], w[3]
    );
    for why in Skip::ALL {
        let n = s.skipped.get(why as usize).copied().unwrap_or(0);
        if n != 0 {
            line.push_str(&format!(", {} {n}", why.name()));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::status::tests::set;
    use crate::gpus::tests::gpu as gpu_at;
    use crate::module::params::LoadedModule;
    use rdna1_mtype_shared::bo::BoLayout;
    use rdna1_mtype_shared::policy::{Classes, Mode, Scope, VmScope};

    fn text(r: &Report) -> String {
        let mut v = Vec::new();
        human(r, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    fn loaded(mode: Mode, layout: bool) -> ModuleState {
        ModuleState::Loaded(LoadedModule {
            version: "0.1.0".into(),
            mode,
            scope: Scope::Rdna1,
            classes: Classes::DEFAULT,
            vm_scope: VmScope::Compute,
            predates_vm_scope: false,
            bo_layout: layout
                .then(|| BoLayout::parse(b"size=1336 preferred_domains=0 tbo=56 flags=1240"))
                .flatten(),
            bo_layout_status: if layout {
                LayoutStatus::Ok
            } else {
                LayoutStatus::Unset
            },
            bo_layout_source: LayoutSource::Builtin,
            armed: true,
            arm_error: None,
            rejected: 0,
            missed: Some(0),
        })
    }

    #[test]
    fn arm_error_and_guard_refusals_are_shown() {
        let mut m = loaded(Mode::Enforce, true);
        if let ModuleState::Loaded(l) = &mut m {
            l.armed = false;
            l.arm_error = Some(
                "gmc_v10_0_get_vm_pte resolved to gmc_v10_0_get_vm_pte [decoy], not to amdgpu's own"
                    .into(),
            );
            l.rejected = 2;
            l.missed = Some(3);
        }
        let t = text(&Report::new(m, vec![], false, Some(1), Counters::NoModule));
        assert!(
            t.contains(
                "hook:    NOT armed: gmc_v10_0_get_vm_pte resolved to gmc_v10_0_get_vm_pte [decoy]"
            ),
            "{t}"
        );
        assert!(t.contains("guards:  2 calls refused"), "{t}");
        assert!(t.contains("missed:  3 calls fprobe did not hand"), "{t}");
    }

    #[test]
    fn not_loaded_says_how_to_load() {
        let t = text(&Report::new(
            ModuleState::NotLoaded,
            vec![],
            false,
            None,
            Counters::NoModule,
        ));
        assert!(t.contains("not loaded"), "{t}");
        assert!(t.contains("modprobe rdna1_mtype"), "{t}");
        assert!(t.contains("no AMD GPU found"), "{t}");
        assert!(!t.contains("stats:"), "no module, no counters: {t}");
    }

    #[test]
    fn protected_gpu_block_with_its_counters() {
        let mut s = set(STATS_DEVICE, 3, 12);
        s.rewritten = [0, 1, 2, 3];
        s.skipped[Skip::AlreadyNc as usize] = 4;
        let r = Report::new(
            loaded(Mode::Enforce, true),
            vec![gpu_at(3, 0x731f, Some("amdgpu"))],
            true,
            Some(1),
            Counters::Read(vec![s]),
        );
        let t = text(&r);
        assert!(
            t.contains("module:  rdna1_mtype 0.1.0 loaded, ABI 1\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "GPU:     0000:03:00.0 Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]\n\
                 \x20        [1002:731f], board [1da2:e411], gfx1010, RDNA1 navi10, driver amdgpu, in scope\n\
                 \x20        protected (compute VMs)\n\
                 stats:   0000:03:00.0 [1002:731f]: 12 calls, rewritten WC 1 CC 2 UC 3, would rewrite WC 0 CC 0 UC 0, already_nc 4\n"
            ),
            "{t}"
        );
        assert!(!t.contains("no call seen yet"), "{t}");
    }

    #[test]
    fn unprotected_gpu_and_counters_for_root_only() {
        let r = Report::new(
            loaded(Mode::Audit, false),
            vec![gpu_at(3, 0x731f, Some("amdgpu"))],
            true,
            None,
            Counters::NeedRoot,
        );
        let t = text(&r);
        assert!(
            t.contains("module:  rdna1_mtype 0.1.0 loaded\n"),
            "no ABI without the device: {t}"
        );
        assert!(t.contains("layout:  unset: no BO is modified"), "{t}");
        assert!(
            t.contains("         NOT protected: mode is audit: it counts what enforce would change and changes nothing; amdgpu_bo layout unset"),
            "{t}"
        );
        assert!(t.contains("stats:   need root: "), "{t}");
    }

    #[test]
    fn gpu_without_counters_and_sets_of_other_devices() {
        let r = Report::new(
            loaded(Mode::Enforce, true),
            vec![gpu_at(3, 0x731f, Some("amdgpu"))],
            true,
            Some(1),
            Counters::Read(vec![
                set(STATS_OTHER_DEVICES, 0, 9),
                set(STATS_DEVICE, 4, 1),
            ]),
        );
        let t = text(&r);
        assert!(
            t.contains("stats:   0000:03:00.0: no call seen yet\n"),
            "{t}"
        );
        assert!(t.contains("stats:   other devices: 9 calls"), "{t}");
        assert!(
            t.contains("stats:   0000:04:00.0 [1002:731f]: 1 calls"),
            "a device not on this PCI bus (the VM harness's) keeps its line: {t}"
        );
    }

    #[test]
    fn unknown_name_and_target_and_no_driver_are_said() {
        let mut g = gpu_at(9, 0x1234, None);
        g.name = None;
        g.gfx_target = None;
        g.subsystem = None;
        let t = text(&Report::new(
            ModuleState::NotLoaded,
            vec![g],
            false,
            None,
            Counters::NoModule,
        ));
        assert!(
            t.contains("GPU:     0000:09:00.0 (not in pci.ids)\n         [1002:1234], gfx target unknown, not RDNA1, driver none\n"),
            "{t}"
        );
        assert!(
            t.contains("NOT protected: rdna1_mtype is not loaded"),
            "{t}"
        );
    }
}
