//! verify's own tracefs instance: created, set up with only `amdgpu:amdgpu_vm_update_ptes`,
//! read, and always removed. The top-level buffer and other instances are never touched
//! (other tracers may be using them).
//!
//! Everything goes through plain file operations below a [`SysRoot`], so tests run it on a
//! directory tree.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tracing::{debug, warn};

use super::format::{EVENT, SYSTEM};
use crate::sysroot::SysRoot;

/// Name prefix of our instances; the rest is the pid of the rdna1ctl that made it.
pub const INSTANCE_PREFIX: &str = "rdna1ctl-verify-";

/// A mounted tracefs.
pub struct Tracefs {
    dir: PathBuf,
}

fn event_rel() -> String {
    format!("events/{SYSTEM}/{EVENT}")
}

impl Tracefs {
    /// tracefs at /sys/kernel/tracing (or its old place under debugfs) below `root`.
    pub fn locate(root: &SysRoot) -> Result<Tracefs> {
        for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            let dir = root.path(p);
            match fs::metadata(dir.join("instances")) {
                Ok(m) if m.is_dir() => return Ok(Tracefs { dir }),
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                    return Err(anyhow::Error::new(e).context(format!(
                        "reading {}: only root may trace (sudo)",
                        dir.display()
                    )));
                }
                _ => {}
            }
        }
        bail!(
            "tracefs is not mounted at {}: mount -t tracefs nodev /sys/kernel/tracing",
            root.path("/sys/kernel/tracing").display()
        )
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The event's `format` text (top level: reading it changes nothing).
    pub fn event_format(&self) -> Result<String> {
        let path = self.dir.join(event_rel()).join("format");
        read_text(&path).map_err(|e| {
            let what = format!("reading {}", path.display());
            match e.kind() {
                io::ErrorKind::NotFound => anyhow::Error::new(e).context(format!(
                    "{what}: the tracepoint {SYSTEM}:{EVENT} does not exist: amdgpu is not loaded \
                     or the kernel lacks CONFIG_TRACING (modprobe amdgpu)"
                )),
                io::ErrorKind::PermissionDenied => {
                    anyhow::Error::new(e).context(format!("{what}: only root may trace (sudo)"))
                }
                _ => anyhow::Error::new(e).context(what),
            }
        })
    }

    fn instances(&self) -> PathBuf {
        self.dir.join("instances")
    }

    /// Removes `rdna1ctl-verify-<pid>` instances whose rdna1ctl is gone (`/proc/<pid>` missing
    /// below `root`), and the one named for `own_pid` (left by an earlier process with our pid).
    /// Returns the names removed; a failure to remove one is logged, not fatal.
    pub fn clean_stale(&self, root: &SysRoot, own_pid: u32) -> Result<Vec<String>> {
        let mut removed = Vec::new();
        let dir = self.instances();
        let entries = fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("listing {}", dir.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(INSTANCE_PREFIX)
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let alive = pid != own_pid && root.path(&format!("/proc/{pid}")).exists();
            if alive {
                continue;
            }
            match fs::remove_dir(e.path()) {
                Ok(()) => removed.push(name),
                Err(err) => warn!("could not remove stale tracefs instance {name}: {err}"),
            }
        }
        removed.sort();
        Ok(removed)
    }

    /// Creates `instances/rdna1ctl-verify-<pid>`. The returned guard removes it when dropped.
    pub fn create_instance(&self, pid: u32) -> Result<Instance> {
        let name = format!("{INSTANCE_PREFIX}{pid}");
        let path = self.instances().join(&name);
        fs::create_dir(&path).map_err(|e| {
            let what = format!("creating tracefs instance {}", path.display());
            match e.kind() {
                io::ErrorKind::PermissionDenied => {
                    anyhow::Error::new(e).context(format!("{what}: only root may trace (sudo)"))
                }
                _ => anyhow::Error::new(e).context(what),
            }
        })?;
        debug!("created {}", path.display());
        Ok(Instance {
            name,
            path,
            removed: false,
        })
    }
}

