//! Definitions shared by the `rdna1_mtype` kernel module and `rdna1ctl`: GFX10 PTE bits, the
//! MTYPE policy and its decision function.
//!
//! The kernel module compiles these same files into itself (`kmod/rdna1_mtype_main.rs` includes
//! them by path), so they use `core` only, never panic, and name each other through `crate::`
//! paths that exist in both crates.
#![cfg_attr(not(test), no_std)]

pub mod abi;
pub mod bo;
pub mod btf_id;
pub mod contract;
pub mod devices;
pub mod named;
pub mod pci;
pub mod policy;
pub mod pte;
