// SPDX-License-Identifier: GPL-2.0

//! `/dev/rdna1_mtype`'s registration, owned by this module.
//!
//! The kernel crate's `MiscDeviceRegistration` registers a `file_operations` whose `owner` is
//! NULL (Rust-for-Linux issue #1182), so `misc_open`'s `fops_get` pins no module: `rmmod`
//! succeeds while the device is open, and the holder's next ioctl or close runs freed module
//! text. [`Registration`] registers the kernel crate's own glue for [`Control`] (from
//! [`MiscDeviceOptions::into_raw`]) with a copy of its `file_operations`, [`FOPS`], whose `owner`
//! is this module: every open file pins the module until `__fput` has returned from our
//! `release` (VFS code, not ours, drops the reference after that), and `rmmod` says "in use".

use core::mem::{align_of, size_of};
use kernel::bindings;
use kernel::error::to_result;
use kernel::miscdevice::{MiscDeviceOptions, MiscDeviceRegistration};
use kernel::prelude::*;
use kernel::types::Opaque;

use crate::control::Control;

// c_str!, not c"..": 6.18's MiscDeviceOptions.name is kernel::str::CStr, which only became
// core::ffi::CStr in 6.19 (docs/KERNELS.md, "Rust API floor").
const OPTIONS: MiscDeviceOptions = MiscDeviceOptions {
    name: kernel::c_str!("rdna1_mtype"),
};

/// A `file_operations` in a `static`.
///
/// # Invariants
///
/// The value is never written: it is built by the `static` initializer of [`FOPS`] and the
/// kernel only reads it.
#[repr(transparent)]
struct FileOperations(bindings::file_operations);

// SAFETY: By the type invariant the value is immutable, so sharing `&FileOperations` between
// threads only ever reads it.
unsafe impl Sync for FileOperations {}

// This module's `struct module`, named here as `module!` names it inside: its `THIS_MODULE`
// is a crate-root static up to 7.2 and an associated const of `ModuleMetadata` from 7.3. Only
// its address is taken, so its field-less members (`its_array` in some configurations) do not
// matter across FFI.
#[allow(improper_ctypes)]
extern "C" {
    static __this_module: Opaque<bindings::module>;
}

/// The kernel crate's `file_operations` for [`Control`], with `owner` = this module.
// INVARIANT: a non-`mut` static without interior mutability: nothing in Rust writes it (it is
// placed in `.rodata`), and the kernel only reads `file_operations`.
static FOPS: FileOperations = FileOperations(bindings::file_operations {
    // SAFETY: `__this_module` is this module's `struct module`, which modpost defines for it
    // (its `.mod.c`) and the kernel constructs at load time and frees only after unloading it;
    // `get` only takes its address.
    owner: unsafe { __this_module.get() },
    // SAFETY: `into_raw` sets `fops` to `&'static` the kernel crate's vtable for `Control`, a
    // valid, initialised `file_operations` that is never written; this reads a copy of it.
    ..unsafe { *OPTIONS.into_raw::<Control>().fops }
});

/// A registration of `/dev/rdna1_mtype`: `MiscDeviceRegistration<Control>` with [`FOPS`].
///
/// # Invariants
///
/// - `inner` is a `struct miscdevice` from `OPTIONS.into_raw::<Control>()` with `fops` =
///   `&FOPS.0`, registered by `misc_register` for the whole life of the [`Registration`].
/// - It is deregistered exactly once, by `misc_deregister` in [`PinnedDrop::drop`].
#[repr(transparent)]
#[pin_data(PinnedDrop)]
pub(crate) struct Registration {
    #[pin]
    inner: Opaque<bindings::miscdevice>,
}

// The kernel crate's `MiscdeviceVTable::<Control>::open` casts `file->private_data` (the
// `struct miscdevice *` misc_open stores there: `inner`) to `&MiscDeviceRegistration<Control>`.
// Both types are `#[repr(transparent)]` over `Opaque<bindings::miscdevice>` (the other field of
// `MiscDeviceRegistration` is a `PhantomData`); checked here as far as the compiler can.
const _: () = {
    assert!(size_of::<Registration>() == size_of::<MiscDeviceRegistration<Control>>());
    assert!(align_of::<Registration>() == align_of::<MiscDeviceRegistration<Control>>());
    assert!(size_of::<Registration>() == size_of::<bindings::miscdevice>());
};

// SAFETY: `misc_deregister` may be called on another thread than `misc_register`.
unsafe impl Send for Registration {}
// SAFETY: `Registration` has no `&self` methods: a shared reference to it gives access to nothing.
unsafe impl Sync for Registration {}

impl Registration {
    /// Registers `/dev/rdna1_mtype`.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            inner <- Opaque::try_ffi_init(move |slot: *mut bindings::miscdevice| {
                let mut misc = OPTIONS.into_raw::<Control>();
                misc.fops = &FOPS.0;
                // SAFETY: The initializer can write to the provided `slot`.
                unsafe { slot.write(misc) };
                // The crate's `open` reads the `MiscDeviceRegistration<Control>` at the address
                // misc_open stores (`slot`): that type's own `as_raw` must give `slot` back, its
                // `inner` at offset 0 (its fields are private: `offset_of!` cannot say so).
                // SAFETY: `slot` is valid, initialised and pinned memory of the size and
                // alignment of `MiscDeviceRegistration<Control>` (asserted above), whose one
                // sized field is an `Opaque`, valid for any bytes; `as_raw` only forms a pointer.
                let view = unsafe { &*slot.cast::<MiscDeviceRegistration<Control>>() };
                if view.as_raw() != slot {
                    pr_err!("MiscDeviceRegistration's layout is not the one misc.rs relies on\n");
                    return Err(EINVAL);
                }
                // SAFETY: `slot` holds the misc device just written; it is pinned and stays
                // registered until `drop` deregisters it, before its memory is freed. The
                // kernel crate's `open` may treat it as `MiscDeviceRegistration<Control>`: same
                // layout (`#[repr(transparent)]` over `Opaque<bindings::miscdevice>`, asserted
                // above), a registered misc device from `into_raw::<Control>()`, which is that
                // type's invariant; `fops` differs only in `owner`.
                // INVARIANT: on `Ok(())`, `slot` is a registered misc device with `&FOPS.0`.
                to_result(unsafe { bindings::misc_register(slot) })
            }),
        })
    }
}

#[pinned_drop]
impl PinnedDrop for Registration {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariants the device is registered, and this is the one place
        // it is deregistered.
        unsafe { bindings::misc_deregister(self.inner.get()) };
    }
}
