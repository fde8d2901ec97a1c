//! rdna1-abi-probe: drives every error path of /dev/rdna1_mtype's ioctls, then fuzzes them.
//!
//! `rdna1-abi-probe matrix`: see `matrix::run`. `table`: see table.rs. `race`: see race.rs.
//! `rdna1-abi-probe errors`: each check prints `ok NAME` or `FAIL NAME: ...`; exit 1 on any
//! failure. `rdna1-abi-probe fuzz N SEED [nobody]`: N random commands (valid and invalid
//! numbers, sizes, fields, user pointers, incl. kernel addresses); every return must be 0 or a
//! documented error, and after every rejected command the policy (GET_POLICY and the policy
//! parameters in sysfs) must be byte-identical to before it. The policy is restored afterwards.
//! With `nobody` the device is opened as root, then the process drops to uid/gid 65534 and
//! fuzzes through the open file: every SET_POLICY must give EPERM and the policy never
//! changes. `flips` and `cycles`: see churn.rs. The kernel log is judged by the VM host.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

use nix::errno::Errno;
use nix::libc;
use rdna1_mtype_shared::abi::*;
use rdna1_mtype_shared::policy::{Mode, Policy, VmScope};

mod churn;
mod harness;
mod race;
mod table;

fn raw(fd: RawFd, cmd: u32, arg: usize) -> Result<i32, Errno> {
    // SAFETY: the kernel validates `cmd` and `arg`; any user address is allowed (that is the
    // point); the memory behind valid pointers outlives the call.
    let r = unsafe { libc::ioctl(fd, cmd as libc::c_ulong, arg) };
    if r < 0 {
        Err(Errno::last())
    } else {
        Ok(r)
    }
}

fn policy_arg() -> PolicyArg {
    PolicyArg::from_policy(&Policy::DEFAULT)
}

struct Checks {
    failed: u32,
}

impl Checks {
    fn expect(&mut self, name: &str, got: Result<i32, Errno>, want: Result<i32, Errno>) {
        if got == want {
            println!("ok {name}");
        } else {
            println!("FAIL {name}: got {got:?}, want {want:?}");
            self.failed += 1;
        }
    }
}

fn get_policy(fd: RawFd) -> PolicyArg {
    let mut a = policy_arg();
    raw(fd, IOC_GET_POLICY, &mut a as *mut _ as usize).expect("GET_POLICY");
    a
}

