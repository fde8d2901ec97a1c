// SPDX-License-Identifier: GPL-2.0

//! The probe's handlers (hook.c's fprobe on `gmc_v10_0_get_vm_pte`, armed by `arming.rs`):
//! [`rdna1_mtype_on_entry`], which counts a call in mode off before the function runs, and
//! [`rdna1_mtype_on_pte`], which applies the policy to the flags the function computed.
//!
//! The handlers run with preemption off: they take no sleeping lock and never allocate.

use core::ffi::c_void;
use core::mem::{size_of, MaybeUninit};

use kernel::transmute::FromBytes;

use crate::abi;
use crate::bo::{self, BoClass, BoFields, CheckedLayout, LayoutSource};
use crate::btf_id;
use crate::events;
use crate::ffi::{self, PteCall};
use crate::pci::{DeviceId, PciAddr};
use crate::policy::{self, Call, Decision, Mode, Skip, VmKind};
use crate::pte;
use crate::state;
use crate::stats;

/// Counts the call at the entry of `gmc_v10_0_get_vm_pte` if the mode is off, whose decision
/// (keep what amdgpu computes) needs nothing the function computes: then false, and fprobe
/// hooks no return, most of the mechanism's cost. True if [`rdna1_mtype_on_pte`] must decide.
///
/// # Safety
///
/// Called only from the fprobe's entry handler (hook.c: `rdna1_entry`), with `call` null or
/// valid for reads.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_on_entry(call: *const PteCall) -> bool {
    // SAFETY: per this function's contract.
    let Some(c) = (unsafe { call.as_ref() }) else {
        return false;
    };
    // SAFETY: called only from the entry handler (this function's contract), which
    // fprobe_fgraph_entry() runs inside guard(rcu_sched_notrace) (kernel/trace/fprobe.c),
    // lasting until this function returns, longer than the value.
    let rcu = unsafe { state::InProbeHandler::assume() };
    if !matches!(state::current(&rcu).policy.mode, Mode::Off) {
        return true;
    }
    // The MTYPE before is not computed yet; counters of kept calls are not by MTYPE.
    stats::record(device_of(c).as_ref(), 0, Decision::Keep(Skip::ModeOff));
    false
}

/// The device of the call, if hook.c identified it.
fn device_of(c: &PteCall) -> Option<DeviceId> {
    (c.dev_known != 0).then(|| DeviceId {
        addr: PciAddr::from_raw(c.dev_addr),
        vendor: c.dev_vendor,
        device: c.dev_device,
    })
}

/// Applies the policy to the PTE flags `gmc_v10_0_get_vm_pte` just computed, and counts.
///
/// Reads nothing the decision does not need: the VM's kind and the BO's class only when
/// [`policy::decide`] asks (a logged event reads the VM's kind if it was not read).
///
/// # Safety
///
/// Called only from the fprobe's exit handler (hook.c: `rdna1_exit`), with `call` the entry
/// data `rdna1_entry` filled for this call (fprobe calls the exit handler only after the entry
/// handler returned 0). `call` is valid;
/// `call.flags` is the function's `u64 *flags` argument: null or valid for reads and writes,
/// and not accessed concurrently; `call.bo` is its `bo` argument (null or a live
/// `struct amdgpu_bo`, see [`bo_class`]); `call.vm` is its `vm` argument (null or a live
/// `struct amdgpu_vm`).
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_on_pte(call: *const PteCall) {
    // SAFETY: per this function's contract.
    let Some(c) = (unsafe { call.as_ref() }) else {
        return;
    };
    if c.flags.is_null() {
        return;
    }
    // SAFETY: per this function's contract; every amdgpu caller passes its own local u64,
    // live until the hooked function has returned to it, which has not happened yet.
    let computed = unsafe { c.flags.read() };
    let device = device_of(c);
    // SAFETY: called only from the exit handler (this function's contract), which
    // fprobe_return() runs inside guard(rcu_sched_notrace) (kernel/trace/fprobe.c), lasting
    // until this function returns, longer than the value.
    let rcu = unsafe { state::InProbeHandler::assume() };
    let state = state::current(&rcu);
    let call = Call {
        vm_flags: c.vm_flags,
        flags: computed,
        device,
    };
    // What `decide` read, if it needed it: the event logs it.
    let mut vm_read = None;
    let mut class_read = None;
    let decision = policy::decide(
        &state.policy,
        &call,
        // SAFETY: `c.vm` is the hooked function's argument, during its call (this function's
        // contract).
        || *vm_read.insert(unsafe { ffi::vm_kind(c.vm) }),
        || *class_read.insert(bo_class(c.bo, state.bo_layout, state.bo_layout_source)),
    );
    if let Decision::Rewrite(new) = decision {
        // SAFETY: as above.
        unsafe { c.flags.write(new) };
    }
    let before = pte::mtype_bits(computed);
    stats::record(device.as_ref(), before, decision);
    // Counted only: mode off and out-of-scope devices are not this module's business, already
    // NC needs nothing, and graphics VMs, VMs of unknown kind and unmaps (not a valid page)
    // are what a desktop does all the time: logging them would flush the ring.
    if !matches!(
        decision,
        Decision::Keep(
            Skip::ModeOff
                | Skip::AlreadyNc
                | Skip::OutOfScope
                | Skip::GraphicsVm
                | Skip::VmUnknown
                | Skip::NotAValidPage
        )
    ) {
        // Not read means the decision did not depend on the BO (an unknown device, say): it
        // is not read for the log either, so an event never reads a BO the decision did not.
        // A null BO is known without reading. The VM's kind is one byte, read for the log.
        let class = class_read.unwrap_or(if c.bo.is_null() {
            BoClass::None
        } else {
            BoClass::Unknown
        });
        // SAFETY: as above.
        let vm = vm_read.unwrap_or_else(|| unsafe { ffi::vm_kind(c.vm) });
        log_event(c, vm, class, before, decision);
    }
}

