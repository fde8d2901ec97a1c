//! Churn (issue 14, VM case 64): the policy is unchanged by every rejected ioctl, policy flips
//! during many hooked calls on two CPUs, and load/unload cycles of rdna1_mtype while another
//! CPU calls the function.
//!
//! `flips CALLS`: a caller on each of CPUs 0 and 1 runs the harness's `loop` (the real
//! `gmc_v10_0_get_vm_pte`, called by a kernel loop) for a CC request of several kinds until
//! CALLS calls are made, while this thread, also on CPU 0, flips mode, scope, classes,
//! vm_scope and bo_layout through sysfs and through SET_POLICY. Every result must be a whole
//! outcome: NC (rewritten) or amdgpu's own MTYPE, every other bit as amdgpu makes it.
//! `cycles N`: a caller on CPU 1 runs the loop while this thread, on CPU 0, loads rdna1_mtype
//! (mode=enforce) and unloads it N times; results whole, and after the last unload the
//! function gives amdgpu's own result.
//! Each prints one line of figures. The kernel log (KASAN, lockdep, WARN) is judged by the host.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::os::unix::fs::FileExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use nix::kmod::{delete_module, DeleteModuleFlags};
use rdna1_mtype_shared::abi::{PolicyArg, IOC_SET_POLICY};
use rdna1_mtype_shared::policy::{Classes, Mode, Policy, Scope, VmScope};
use rdna1_mtype_shared::pte::{mtype_of, Mtype, MTYPE_NV10_MASK};

use crate::race::pin;
use crate::{get_policy, raw};

const LOOP: &str = "/sys/kernel/debug/rdna1_mtype_harness/loop";
const LAYOUT: &str = "/sys/kernel/debug/rdna1_mtype_harness/layout";
const PARAMS: &str = "/sys/module/rdna1_mtype/parameters";
/// The parameters that make up the policy, as sysfs shows them.
pub const POLICY_PARAMS: [&str; 5] = ["mode", "scope", "classes", "vm_scope", "bo_layout"];

/// The policy as both interfaces show it: GET_POLICY's struct (integers only, no padding, so
/// equal fields are equal bytes) and the text of each policy parameter.
#[derive(PartialEq, Eq, Debug)]
pub struct Snapshot {
    arg: PolicyArg,
    text: Vec<Vec<u8>>,
}

/// The policy parameters, opened once (and before a privilege drop): read again from offset 0,
/// a sysfs file shows the value of that moment.
pub struct PolicyView {
    fd: RawFd,
    files: Vec<File>,
}

