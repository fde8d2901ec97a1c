//! `rdna1ctl verify`: checks the module's policy against live GPU page-table updates.
//!
//! It traces `amdgpu:amdgpu_vm_update_ptes` in a tracefs instance of its own, decodes the
//! MTYPE of every update from the per-CPU binary ring buffers, reads the module's event log
//! meanwhile, and judges every non-NC update at the end (docs/CLI.md (verify)). The instance is
//! removed on every way out: normal end, error (guard), SIGINT/SIGTERM/SIGHUP (flag + guard).

mod attribution;
mod judge;
mod report;

pub use report::VerifyJson;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::time::{clock_gettime, ClockId};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use tracing::debug;

use crate::cli::VerifyArgs;
use crate::exit::{coded, Code};
use crate::module::control::{self, Device};
use crate::output;
use crate::trace::decode::decode_page;
use crate::trace::format::{PageLayout, UpdatePtesLayout};
use crate::trace::tracefs::{Lost, Tracefs};
use crate::Ctx;
use attribution::Attributor;
use judge::Collector;
use report::{DecodedJson, EndedBy, LostJson, Outcome, TracefsJson};

/// How often the ring buffers and the module's log are read.
const POLL: Duration = Duration::from_millis(100);

/// SIGINT, SIGTERM and SIGHUP set a flag (the loop ends, the instance is removed, the report
/// printed); a second one terminates at once (a later run removes the stale instance).
struct Signals {
    flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    fn install() -> Result<Signals> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            // Registered first, so it sees the flag as it was before this signal.
            ids.push(signal_hook::flag::register_conditional_shutdown(
                sig,
                130,
                Arc::clone(&flag),
            )?);
            ids.push(signal_hook::flag::register(sig, Arc::clone(&flag))?);
        }
        Ok(Signals { flag, ids })
    }

    fn raised(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

fn monotonic_ns() -> u64 {
    clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// Reads the module's log from `cursor` until it is empty.
fn drain_events(
    dev: &Device,
    cursor: &mut u64,
    col: &mut Collector,
    attr: &mut Attributor,
    in_window: bool,
) -> Result<()> {
    loop {
        let (events, next, dropped) = dev.events(*cursor)?;
        if in_window {
            col.module_events_lost += dropped;
        }
        for e in &events {
            col.add_event(e, attr, in_window);
        }
        *cursor = next;
        if events.is_empty() {
            return Ok(());
        }
    }
}

pub fn run(ctx: &Ctx, args: &VerifyArgs, out: &mut impl Write) -> Result<Code> {
    let duration = match (args.until_interrupt, args.duration) {
        (true, _) => None,
        // The command line bounds it (cli::parse_duration); this only keeps `run` panic-free
        // for any caller.
        (false, s) => Some(
            Duration::try_from_secs_f64(s.unwrap_or(10.0))
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    coded(
                        Code::Usage,
                        format!(
                            "--duration {}: give a positive number of seconds",
                            s.unwrap_or(10.0)
                        ),
                    )
                })?,
        ),
    };
    let dev = control::open(&ctx.root)?;
    let policy = dev.policy()?;
    let stats_before = dev.stats()?;

    let tfs = Tracefs::locate(&ctx.root)?;
    let ev = UpdatePtesLayout::parse(&tfs.event_format()?).with_context(|| {
        format!(
            "parsing the format of amdgpu:amdgpu_vm_update_ptes in {}: this kernel's event \
             differs from Linux 7.2's; report it with the file attached",
            tfs.dir().display()
        )
    })?;
    let own_pid = std::process::id();
    let stale = tfs.clean_stale(&ctx.root, own_pid)?;

    let signals = Signals::install().context("installing signal handlers")?;
    let mut attr = Attributor::new(ctx.root.clone());
    attr.note_stats(&stats_before);
    let start_ns = monotonic_ns();
    let mut col = Collector::new(ctx.root.clone(), args.pid, start_ns);
    // The log so far: attributes pids, and recent keeps explain updates at the start.
    let mut cursor = 0;
    drain_events(&dev, &mut cursor, &mut col, &mut attr, false)?;

    let inst = tfs.create_instance(own_pid)?;
    inst.enable(args.pid)?;
    let page = PageLayout::parse(&inst.header_page()?).context("parsing events/header_page")?;
    let mut cpus = inst.open_cpus()?;
    let mut buf = vec![0u8; page.page_size()];
    let mut lost = LostJson::default();
    let mut pages = 0u64;
    let (mut updates, mut foreign, mut malformed) = (0u64, 0u64, 0u64);
    let t0 = Instant::now();
    debug!("tracing in {} for {duration:?}", inst.name());

    let mut read_all = |cpus: &mut Vec<crate::trace::tracefs::CpuReader>,
                        col: &mut Collector,
                        attr: &mut Attributor|
     -> Result<()> {
        for c in cpus.iter_mut() {
            pages += c.drain(&mut buf, |p| {
                let info = decode_page(&page, &ev, p, |u| col.add_update(u, attr));
                updates += info.updates;
                foreign += info.foreign;
                malformed += info.malformed;
                if let Some(n) = info.missed {
                    lost.flagged_pages += 1;
                    lost.flagged_events += n;
                }
            })?;
        }
        Ok(())
    };
    let ended_by = loop {
        read_all(&mut cpus, &mut col, &mut attr)?;
        drain_events(&dev, &mut cursor, &mut col, &mut attr, true)?;
        if signals.raised() {
            break EndedBy::Signal;
        }
        let left = duration.map(|d| d.saturating_sub(t0.elapsed()));
        if left == Some(Duration::ZERO) {
            break EndedBy::Duration;
        }
        std::thread::sleep(left.map_or(POLL, |l| l.min(POLL)));
    };
    // Stop the event, then take what is left: the counts end at a known point.
    inst.disable()?;
    read_all(&mut cpus, &mut col, &mut attr)?;
    let elapsed = t0.elapsed().as_secs_f64();
    let mut ring = Lost::default();
    for c in &cpus {
        ring.add(c.lost()?);
    }
    lost.ring = ring;
    let ncpus = cpus.len();
    drop(cpus); // An instance with open files cannot be removed.
    let name = inst.name().to_owned();
    inst.remove()?;
    drop(signals);

    drain_events(&dev, &mut cursor, &mut col, &mut attr, true)?;
    let stats_after = dev.stats()?;
    attr.note_stats(&stats_after);
    let policy_after = dev.policy()?;
    lost.module_events = col.module_events_lost;

    let verdict = judge::judge(&col, &attr, &policy);
    let doc = VerifyJson {
        duration_s: elapsed,
        ended_by,
        pid_filter: args.pid,
        policy: (&policy).into(),
        policy_changed: policy_after != policy,
        tracefs: TracefsJson {
            instance: name,
            removed: true,
            stale_removed: stale,
            cpus: ncpus,
        },
        decoded: DecodedJson {
            pages,
            updates,
            updates_per_s: if elapsed > 0.0 {
                updates as f64 / elapsed
            } else {
                0.0
            },
            foreign,
            malformed,
            filtered: col.filtered,
        },
        lost,
        module_events_read: col.module_events,
        rows: verdict.rows,
        stats: judge::counter_deltas(&stats_before, &stats_after),
        violations: verdict.violations,
        would_violate: verdict.would_violate,
        outside_vm_scope: verdict.outside_vm_scope,
        listed: verdict.listed,
        result: if verdict.violations > 0 {
            Outcome::Violations
        } else {
            Outcome::Ok
        },
    };
    if ctx.json {
        output::json("verify", &doc, out)?;
    } else {
        report::render_text(&doc, out)?;
    }
    Ok(if doc.violations > 0 {
        Code::Problems
    } else {
        Code::Ok
    })
}
