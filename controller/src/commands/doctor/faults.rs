//! The last GPU page faults in the kernel log, decoded.
//!
//! The log is read from `/dev/kmsg` below the root, non-blocking (every record in the ring
//! buffer, oldest first; needs CAP_SYSLOG unless kernel.dmesg_restrict=0, so an unreadable
//! log is a warning, not a failure). A record is `prio,seq,usec,flags;text` (continuation
//! lines start with a space); plain `dmesg` lines are taken as they are.
//!
//! amdgpu's printk formats (gmc_v10_0.c `gmc_v10_0_process_interrupt`, amdgpu_vm.c
//! `amdgpu_vm_print_task_info`, gfxhub_v2_0.c `gfxhub_v2_0_print_l2_protection_fault_status`,
//! Linux 6.10 to 7.3; before 6.10 the process was on the first line as
//! `, for process %s pid %d thread %s pid %d)`):
//! ```text
//! [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32773)
//!  Process python3 pid 4242 thread python3 pid 4250
//!   in page starting at address 0x00007f0012345000 from client 0x1b (UTCL2)
//! GCVM_L2_PROTECTION_FAULT_STATUS:0x00800932
//! \t Faulty UTCL2 client ID: TCP (0x8)
//! \t MORE_FAULTS: 0x0
//! \t WALKER_ERROR: 0x0
//! \t PERMISSION_FAULTS: 0x3
//! \t MAPPING_ERROR: 0x0
//! \t RW: 0x0
//! ```

use std::io::Read;
use std::path::Path;

use super::{Check, Input};

/// Bytes of log read at most.
const MAX_LOG: usize = 8 << 20;

/// One decoded fault.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fault {
    pub device: Option<String>,
    pub hub: String,
    pub vmid: Option<u32>,
    pub pasid: Option<u32>,
    pub process: Option<(String, u32)>,
    pub address: Option<u64>,
    pub status: Option<u32>,
    pub client: Option<String>,
    pub more: Option<u32>,
    pub walker: Option<u32>,
    pub permission: Option<u32>,
    pub mapping: Option<u32>,
    pub rw: Option<u32>,
}

impl Fault {
    /// What kind of fault, from the status fields.
    pub fn kind(&self) -> String {
        let mut k = Vec::new();
        if self.permission.is_some_and(|v| v != 0) {
            k.push("permission fault (the page is mapped, but not for this access)");
        }
        if self.mapping.is_some_and(|v| v != 0) {
            k.push("mapping error (no valid page at this address)");
        }
        if self.walker.is_some_and(|v| v != 0) {
            k.push("page-table walker error");
        }
        if k.is_empty() {
            k.push("fault");
        }
        let rw = match self.rw {
            Some(1) => " on a write",
            Some(0) => " on a read",
            _ => "",
        };
        format!("{}{rw}", k.join(" and "))
    }

    pub fn describe(&self) -> String {
        let mut s = format!("[{}] {}", self.hub, self.kind());
        if let Some(a) = self.address {
            s += &format!(" at 0x{a:012x}");
        }
        if let Some(c) = &self.client {
            s += &format!(" by {c}");
        }
        match (&self.process, self.pasid) {
            (Some((n, pid)), Some(p)) => s += &format!(", process {n} (pid {pid}, pasid {p})"),
            (Some((n, pid)), None) => s += &format!(", process {n} (pid {pid})"),
            (None, Some(p)) => s += &format!(", pasid {p} (process not logged)"),
            (None, None) => {}
        }
        if let Some(v) = self.vmid {
            s += &format!(", vmid {v}");
        }
        if let Some(d) = &self.device {
            s += &format!(", GPU {d}");
        }
        s
    }
}

/// The text of each log line: kmsg headers stripped, continuation lines dropped.
fn messages(log: &str) -> impl Iterator<Item = &str> {
    log.lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| match l.split_once(';') {
            Some((head, text))
                if head.split(',').count() >= 3
                    && head
                        .split(',')
                        .take(3)
                        .all(|f| f.chars().all(|c| c.is_ascii_digit()) && !f.is_empty()) =>
            {
                text
            }
            _ => l,
        })
}

fn num_after(text: &str, key: &str) -> Option<u32> {
    let rest = &text[text.find(key)? + key.len()..];
    let rest = rest.trim_start();
    if let Some(hex) = rest.strip_prefix("0x") {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        u32::from_str_radix(&hex[..end], 16).ok()
    } else {
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    }
}

