//! The test harness module's debugfs files (tests/modules/harness/rdna1_mtype_harness.c).

use std::fs::File;
use std::io::{Read, Write};

const BATCH: &str = "/sys/kernel/debug/rdna1_mtype_harness/batch";

/// Calls the real `gmc_v10_0_get_vm_pte` once per request line
/// (`"<vm_flags> <bo> <pte_flags> [<gpu> [<where> [<vm>]]]"`, hex) and returns the PTE flags of each, in order:
/// one write and one read for all of them.
pub fn batch(requests: &[String]) -> Result<Vec<u64>, String> {
    let mut f = File::options()
        .read(true)
        .write(true)
        .open(BATCH)
        .map_err(|e| format!("{BATCH}: {e} (is rdna1_mtype_harness loaded?)"))?;
    let text = requests.join("\n") + "\n";
    // One write(2): the harness runs the calls of one write.
    let n = f
        .write(text.as_bytes())
        .map_err(|e| format!("harness batch write: {e}"))?;
    if n != text.len() {
        return Err(format!("harness batch took {n} of {} bytes", text.len()));
    }
    let mut out = String::new();
    f.read_to_string(&mut out)
        .map_err(|e| format!("harness batch read: {e}"))?;
    let results = out
        .lines()
        .map(|l| u64::from_str_radix(l.trim_start_matches("0x"), 16))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("harness batch output {out:?}: {e}"))?;
    if results.len() != requests.len() {
        return Err(format!(
            "harness batch gave {} results for {} calls",
            results.len(),
            requests.len()
        ));
    }
    Ok(results)
}
