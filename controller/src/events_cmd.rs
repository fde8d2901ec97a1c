//! `rdna1ctl events [--follow]`: the module's decision log.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use rdna1_mtype_shared::abi::{Event, ACTION_REWRITE, ACTION_WOULD_REWRITE};
use rdna1_mtype_shared::pci::PciAddr;
use rdna1_mtype_shared::pte::{Mtype, VmMtype};

use crate::device::{self, cstr};
use crate::sysroot::SysRoot;

fn row(e: &Event) -> String {
    let dev = if e.dev_known != 0 {
        format!(
            "{} {:04x}:{:04x}",
            PciAddr::from_raw(e.dev_addr),
            e.vendor,
            e.device
        )
    } else {
        "unknown".to_owned()
    };
    let action = match (e.action, e.skip_reason()) {
        (ACTION_REWRITE, _) => "rewrite".to_owned(),
        (ACTION_WOULD_REWRITE, _) => "would-rewrite".to_owned(),
        (_, Some(why)) => format!("keep:{}", why.name()),
        (_, None) => format!("keep:{}", e.skip),
    };
    format!(
        "{:>8} {:>14.6} {:>7} {:<16} {:<27} {:<8} {:<6} {:<7} {:<9} {}",
        e.seq,
        e.time_ns as f64 / 1e9,
        e.pid,
        cstr(&e.comm),
        dev,
        VmMtype::from_vm_flags(e.vm_flags).name(),
        Mtype::from_bits(e.before).name(),
        Mtype::from_bits(e.written).name(),
        e.bo_class().map_or("?", |c| c.name()),
        action
    )
}

pub fn run(root: &SysRoot, follow: bool, out: &mut impl Write) -> Result<()> {
    let dev = device::open(root)?;
    writeln!(
        out,
        "{:>8} {:>14} {:>7} {:<16} {:<27} {:<8} {:<6} {:<7} {:<9} ACTION",
        "SEQ", "TIME", "PID", "COMM", "DEVICE", "REQUEST", "BEFORE", "WRITTEN", "CLASS"
    )?;
    let (mut cursor, mut lost) = (0u64, 0u64);
    loop {
        let (events, next, dropped) = dev.events(cursor)?;
        if dropped > 0 {
            writeln!(
                out,
                "-- {dropped} events lost (overwritten before they were read)"
            )?;
            lost += dropped;
        }
        for e in &events {
            writeln!(out, "{}", row(e))?;
        }
        cursor = next;
        if events.is_empty() {
            if !follow {
                break;
            }
            out.flush()?;
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    writeln!(out, "{cursor} events logged since load; {lost} lost")?;
    Ok(())
}
