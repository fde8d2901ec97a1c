//! Proof that a run used the GPU: its processes in KFD. A process that opens /dev/kfd (every
//! ROCm/HIP program does, before any GPU work) gets `/sys/class/kfd/kfd/proc/<tgid>` until it
//! exits (amdkfd's kfd_procfs: kfd_create_process adds it, kfd_process_remove_sysfs drops it),
//! so the directory is sampled while the command runs and the entries of the command's
//! processes (the command and its descendants, by /proc's parent links) are kept. A run none
//! of whose processes appeared there did no ROCm work: a CPU fallback, whatever it printed.
//! amdkfd names the entries by the host's pids; rdna1ctl in a PID namespace of its own (a
//! container) cannot match them to the command's, and then says so rather than judge.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How deep the parent chain of a KFD process is followed to find the command.
const MAX_DEPTH: usize = 64;

/// What the samples saw (a run's `gpu_work`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GpuWorkJson {
    /// The command's processes seen in KFD (their pids).
    pub kfd_processes: Vec<u32>,
    /// How many times the KFD directory was read.
    pub samples: u32,
    /// Why KFD could not be read (no amdgpu with KFD, no such directory), if it could not.
    pub error: Option<String>,
    /// Why GPU work can be neither proven nor ruled out here (rdna1ctl in a PID namespace),
    /// if it cannot: then the run is judged without it.
    pub unproven: Option<String>,
}

impl GpuWorkJson {
    /// Why the run is no proof of GPU work, if it is not.
    pub fn missing(&self) -> Option<String> {
        if !self.kfd_processes.is_empty() || self.unproven.is_some() {
            return None;
        }
        Some(match &self.error {
            Some(e) => format!("no GPU work could be seen: {e}"),
            None => "no GPU work: none of the command's processes opened /dev/kfd (a CPU \
                     fallback or a PyTorch without ROCm)"
                .into(),
        })
    }
}

/// Samples KFD's process directory for one run.
pub struct GpuWork {
    dir: PathBuf,
    proc_dir: PathBuf,
    root_pid: Option<u32>,
    seen: BTreeSet<u32>,
    /// Entries already judged not the command's.
    others: BTreeSet<u32>,
    samples: u32,
    error: Option<String>,
    unproven: Option<String>,
}

impl GpuWork {
    /// `kfd_proc`: `/sys/class/kfd/kfd/proc` (below `--root` in tests); `proc_dir`: the
    /// running machine's /proc (the command is a real process, also under `--root`).
    pub fn new(kfd_proc: PathBuf, proc_dir: PathBuf) -> GpuWork {
        GpuWork {
            dir: kfd_proc,
            root_pid: None,
            seen: BTreeSet::new(),
            others: BTreeSet::new(),
            samples: 0,
            error: None,
            unproven: in_pid_namespace(&proc_dir).then(|| {
                "rdna1ctl runs in a PID namespace of its own (a container): KFD names processes \
                 by the host's pids, which cannot be matched to the command's here"
                    .to_owned()
            }),
            proc_dir,
        }
    }

    /// The command's first process.
    pub fn start(&mut self, pid: u32) {
        self.root_pid = Some(pid);
        self.sample();
    }

    /// Reads the directory once.
    pub fn sample(&mut self) {
        let Some(root) = self.root_pid else { return };
        self.samples += 1;
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) => {
                if self.error.is_none() {
                    self.error = Some(format!(
                        "{}: {e} (amdgpu with KFD is not loaded)",
                        self.dir.display()
                    ));
                }
                return;
            }
        };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if self.seen.contains(&pid) || self.others.contains(&pid) {
                continue;
            }
            // Another program's, or gone before it could be placed (then not counted).
            if descends_from(&self.proc_dir, pid, root) {
                self.seen.insert(pid);
            } else {
                self.others.insert(pid);
            }
        }
    }

    /// Whether a fault that named `pid` is the command's: a process KFD saw for it, or the
    /// command itself; one KFD saw for another program is not; and one never seen (a short-lived
    /// process between two samples) is counted, unless it is still running (another program's:
    /// the command's processes are gone when this is asked).
    pub fn fault_is_commands(&self, pid: u32) -> bool {
        if self.seen.contains(&pid) || self.root_pid == Some(pid) {
            return true;
        }
        !self.others.contains(&pid) && !self.proc_dir.join(pid.to_string()).exists()
    }

    pub fn json(&self) -> GpuWorkJson {
        GpuWorkJson {
            kfd_processes: self.seen.iter().copied().collect(),
            samples: self.samples,
            error: if self.seen.is_empty() {
                self.error.clone()
            } else {
                None
            },
            unproven: self.unproven.clone(),
        }
    }
}

