// SPDX-License-Identifier: GPL-2.0

//! rdna1_mtype: forces MTYPE_NC in the GPU page-table entries of RDNA1 VM mappings.
//!
//! amdgpu computes the PTE flags of every GFX10 user-VM mapping in `gmc_v10_0_get_vm_pte`.
//! `hook.c` probes that function; after it returns, the probe handler (`probe.rs`) applies the
//! policy of the shared crate to the flags it wrote. The policy and PTE definitions are the
//! very files `rdna1ctl` is built from (`../shared/src`), so the two can never disagree.
//!
//! The rooms: `ffi` (hook.h: what Rust imports from hook.c), `state` (the published policy and
//! layout), `arming` (when the probe is armed, and on what; `arm_glue`: hook.c's part of it),
//! `probe` (the handler that reads the state), `params` (the module
//! parameters that write and show it), `control` (`/dev/rdna1_mtype`, one function per ioctl),
//! `misc` (its registration, with this module as the owner of its file operations), `events`
//! and `stats` (what the handler records, which both of the last two read).

use kernel::prelude::*;

#[path = "../shared/src/abi.rs"]
#[allow(dead_code)]
/// The /dev/rdna1_mtype ioctl ABI (shared with rdna1ctl).
pub mod abi;
#[path = "../shared/src/bo.rs"]
#[allow(dead_code)]
/// BO classes and the `amdgpu_bo` layout (shared with rdna1ctl).
pub mod bo;
#[path = "../shared/src/btf_id.rs"]
/// The id of an amdgpu build's BTF (shared with rdna1ctl).
pub mod btf_id;
#[path = "../shared/src/devices.rs"]
#[allow(dead_code)]
/// RDNA1 PCI ids (shared with rdna1ctl).
pub mod devices;
#[path = "../shared/src/named.rs"]
/// The macro that defines the named enums (shared with rdna1ctl).
pub mod named;
#[path = "../shared/src/pci.rs"]
#[allow(dead_code)]
/// PCI addresses (shared with rdna1ctl).
pub mod pci;
#[path = "../shared/src/policy.rs"]
#[allow(dead_code)]
/// The MTYPE policy (shared with rdna1ctl).
pub mod policy;
#[path = "../shared/src/pte.rs"]
#[allow(dead_code)]
/// GFX10 PTE bits (shared with rdna1ctl).
pub mod pte;

mod arm_glue;
mod arming;
mod control;
mod events;
mod ffi;
mod misc;
mod params;
mod probe;
mod state;
mod stats;

module! {
    type: Rdna1Mtype,
    name: "rdna1_mtype",
    authors: ["rdna1-mtype developers"],
    description: "Forces MTYPE_NC in RDNA1 (GFX10) GPU page-table entries",
    license: "GPL",
}

#[pin_data]
struct Rdna1Mtype {
    /// Dropped first: no new decision once unloading starts.
    _hook: arming::Armed,
    #[pin]
    _control: misc::Registration,
}

impl kernel::InPlaceModule for Rdna1Mtype {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            _hook: arming::load()?,
            _control <- misc::Registration::register(),
        })
        .pin_chain(|_| {
            state::log_loaded();
            Ok(())
        })
    }
}