/// Appends one decision to the event ring.
fn log_event(c: &PteCall, vm: VmKind, class: BoClass, before: u8, decision: Decision) {
    let written = match decision {
        Decision::Rewrite(f) => pte::mtype_bits(f),
        _ => before,
    };
    let (action, skip) = abi::Event::action_of(decision);
    let task = kernel::task::Task::current_raw();
    // SAFETY: `current` is valid for the whole call; pid, flags and comm are plain fields
    // (comm may change concurrently: a torn name is harmless, as with get_task_comm).
    let (mut pid, task_flags, mut comm) =
        unsafe { ((*task).pid as u32, (*task).flags, (*task).comm) };
    // A kernel thread (KFD's restore worker, an SVM worker) maps for the process owning the
    // VM: name that process, as amdgpu recorded it, or say the thread is all there is.
    let origin = if task_flags & kernel::bindings::PF_KTHREAD == 0 {
        abi::ORIGIN_TASK
    } else if let Some((owner, name)) = ffi::vm_owner(c.vm) {
        pid = owner;
        comm = name;
        abi::ORIGIN_VM_OWNER
    } else {
        abi::ORIGIN_KERNEL_THREAD
    };
    let ev = abi::Event {
        seq: 0,
        time_ns: ffi::coarse_monotonic_ns(),
        pid,
        dev_addr: c.dev_addr,
        vendor: c.dev_vendor,
        device: c.dev_device,
        vm_flags: c.vm_flags,
        comm,
        before,
        written,
        class: class as u8,
        action,
        skip,
        dev_known: c.dev_known,
        vm_kind: vm as u8,
        origin,
    };
    events::push(ev);
}

/// The class of the BO at `bo`, read through `layout`.
///
/// `bo` is the hooked function's argument: null or a live `struct amdgpu_bo`, which its caller
/// keeps alive for the call. Safe whatever `bo` and `layout` are: see [`read_field`].
fn bo_class(bo: *const u8, layout: Option<CheckedLayout>, source: LayoutSource) -> BoClass {
    if bo.is_null() {
        return BoClass::None;
    }
    let Some(l) = layout else {
        return BoClass::Unknown;
    };
    // The built-in layout is the target's own struct (its BTF, or the copy checked identical
    // for the releases built without BTF): its fields lie within every amdgpu_bo. A layout
    // root set is root's word only: its `size` (up to 64 KiB) may be far larger than the real
    // struct, so a field may lie past the BO's end, on an unmapped page.
    let own = source == LayoutSource::Builtin;
    let l = l.get();
    let type_offset = ffi::ttm_bo_type_offset();
    let fields = (|| {
        Some(BoFields {
            preferred_domains: read_field(bo, l.size, l.preferred_domains, own)?,
            flags: read_field(bo, l.size, l.flags, own)?,
            ttm_type: read_field(bo, l.size, l.tbo.checked_add(type_offset)?, own)?,
        })
    })();
    let Some(fields) = fields else {
        ffi::report_bad_bo(ffi::BadBo::Unreadable);
        return BoClass::Unknown;
    };
    bo::classify(fields).unwrap_or_else(|| {
        // Unknown for this call only: whoever made the BO (a render node can create one with
        // no domain), the next one is classified as before. Which invariant, never the bytes.
        ffi::report_bad_bo(broken_invariant(&fields));
        BoClass::Unknown
    })
}

