//! amdgpu's `amdgpu_vm_update_ptes` tracepoint: its ftrace format ([`format`]), the raw ring
//! pages decoded to PTE updates ([`decode`]), and a tracefs instance of our own to read them
//! from ([`tracefs`]).

pub mod decode;
pub mod format;
pub mod tracefs;