/// `NAME pid N` after `key` (`Process ` or `for process `).
fn process_after(text: &str, key: &str) -> Option<(String, u32)> {
    let rest = &text[text.find(key)? + key.len()..];
    let (name, tail) = rest.split_once(" pid ")?;
    Some((name.trim().to_owned(), num_after(tail, "")?))
}

/// Every amdgpu page fault in `log`, oldest first.
pub fn parse(log: &str) -> Vec<Fault> {
    let mut faults: Vec<Fault> = Vec::new();
    for text in messages(log) {
        if let Some(i) = text.find("] page fault (") {
            let hub_start = text[..i].rfind('[').map_or(i, |k| k + 1);
            let device = text
                .split_whitespace()
                .find(|w| w.len() >= 12 && w.as_bytes().get(4) == Some(&b':') && w.ends_with(':'))
                .map(|w| w.trim_end_matches(':').to_owned());
            faults.push(Fault {
                device,
                hub: text[hub_start..i].to_owned(),
                vmid: num_after(text, "vmid:"),
                pasid: num_after(text, "pasid:"),
                process: process_after(text, "for process "),
                ..Fault::default()
            });
            continue;
        }
        let Some(f) = faults.last_mut() else { continue };
        if text.contains(" Process ") && f.process.is_none() {
            f.process = process_after(text, " Process ");
        } else if let Some(k) = text.find("in page starting at address 0x") {
            let hex = &text[k + "in page starting at address 0x".len()..];
            let end = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            f.address = u64::from_str_radix(&hex[..end], 16).ok();
        } else if text.contains("L2_PROTECTION_FAULT_STATUS:0x") {
            f.status = num_after(text, "FAULT_STATUS:");
        } else if let Some(k) = text.find("Faulty UTCL2 client ID: ") {
            f.client = Some(text[k + 24..].trim().to_owned());
        } else if text.contains("MORE_FAULTS:") {
            f.more = num_after(text, "MORE_FAULTS:");
        } else if text.contains("WALKER_ERROR:") {
            f.walker = num_after(text, "WALKER_ERROR:");
        } else if text.contains("PERMISSION_FAULTS:") {
            f.permission = num_after(text, "PERMISSION_FAULTS:");
        } else if text.contains("MAPPING_ERROR:") {
            f.mapping = num_after(text, "MAPPING_ERROR:");
        } else if text.contains(" RW:") {
            f.rw = num_after(text, " RW:");
        }
    }
    faults
}