fn errors(fd: RawFd) -> u32 {
    let mut c = Checks { failed: 0 };
    let before = get_policy(fd);

    let mut v = VersionArg {
        size: size_of::<VersionArg>() as u32,
        ..Default::default()
    };
    c.expect(
        "get-version",
        raw(fd, IOC_GET_VERSION, &mut v as *mut _ as usize),
        Ok(0),
    );
    c.expect("version-is-2", Ok(v.version as i32), Ok(ABI_VERSION as i32));
    let sysfs = std::fs::read_to_string("/sys/module/rdna1_mtype/version").unwrap_or_default();
    let mv = String::from_utf8_lossy(&v.module_version)
        .trim_end_matches('\0')
        .to_string();
    c.expect(
        "module-version-matches-sysfs",
        Ok((mv == sysfs.trim()) as i32),
        Ok(1),
    );

    c.expect(
        "unknown-nr",
        raw(fd, ioc(3, 0x7f, 8), 0),
        Err(Errno::ENOTTY),
    );
    c.expect("other-magic", raw(fd, 0xc038_4101, 0), Err(Errno::ENOTTY));
    let mut a = policy_arg();
    c.expect(
        "cmd-size-mismatch",
        raw(fd, ioc(3, NR_GET_POLICY, 52), &mut a as *mut _ as usize),
        Err(Errno::EINVAL),
    );
    a.size = 52;
    c.expect(
        "size-field-wrong",
        raw(fd, IOC_GET_POLICY, &mut a as *mut _ as usize),
        Err(Errno::EINVAL),
    );
    for (name, version) in [("version-1-in-v2-struct", 1), ("version-3", 3)] {
        let mut a = policy_arg();
        a.version = version;
        c.expect(
            name,
            raw(fd, IOC_GET_POLICY, &mut a as *mut _ as usize),
            Err(Errno::EINVAL),
        );
    }
    c.expect(
        "null-pointer",
        raw(fd, IOC_GET_POLICY, 0),
        Err(Errno::EFAULT),
    );
    c.expect(
        "bad-pointer",
        raw(fd, IOC_GET_POLICY, 1),
        Err(Errno::EFAULT),
    );
    c.expect(
        "kernel-pointer",
        raw(fd, IOC_GET_POLICY, 0xffff_8880_0000_0000),
        Err(Errno::EFAULT),
    );

    for (name, f) in [
        (
            "set-bad-mode",
            (|a: &mut PolicyArg| a.mode = 7) as fn(&mut PolicyArg),
        ),
        ("set-bad-classes", |a| a.classes = 8),
        ("set-bad-vm-scope", |a| a.vm_scope = 2),
        ("set-reserved-not-zero", |a| a.reserved = 1),
        ("set-bad-scope-kind", |a| a.scope_kind = 9),
        ("set-scope-len-9", |a| {
            a.scope_kind = SCOPE_LIST;
            a.scope_len = 9;
        }),
        ("set-garbage-in-unused", |a| a.scope_addrs[5] = 0x300),
        ("set-bad-version", |a| a.version = 0),
    ] {
        let mut a = policy_arg();
        f(&mut a);
        c.expect(
            name,
            raw(fd, IOC_SET_POLICY, &a as *const _ as usize),
            Err(Errno::EINVAL),
        );
    }
    c.expect(
        "policy-unchanged-after-refusals",
        Ok((get_policy(fd) == before) as i32),
        Ok(1),
    );

    v1(fd, &mut c, &before);

    let mut s = StatsArg {
        size: size_of::<StatsArg>() as u32,
        version: ABI_VERSION,
        index: 9999,
        ..Default::default()
    };
    c.expect(
        "stats-past-end",
        raw(fd, IOC_GET_STATS, &mut s as *mut _ as usize),
        Err(Errno::ENOENT),
    );

    let mut e = EventsArg {
        size: size_of::<EventsArg>() as u32,
        version: ABI_VERSION,
        capacity: MAX_EVENTS_PER_READ + 1,
        ..Default::default()
    };
    c.expect(
        "events-capacity-too-big",
        raw(fd, IOC_READ_EVENTS, &mut e as *mut _ as usize),
        Err(Errno::EINVAL),
    );
    e.capacity = 4;
    e.buf = 0x10;
    c.expect(
        "events-bad-buffer",
        raw(fd, IOC_READ_EVENTS, &mut e as *mut _ as usize),
        Err(Errno::EFAULT),
    );

    // Not privileged: may read, may not set. (The fd stays open across the drop.)
    // SAFETY: this program is single-threaded, so the child may run any code.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = (|| {
            nix::unistd::setgid(nix::unistd::Gid::from_raw(65534)).ok()?;
            nix::unistd::setuid(nix::unistd::Uid::from_raw(65534)).ok()?;
            let mut a = policy_arg();
            raw(fd, IOC_GET_POLICY, &mut a as *mut _ as usize).ok()?;
            (raw(fd, IOC_SET_POLICY, &a as *const _ as usize) == Err(Errno::EPERM)).then_some(0)
        })()
        .unwrap_or(1);
        std::process::exit(code);
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    c.expect("set-as-nobody-is-eperm", Ok(status), Ok(0));
    c.failed
}

