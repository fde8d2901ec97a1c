//! The GPU page faults amdgpu reported in the kernel log during a run: a minimal reader of
//! `/dev/kmsg` (opened at the run's start, positioned at the end, read after the run), which
//! keeps amdgpu's page-fault reports as they are written. Decoding them (VMID/PASID to
//! process, fault kind) is doctor's job; the report keeps the lines.
//!
//! amdgpu (gmc_v10_0_process_interrupt) reports a fault as a first line with "page fault"
//! followed by lines giving the address and the L2 protection-fault status, e.g.
//!
//! ```text
//! amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32769)
//! amdgpu 0000:03:00.0: amdgpu:  in page starting at address 0x00007f0000001000 from client 0x1b (UTCL2)
//! amdgpu 0000:03:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00800932
//! ```
//!
//! with, where amdgpu knows the process behind the PASID, a line naming it: ` Process NAME pid
//! TGID thread NAME pid TID` (amdgpu_vm_print_task_info, 6.12 and later) or ` in process NAME pid
//! TGID thread NAME pid TID` (earlier). A run counts only the faults of its own processes.

use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;

/// One fault report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Fault {
    /// The PCI address amdgpu named, if any.
    pub device: Option<String>,
    /// The faulting address (`in page starting at address`), if given.
    pub address: Option<String>,
    /// The process amdgpu named (its thread group id and name), if it named one.
    pub pid: Option<u32>,
    pub process: Option<String>,
    /// The message lines, the `amdgpu DEV: amdgpu:` prefix left out.
    pub lines: Vec<String>,
}

/// The kernel log from the moment [`Kmsg::open`] was called.
pub struct Kmsg {
    file: File,
}

impl Kmsg {
    /// Opens `path` (`/dev/kmsg`) and skips what it holds so far.
    pub fn open(path: &Path) -> std::io::Result<Kmsg> {
        let mut file = File::options()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(path)?;
        file.seek(SeekFrom::End(0))?;
        Ok(Kmsg { file })
    }

