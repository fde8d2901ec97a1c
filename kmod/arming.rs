// SPDX-License-Identifier: GPL-2.0

//! Arming: when the probe is on amdgpu's `gmc_v10_0_get_vm_pte`, and on which function. One
//! state, under the arm lock, changed by four events: this module's load ([`load`]), amdgpu's
//! COMING and LIVE notifications (a new amdgpu, before and after its init) and its GOING one
//! ([`rdna1_mtype_on_amdgpu`]), and this module's unload ([`Armed::drop`]).
//!
//! An arming is on one function: the only traceable function of that name that is amdgpu's own
//! (never another module's, never a vmlinux one), in the amdgpu build the DKMS build checked
//! (its BTF id) or, without that BTF, an in-tree amdgpu; and never in an amdgpu that is going,
//! whose text is about to be freed. What amdgpu is asked for that comes from its `struct module`
//! while it notifies, and from its sysfs files when this module loads, which has no
//! `struct module` for it. hook.c does only what the `kernel` crate cannot (`arm_glue.rs`).

use core::cell::UnsafeCell;
use core::fmt::Write;
use core::ptr::NonNull;

use kernel::prelude::*;
use kernel::sync::atomic::{Atomic, Relaxed};

use crate::arm_glue::{self, ArmLocked, Attr, Module, ModuleBtf, Notifier};
use crate::ffi;
use crate::pci::SliceWriter;
use crate::state;

const MODULE: &str = "amdgpu";
const SYMBOL: &str = "gmc_v10_0_get_vm_pte";
/// What `sprint_symbol_no_offset()` gives for amdgpu's own function.
const OWN_SITE: &[u8] = b"gmc_v10_0_get_vm_pte [amdgpu]";
/// How many sites of that name are read: more means modules defining it we do not know.
const MAX_SITES: usize = 8;

/// The state, changed only under the arm lock.
struct State {
    /// The address the probe is armed on, if armed.
    site: Option<usize>,
    /// amdgpu notified GOING and no amdgpu has come since: its text must not be hooked.
    going: bool,
    /// This amdgpu's COMING was seen, and judged: its LIVE changes nothing.
    judged: bool,
    /// Why the last arming was refused; shown (`arm_error`, the log) once it is final.
    reason: Reason,
}

/// # Invariants
///
/// Read and written only through [`locked`], by the holder of the arm lock.
struct Guarded(UnsafeCell<State>);

// SAFETY: the state is accessed only by the holder of the arm lock (type invariant).
unsafe impl Sync for Guarded {}

static STATE: Guarded = Guarded(UnsafeCell::new(State {
    site: None,
    going: false,
    judged: false,
    reason: Reason {
        buf: [0u8; 255],
        len: 0,
    },
}));

/// Whether armed, for the lockless "armed" parameter: 1 while [`State::site`] is set.
static ARMED: Atomic<u32> = Atomic::new(0);

/// The state, for the holder of the arm lock.
fn locked(_lock: &mut ArmLocked) -> &mut State {
    // SAFETY: the lock is held and at most one `ArmLocked` exists (its invariant); the
    // returned borrow lives no longer than the `&mut` on it, so no two borrows coexist.
    unsafe { &mut *STATE.0.get() }
}

/// The "armed" parameter (hook.c). Lockless: a read racing an arming sees either value.
#[unsafe(no_mangle)]
extern "C" fn rdna1_mtype_armed() -> bool {
    ARMED.load(Relaxed) != 0
}

/// Why an arming did not happen.
enum NotArmed {
    /// No traceable function of that name is amdgpu's.
    NotFound,
    /// amdgpu is going: the next one's COMING arms.
    Going,
    /// amdgpu is there but its sysfs directory is not (yet, or any more): it is loading,
    /// before `mod_sysfs_setup()`, and its LIVE arms; or it has just gone, and the next
    /// COMING arms.
    Settling,
    /// Refused, for [`State::reason`].
    Refused,
    /// Registering the probe failed.
    Failed(Error),
}