/// Our tracefs instance. Dropping it disables the event and removes the instance; call
/// [`Instance::remove`] to see whether that worked.
pub struct Instance {
    name: String,
    path: PathBuf,
    removed: bool,
}

/// A tracefs text file, read with one large buffer: some (`events/header_page`) return
/// nothing once the offset is non-zero, so the small first read `fs::read_to_string` makes
/// would cut them; others (`per_cpu/cpuN/stats`) are regenerated on every read.
pub fn read_text(path: &Path) -> io::Result<String> {
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(len * 2, 0);
        }
        match f.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn write_attr(path: &Path, value: &str) -> io::Result<()> {
    // Existing attribute files only: never create anything in tracefs.
    let mut f = File::options().write(true).truncate(true).open(path)?;
    f.write_all(value.as_bytes())
}

impl Instance {
    pub fn name(&self) -> &str {
        &self.name
    }

    fn event_file(&self, file: &str) -> PathBuf {
        self.path.join(event_rel()).join(file)
    }

    /// Enables the event in this instance only, with a kernel-side pid filter if asked.
    pub fn enable(&self, pid: Option<u32>) -> Result<()> {
        if let Some(pid) = pid {
            let filter = self.event_file("filter");
            write_attr(&filter, &format!("pid == {pid}"))
                .with_context(|| format!("writing {}", filter.display()))?;
        }
        let enable = self.event_file("enable");
        write_attr(&enable, "1").map_err(|e| {
            let what = format!("enabling {SYSTEM}:{EVENT} in {}", enable.display());
            if e.kind() == io::ErrorKind::NotFound {
                anyhow::Error::new(e).context(format!(
                    "{what}: amdgpu is not loaded or the kernel lacks CONFIG_TRACING"
                ))
            } else {
                anyhow::Error::new(e).context(what)
            }
        })
    }

    /// Stops new events (before the last read, so the counts end at a known point).
    pub fn disable(&self) -> Result<()> {
        let enable = self.event_file("enable");
        write_attr(&enable, "0").with_context(|| format!("writing {}", enable.display()))
    }

    /// `events/header_page` of this instance (its sub-buffer size may differ from the top's).
    pub fn header_page(&self) -> Result<String> {
        let p = self.path.join("events/header_page");
        read_text(&p).with_context(|| format!("reading {}", p.display()))
    }

    /// Opens `per_cpu/cpuN/trace_pipe_raw` of every CPU, non-blocking.
    pub fn open_cpus(&self) -> Result<Vec<CpuReader>> {
        let dir = self.path.join("per_cpu");
        let mut cpus = Vec::new();
        for e in fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))? {
            let e = e.with_context(|| format!("listing {}", dir.display()))?;
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(cpu) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let raw = e.path().join("trace_pipe_raw");
            let file = File::options()
                .read(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(&raw)
                .with_context(|| format!("opening {}", raw.display()))?;
            cpus.push(CpuReader {
                cpu,
                file,
                stats: e.path().join("stats"),
            });
        }
        if cpus.is_empty() {
            bail!("{} lists no CPU", dir.display());
        }
        cpus.sort_by_key(|c| c.cpu);
        Ok(cpus)
    }

    /// Disables the event and removes the instance. The readers must be closed first (an
    /// instance with open files is busy).
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        self.do_remove()
    }

    fn do_remove(&self) -> Result<()> {
        let _ = self.disable();
        let mut last = None;
        // A reader closed on another thread may release the instance a moment later.
        for _ in 0..20 {
            match fs::remove_dir(&self.path) {
                Ok(()) => {
                    debug!("removed {}", self.path.display());
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) if e.raw_os_error() == Some(nix::libc::EBUSY) => {
                    last = Some(e);
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        Err(
            anyhow::Error::new(last.expect("set on every failure")).context(format!(
                "removing tracefs instance {}: remove it by hand (rmdir)",
                self.path.display()
            )),
        )
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if !self.removed
            && let Err(e) = self.do_remove()
        {
            eprintln!("rdna1ctl: {}", crate::exit::message(&e));
        }
    }
}

/// One CPU's `trace_pipe_raw`.
pub struct CpuReader {
    pub cpu: u32,
    file: File,
    stats: PathBuf,
}

impl CpuReader {
    /// Reads every page available now, calling `page` for each. Returns the pages read.
    pub fn drain(&mut self, buf: &mut [u8], mut page: impl FnMut(&[u8])) -> Result<u64> {
        let mut n = 0;
        loop {
            match self.file.read(buf) {
                Ok(0) => return Ok(n),
                Ok(len) => {
                    n += 1;
                    page(&buf[..len]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("reading trace_pipe_raw of cpu{}", self.cpu)));
                }
            }
        }
    }

    /// Events the ring buffer of this CPU lost (`overrun`, `commit overrun`, `dropped events`
    /// in `per_cpu/cpuN/stats`).
    pub fn lost(&self) -> Result<Lost> {
        let text =
            read_text(&self.stats).with_context(|| format!("reading {}", self.stats.display()))?;
        Ok(Lost::parse(&text))
    }
}

/// Ring-buffer losses of one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Lost {
    pub overrun: u64,
    pub commit_overrun: u64,
    pub dropped: u64,
}