/// The `T` at byte `offset` of the BO at `bo`, if it lies within the layout's `size` bytes
/// (which [`CheckedLayout`] bounds by [`bo::BoLayout::MAX_SIZE`]) and its address can be read:
/// `None` if not (a wrong layout).
///
/// With `own` (the built-in layout: the field lies within the real struct) and a naturally
/// aligned address, a volatile load; otherwise copy_from_kernel_nofault, which never faults.
/// Callable with preemption or interrupts off.
fn read_field<T: FromBytes>(bo: *const u8, size: u32, offset: u32, own: bool) -> Option<T> {
    let end = (offset as usize).checked_add(size_of::<T>())?;
    if end > size as usize {
        return None;
    }
    // Wrapping: a wrong layout places `src` outside the BO, where `add` would be undefined
    // behaviour; such an address is only handed to copy_from_kernel_nofault.
    let src = bo.wrapping_add(offset as usize);
    if own && src.cast::<T>().is_aligned() {
        // SAFETY: `bo` is a live `struct amdgpu_bo` (the hooked function's argument during its
        // call) and the built-in layout is that struct's own, whose `size` it is, so
        // `offset..end` lies within it; the address is aligned for `T`, and any bytes are a
        // valid `T` (`FromBytes`). Volatile, as READ_ONCE: amdgpu may write the field meanwhile.
        return Some(unsafe { core::ptr::read_volatile(src.cast::<T>()) });
    }
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` is a local, valid for writes of `size_of::<T>()` bytes. copy_from_kernel_nofault
    // takes any source address: it refuses user and non-canonical ones (-ERANGE) and, with
    // page faults disabled, turns a fault into -EFAULT through the exception table, so an
    // address past the BO is sound, and so is calling it from this exit handler (preemption
    // off). Its loads are the arch's asm (as READ_ONCE in C), not Rust accesses: amdgpu
    // writing the field meanwhile is no data race.
    let ret = unsafe {
        kernel::bindings::copy_from_kernel_nofault(
            v.as_mut_ptr().cast::<c_void>(),
            src.cast::<c_void>(),
            size_of::<T>(),
        )
    };
    if ret != 0 {
        return None;
    }
    // SAFETY: the copy succeeded: all `size_of::<T>()` bytes of `v` are written, and any bytes
    // are a valid `T` (`FromBytes`).
    Some(unsafe { v.assume_init() })
}

/// Which of [`bo::classify`]'s invariants `f` breaks, for the log.
fn broken_invariant(f: &BoFields) -> ffi::BadBo {
    if f.ttm_type > bo::TTM_BO_TYPE_SG {
        ffi::BadBo::TtmType
    } else if f.flags & !bo::CREATE_KNOWN != 0 {
        ffi::BadBo::Flags
    } else if f.preferred_domains == 0 {
        ffi::BadBo::NoDomain
    } else {
        ffi::BadBo::Domain
    }
}

/// The id of a module's `.BTF` section, for hook.c's check that amdgpu is the build the DKMS
/// build checked (one definition: `shared/src/btf_id.rs`).
///
/// # Safety
///
/// `data` points to `len` readable bytes that stay valid for the call.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_btf_id(data: *const u8, len: usize) -> u64 {
    // SAFETY: per this function's contract. hook.c passes amdgpu's `btf_data` from its
    // MODULE_STATE_COMING notifier, which prepare_coming_module() calls before load_module()
    // frees the file copy the pointer points into, or a vmalloc'd copy of
    // /sys/kernel/btf/amdgpu that it frees after the call.
    let bytes = unsafe { core::slice::from_raw_parts(data, len) };
    btf_id::btf_id(bytes)
}
