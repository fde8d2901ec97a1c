// SPDX-License-Identifier: GPL-2.0

//! `/dev/rdna1_mtype`: the versioned ioctl ABI of `abi.rs` (docs/ABI.md).
//!
//! Every command checks, before anything else, the size encoded in the command, the `size` and
//! `version` fields, and every value; `SET_POLICY` also needs CAP_SYS_ADMIN. Errors: unknown
//! command `-ENOTTY`, bad size/version/value `-EINVAL`, not privileged `-EPERM`, bad user
//! pointer `-EFAULT`, no such stats entry `-ENOENT`.
//!
//! Version 1 callers are still answered: `GET_POLICY` / `SET_POLICY` with version 1's struct
//! (`PolicyArgV1`, its own request codes), `GET_STATS` and `READ_EVENTS` with version 1 in
//! their header (their structs did not change).

use kernel::fs::File;
use kernel::ioctl::{_IOC_NR, _IOC_SIZE, _IOC_TYPE};
use kernel::miscdevice::{MiscDevice, MiscDeviceRegistration};
use kernel::prelude::*;
use kernel::sync::rcu;
use kernel::transmute::{AsBytes, FromBytes};
use kernel::uaccess::{UserPtr, UserSlice, UserSliceReader, UserSliceWriter};

use crate::abi::{
    self, check_header, check_header_since, Event, EventsArg, PolicyArg, PolicyArgV1, StatsArg,
    VersionArg, ABI_VERSION, ABI_VERSION_MIN,
};
use crate::{events, ffi, state, stats};

// SAFETY: `#[repr(C)]` structs of integers and integer arrays with no padding
// (sizes asserted in abi.rs); every bit pattern is a valid value.
unsafe impl FromBytes for VersionArg {}
// SAFETY: see above.
unsafe impl AsBytes for VersionArg {}
// SAFETY: see above.
unsafe impl FromBytes for PolicyArg {}
// SAFETY: see above.
unsafe impl AsBytes for PolicyArg {}
// SAFETY: see above.
unsafe impl FromBytes for PolicyArgV1 {}
// SAFETY: see above.
unsafe impl AsBytes for PolicyArgV1 {}
// SAFETY: see above.
unsafe impl FromBytes for StatsArg {}
// SAFETY: see above.
unsafe impl AsBytes for StatsArg {}
// SAFETY: see above.
unsafe impl FromBytes for EventsArg {}
// SAFETY: see above.
unsafe impl AsBytes for EventsArg {}
// SAFETY: see above.
unsafe impl AsBytes for Event {}

fn einval(_: abi::AbiError) -> Error {
    EINVAL
}

/// The misc device; it keeps no per-open state.
pub(crate) struct Control;

/// One ioctl: reads its argument from `reader`, writes its answer to `writer` (both over the
/// argument's user memory, of the size the command encodes).
type Handler = fn(UserSliceReader, UserSliceWriter) -> Result;

#[vtable]
impl MiscDevice for Control {
    type Ptr = ();

    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<()> {
        Ok(())
    }

    fn ioctl(_me: (), _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        if _IOC_TYPE(cmd) != abi::IOC_MAGIC {
            return Err(ENOTTY);
        }
        let (nr, size) = (_IOC_NR(cmd), _IOC_SIZE(cmd));
        let handler: Handler = match cmd {
            abi::IOC_GET_VERSION => get_version,
            abi::IOC_GET_POLICY => get_policy,
            abi::IOC_GET_POLICY_V1 => get_policy_v1,
            abi::IOC_SET_POLICY => set_policy,
            abi::IOC_SET_POLICY_V1 => set_policy_v1,
            abi::IOC_GET_STATS => get_stats,
            abi::IOC_READ_EVENTS => read_events,
            // A known command with another struct size or direction (a caller of a version
            // this module does not answer): refuse, not guess.
            _ if nr <= abi::NR_READ_EVENTS => return Err(EINVAL),
            _ => return Err(ENOTTY),
        };
        let (reader, writer) = UserSlice::new(UserPtr::from_addr(arg), size).reader_writer();
        handler(reader, writer)?;
        Ok(0)
    }
}

