//! `rdna1-abi-probe race ROUNDS`: policy flips and an unload of rdna1_mtype while another CPU
//! keeps calling the real `gmc_v10_0_get_vm_pte` (VM case 38).
//!
//! A caller thread on CPU 1 calls the function for a CC request on the in-scope RDNA1 device
//! without pause; this thread, on CPU 0, flips the policy ROUNDS times (audit, an out-of-scope
//! PCI list, enforce, rdna1), then unloads rdna1_mtype while the caller goes on. Every result
//! must be a whole outcome: NC (rewritten) or CC (amdgpu's own), other bits as amdgpu made them;
//! the caller must have run during the flips and across the unload (else nothing was shown);
//! after the unload the function gives amdgpu's CC. The kernel log (KASAN, lockdep, WARN) is
//! judged by the host.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use nix::kmod::{delete_module, DeleteModuleFlags};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use rdna1_mtype_shared::pte::{mtype_of, Mtype, MTYPE_NV10_MASK};

const CALL: &str = "/sys/kernel/debug/rdna1_mtype_harness/call";
const PARAMS: &str = "/sys/module/rdna1_mtype/parameters";
/// A CC request (AMDGPU_VM_MTYPE_CC << 5 | READABLE | WRITEABLE) without a BO, on the RDNA1.
const CALL_CC: &str = "0x66 none 0x67 rdna1";

pub(crate) fn pin(cpu: usize) -> Result<(), String> {
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|e| format!("cpu {cpu}: {e}"))?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| format!("pin to cpu {cpu}: {e}"))
}

fn call() -> Result<u64, String> {
    std::fs::write(CALL, CALL_CC).map_err(|e| format!("harness call: {e}"))?;
    let out = std::fs::read_to_string(CALL).map_err(|e| format!("harness read: {e}"))?;
    u64::from_str_radix(out.trim().trim_start_matches("0x"), 16)
        .map_err(|e| format!("harness output {out:?}: {e}"))
}

fn param(name: &str, value: &str) -> Result<(), String> {
    std::fs::write(format!("{PARAMS}/{name}"), value).map_err(|e| format!("{name}={value}: {e}"))
}

/// What the caller saw, by phase.
#[derive(Default)]
struct Seen {
    calls: AtomicU64,
    bad: AtomicU64,
    first_bad: AtomicU64,
}

pub fn run(rounds: u32) -> bool {
    match race(rounds) {
        Ok(()) => true,
        Err(e) => {
            println!("race: {e}");
            false
        }
    }
}

fn race(rounds: u32) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Seen::default());
    let caller = {
        let (stop, seen) = (stop.clone(), seen.clone());
        thread::spawn(move || -> Result<(), String> {
            pin(1)?;
            let mut other_bits = None;
            while !stop.load(Ordering::Relaxed) {
                let got = call()?;
                let rest = got & !MTYPE_NV10_MASK;
                let whole = matches!(mtype_of(got), Mtype::Nc | Mtype::Cc)
                    && *other_bits.get_or_insert(rest) == rest;
                if !whole && seen.bad.fetch_add(1, Ordering::Relaxed) == 0 {
                    seen.first_bad.store(got, Ordering::Relaxed);
                }
                seen.calls.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
    };
    pin(0)?;
    let calls = || seen.calls.load(Ordering::Relaxed);
    // The caller is running before the first flip.
    let t = Instant::now();
    while calls() == 0 && t.elapsed() < Duration::from_secs(60) && !caller.is_finished() {
        thread::yield_now();
    }
    let before = calls();
    for _ in 0..rounds {
        param("mode", "audit")?;
        param("scope", "0000:04:00.0")?;
        param("mode", "enforce")?;
        param("scope", "rdna1")?;
    }
    let during_flips = calls() - before;
    let at_unload = calls();
    delete_module(c"rdna1_mtype", DeleteModuleFlags::O_NONBLOCK)
        .map_err(|e| format!("rmmod rdna1_mtype: {e}"))?;
    // Let the caller run on after the unload.
    let t = Instant::now();
    while calls() < at_unload + 20 && t.elapsed() < Duration::from_secs(60) && !caller.is_finished()
    {
        thread::yield_now();
    }
    let across_unload = calls() - at_unload;
    stop.store(true, Ordering::Relaxed);
    caller
        .join()
        .map_err(|_| "caller thread panicked".to_string())??;
    let after = mtype_of(call()?);
    let bad = seen.bad.load(Ordering::Relaxed);
    println!(
        "race: {rounds} rounds of 4 policy writes and an unload; caller: {} calls ({during_flips} during the flips, {across_unload} from the unload on), {bad} not whole",
        calls()
    );
    if bad != 0 {
        return Err(format!(
            "{bad} results were neither NC nor CC with amdgpu's other bits; first: {:#x}",
            seen.first_bad.load(Ordering::Relaxed)
        ));
    }
    if during_flips == 0 || across_unload == 0 {
        return Err(
            "the caller did not run during the flips and across the unload: nothing shown".into(),
        );
    }
    if after != Mtype::Cc {
        return Err(format!(
            "after the unload a CC request gave {}, want CC",
            after.name()
        ));
    }
    Ok(())
}
