// SPDX-License-Identifier: GPL-2.0

//! The module parameters hook.c declares (`mode`, `scope`, `classes`, `vm_scope`, `bo_layout`, the
//! read-only `bo_layout_status`, `bo_layout_source` and `stats`): their store and show.
//!
//! hook.c calls these for load-time arguments (before module init) and for sysfs, with
//! `rdna1_policy_lock` held for the policy fields.

use core::fmt::Write;

use kernel::ffi::{c_char, c_int};
use kernel::prelude::*;

use crate::bo::{BoLayout, CheckedLayout, LayoutSource, BO_LAYOUT_BUILTIN, BO_LAYOUT_NONE};
use crate::ffi::{Field, PolicyLocked};
use crate::pci::SliceWriter;
use crate::policy::{Classes, Mode, Scope, VmScope};
use crate::state::{self, State};
use crate::stats;

/// Borrows a C string parameter value.
///
/// # Safety
///
/// `val` is null or points to `len` readable bytes that outlive the returned slice.
unsafe fn input<'a>(val: *const c_char, len: usize) -> Option<&'a [u8]> {
    if val.is_null() {
        return None;
    }
    // SAFETY: per this function's contract.
    Some(unsafe { core::slice::from_raw_parts(val.cast::<u8>(), len) })
}

/// Parameter write of a policy field (load-time argument or sysfs). An invalid value returns
/// `-EINVAL` and leaves the policy as it was.
///
/// # Safety
///
/// `val` points to `len` readable bytes; the caller holds rdna1_policy_lock for the call.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_policy_store(field: u32, val: *const c_char, len: usize) -> c_int {
    // SAFETY: per this function's contract.
    let Some(input) = (unsafe { input(val, len) }) else {
        return EINVAL.to_errno();
    };
    // SAFETY: the caller holds rdna1_policy_lock until we return (this function's contract).
    let mut lock = unsafe { PolicyLocked::assume_held() };
    let field = Field::from_raw(field);
    let old = *state::current_locked(&lock);
    let mut new = old;
    let p = &mut new.policy;
    let parsed = match field {
        Some(Field::Mode) => Mode::parse(input).map(|m| p.mode = m),
        Some(Field::Scope) => Scope::parse(input).map(|s| p.scope = s),
        Some(Field::Classes) => Classes::parse(input).map(|c| p.classes = c),
        Some(Field::VmScope) => VmScope::parse(input).map(|v| p.vm_scope = v),
        Some(Field::BoLayout) => parse_layout(input).map(|(l, src)| {
            new.bo_layout = l;
            new.bo_layout_source = src;
        }),
        Some(Field::BoLayoutStatus | Field::BoLayoutSource) | None => None,
    };
    if parsed.is_none() {
        return EINVAL.to_errno();
    }
    if new != old {
        state::publish(&mut lock, new);
    }
    if field == Some(Field::BoLayout) {
        match new.bo_layout {
            Some(l) => pr_info!("amdgpu_bo layout set: {}\n", format_args!("{}", l)),
            None => pr_info!("amdgpu_bo layout cleared: BOs are not classified\n"),
        }
    }
    if new.policy != old.policy {
        state::log_policy(&new.policy, &old.policy);
    }
    0
}

/// `none`, `builtin`, or a layout that passes its check on this kernel.
fn parse_layout(input: &[u8]) -> Option<(Option<CheckedLayout>, LayoutSource)> {
    let word = input.strip_suffix(b"\n").unwrap_or(input);
    match word {
        w if w == BO_LAYOUT_NONE.as_bytes() => return Some((None, LayoutSource::Set)),
        w if w == BO_LAYOUT_BUILTIN.as_bytes() => {
            return state::builtin_layout().map(|l| (Some(l), LayoutSource::Builtin))
        }
        _ => {}
    }
    let l = state::check_layout(BoLayout::parse(input)?)?;
    Some((Some(l), LayoutSource::Set))
}

/// Writes `f` plus a newline into the C buffer `buf` of `len` bytes; returns the length or
/// `-EINVAL` if it does not fit.
///
/// # Safety
///
/// `buf` is null or points to `len` writable bytes.
unsafe fn show(
    buf: *mut c_char,
    len: usize,
    f: impl FnOnce(&mut SliceWriter<'_>) -> core::fmt::Result,
) -> c_int {
    if buf.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: per this function's contract.
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
    let mut w = SliceWriter::new(out);
    if f(&mut w).is_err() {
        return EINVAL.to_errno();
    }
    // A sysfs page is 4 KiB: the length always fits a c_int.
    c_int::try_from(w.len()).unwrap_or(0)
}

/// The text of one policy field in `s`, without the newline.
fn write_field(w: &mut SliceWriter<'_>, field: Option<Field>, s: &State) -> core::fmt::Result {
    let p = &s.policy;
    match field {
        Some(Field::Mode) => w.write_str(p.mode.name()),
        Some(Field::Scope) => write!(w, "{}", p.scope),
        Some(Field::Classes) => write!(w, "{}", p.classes),
        Some(Field::VmScope) => w.write_str(p.vm_scope.name()),
        Some(Field::BoLayout) => match s.bo_layout {
            Some(l) => write!(w, "{l}"),
            None => w.write_str(BO_LAYOUT_NONE),
        },
        Some(Field::BoLayoutSource) => w.write_str(s.bo_layout_source.name()),
        Some(Field::BoLayoutStatus) => w.write_str(state::layout_status(s).name()),
        None => Err(core::fmt::Error),
    }
}

/// Parameter read of a policy field: its value and a newline.
///
/// # Safety
///
/// `buf` points to `len` writable bytes; the caller holds rdna1_policy_lock.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_policy_show(field: u32, buf: *mut c_char, len: usize) -> c_int {
    // SAFETY: the caller holds rdna1_policy_lock until we return (this function's contract).
    let lock = unsafe { PolicyLocked::assume_held() };
    let s = state::current_locked(&lock);
    let field = Field::from_raw(field);
    // SAFETY: per this function's contract.
    unsafe {
        show(buf, len, |w| {
            write_field(w, field, s).and_then(|()| w.write_str("\n"))
        })
    }
}

/// Parameter read of the per-device counters.
///
/// # Safety
///
/// `buf` points to `len` writable bytes.
#[unsafe(no_mangle)]
unsafe extern "C" fn rdna1_mtype_stats_show(buf: *mut c_char, len: usize) -> c_int {
    // SAFETY: per this function's contract.
    unsafe { show(buf, len, stats::write_all) }
}