/// `GET_VERSION`: the ABI version and the module's.
fn get_version(mut reader: UserSliceReader, mut writer: UserSliceWriter) -> Result {
    let mut a: VersionArg = reader.read()?;
    if a.size as usize != core::mem::size_of::<VersionArg>() {
        return Err(EINVAL);
    }
    a.version = ABI_VERSION;
    a.module_version = ffi::version();
    writer.write(&a)
}

/// `GET_POLICY`: the policy in force.
fn get_policy(mut reader: UserSliceReader, mut writer: UserSliceWriter) -> Result {
    let a: PolicyArg = reader.read()?;
    check_header::<PolicyArg>(a.size, a.version).map_err(einval)?;
    let a = PolicyArg::from_policy(&state::current(&rcu::read_lock()).policy);
    writer.write(&a)
}

/// `GET_POLICY` of a version 1 caller: what version 1 can express of the policy in force.
fn get_policy_v1(mut reader: UserSliceReader, mut writer: UserSliceWriter) -> Result {
    let a: PolicyArgV1 = reader.read()?;
    check_v1(&a)?;
    let a = PolicyArgV1::from_policy(&state::current(&rcu::read_lock()).policy);
    writer.write(&a)
}

/// A version 1 struct says version 1.
fn check_v1(a: &PolicyArgV1) -> Result {
    check_header_since::<PolicyArgV1>(a.size, a.version, ABI_VERSION_MIN).map_err(einval)?;
    if a.version != 1 {
        return Err(EINVAL);
    }
    Ok(())
}

/// Whether the caller may change the policy.
fn may_set() -> Result {
    // SAFETY: `capable` only reads the current task's credentials.
    if !unsafe { kernel::bindings::capable(kernel::bindings::CAP_SYS_ADMIN as i32) } {
        return Err(EPERM);
    }
    Ok(())
}

/// `SET_POLICY` (CAP_SYS_ADMIN): the whole policy, in one step.
fn set_policy(mut reader: UserSliceReader, _writer: UserSliceWriter) -> Result {
    may_set()?;
    let a: PolicyArg = reader.read()?;
    let policy = a.to_policy().map_err(einval)?;
    state::update_policy(|_| Ok(policy))
}

/// `SET_POLICY` of a version 1 caller (CAP_SYS_ADMIN): what it can express, in one step; the
/// VM scope and `uc_request` keep their values.
fn set_policy_v1(mut reader: UserSliceReader, _writer: UserSliceWriter) -> Result {
    may_set()?;
    let a: PolicyArgV1 = reader.read()?;
    check_v1(&a)?;
    state::update_policy(|current| a.apply_to(current).map_err(einval))
}

/// `GET_STATS`: the `index`-th counter set in use.
fn get_stats(mut reader: UserSliceReader, mut writer: UserSliceWriter) -> Result {
    let mut a: StatsArg = reader.read()?;
    check_header_since::<StatsArg>(a.size, a.version, ABI_VERSION_MIN).map_err(einval)?;
    if !stats::fill(&mut a) {
        return Err(ENOENT);
    }
    writer.write(&a)
}

/// `READ_EVENTS`: up to `capacity` events from `cursor` on, to the user buffer `buf`.
fn read_events(mut reader: UserSliceReader, mut writer: UserSliceWriter) -> Result {
    let mut a: EventsArg = reader.read()?;
    check_header_since::<EventsArg>(a.size, a.version, ABI_VERSION_MIN).map_err(einval)?;
    if a.capacity > abi::MAX_EVENTS_PER_READ {
        return Err(EINVAL);
    }
    let max = a.capacity as usize;
    let mut buf = KVec::with_capacity(max, GFP_KERNEL)?;
    // Copied from the ring into `buf` (lock-free), then to user space.
    let (next, dropped) = events::read(a.cursor, max, &mut buf);
    let bytes = buf.len() * core::mem::size_of::<Event>();
    let mut out = UserSlice::new(UserPtr::from_addr(a.buf as usize), bytes).writer();
    for ev in buf.iter() {
        out.write(ev)?;
    }
    a.count = buf.len() as u32;
    a.cursor = next;
    a.dropped = dropped;
    writer.write(&a)
}