/// Who calls [`try_arm`].
#[derive(Clone, Copy)]
enum Via<'a> {
    /// Module init: amdgpu is asked through sysfs.
    Load,
    /// amdgpu's COMING notification.
    Coming(&'a Module<'a>),
    /// amdgpu's LIVE notification.
    Live(&'a Module<'a>),
}

impl Via<'_> {
    fn module(&self) -> Option<&Module<'_>> {
        match self {
            Via::Load => None,
            Via::Coming(m) | Via::Live(m) => Some(m),
        }
    }
}

/// Why an arming was refused: a text for `arm_error` and the log.
struct Reason {
    buf: [u8; 255],
    len: usize,
}

/// A refusal for the reason `f` writes (cut to fit), kept in [`State::reason`].
fn refuse(
    lock: &mut ArmLocked,
    f: impl FnOnce(&mut SliceWriter<'_>) -> core::fmt::Result,
) -> NotArmed {
    let r = &mut locked(lock).reason;
    let mut w = SliceWriter::new(&mut r.buf);
    // A text longer than the buffer keeps what fitted.
    let _ = f(&mut w);
    r.len = w.len();
    NotArmed::Refused
}

fn clear_error(lock: &mut ArmLocked) {
    lock.set_error(b"");
}

/// What `/sys/module/amdgpu/initstate` says.
enum Sysfs {
    /// "live" or "coming".
    Present,
    /// "going".
    Going,
    /// No such file; `/sys/module` itself resolves or not.
    Absent { reachable: bool },
    /// Another error, or text that is no state.
    Unreadable(i32),
}

fn sysfs_state(lock: &mut ArmLocked) -> Sysfs {
    let mut buf = [0u8; 32];
    match arm_glue::amdgpu_attr(lock, Attr::InitState, &mut buf) {
        Ok(b"live\n") | Ok(b"coming\n") => Sysfs::Present,
        Ok(b"going\n") => Sysfs::Going,
        Ok(_) => Sysfs::Unreadable(EINVAL.to_errno()),
        // A removed kernfs file reads -ENODEV.
        Err(e) if e == ENOENT.to_errno() || e == ENODEV.to_errno() => Sysfs::Absent {
            reachable: arm_glue::sysfs_modules_reachable(lock),
        },
        Err(e) => Sysfs::Unreadable(e),
    }
}

/// The one site of the registered probe that is amdgpu's own function, re-registering the probe
/// on it alone if the name had other sites. Its kallsyms name says whose it is: a module name
/// is loaded once at a time (a second amdgpu waits in add_unformed_module() until the first is
/// freed). On any error the probe is unregistered.
fn own_site(lock: &mut ArmLocked) -> Result<usize, NotArmed> {
    let mut sites = [0usize; MAX_SITES];
    let n = lock.sites(&mut sites);
    if n > MAX_SITES {
        lock.unregister();
        return Err(refuse(lock, |w| {
            write!(w, "{n} traceable functions are named {SYMBOL}: more modules define it than this module can tell apart")
        }));
    }
    let mut own = None;
    let mut owns = 0;
    let mut name = [0u8; arm_glue::SYM_LEN];
    for &addr in &sites[..n] {
        if arm_glue::site_name(addr, &mut name) == OWN_SITE {
            own = Some(addr);
            owns += 1;
        }
    }
    let Some(addr) = own else {
        lock.unregister();
        return Err(NotArmed::NotFound);
    };
    if owns > 1 {
        lock.unregister();
        return Err(refuse(lock, |w| {
            write!(
                w,
                "{owns} traceable functions are {MODULE}'s {SYMBOL}: cannot tell which to hook"
            )
        }));
    }
    if n > 1 {
        // Another module defines the name too (the probe is disabled: no handler ran there).
        lock.unregister();
        if let Err(e) = lock.register_at(addr) {
            // ENOENT: no longer an ftrace location, amdgpu's text is going.
            return Err(if e == ENOENT {
                NotArmed::NotFound
            } else {
                NotArmed::Failed(e)
            });
        }
        let mut again = [0usize; 1];
        if lock.sites(&mut again) != 1 || again[0] != addr {
            lock.unregister();
            return Err(NotArmed::NotFound);
        }
    }
    Ok(addr)
}

/// An amdgpu built without this module's BTF check must be in tree: an out-of-tree one (AMD's
/// amdgpu-dkms: taint O) may have another signature (the pre-6.18 one) or layout, and the
/// probe would read its arguments as 7.2's and write through a junk pointer.
fn check_in_tree(lock: &mut ArmLocked, via: Via<'_>) -> Result<(), NotArmed> {
    let oot = match via.module() {
        Some(m) => m.out_of_tree(),
        None => {
            let mut buf = [0u8; 32];
            match arm_glue::amdgpu_attr(lock, Attr::Taint, &mut buf) {
                // module_flags_taint(): one letter per taint, 'O' for TAINT_OOT_MODULE.
                Ok(t) => t.contains(&b'O'),
                Err(e) => {
                    return Err(refuse(lock, |w| {
                        write!(w, "cannot read /sys/module/{MODULE}/taint ({e}) to check {MODULE} was built in tree")
                    }));
                }
            }
        }
    };
    if oot {
        let (version, release) = (ffi::version_str(), arm_glue::release());
        return Err(refuse(lock, |w| {
            write!(w, "{MODULE} was built out of tree (taint O) and this module without its BTF: its arguments cannot be checked (a kernel with module BTF and dkms install --force rdna1-mtype/{version} -k {release})")
        }));
    }
    Ok(())
}

/// The amdgpu about to be hooked must be the build whose BTF the DKMS build checked: while
/// COMING, its `.BTF`; else `/sys/kernel/btf/amdgpu`, the kernel's copy of those bytes. An
/// amdgpu built out of tree has a distilled base that the kernel rewrites in its copy, so the
/// two would differ; check-kernel reads no such module either: refused by name.
fn check_identity(lock: &mut ArmLocked, via: Via<'_>) -> Result<(), NotArmed> {
    let build = arm_glue::build();
    if build.btf_id == 0 {
        return check_in_tree(lock, via);
    }
    let id = match via {
        Via::Coming(m) => {
            // SAFETY: `Via::Coming` is made only by amdgpu's COMING notification (`coming`).
            let btf = unsafe { m.btf() };
            match btf {
                ModuleBtf::Id(id) => id,
                ModuleBtf::None => {
                    return Err(refuse(lock, |w| {
                        write!(w, "{MODULE} has no BTF: it is not the one checked when this module was built")
                    }));
                }
                ModuleBtf::Distilled => {
                    return Err(refuse(lock, |w| {
                        write!(w, "{MODULE} was built out of tree (its BTF has a distilled base): it is not the one checked when this module was built")
                    }));
                }
            }
        }
        Via::Load | Via::Live(_) => match arm_glue::live_btf_id(lock) {
            Ok(id) => id,
            Err(e) => {
                return Err(refuse(lock, |w| {
                    write!(w, "cannot read /sys/kernel/btf/{MODULE} ({e}) to check it is the {MODULE} this module was built for")
                }));
            }
        },
    };
    if id != build.btf_id {
        let (version, release) = (ffi::version_str(), arm_glue::release());
        return Err(refuse(lock, |w| {
            write!(w, "{MODULE}'s BTF (id {id:#x}) is not the one checked when this module was built ({:#x}): rebuild it (dkms install --force rdna1-mtype/{version} -k {release})", build.btf_id)
        }));
    }
    Ok(())
}

/// On the load path, the amdgpu found must not be going: its GOING notification may have run
/// before our notifier was registered (register_module_notifier() waits for a running chain,
/// and module unload goes on from the chain's end to ftrace_release_mod() without a lock we
/// could take), and in between its function is still found, so an arming would be on text
/// about to be freed that nothing would ever disarm. An amdgpu seen live or coming here
/// notifies us when it goes (we are registered by then), and that waits for our lock.
fn check_not_going(lock: &mut ArmLocked) -> Result<(), NotArmed> {
    match sysfs_state(lock) {
        Sysfs::Present => Ok(()),
        Sysfs::Going => Err(NotArmed::Going),
        Sysfs::Absent { reachable: true } => Err(NotArmed::Settling),
        Sysfs::Absent { reachable: false } => Err(refuse(lock, |w| {
            write!(w, "/sys/module is not reachable where rdna1_mtype was loaded (sysfs not mounted there): cannot tell whether {MODULE} is unloading; load rdna1_mtype where /sys is mounted")
        })),
        Sysfs::Unreadable(e) => Err(refuse(lock, |w| {
            write!(w, "cannot read /sys/module/{MODULE}/initstate ({e}) to check {MODULE} is not unloading")
        })),
    }
}

/// On the load path, whatever failed while amdgpu is unloading or settling is a wait, not an
/// error: an amdgpu going or gone under a registration or check that had found it (ftrace
/// releases its records and sysfs its files under us), or one not yet in sysfs.
fn judge_on_load(lock: &mut ArmLocked, why: NotArmed) -> NotArmed {
    if matches!(why, NotArmed::Going | NotArmed::Settling) {
        return why;
    }
    let found = !matches!(why, NotArmed::NotFound);
    match sysfs_state(lock) {
        Sysfs::Going => NotArmed::Going,
        Sysfs::Absent { reachable: true } if found => NotArmed::Settling,
        _ => why,
    }
}

/// Arms the probe if it can. The probe is registered soft-disabled and enabled only once
/// every check passed; a registration that is not kept is undone before returning.
fn try_arm(lock: &mut ArmLocked, via: Via<'_>) -> Result<(), NotArmed> {
    if locked(lock).site.is_some() {
        return Ok(());
    }
    clear_error(lock);
    if locked(lock).going {
        return Err(NotArmed::Going);
    }
    let result = arm_checked(lock, via);
    match (result, via) {
        (Err(why), Via::Load) => Err(judge_on_load(lock, why)),
        (r, _) => r,
    }
}

fn arm_checked(lock: &mut ArmLocked, via: Via<'_>) -> Result<(), NotArmed> {
    if let Err(e) = lock.register_by_name() {
        if e == ENOENT {
            return Err(NotArmed::NotFound);
        }
        return Err(NotArmed::Failed(e));
    }
    let site = own_site(lock)?;
    let checked = match via {
        Via::Load => check_not_going(lock),
        Via::Coming(_) | Via::Live(_) => Ok(()),
    }
    .and_then(|()| check_identity(lock, via));
    if let Err(why) = checked {
        lock.unregister();
        return Err(why);
    }
    lock.enable();
    locked(lock).site = Some(site);
    ARMED.store(1, Relaxed);
    Ok(())
}

fn disarm(lock: &mut ArmLocked, why: &str) {
    if locked(lock).site.take().is_none() {
        return;
    }
    // Waits an RCU grace period: no handler runs after this returns.
    lock.unregister();
    ARMED.store(0, Relaxed);
    pr_info!("disarmed ({why})\n");
}

/// Sets `arm_error` to the reason kept and logs it.
fn report_refusal(lock: &mut ArmLocked) {
    let mut text = [0u8; 255];
    let r = &locked(lock).reason;
    let len = r.len;
    text[..len].copy_from_slice(&r.buf[..len]);
    lock.set_error(&text[..len]);
    let shown = match core::str::from_utf8(&text[..len]) {
        Ok(t) => t,
        // Cut at a byte count, possibly inside a character.
        Err(e) => core::str::from_utf8(&text[..e.valid_up_to()]).unwrap_or(""),
    };
    pr_err!("not armed on {MODULE}:{SYMBOL}: {shown}: mappings are NOT modified\n");
}

/// A failed registration, as a refusal.
fn registration_failed(lock: &mut ArmLocked, e: Error) {
    let _ = refuse(lock, |w| {
        write!(
            w,
            "registering the fprobe on {SYMBOL} failed ({})",
            e.to_errno()
        )
    });
    report_refusal(lock);
}

/// The module notifier and the arming that lives as long as the module.
///
/// # Invariants
///
/// `notifier` is `Some` (registered) until this value is dropped.
pub(crate) struct Armed {
    notifier: Option<Notifier>,
}

/// Refuses a kernel this build cannot hook, then registers the notifier and arms now or waits
/// for amdgpu. `Err` only if this module must not load (then nothing is left registered).
pub(crate) fn load() -> Result<Armed> {
    let build = arm_glue::build();
    let release = arm_glue::release();
    if build.version < build.min || build.version >= build.end {
        let range = if build.btf_id != 0 {
            "6.18 and later, with the contract checked on the kernel's BTF"
        } else {
            "7.2 to 7.3 (built without the kernel's BTF: source-verified releases)"
        };
        pr_err!("Linux {release} is outside {range}: {SYMBOL}'s arguments there are unknown; refusing to load\n");
        return Err(Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32)));
    }
    if build.amdgpu_builtin {
        // No module notification would ever come: the module would wait forever.
        pr_err!("{MODULE} is built into Linux {release} (CONFIG_DRM_AMDGPU=y): rdna1_mtype hooks only the amdgpu module, armed when it loads; use a kernel with CONFIG_DRM_AMDGPU=m\n");
        return Err(ENODEV);
    }
    // Before arming: the first hooked call already classifies BOs.
    state::init_layout();
    // First the notifier: an amdgpu that comes or goes from here on is seen. From here an
    // error path drops `armed`, which unregisters the notifier and then disarms: a notification
    // that armed meanwhile is undone before this module can go.
    let armed = Armed {
        notifier: Some(Notifier::register()?),
    };
    let mut lock = ArmLocked::lock();
    let before = locked(&mut lock).site.is_some();
    let r = try_arm(&mut lock, Via::Load);
    // Whether the amdgpu found (if any) was judged: then its LIVE, if still to come, is not
    // asked again. A wait is no judgement (the amdgpu it waits for arms at LIVE or COMING),
    // nor is a refusal for want of sysfs, which its LIVE can make without.
    let judged = match r {
        Ok(()) | Err(NotArmed::Failed(_)) => true,
        Err(NotArmed::Refused) => arm_glue::sysfs_modules_reachable(&mut lock),
        Err(NotArmed::Going | NotArmed::Settling | NotArmed::NotFound) => false,
    };
    locked(&mut lock).judged |= judged;
    match r {
        // Armed now; one armed by a COMING or LIVE before we took the lock was logged there.
        Ok(()) if before => {}
        Ok(()) => pr_info!("armed on {MODULE}:{SYMBOL}\n"),
        Err(NotArmed::NotFound) => match sysfs_state(&mut lock) {
            Sysfs::Present => {
                locked(&mut lock).judged = true;
                lock.set_error(b"amdgpu is loaded but has no traceable gmc_v10_0_get_vm_pte");
                pr_err!("not armed: {MODULE} is loaded but has no traceable {SYMBOL}\n");
            }
            Sysfs::Absent { reachable: false } => {
                lock.set_error(b"/sys/module is not reachable where rdna1_mtype was loaded (sysfs not mounted there): cannot tell whether amdgpu is loaded; armed when amdgpu next loads");
                pr_info!("waiting for {MODULE} (/sys/module is not reachable)\n");
            }
            Sysfs::Going => pr_info!("waiting for {MODULE} (the one loaded is unloading)\n"),
            Sysfs::Absent { reachable: true } | Sysfs::Unreadable(_) => {
                pr_info!("waiting for {MODULE}\n");
            }
        },
        Err(NotArmed::Going) => pr_info!("waiting for {MODULE} (the one loaded is unloading)\n"),
        // Its LIVE (or the next amdgpu's COMING) arms: we are registered.
        Err(NotArmed::Settling) => pr_info!("waiting for {MODULE} to finish loading\n"),
        // Not amdgpu's own function, or not the amdgpu checked: stay loaded, unarmed.
        Err(NotArmed::Refused) => report_refusal(&mut lock),
        Err(NotArmed::Failed(e)) => {
            registration_failed(&mut lock, e);
            drop(lock);
            drop(armed);
            return Err(e);
        }
    }
    drop(lock);
    Ok(armed)
}