/// A version 1 caller: its policy struct still answered (a v1 SET keeps the VM scope and
/// `uc_request`), its stats and events headers accepted. Restores `before`.
fn v1(fd: RawFd, c: &mut Checks, before: &PolicyArg) {
    let mut p = policy_arg();
    p.vm_scope = VmScope::All as u32;
    p.classes = CLASS_COHERENT | CLASS_UC_REQUEST;
    raw(fd, IOC_SET_POLICY, &p as *const _ as usize).expect("SET_POLICY");
    let mut a = PolicyArgV1 {
        size: size_of::<PolicyArgV1>() as u32,
        version: 1,
        ..Default::default()
    };
    c.expect(
        "v1-get-policy",
        raw(fd, IOC_GET_POLICY_V1, &mut a as *mut _ as usize),
        Ok(0),
    );
    c.expect(
        "v1-sees-v1-classes",
        Ok(a.classes as i32),
        Ok(CLASS_COHERENT as i32),
    );
    a.mode = Mode::Audit as u32;
    a.classes = CLASS_UNCACHED;
    c.expect(
        "v1-set-policy",
        raw(fd, IOC_SET_POLICY_V1, &a as *const _ as usize),
        Ok(0),
    );
    let now = get_policy(fd);
    c.expect(
        "v1-set-keeps-vm-scope-and-uc-request",
        Ok(i32::from(
            (now.mode, now.classes, now.vm_scope)
                == (
                    Mode::Audit as u32,
                    CLASS_UNCACHED | CLASS_UC_REQUEST,
                    VmScope::All as u32,
                ),
        )),
        Ok(1),
    );
    for (name, f) in [
        (
            "v1-set-uc-request-refused",
            (|a: &mut PolicyArgV1| a.classes = CLASS_UC_REQUEST) as fn(&mut PolicyArgV1),
        ),
        ("v1-set-version-2-refused", |a| a.version = 2),
        ("v1-set-size-wrong", |a| a.size = 64),
    ] {
        let mut b = a;
        f(&mut b);
        c.expect(
            name,
            raw(fd, IOC_SET_POLICY_V1, &b as *const _ as usize),
            Err(Errno::EINVAL),
        );
    }
    let mut b = a;
    b.version = 2;
    c.expect(
        "v1-get-version-2-refused",
        raw(fd, IOC_GET_POLICY_V1, &mut b as *mut _ as usize),
        Err(Errno::EINVAL),
    );
    let mut s = StatsArg {
        size: size_of::<StatsArg>() as u32,
        version: 1,
        ..Default::default()
    };
    c.expect(
        "v1-get-stats",
        raw(fd, IOC_GET_STATS, &mut s as *mut _ as usize),
        Ok(0),
    );
    let mut events = [Event::default(); 2];
    let mut e = EventsArg {
        size: size_of::<EventsArg>() as u32,
        version: 1,
        capacity: 2,
        buf: events.as_mut_ptr() as u64,
        ..Default::default()
    };
    c.expect(
        "v1-read-events",
        raw(fd, IOC_READ_EVENTS, &mut e as *mut _ as usize),
        Ok(0),
    );
    raw(fd, IOC_SET_POLICY, before as *const _ as usize).expect("restore policy");
}

/// Drops to uid and gid 65534 (nobody), no supplementary groups, for good.
fn become_nobody() -> Result<(), Errno> {
    use nix::unistd::{setgroups, setresgid, setresuid, Gid, Uid};
    let (uid, gid) = (Uid::from_raw(65534), Gid::from_raw(65534));
    setgroups(&[])?;
    setresgid(gid, gid, gid)?;
    setresuid(uid, uid, uid)
}