/// Whether this process lives in a PID namespace below the initial one (`NSpid:` in its
/// status lists more than one pid).
fn in_pid_namespace(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("self/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .map(|v| v.split_whitespace().count() > 1)
        })
        .unwrap_or(false)
}

/// The parent pid in `/proc/PID/stat` (the field after the parenthesised name, which may
/// itself hold spaces and parentheses).
fn parent(proc_dir: &Path, pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let mut f = after.split_whitespace();
    f.next()?; // state
    f.next()?.parse().ok()
}

/// Whether `pid` is `root` or a descendant of it.
fn descends_from(proc_dir: &Path, pid: u32, root: u32) -> bool {
    let mut p = pid;
    for _ in 0..MAX_DEPTH {
        if p == root {
            return true;
        }
        match parent(proc_dir, p) {
            Some(pp) if pp != 0 && pp != p => p = pp,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("rdna1ctl-gpuwork-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_commands_processes_are_found_by_their_parents() {
        let d = tmp("tree");
        let proc_dir = d.join("proc");
        // 100 (the command) -> 101 -> 102; 200 is someone else's.
        for (pid, ppid) in [(100, 1), (101, 100), (102, 101), (200, 1)] {
            let p = proc_dir.join(pid.to_string());
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(
                p.join("stat"),
                format!("{pid} (py thon (x)) S {ppid} 0 0\n"),
            )
            .unwrap();
        }
        let kfd = d.join("kfd");
        std::fs::create_dir_all(&kfd).unwrap();
        let mut g = GpuWork::new(kfd.clone(), proc_dir);
        g.start(100);
        assert_eq!(g.json().kfd_processes, Vec::<u32>::new());
        assert!(g
            .json()
            .missing()
            .unwrap()
            .contains("none of the command's processes"));
        for pid in ["102", "200", "notapid"] {
            std::fs::create_dir_all(kfd.join(pid)).unwrap();
        }
        g.sample();
        assert_eq!(g.json().kfd_processes, [102]);
        assert!(g.json().missing().is_none());
        // 200 is another program's; 300 was never seen and is gone (a short-lived process of
        // the run); 101 was never seen in KFD and is still running: another program's, as far
        // as can be told once the command has ended (its processes are gone by then).
        assert!(g.fault_is_commands(102) && g.fault_is_commands(100));
        assert!(!g.fault_is_commands(200) && g.fault_is_commands(300));
        assert!(!g.fault_is_commands(101));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn no_kfd_directory_says_why() {
        let d = tmp("nokfd");
        let mut g = GpuWork::new(d.join("absent"), d.join("proc"));
        g.start(1);
        let j = g.json();
        assert!(
            j.error.as_deref().unwrap().contains("KFD is not loaded"),
            "{j:?}"
        );
        assert!(j.missing().unwrap().contains("no GPU work could be seen"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn in_a_pid_namespace_nothing_is_judged_from_kfd() {
        let d = tmp("ns");
        std::fs::create_dir_all(d.join("proc/self")).unwrap();
        std::fs::write(
            d.join("proc/self/status"),
            "Name:\trdna1ctl\nNSpid:\t4242\t7\n",
        )
        .unwrap();
        let mut g = GpuWork::new(d.join("kfd"), d.join("proc"));
        g.start(7);
        let j = g.json();
        assert!(
            j.unproven.as_deref().unwrap().contains("PID namespace"),
            "{j:?}"
        );
        assert_eq!(j.missing(), None);
        std::fs::write(d.join("proc/self/status"), "NSpid:\t4242\n").unwrap();
        let g = GpuWork::new(d.join("kfd"), d.join("proc"));
        assert!(g.json().unproven.is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