impl Lost {
    pub fn parse(stats: &str) -> Lost {
        let mut l = Lost::default();
        for line in stats.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let Ok(v) = v.trim().parse::<u64>() else {
                continue;
            };
            match k.trim() {
                "overrun" => l.overrun = v,
                "commit overrun" => l.commit_overrun = v,
                "dropped events" => l.dropped = v,
                _ => {}
            }
        }
        l
    }

    pub fn add(&mut self, o: Lost) {
        self.overrun += o.overrun;
        self.commit_overrun += o.commit_overrun;
        self.dropped += o.dropped;
    }

    pub fn total(&self) -> u64 {
        self.overrun + self.commit_overrun + self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::decode::{decode_page, encode_page, Update};
    use crate::trace::format::{PageLayout, UpdatePtesLayout};

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rdna1ctl-tfs-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// A directory tree shaped like tracefs, with the event's format at the top level.
    fn fake(name: &str) -> (PathBuf, SysRoot, Tracefs) {
        let d = tmp(name);
        let t = d.join("sys/kernel/tracing");
        fs::create_dir_all(t.join("instances")).unwrap();
        fs::create_dir_all(t.join("events/amdgpu/amdgpu_vm_update_ptes")).unwrap();
        fs::write(
            t.join("events/amdgpu/amdgpu_vm_update_ptes/format"),
            crate::trace::format::tests::FORMAT_7_2,
        )
        .unwrap();
        let root = SysRoot::new(d.clone());
        let tfs = Tracefs::locate(&root).unwrap();
        (d, root, tfs)
    }

    #[test]
    fn read_text_reads_large_files_whole() {
        let d = tmp("readtext");
        let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        fs::write(d.join("f"), &big).unwrap();
        assert_eq!(read_text(&d.join("f")).unwrap(), big);
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn real_stats_parse() {
        let l = Lost::parse(include_str!("fixtures/cpu1.stats"));
        assert_eq!(l, Lost::default());
        let l = Lost::parse("entries: 1\noverrun: 12\ncommit overrun: 0\noldest event ts:   302.432624\ndropped events: 3\n");
        assert_eq!((l.overrun, l.dropped, l.total()), (12, 3, 15));
    }

    #[test]
    fn not_mounted_says_how_to_mount() {
        let d = tmp("unmounted");
        let e = Tracefs::locate(&SysRoot::new(d.clone())).err().unwrap();
        assert!(
            format!("{e:#}").contains("mount -t tracefs nodev /sys/kernel/tracing"),
            "{e:#}"
        );
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn missing_event_names_amdgpu_and_config_tracing() {
        let (d, _root, tfs) = fake("noevent");
        assert!(tfs
            .event_format()
            .unwrap()
            .contains("amdgpu_vm_update_ptes"));
        fs::remove_dir_all(tfs.dir().join("events/amdgpu")).unwrap();
        let e = format!("{:#}", tfs.event_format().unwrap_err());
        assert!(
            e.contains("amdgpu is not loaded or the kernel lacks CONFIG_TRACING"),
            "{e}"
        );
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn stale_instances_of_dead_pids_and_our_own_are_removed() {
        let (d, root, tfs) = fake("stale");
        let inst = tfs.dir().join("instances");
        for n in [
            "rdna1ctl-verify-111",
            "rdna1ctl-verify-222",
            "rdna1ctl-verify-333",
            "rdna1ctl-verify-x",
            "someone-else",
        ] {
            fs::create_dir(inst.join(n)).unwrap();
        }
        fs::create_dir_all(d.join("proc/222")).unwrap(); // 222 still runs
        let removed = tfs.clean_stale(&root, 333).unwrap();
        assert_eq!(removed, ["rdna1ctl-verify-111", "rdna1ctl-verify-333"]);
        let mut left: Vec<String> = fs::read_dir(&inst)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["rdna1ctl-verify-222", "rdna1ctl-verify-x", "someone-else"]
        );
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn instance_is_removed_when_setup_fails() {
        let (d, _root, tfs) = fake("guard");
        let path = tfs.dir().join("instances/rdna1ctl-verify-77");
        {
            let inst = tfs.create_instance(77).unwrap();
            assert!(path.is_dir());
            // A fresh fake instance has no event files: enabling fails, and says why.
            let e = format!("{:#}", inst.enable(None).unwrap_err());
            assert!(e.contains("amdgpu is not loaded"), "{e}");
            assert!(
                tfs.create_instance(77).is_err(),
                "a second instance of the same name"
            );
        }
        assert!(!path.exists(), "the guard left the instance behind");
        fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn readers_drain_pages_and_report_losses() {
        let (d, _root, tfs) = fake("read");
        let inst = tfs.create_instance(5).unwrap();
        let ev = UpdatePtesLayout::parse(crate::trace::format::tests::FORMAT_7_2).unwrap();
        let pl = PageLayout::parse(crate::trace::format::tests::HEADER_PAGE_7_2).unwrap();
        let u = Update {
            start: 1,
            end: 2,
            flags: 0x67,
            nptes: 1,
            incr: 4096,
            pid: 9,
            vm_ctx: 3,
        };
        let mut raw = Vec::new();
        let mut page = vec![0u8; pl.page_size()];
        for n in [3, 5] {
            encode_page(&pl, &ev, &vec![u; n], 0, &mut page);
            raw.extend_from_slice(&page);
        }
        let cpu = inst.path.join("per_cpu/cpu0");
        fs::create_dir_all(&cpu).unwrap();
        fs::write(cpu.join("trace_pipe_raw"), &raw).unwrap();
        fs::write(cpu.join("stats"), "entries: 0\noverrun: 4\ncommit overrun: 1\nbytes: 0\ndropped events: 2\nread events: 8\n").unwrap();
        let mut cpus = inst.open_cpus().unwrap();
        let mut seen = 0;
        let mut buf = vec![0u8; pl.page_size()];
        let pages = cpus[0]
            .drain(&mut buf, |p| {
                seen += decode_page(&pl, &ev, p, |_| {}).updates
            })
            .unwrap();
        assert_eq!((pages, seen), (2, 8));
        let l = cpus[0].lost().unwrap();
        assert_eq!(
            (l.overrun, l.commit_overrun, l.dropped, l.total()),
            (4, 1, 2, 7)
        );
        drop(cpus);
        fs::remove_dir_all(inst.path.join("per_cpu")).unwrap();
        inst.remove().unwrap();
        assert!(!tfs.dir().join("instances/rdna1ctl-verify-5").exists());
        fs::remove_dir_all(d).unwrap();
    }
}