fn fuzz(fd: RawFd, n: u64, seed: u64, nobody: bool) -> u32 {
    let saved = get_policy(fd);
    // Opened before a privilege drop: the parameters need not be readable by nobody.
    let view = churn::PolicyView::open(fd).expect("policy parameters");
    let mut last = view.snapshot();
    let initial = view.snapshot();
    if nobody {
        become_nobody().expect("drop to uid/gid 65534");
        // The drop took: nobody may not change a parameter either.
        let w = std::fs::write("/sys/module/rdna1_mtype/parameters/mode", "off");
        if w.as_ref().map_err(|e| e.kind()) != Err(std::io::ErrorKind::PermissionDenied) {
            println!("FAIL fuzz: writing the mode parameter as nobody gave {w:?}");
            return 1;
        }
    }
    let (mut rejected, mut eperm) = (0u64, 0u64);
    let t = std::time::Instant::now();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut buf = vec![0u8; 4096];
    let mut events = vec![Event::default(); 8];
    let mut failed = 0;
    for i in 0..n {
        rng.fill(&mut buf);
        let nr = rng.u32(0..8);
        let size = match rng.u8(0..4) {
            0 => rng.usize(0..300),
            _ => [32, 56, 64, 200, 40][rng.usize(0..5)],
        };
        let dir = rng.u32(0..4);
        let cmd = if rng.bool() {
            ioc(dir, nr, size)
        } else {
            [
                IOC_GET_VERSION,
                IOC_GET_POLICY,
                IOC_SET_POLICY,
                IOC_GET_POLICY_V1,
                IOC_SET_POLICY_V1,
                IOC_GET_STATS,
                IOC_READ_EVENTS,
            ][rng.usize(0..7)]
        };
        // Mostly well-formed headers so the deeper checks run too.
        if rng.u8(0..4) != 0 {
            // The size the command encodes, as a caller built for it would put in the header.
            let sz: u32 = (cmd >> 16) & 0x3fff;
            buf[0..4].copy_from_slice(&sz.to_le_bytes());
            let version = rng.u32(ABI_VERSION_MIN..=ABI_VERSION);
            buf[4..8].copy_from_slice(&version.to_le_bytes());
            if cmd == IOC_READ_EVENTS {
                buf[8..12].copy_from_slice(&rng.u32(0..10).to_le_bytes());
                let p = if rng.bool() {
                    events.as_mut_ptr() as u64
                } else {
                    rng.u64(..)
                };
                buf[32..40].copy_from_slice(&p.to_le_bytes());
            }
        }
        let arg = match rng.u8(0..10) {
            0 => 0,
            1 => rng.usize(..),
            2 => 0xffff_8880_0000_0000 + rng.usize(0..1 << 20),
            _ => buf.as_mut_ptr() as usize,
        };
        let got = raw(fd, cmd, arg);
        let setter = cmd == IOC_SET_POLICY || cmd == IOC_SET_POLICY_V1;
        match got {
            Err(Errno::EPERM) if nobody && setter => eperm += 1,
            // Not privileged: a setter never gets past its permission check.
            _ if nobody && setter => {
                println!("FAIL fuzz #{i}: cmd {cmd:#x} as nobody: {got:?}, want EPERM");
                failed += 1;
            }
            Ok(0) | Err(Errno::EINVAL | Errno::ENOTTY | Errno::EFAULT | Errno::ENOENT) => {}
            other => {
                println!("FAIL fuzz #{i}: cmd {cmd:#x} arg {arg:#x}: {other:?}");
                failed += 1;
            }
        }
        if got.is_err() {
            rejected += 1;
            let now = view.snapshot();
            if now != last {
                println!(
                    "FAIL fuzz #{i}: cmd {cmd:#x} arg {arg:#x} was rejected ({got:?}) but the policy changed: {last:?} -> {now:?}"
                );
                failed += 1;
                last = now;
            }
        } else if !nobody {
            // An accepted SET_POLICY may change it: the next comparison is against this.
            last = view.snapshot();
        }
    }
    if nobody {
        if view.snapshot() != initial {
            println!("FAIL fuzz: the policy changed under nobody's calls");
            failed += 1;
        }
    } else {
        raw(fd, IOC_SET_POLICY, &saved as *const _ as usize).expect("restore policy");
    }
    let who = if nobody { "uid 65534" } else { "root" };
    println!(
        "fuzz: {n} calls as {who} (seed {seed}), {rejected} rejected ({eperm} EPERM), {failed} unexpected results or policy changes, {:.1} s",
        t.elapsed().as_secs_f64()
    );
    failed
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `table` needs only the harness (it also runs with rdna1_mtype unloaded).
    match args.get(1).map(String::as_str) {
        Some("table") => {
            let gpu = args.get(2).map_or("rdna1", String::as_str);
            let vm = args.get(3).map_or("compute", String::as_str);
            if let Err(e) = table::print(gpu, vm) {
                eprintln!("table: {e}");
                std::process::exit(1);
            }
            std::process::exit(0);
        }
        Some("calls") => {
            // calls N VM_FLAGS BO PTE_FLAGS [GPU [WHERE [VM]]]: N identical calls in one batch.
            let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
            let line = args.get(3..).map(|a| a.join(" ")).unwrap_or_default();
            let r = crate::harness::batch(&vec![line; n]);
            if let Err(e) = &r {
                eprintln!("calls: {e}");
            }
            std::process::exit(i32::from(n == 0 || r.is_err()));
        }
        Some("cycles") => {
            let n = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
            std::process::exit(i32::from(report(churn::cycles(n)) != 0));
        }
        Some("race") => {
            let rounds = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
            std::process::exit(i32::from(!race::run(rounds)));
        }
        _ => {}
    }
    let file = File::options()
        .read(true)
        .write(true)
        .open(format!("/dev/{DEVICE_NAME}"))
        .expect("open /dev/rdna1_mtype");
    let fd = file.as_raw_fd();
    let failed = match args.get(1).map(String::as_str) {
        Some("errors") => errors(fd),
        Some("matrix") => matrix::run(fd),
        Some("fuzz") => {
            let n = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000);
            let seed = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
            fuzz(
                fd,
                n,
                seed,
                args.get(4).map(String::as_str) == Some("nobody"),
            )
        }
        Some("flips") => {
            let calls = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
            report(churn::flips(fd, calls))
        }
        _ => {
            eprintln!(
                "usage: rdna1-abi-probe errors | fuzz N SEED [nobody] | flips CALLS | cycles N | matrix | table [GPU [VM]] | calls N VM_FLAGS BO PTE_FLAGS [GPU [WHERE [VM]]] | race ROUNDS"
            );
            2
        }
    };
    std::process::exit(i32::from(failed != 0));
}