impl Drop for Armed {
    fn drop(&mut self) {
        // The notifier first: no notification can arm again once disarmed.
        drop(self.notifier.take());
        let mut lock = ArmLocked::lock();
        disarm(&mut lock, "module unload");
        drop(lock);
        pr_info!("unloaded: nothing armed\n");
    }
}

/// hook.h's `enum rdna1_amdgpu_event`, its values.
const AMDGPU_COMING: u32 = 0;
const AMDGPU_LIVE: u32 = 1;
const AMDGPU_GOING: u32 = 2;

/// One of amdgpu's module notifications (hook.h's `enum rdna1_amdgpu_event`).
///
/// # Safety
///
/// Called only by hook.c's module notifier, for a module named amdgpu, with `module` the
/// `struct module` the notification passed (live for the call), in process context with no
/// arm lock held.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_on_amdgpu(event: u32, module: *const core::ffi::c_void) {
    let Some(ptr) = NonNull::new(module.cast_mut()) else {
        return;
    };
    // SAFETY: per this function's contract; `m` does not outlive this call.
    let m = unsafe { Module::from_notifier(ptr) };
    let mut lock = ArmLocked::lock();
    match event {
        AMDGPU_COMING => coming(&mut lock, &m),
        AMDGPU_LIVE => live(&mut lock, &m),
        AMDGPU_GOING => {
            let s = locked(&mut lock);
            s.going = true;
            s.judged = false;
            disarm(&mut lock, "amdgpu unloading");
            // Why this amdgpu was not armed says nothing of the next one: waiting.
            clear_error(&mut lock);
        }
        _ => {}
    }
}

