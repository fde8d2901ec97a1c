//! `rdna1-abi-probe table [GPU [VM]]`: the real function's result for every request x BO kind, one
//! `REQ BO FLAGS` line each, as the VM cases compare them (tests/vm/guest/lib.sh). One process
//! batch of calls instead of a shell fork and two system calls per call.

use std::io::{self, Write};

use rdna1_mtype_shared::pte::VmMtype;

/// PTE flags of a mapped GTT page (lib.sh's `IN`).
const IN: u64 = 0x67;
/// lib.sh's `BOS`, in its order.
const BOS: [&str; 11] = [
    "none",
    "plain",
    "vram",
    "userptr",
    "coherent",
    "ext_coherent",
    "uncached",
    "sg_coherent",
    "doorbell",
    "seq64",
    "sg_attach",
];

/// `vm`: the harness's `compute`, `graphics` or `none`.
pub fn print(gpu: &str, vm: &str) -> Result<(), String> {
    let mut calls = Vec::new();
    let mut names = Vec::new();
    for req in VmMtype::ALL {
        // READABLE | WRITEABLE, as lib.sh's `req`.
        let vm_flags = req.to_vm_flags() | 0x6;
        for bo in BOS {
            calls.push(format!("{vm_flags:#x} {bo} {IN:#x} {gpu} stack {vm}"));
            names.push((req.name(), bo));
        }
    }
    let results = crate::harness::batch(&calls)?;
    let mut out = io::stdout().lock();
    for ((req, bo), flags) in names.iter().zip(results) {
        writeln!(out, "{req} {bo} {flags:#018x}").map_err(|e| format!("stdout: {e}"))?;
    }
    Ok(())
}