/// A churn run's outcome as a failure count, its error printed.
fn report(r: Result<(), String>) -> u32 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            println!("FAIL {e}");
            1
        }
    }
}

/// `rdna1-abi-probe matrix`: every device x request x BO kind x VM kind x mode x (device
/// scope, VM scope) x classes x layout state, through the real gmc_v10_0_get_vm_pte (harness),
/// against what `policy::decide` documents.
mod matrix {
    use super::*;
    use rdna1_mtype_shared::bo::BoClass;
    use rdna1_mtype_shared::pci::{DeviceId, PciAddr};
    use rdna1_mtype_shared::policy::{self, Call, Classes, Decision, Mode, Scope, VmKind, VmScope};
    use rdna1_mtype_shared::pte::VmMtype;

    const LAYOUT: &str = "/sys/kernel/debug/rdna1_mtype_harness/layout";
    const BO_LAYOUT: &str = "/sys/module/rdna1_mtype/parameters/bo_layout";
    const IN: u64 = 0x67;

    /// The harness's BO kinds and the class each is (`None`: fails `classify`, unknown).
    const KINDS: [(&str, Option<BoClass>); 13] = [
        ("none", Some(BoClass::None)),
        ("plain", Some(BoClass::Memory)),
        ("vram", Some(BoClass::Memory)),
        ("userptr", Some(BoClass::Memory)),
        ("coherent", Some(BoClass::Coherent)),
        ("ext_coherent", Some(BoClass::Coherent)),
        ("uncached", Some(BoClass::Uncached)),
        ("sg_coherent", Some(BoClass::CoherentSg)),
        ("sg", Some(BoClass::Never)),
        ("doorbell", Some(BoClass::Never)),
        ("seq64", Some(BoClass::Kernel)),
        ("sg_attach", Some(BoClass::CoherentSg)),
        ("domains0", None),
    ];

    /// The harness's VMs and the kind the module must read from each.
    const VMS: [(&str, VmKind); 3] = [
        ("compute", VmKind::Compute),
        ("graphics", VmKind::Graphics),
        ("none", VmKind::Unknown),
    ];

