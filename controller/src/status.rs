//! `rdna1ctl status`.

use std::io::Write;

use anyhow::Result;

use rdna1_mtype_shared::abi::{StatsArg, STATS_DEVICE, STATS_OTHER_DEVICES};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::policy::Skip;

use crate::device::Device;
use crate::gpus::{self, Gpu};
use crate::module_state::{self, ModuleState};
use crate::Ctx;

pub fn run(ctx: &Ctx, out: &mut impl Write) -> Result<()> {
    let root = &ctx.root;
    let module = module_state::read(root)?;
    let gpus = gpus::discover(root)?;
    render(&module, &gpus, out)?;
    if matches!(module, ModuleState::Loaded(_)) {
        match Device::open(root).and_then(|d| d.stats()) {
            Ok(stats) => render_stats(&stats, out)?,
            Err(e) => writeln!(out, "stats:   unavailable: {e:#}")?,
        }
    }
    Ok(())
}

/// One line per counter set the module keeps.
fn render_stats(stats: &[StatsArg], out: &mut impl Write) -> std::io::Result<()> {
    if stats.is_empty() {
        return writeln!(out, "stats:   no call seen yet");
    }
    for s in stats {
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
        write!(
            out,
            "stats:   {who}: {} calls, rewritten WC {} CC {} UC {}, would rewrite WC {} CC {} UC {}",
            s.calls, r[1], r[2], r[3], w[1], w[2], w[3]
        )?;
        for why in Skip::ALL {
            let n = s.skipped.get(why as usize).copied().unwrap_or(0);
            if n != 0 {
                write!(out, ", {} {n}", why.name())?;
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

fn render(module: &ModuleState, gpus: &[Gpu], out: &mut impl Write) -> std::io::Result<()> {
    match module {
        ModuleState::NotLoaded => {
            writeln!(
                out,
                "module:  rdna1_mtype is not loaded: no mapping is changed"
            )?;
            writeln!(
                out,
                "         load it with: sudo modprobe rdna1_mtype mode=enforce"
            )?;
        }
        ModuleState::Loaded(m) => {
            writeln!(out, "module:  rdna1_mtype {} loaded", m.version)?;
            writeln!(out, "mode:    {}", m.mode.name())?;
            writeln!(out, "scope:   {}", m.scope)?;
            writeln!(out, "classes: {}", m.classes)?;
            match (m.bo_layout_status.as_str(), m.bo_layout) {
                ("ok", Some(l)) => writeln!(out, "layout:  amdgpu_bo {l}")?,
                ("invalid", _) => writeln!(
                    out,
                    "layout:  INVALID (a BO read through it broke an invariant): no BO is modified; \
                     run `sudo rdna1ctl layout --apply` on this kernel"
                )?,
                _ => writeln!(
                    out,
                    "layout:  unset: no BO is modified, only SVM ranges; run `sudo rdna1ctl layout --apply`"
                )?,
            }
            if m.armed {
                writeln!(out, "hook:    armed on amdgpu gmc_v10_0_get_vm_pte")?;
            } else {
                writeln!(
                    out,
                    "hook:    not armed: amdgpu is not loaded (arms when it loads)"
                )?;
            }
        }
    }
    if gpus.is_empty() {
        writeln!(out, "GPUs:    no AMD GPU found")?;
    }
    for g in gpus {
        let kind = match g.rdna1 {
            Some(chip) => format!("RDNA1 {} {}", chip.name(), chip.gfx_target()),
            None => "not RDNA1: never modified".to_owned(),
        };
        let driver = g.driver.as_deref().unwrap_or("no driver");
        writeln!(
            out,
            "GPU:     {} [1002:{:04x}] {kind}, driver {driver}",
            g.address, g.device_id
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module_state::LoadedModule;
    use rdna1_mtype_shared::devices::Rdna1Chip;
    use rdna1_mtype_shared::policy::{Classes, Mode, Scope};

    fn text(m: &ModuleState, g: &[Gpu]) -> String {
        let mut v = Vec::new();
        render(m, g, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn not_loaded_says_how_to_load() {
        let t = text(&ModuleState::NotLoaded, &[]);
        assert!(t.contains("not loaded"), "{t}");
        assert!(t.contains("modprobe rdna1_mtype"), "{t}");
        assert!(t.contains("no AMD GPU found"), "{t}");
    }

    #[test]
    fn loaded_shows_mode_hook_and_gpus() {
        let m = ModuleState::Loaded(LoadedModule {
            version: "0.1.0".into(),
            mode: Mode::Enforce,
            scope: Scope::Rdna1,
            classes: Classes::DEFAULT,
            bo_layout: None,
            bo_layout_status: "unset".into(),
            armed: false,
        });
        let g = [Gpu {
            address: "0000:03:00.0".into(),
            device_id: 0x731f,
            rdna1: Some(Rdna1Chip::Navi10),
            driver: Some("amdgpu".into()),
        }];
        let t = text(&m, &g);
        assert!(t.contains("rdna1_mtype 0.1.0 loaded"), "{t}");
        assert!(t.contains("mode:    enforce"), "{t}");
        assert!(t.contains("scope:   rdna1"), "{t}");
        assert!(t.contains("classes: coherent"), "{t}");
        assert!(t.contains("layout:  unset"), "{t}");
        assert!(t.contains("not armed"), "{t}");
        assert!(
            t.contains("0000:03:00.0 [1002:731f] RDNA1 navi10 gfx1010, driver amdgpu"),
            "{t}"
        );
    }
}