impl PolicyView {
    pub fn open(fd: RawFd) -> Result<PolicyView, String> {
        let files = POLICY_PARAMS
            .iter()
            .map(|p| File::open(format!("{PARAMS}/{p}")).map_err(|e| format!("{p}: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(PolicyView { fd, files })
    }

    pub fn snapshot(&self) -> Snapshot {
        let text = self
            .files
            .iter()
            .map(|f| {
                let mut buf = vec![0u8; 4096];
                let n = f.read_at(&mut buf, 0).expect("read policy parameter");
                buf.truncate(n);
                buf
            })
            .collect();
        Snapshot {
            arg: get_policy(self.fd),
            text,
        }
    }
}

/// What one `loop` write reports.
#[derive(Default, Debug)]
struct LoopResult {
    calls: u64,
    by_mtype: [u64; 5],
    rest_differ: u64,
    first: u64,
}

/// N calls of REQUEST through the harness's `loop`, on the open file `f`.
fn run_loop(f: &mut File, n: u64, request: &str) -> Result<LoopResult, String> {
    let line = format!("{n} {request}");
    f.write_all(line.as_bytes())
        .map_err(|e| format!("harness loop {line:?}: {e}"))?;
    let mut out = String::new();
    f.read_to_string(&mut out)
        .map_err(|e| format!("harness loop read: {e}"))?;
    let mut r = LoopResult::default();
    for kv in out.split_whitespace() {
        let (k, v) = kv.split_once('=').ok_or(format!("loop output {out:?}"))?;
        let v = match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => v.parse(),
        }
        .map_err(|e| format!("loop output {out:?}: {e}"))?;
        match k {
            "calls" => r.calls = v,
            "nc" => r.by_mtype[0] = v,
            "wc" => r.by_mtype[1] = v,
            "cc" => r.by_mtype[2] = v,
            "uc" => r.by_mtype[3] = v,
            "rsvd" => r.by_mtype[4] = v,
            "rest_differ" => r.rest_differ = v,
            "first" => r.first = v,
            _ => return Err(format!("loop output {out:?}: unknown {k}")),
        }
    }
    if r.calls != n || r.by_mtype.iter().sum::<u64>() != n {
        return Err(format!("loop of {n} calls reported {out:?}"));
    }
    Ok(r)
}

fn open_loop() -> Result<File, String> {
    File::options()
        .read(true)
        .write(true)
        .open(LOOP)
        .map_err(|e| format!("{LOOP}: {e} (is rdna1_mtype_harness loaded?)"))
}

/// The requests the callers make: a CC request without a BO, on a coherent and a plain BO, in
/// a graphics VM, and with the flags on the heap (which rdna1_mtype must leave alone): the
/// scope, classes, vm_scope and bo_layout flips each change some of their outcomes.
const REQUESTS: [&str; 5] = [
    "0x66 none 0x67 rdna1 stack compute",
    "0x66 coherent 0x67 rdna1 stack compute",
    "0x66 plain 0x67 rdna1 stack compute",
    "0x66 none 0x67 rdna1 stack graphics",
    "0x66 none 0x67 rdna1 heap compute",
];

/// Totals of whole and torn results, shared by the callers.
#[derive(Default)]
struct Tally {
    calls: AtomicU64,
    nc: AtomicU64,
    natural: AtomicU64,
    torn: AtomicU64,
    first_torn: AtomicU64,
}

impl Tally {
    /// Adds one loop's results; `natural` is amdgpu's own result for its request.
    fn add(&self, r: &LoopResult, natural: u64) {
        // Bucket 4 holds the reserved MTYPEs (4..7).
        let own = (mtype_of(natural) as usize).min(4);
        let nc = r.by_mtype[Mtype::Nc as usize];
        let own_n = if own == Mtype::Nc as usize {
            0
        } else {
            r.by_mtype[own]
        };
        // Not NC nor amdgpu's MTYPE, or other bits not amdgpu's: torn.
        let mut torn = r.calls - nc - own_n + r.rest_differ;
        if (r.first ^ natural) & !MTYPE_NV10_MASK != 0 {
            torn += r.calls;
        }
        if torn != 0 && self.torn.fetch_add(torn, Ordering::Relaxed) == 0 {
            self.first_torn.store(r.first, Ordering::Relaxed);
        }
        self.calls.fetch_add(r.calls, Ordering::Relaxed);
        self.nc.fetch_add(nc, Ordering::Relaxed);
        self.natural.fetch_add(own_n, Ordering::Relaxed);
    }
}

/// amdgpu's own result for each request: with mode off nothing is rewritten.
fn naturals(fd: RawFd) -> Result<Vec<u64>, String> {
    let saved = get_policy(fd);
    let off = PolicyArg::from_policy(&Policy {
        mode: Mode::Off,
        ..Policy::DEFAULT
    });
    raw(fd, IOC_SET_POLICY, &off as *const _ as usize).map_err(|e| format!("set off: {e}"))?;
    let mut f = open_loop()?;
    let n = REQUESTS
        .iter()
        .map(|r| run_loop(&mut f, 1, r).map(|l| l.first))
        .collect();
    raw(fd, IOC_SET_POLICY, &saved as *const _ as usize).map_err(|e| format!("restore: {e}"))?;
    n
}

fn param(name: &str, value: &str) -> Result<(), String> {
    std::fs::write(format!("{PARAMS}/{name}"), value).map_err(|e| format!("{name}={value}: {e}"))
}

/// One policy change, number `i` of the flipper's cycle: sysfs and SET_POLICY alternate.
fn flip(fd: RawFd, i: u64, layout: &str) -> Result<(), String> {
    let p = |mode, scope, coherent, vm_scope| {
        PolicyArg::from_policy(&Policy {
            mode,
            scope,
            classes: Classes {
                coherent,
                ..Classes::DEFAULT
            },
            vm_scope,
        })
    };
    let set = |a: PolicyArg| {
        raw(fd, IOC_SET_POLICY, &a as *const _ as usize)
            .map(|_| ())
            .map_err(|e| format!("SET_POLICY: {e}"))
    };
    match i % 12 {
        0 => param("mode", "audit"),
        1 => set(p(Mode::Enforce, Scope::Gfx10, false, VmScope::All)),
        2 => param("scope", "0000:04:00.0"),
        3 => param("bo_layout", "none"),
        4 => set(p(Mode::Off, Scope::Rdna1, true, VmScope::Compute)),
        5 => param("mode", "enforce"),
        6 => param("vm_scope", "all"),
        7 => param("classes", "uncached"),
        8 => param("bo_layout", layout),
        9 => set(p(Mode::Enforce, Scope::Rdna1, true, VmScope::Compute)),
        10 => param("classes", "coherent"),
        _ => param("vm_scope", "compute"),
    }
}

/// `flips CALLS`; the policy is restored afterwards.
pub fn flips(fd: RawFd, target: u64) -> Result<(), String> {
    let saved = get_policy(fd);
    let saved_layout = std::fs::read_to_string(format!("{PARAMS}/bo_layout"))
        .map_err(|e| format!("bo_layout: {e}"))?;
    let layout = std::fs::read_to_string(LAYOUT).map_err(|e| format!("{LAYOUT}: {e}"))?;
    param("bo_layout", &layout)?;
    let natural = Arc::new(naturals(fd)?);
    let tally = Arc::new(Tally::default());
    let done = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let callers: Vec<_> = (0..2)
        .map(|cpu| {
            let (natural, tally, done) = (natural.clone(), tally.clone(), done.clone());
            thread::spawn(move || -> Result<(), String> {
                pin(cpu)?;
                let mut f = open_loop()?;
                let mut k = cpu;
                // Claims a chunk of the target, then makes its calls.
                while done.fetch_add(CHUNK, Ordering::Relaxed) < target {
                    let i = k % REQUESTS.len();
                    tally.add(&run_loop(&mut f, CHUNK, REQUESTS[i])?, natural[i]);
                    k += 1;
                }
                Ok(())
            })
        })
        .collect();
    pin(0)?;
    let mut n = 0u64;
    while callers.iter().any(|c| !c.is_finished()) {
        flip(fd, n, &layout)?;
        n += 1;
    }
    for c in callers {
        c.join()
            .map_err(|_| "caller thread panicked".to_string())??;
    }
    let secs = t.elapsed().as_secs_f64();
    raw(fd, IOC_SET_POLICY, &saved as *const _ as usize).map_err(|e| format!("restore: {e}"))?;
    param("bo_layout", saved_layout.trim())?;
    let (calls, nc, own, torn) = (
        tally.calls.load(Ordering::Relaxed),
        tally.nc.load(Ordering::Relaxed),
        tally.natural.load(Ordering::Relaxed),
        tally.torn.load(Ordering::Relaxed),
    );
    println!(
        "flips: {calls} calls on 2 CPUs, {n} policy flips, {nc} NC, {own} amdgpu's own, {torn} not whole, {secs:.1} s"
    );
    if torn != 0 {
        return Err(format!(
            "{torn} results were neither NC nor amdgpu's own MTYPE with amdgpu's other bits; first of the first such loop: {:#x}",
            tally.first_torn.load(Ordering::Relaxed)
        ));
    }
    if calls < target || n < 12 || nc == 0 || own == 0 {
        return Err(format!(
            "nothing shown: {calls} of {target} calls, {n} flips, {nc} NC, {own} amdgpu's own"
        ));
    }
    Ok(())
}

/// Calls per `loop` write of `flips`: a fraction of a second under TCG + KASAN.
const CHUNK: u64 = 10_000;
/// Calls per `loop` write of `cycles`: short, so each load and unload falls within few.
const CYCLE_CHUNK: u64 = 500;

fn loaded() -> bool {
    std::path::Path::new(PARAMS).exists()
}

/// `cycles N`: rdna1_mtype is loaded when this starts, and left unloaded.
pub fn cycles(rounds: u32) -> Result<(), String> {
    const CC: &str = "0x66 none 0x67 rdna1 stack compute";
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let loops = Arc::new(AtomicU64::new(0));
    let mut f = open_loop()?;
    delete_module(c"rdna1_mtype", DeleteModuleFlags::O_NONBLOCK)
        .map_err(|e| format!("rmmod rdna1_mtype: {e}"))?;
    // amdgpu's own result for the request, without the module.
    let natural = run_loop(&mut f, 1, CC)?.first;
    if mtype_of(natural) != Mtype::Cc {
        return Err(format!(
            "without rdna1_mtype a CC request gave {natural:#x}"
        ));
    }
    let caller = {
        let (stop, tally, loops) = (stop.clone(), tally.clone(), loops.clone());
        thread::spawn(move || -> Result<(), String> {
            pin(1)?;
            while !stop.load(Ordering::Relaxed) {
                tally.add(&run_loop(&mut f, CYCLE_CHUNK, CC)?, natural);
                loops.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
    };
    pin(0)?;
    let t = Instant::now();
    // Until the caller has finished a loop begun after `since`: it called during that phase.
    let wait_caller = |since: u64| -> Result<(), String> {
        let t = Instant::now();
        while loops.load(Ordering::Relaxed) < since + 2 {
            if caller.is_finished() || t.elapsed() > Duration::from_secs(120) {
                return Err("the caller stopped calling".into());
            }
            thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    };
    let mut result = Ok(());
    for i in 0..rounds {
        let st = Command::new("modprobe")
            .args(["rdna1_mtype", "mode=enforce"])
            .status()
            .map_err(|e| format!("modprobe: {e}"))?;
        if !st.success() || !loaded() {
            result = Err(format!("cycle {i}: modprobe rdna1_mtype: {st}"));
            break;
        }
        let armed = std::fs::read_to_string(format!("{PARAMS}/armed")).unwrap_or_default();
        if armed.trim() != "Y" {
            result = Err(format!("cycle {i}: armed is {armed:?}"));
            break;
        }
        if let Err(e) = wait_caller(loops.load(Ordering::Relaxed)) {
            result = Err(e);
            break;
        }
        if let Err(e) = delete_module(c"rdna1_mtype", DeleteModuleFlags::O_NONBLOCK) {
            result = Err(format!("cycle {i}: rmmod rdna1_mtype: {e}"));
            break;
        }
        if let Err(e) = wait_caller(loops.load(Ordering::Relaxed)) {
            result = Err(e);
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    caller
        .join()
        .map_err(|_| "caller thread panicked".to_string())??;
    result?;
    let secs = t.elapsed().as_secs_f64();
    // After the last unload: amdgpu's own result, every call.
    let mut f = open_loop()?;
    let after = run_loop(&mut f, 1000, CC)?;
    let (calls, nc, own, torn) = (
        tally.calls.load(Ordering::Relaxed),
        tally.nc.load(Ordering::Relaxed),
        tally.natural.load(Ordering::Relaxed),
        tally.torn.load(Ordering::Relaxed),
    );
    println!(
        "cycles: {rounds} load/unload cycles of rdna1_mtype, caller on CPU 1: {calls} calls, {nc} NC, {own} amdgpu's own, {torn} not whole, {secs:.1} s"
    );
    if torn != 0 {
        return Err(format!(
            "{torn} results were neither NC nor CC with amdgpu's other bits; first of the first such loop: {:#x}",
            tally.first_torn.load(Ordering::Relaxed)
        ));
    }
    if nc == 0 || own == 0 {
        return Err(format!(
            "nothing shown: {nc} NC (loaded), {own} CC (unloaded)"
        ));
    }
    if after.by_mtype[Mtype::Cc as usize] != after.calls
        || after.rest_differ != 0
        || after.first != natural
    {
        return Err(format!(
            "after the last unload the function is not as without the module: {after:?}, want {natural:#x}"
        ));
    }
    Ok(())
}