/// The log: every record /dev/kmsg holds now (non-blocking), or a fixture file's contents.
fn read_log(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    while out.len() < MAX_LOG {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                // /dev/kmsg returns one record per read, without a trailing newline on some
                // kernels: keep records apart.
                if out.last() != Some(&b'\n') {
                    out.push(b'\n');
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // EPIPE: the record was overwritten while reading; the next read continues.
            Err(e) if e.raw_os_error() == Some(nix::libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

pub fn checks(input: &Input) -> Vec<Check> {
    vec![faults(input)]
}

fn faults(input: &Input) -> Check {
    let id = "gpu.faults";
    let p = input.root.path("/dev/kmsg");
    let log = match read_log(&p) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Check::warn(
                id,
                "cannot read the kernel log (/dev/kmsg needs CAP_SYSLOG while kernel.dmesg_restrict=1): GPU faults not checked",
                "run `sudo -E rdna1ctl doctor` (keeps your environment), or read `sudo dmesg | grep -A8 'page fault'`",
            );
        }
        Err(e) => {
            return Check::warn(
                id,
                format!(
                    "cannot read {}: {e}; GPU faults not checked",
                    input.show(&p)
                ),
                "read `sudo dmesg | grep -A8 'page fault'` by hand",
            );
        }
    };
    let all = parse(&log);
    let Some(last) = all.last() else {
        return Check::ok(id, "no amdgpu page fault in the kernel log since boot");
    };
    let more = if all.len() > 1 {
        format!(" ({} faults logged, the last shown)", all.len())
    } else {
        String::new()
    };
    let hint = if last.permission.is_some_and(|v| v != 0)
        && input.host.var("HSA_OVERRIDE_GFX_VERSION").is_some()
    {
        "; with HSA_OVERRIDE_GFX_VERSION set, foreign code objects are the first suspect"
    } else {
        ""
    };
    Check::warn(
        id,
        format!("GPU page fault: {}{more}{hint}", last.describe()),
        "rerun the job under `sudo rdna1ctl verify --duration 60` (or `rdna1ctl report`) to tie the fault to its buffers' MTYPE, after fixing any failed torch.*/rocm.* check",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, run_check, FakeHost, Tree};
    use crate::commands::doctor::Status;

    /// A fault as Linux 7.2 logs it, in /dev/kmsg record form.
    pub const KMSG: &str = "6,1001,5000000,-;amdgpu 0000:03:00.0: amdgpu: ring comp_1.0.0 uses VM inv eng 0\n SUBSYSTEM=pci\n DEVICE=+pci:0000:03:00.0\n\
3,2001,9000000,-;amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32773)\n\
3,2002,9000001,-;amdgpu 0000:03:00.0: amdgpu:  Process python3 pid 4242 thread pt_main_thread pid 4250\n\
3,2003,9000002,-;amdgpu 0000:03:00.0: amdgpu:   in page starting at address 0x00007f0012345000 from client 0x1b (UTCL2)\n\
3,2004,9000003,-;amdgpu 0000:03:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00800932\n\
3,2005,9000004,-;amdgpu 0000:03:00.0: amdgpu: \t Faulty UTCL2 client ID: TCP (0x8)\n\
3,2006,9000005,-;amdgpu 0000:03:00.0: amdgpu: \t MORE_FAULTS: 0x0\n\
3,2007,9000006,-;amdgpu 0000:03:00.0: amdgpu: \t WALKER_ERROR: 0x0\n\
3,2008,9000007,-;amdgpu 0000:03:00.0: amdgpu: \t PERMISSION_FAULTS: 0x3\n\
3,2009,9000008,-;amdgpu 0000:03:00.0: amdgpu: \t MAPPING_ERROR: 0x0\n\
3,2010,9000009,-;amdgpu 0000:03:00.0: amdgpu: \t RW: 0x1\n";

    #[test]
    fn decodes_a_linux_7_fault() {
        let f = parse(KMSG);
        assert_eq!(f.len(), 1);
        let f = &f[0];
        assert_eq!(f.hub, "gfxhub");
        assert_eq!((f.vmid, f.pasid), (Some(8), Some(32773)));
        assert_eq!(f.process, Some(("python3".into(), 4242)));
        assert_eq!(f.address, Some(0x7f0012345000));
        assert_eq!(f.status, Some(0x00800932));
        assert_eq!(f.client.as_deref(), Some("TCP (0x8)"));
        assert_eq!(
            (f.permission, f.mapping, f.walker, f.rw),
            (Some(3), Some(0), Some(0), Some(1))
        );
        assert_eq!(f.device.as_deref(), Some("0000:03:00.0"));
        assert!(f.kind().starts_with("permission fault") && f.kind().ends_with("on a write"));
    }

    #[test]
    fn decodes_the_pre_6_10_form_and_dmesg_lines() {
        let log = "[  12.5] amdgpu 0000:0b:00.0: amdgpu: [gfxhub0] page fault (src_id:0 ring:40 vmid:3 pasid:32770, for process train.py pid 999 thread train.py pid 1000)\n\
[  12.5] amdgpu 0000:0b:00.0: amdgpu:   in page starting at address 0x0000800000001000 from client 27\n\
[  12.5] amdgpu 0000:0b:00.0: amdgpu: \t MAPPING_ERROR: 0x1\n";
        let f = parse(log);
        assert_eq!(f[0].process, Some(("train.py".into(), 999)));
        assert_eq!(f[0].hub, "gfxhub0");
        assert!(f[0].kind().starts_with("mapping error"));
    }

    #[test]
    fn garbage_does_not_panic() {
        for s in [
            "] page fault (",
            "x;y\n;\n,,;",
            "vmid:99999999999999 pasid:",
            "in page starting at address 0x",
        ] {
            let _ = parse(s);
        }
    }

    #[test]
    fn check_reports_the_last_fault_or_none() {
        let t = Tree::new();
        t.write("dev/kmsg", KMSG);
        let c = run_check(&t, &FakeHost::default(), checks, "gpu.faults");
        assert_check(
            &c,
            Status::Warn,
            &[
                "permission fault",
                "0x7f0012345000",
                "python3 (pid 4242, pasid 32773)",
                "vmid 8",
                "TCP",
            ],
        );
        t.write("dev/kmsg", "6,1,1,-;Linux version 7.2.13\n");
        let c = run_check(&t, &FakeHost::default(), checks, "gpu.faults");
        assert_check(&c, Status::Ok, &["no amdgpu page fault"]);
        let c = run_check(&Tree::new(), &FakeHost::default(), checks, "gpu.faults");
        assert_check(&c, Status::Warn, &["cannot read"]);
    }
}
