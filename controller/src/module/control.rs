//! `/dev/rdna1_mtype`: the module's ioctl ABI, with the structs and numbers of the shared crate.

use std::fs::File;
use std::os::fd::AsRawFd;

use anyhow::{bail, Context, Result};
use nix::errno::Errno;
use rdna1_mtype_shared::abi::{
    self, Event, EventsArg, PolicyArg, StatsArg, VersionArg, ABI_VERSION, MAX_EVENTS_PER_READ,
};
use rdna1_mtype_shared::policy::Policy;

use crate::exit::{coded, Code};
use crate::sysroot::SysRoot;

nix::ioctl_readwrite!(
    ioc_get_version,
    abi::IOC_MAGIC,
    abi::NR_GET_VERSION,
    VersionArg
);
nix::ioctl_readwrite!(
    ioc_get_policy,
    abi::IOC_MAGIC,
    abi::NR_GET_POLICY,
    PolicyArg
);
nix::ioctl_write_ptr!(
    ioc_set_policy,
    abi::IOC_MAGIC,
    abi::NR_SET_POLICY,
    PolicyArg
);
nix::ioctl_readwrite!(ioc_get_stats, abi::IOC_MAGIC, abi::NR_GET_STATS, StatsArg);
nix::ioctl_readwrite!(
    ioc_read_events,
    abi::IOC_MAGIC,
    abi::NR_READ_EVENTS,
    EventsArg
);

/// An open `/dev/rdna1_mtype` whose ABI version matches ours.
pub struct Device {
    file: File,
}

fn explain(e: Errno, what: &str) -> anyhow::Error {
    let hint = match e {
        Errno::EPERM | Errno::EACCES => ": only root may do this (sudo)",
        Errno::EINVAL => ": the module refused the value",
        Errno::ENOTTY => ": the module does not know this command (version mismatch?)",
        _ => "",
    };
    anyhow::Error::new(e).context(format!("{what}: {e}{hint}"))
}

impl Device {
    pub fn open(root: &SysRoot) -> Result<Device> {
        let path = root.path(&format!("/dev/{}", abi::DEVICE_NAME));
        let file = File::options()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                let what = format!("opening {}: {e}", path.display());
                match e.kind() {
                    std::io::ErrorKind::NotFound => coded(
                        Code::NoModule,
                        format!("{what}: is rdna1_mtype loaded? (sudo modprobe rdna1_mtype)"),
                    ),
                    std::io::ErrorKind::PermissionDenied => anyhow::Error::new(e)
                        .context(format!("{what}: only root may open it (sudo)")),
                    _ => anyhow::Error::new(e).context(what),
                }
            })?;
        let dev = Device { file };
        let v = dev.version()?;
        if v.version != ABI_VERSION {
            bail!(
                "rdna1_mtype speaks ABI version {}, rdna1ctl version {ABI_VERSION}: install matching versions",
                v.version
            );
        }
        Ok(dev)
    }

    pub fn version(&self) -> Result<VersionArg> {
        let mut a = VersionArg {
            size: size_of::<VersionArg>() as u32,
            ..Default::default()
        };
        // SAFETY: `a` is a valid VersionArg the kernel reads and writes for the call.
        unsafe { ioc_get_version(self.file.as_raw_fd(), &mut a) }
            .map_err(|e| explain(e, "GET_VERSION"))?;
        Ok(a)
    }

    pub fn policy(&self) -> Result<Policy> {
        let mut a = PolicyArg::from_policy(&Policy::DEFAULT);
        // SAFETY: as above.
        unsafe { ioc_get_policy(self.file.as_raw_fd(), &mut a) }
            .map_err(|e| explain(e, "GET_POLICY"))?;
        a.to_policy()
            .map_err(|e| anyhow::anyhow!("GET_POLICY returned an invalid policy: {e:?}"))
    }

    pub fn set_policy(&self, p: &Policy) -> Result<()> {
        let a = PolicyArg::from_policy(p);
        // SAFETY: `a` is a valid PolicyArg the kernel reads for the call.
        unsafe { ioc_set_policy(self.file.as_raw_fd(), &a) }
            .map_err(|e| explain(e, "SET_POLICY"))?;
        Ok(())
    }

    /// Every counter set the module has, in its order.
    pub fn stats(&self) -> Result<Vec<StatsArg>> {
        let mut all = Vec::new();
        for index in 0.. {
            let mut a = StatsArg {
                size: size_of::<StatsArg>() as u32,
                version: ABI_VERSION,
                index,
                ..Default::default()
            };
            // SAFETY: as above.
            match unsafe { ioc_get_stats(self.file.as_raw_fd(), &mut a) } {
                Ok(_) => all.push(a),
                Err(Errno::ENOENT) => break,
                Err(e) => return Err(explain(e, "GET_STATS")),
            }
        }
        Ok(all)
    }

    /// Events from `cursor` on; returns them, the next cursor and how many were lost.
    pub fn events(&self, cursor: u64) -> Result<(Vec<Event>, u64, u64)> {
        let mut buf = vec![Event::default(); MAX_EVENTS_PER_READ as usize];
        let mut a = EventsArg {
            size: size_of::<EventsArg>() as u32,
            version: ABI_VERSION,
            capacity: MAX_EVENTS_PER_READ,
            cursor,
            buf: buf.as_mut_ptr() as u64,
            ..Default::default()
        };
        // SAFETY: `a` is valid, and `a.buf` points to `a.capacity` Events that stay alive and
        // unaliased for the call.
        unsafe { ioc_read_events(self.file.as_raw_fd(), &mut a) }
            .map_err(|e| explain(e, "READ_EVENTS"))?;
        buf.truncate(a.count as usize);
        Ok((buf, a.cursor, a.dropped))
    }
}

/// A NUL-padded byte string as text.
pub fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// Context helper for commands that need the device.
pub fn open(root: &SysRoot) -> Result<Device> {
    Device::open(root).context("rdna1_mtype control device")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nix_request_codes_equal_the_shared_abi() {
        assert_eq!(
            nix::request_code_readwrite!(abi::IOC_MAGIC, abi::NR_GET_POLICY, size_of::<PolicyArg>())
                as u32,
            abi::IOC_GET_POLICY
        );
        assert_eq!(
            nix::request_code_write!(abi::IOC_MAGIC, abi::NR_SET_POLICY, size_of::<PolicyArg>())
                as u32,
            abi::IOC_SET_POLICY
        );
        assert_eq!(
            nix::request_code_readwrite!(
                abi::IOC_MAGIC,
                abi::NR_READ_EVENTS,
                size_of::<EventsArg>()
            ) as u32,
            abi::IOC_READ_EVENTS
        );
    }

    #[test]
    fn missing_device_says_what_to_do() {
        let root = SysRoot::new(std::env::temp_dir().join("rdna1ctl-nodev"));
        let e = format!("{:#}", Device::open(&root).err().unwrap());
        assert!(e.contains("is rdna1_mtype loaded"), "{e}");
    }
}