fn coming(lock: &mut ArmLocked, m: &Module<'_>) {
    if locked(lock).site.is_some() {
        // A module of this name comes only once the one before it is freed, and the load path
        // cannot arm before a COMING it waits for (no sysfs yet): an arming still here is on
        // text that is gone (a GOING never seen). Always armed anew, never "already armed",
        // even where the new text lies at the old address.
        pr_warn!("still armed on an {MODULE} that is gone: arming on the new one\n");
        disarm(lock, "stale");
    }
    let s = locked(lock);
    // Before amdgpu's init runs: its first VM mapping is already covered.
    s.going = false;
    s.judged = true;
    let r = try_arm(lock, Via::Coming(m));
    report(lock, r);
}

fn live(lock: &mut ArmLocked, m: &Module<'_>) {
    let s = locked(lock);
    if s.site.is_some() || s.going || s.judged {
        return;
    }
    // Its COMING came before our notifier: this module loaded while amdgpu was loading,
    // before its sysfs was set up, and waited for this.
    s.judged = true;
    let r = try_arm(lock, Via::Live(m));
    report(lock, r);
}

/// Logs the outcome of an arming at a notification.
fn report(lock: &mut ArmLocked, r: Result<(), NotArmed>) {
    match r {
        Ok(()) => pr_info!("armed on {MODULE}:{SYMBOL}\n"),
        Err(NotArmed::NotFound) => {
            lock.set_error(b"amdgpu has no traceable gmc_v10_0_get_vm_pte");
            pr_err!("cannot arm on {MODULE}:{SYMBOL} ({MODULE} has no traceable {SYMBOL}): mappings are NOT modified\n");
        }
        Err(NotArmed::Failed(e)) => registration_failed(lock, e),
        Err(NotArmed::Refused) => report_refusal(lock),
        // Not returned at a notification: its amdgpu is neither going nor before sysfs.
        Err(NotArmed::Going | NotArmed::Settling) => {}
    }
}