    fn dev(domain: u16, bus: u8, vendor: u16, device: u16) -> Option<DeviceId> {
        Some(DeviceId {
            addr: PciAddr::new(domain, bus, 0, 0)?,
            vendor,
            device,
        })
    }

    /// The real function's result for every request x BO kind x VM on one GPU, in that
    /// order: one harness batch.
    fn row(gpu: &str) -> Vec<u64> {
        let mut calls = Vec::new();
        for req in VmMtype::ALL {
            for (kind, _) in &KINDS {
                for (vm, _) in &VMS {
                    let f = req.to_vm_flags() | 0x6;
                    calls.push(format!("{f:#x} {kind} {IN:#x} {gpu} stack {vm}"));
                }
            }
        }
        crate::harness::batch(&calls).expect("harness batch")
    }

    pub fn run(fd: RawFd) -> u32 {
        let gpus = [
            ("rdna1", dev(0, 3, 0x1002, 0x731f)),
            ("rdna1b", dev(1, 0x0a, 0x1002, 0x7340)),
            ("rdna2", dev(0, 4, 0x1002, 0x73bf)),
            ("other", dev(0, 5, 0x10de, 0x2204)),
            ("unknown", None),
        ];
        let saved = get_policy(fd);
        let layout = std::fs::read_to_string(LAYOUT).expect("harness layout");
        let all_classes = Classes {
            coherent: true,
            uncached: true,
            uc_request: true,
        };
        let (mut checked, mut failed) = (0u32, 0u32);
        for with_layout in [false, true] {
            std::fs::write(
                BO_LAYOUT,
                if with_layout { layout.as_str() } else { "none" },
            )
            .expect("set bo_layout");
            for (scope, vm_scope) in [
                (Scope::Rdna1, VmScope::Compute),
                (Scope::Gfx10, VmScope::Compute),
                (Scope::Rdna1, VmScope::All),
            ] {
                for classes in [Classes::DEFAULT, all_classes] {
                    // Off first: it passes through, so it gives amdgpu's own result.
                    let mut natural = std::collections::HashMap::new();
                    for mode in [Mode::Off, Mode::Audit, Mode::Enforce] {
                        let p = policy::Policy {
                            mode,
                            scope,
                            classes,
                            vm_scope,
                        };
                        let a = PolicyArg::from_policy(&p);
                        raw(fd, IOC_SET_POLICY, &a as *const _ as usize).expect("SET_POLICY");
                        for (gpu, device) in gpus {
                            let mut results = row(gpu).into_iter();
                            for req in VmMtype::ALL {
                                for (kind, class) in &KINDS {
                                    for (vm_name, vm) in VMS {
                                        let vm_flags = req.to_vm_flags() | 0x6;
                                        let got = results.next().expect("one result per call");
                                        let key = (gpu, vm_flags, *kind, vm_name);
                                        let base = *natural.entry(key).or_insert(got);
                                        let bo = match (class, with_layout) {
                                            (Some(BoClass::None), _) => BoClass::None,
                                            (Some(c), true) => *c,
                                            (None, true) | (_, false) => BoClass::Unknown,
                                        };
                                        let c = Call {
                                            vm_flags,
                                            flags: base,
                                            device,
                                        };
                                        let want = match policy::decide(&p, &c, || vm, || bo) {
                                            Decision::Rewrite(f) => f,
                                            _ => base,
                                        };
                                        checked += 1;
                                        if got != want {
                                            failed += 1;
                                            println!(
                                                "FAIL {} {} vm_scope={} {} {gpu} {} {kind} vm={vm_name} layout={with_layout}: got {got:#x}, want {want:#x}",
                                                mode.name(), scope, vm_scope.name(), classes, req.name()
                                            );
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        raw(fd, IOC_SET_POLICY, &saved as *const _ as usize).expect("restore policy");
        println!("matrix: {checked} calls checked, {failed} differ from the documented decision");
        failed
    }
}