    /// The messages logged since: each record's text (after `prio,seq,time,flags;`), without
    /// the continuation lines (` KEY=value` device properties).
    pub fn read_new(&mut self) -> std::io::Result<Vec<String>> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        // Bounded: a log that grows faster than it is read cannot keep this loop going.
        for _ in 0..100_000 {
            match self.file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend(record_text(&buf[..n])),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // EPIPE: records were overwritten before they were read; go on with the next.
                Err(e) if e.raw_os_error() == Some(nix::libc::EPIPE) => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// The text of one `/dev/kmsg` record (`prio,seq,time,flags;text\n KEY=value\n`); a regular
/// file read in its place (fixtures) gives its lines as they are.
fn record_text(rec: &[u8]) -> Vec<String> {
    let s = String::from_utf8_lossy(rec);
    s.lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .map(|l| match l.split_once(';') {
            Some((head, text)) if head.split(',').count() >= 3 => text.to_owned(),
            _ => l.to_owned(),
        })
        .collect()
}

/// `amdgpu 0000:03:00.0: amdgpu: TEXT` → (`0000:03:00.0`, `TEXT`); None for other messages.
fn amdgpu_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("amdgpu ")?;
    let (dev, text) = rest.split_once(": ")?;
    let text = text.strip_prefix("amdgpu: ").unwrap_or(text);
    Some((dev, text))
}

/// The fault reports among `lines`: a line saying "page fault" opens one, the lines of the
/// same device that follow it (address, fault status, client) belong to it.
pub fn faults(lines: &[String]) -> Vec<Fault> {
    let mut out: Vec<Fault> = Vec::new();
    let mut open = false;
    for line in lines {
        let Some((dev, text)) = amdgpu_line(line) else {
            open = false;
            continue;
        };
        let text = text.trim();
        if text.contains("page fault") {
            out.push(Fault {
                device: Some(dev.to_owned()),
                lines: vec![text.to_owned()],
                ..Fault::default()
            });
            open = true;
            continue;
        }
        let continues = open
            && out.last().is_some_and(|f| f.device.as_deref() == Some(dev))
            && is_fault_detail(text);
        match (continues, out.last_mut()) {
            (true, Some(f)) => {
                if f.address.is_none() {
                    f.address = address(text);
                }
                if f.pid.is_none()
                    && let Some((name, pid)) = process(text)
                {
                    f.pid = Some(pid);
                    f.process = Some(name);
                }
                f.lines.push(text.to_owned());
            }
            _ => open = false,
        }
    }
    out
}

fn is_fault_detail(text: &str) -> bool {
    [
        "in page starting at address",
        "PROTECTION_FAULT_STATUS",
        "Faulty UTCL2 client ID",
        "MORE_FAULTS",
        "WALKER_ERROR",
        "PERMISSION_FAULTS",
        "MAPPING_ERROR",
        "RW:",
        "for process",
        "in process",
        "Process ",
    ]
    .iter()
    .any(|k| text.contains(k))
}

/// `Process NAME pid TGID thread ...` (or `in process ...`) → (NAME, TGID). NAME may hold
/// spaces, even " thread ": the first ` pid DIGITS thread ` ends it.
fn process(text: &str) -> Option<(String, u32)> {
    let i = text.find("rocess ")? + "rocess ".len();
    let rest = &text[i..];
    rest.match_indices(" pid ").find_map(|(at, m)| {
        let after = &rest[at + m.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0 && after[digits..].starts_with(" thread "))
            .then(|| Some((rest[..at].to_owned(), after[..digits].parse().ok()?)))
            .flatten()
    })
}

fn address(text: &str) -> Option<String> {
    let i = text.find("address 0x")? + "address ".len();
    let hex: String = text[i..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    Some(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn records_give_their_text_without_properties() {
        assert_eq!(
            record_text(b"3,1234,5678901,-;amdgpu 0000:03:00.0: amdgpu: x\n SUBSYSTEM=pci\n DEVICE=+pci:0000:03:00.0\n"),
            ["amdgpu 0000:03:00.0: amdgpu: x"]
        );
        assert_eq!(record_text(b"plain line\n"), ["plain line"]);
    }

    #[test]
    fn a_fault_report_with_its_details_and_nothing_else() {
        let log = lines(&[
            "usb 1-1: new device",
            "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32769)",
            "amdgpu 0000:03:00.0: amdgpu:  in process python3 pid 4242 thread python3 pid 4242",
            "amdgpu 0000:03:00.0: amdgpu:   in page starting at address 0x00007f0000001000 from client 0x1b (UTCL2)",
            "amdgpu 0000:03:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00800932",
            "amdgpu 0000:03:00.0: amdgpu: \t Faulty UTCL2 client ID: CPC (0x5)",
            "amdgpu 0000:03:00.0: amdgpu: ring gfx timeout",
            "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32769)",
            "amdgpu 0000:04:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x0",
        ]);
        let f = faults(&log);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].device.as_deref(), Some("0000:03:00.0"));
        assert_eq!(f[0].address.as_deref(), Some("0x00007f0000001000"));
        assert_eq!(f[0].lines.len(), 5, "{:?}", f[0].lines);
        assert_eq!(
            (f[0].pid, f[0].process.as_deref()),
            (Some(4242), Some("python3"))
        );
        assert!(f[0].lines[0].starts_with("[gfxhub] page fault"));
        // Another device's status line is not the second fault's.
        assert_eq!(f[1].lines.len(), 1);
        assert!(faults(&lines(&["amdgpu 0000:03:00.0: amdgpu: SMU is resumed"])).is_empty());
        // 6.12 and later: " Process NAME pid TGID thread NAME pid TID" (a name with spaces).
        let f = faults(&lines(&[
            "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32769)",
            "amdgpu 0000:03:00.0: amdgpu:  Process pt main thread pid 77 thread pt main thread pid 78",
        ]));
        assert_eq!(
            (f[0].pid, f[0].process.as_deref()),
            (Some(77), Some("pt main thread"))
        );
    }

    #[test]
    fn a_regular_file_reads_as_new_lines_only_after_open() {
        let p = std::env::temp_dir().join(format!("rdna1ctl-kmsg-{}", std::process::id()));
        std::fs::write(&p, "old line\n").unwrap();
        let mut k = Kmsg::open(&p).unwrap();
        assert!(k.read_new().unwrap().is_empty());
        std::fs::remove_file(&p).unwrap();
    }
}
