//! `/dev/rdna1_mtype`: the module's ioctl ABI, with the structs and numbers of the shared crate.

use std::fs::File;
use std::os::fd::AsRawFd;

use anyhow::{bail, Context, Result};
use nix::errno::Errno;
use rdna1_mtype_shared::abi::{
    self, Event, EventsArg, PolicyArg, PolicyArgV1, StatsArg, VersionArg, ABI_VERSION,
    ABI_VERSION_MIN, MAX_EVENTS_PER_READ,
};
use rdna1_mtype_shared::policy::{Classes, Policy, VmKind, VmScope};

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
nix::ioctl_readwrite!(
    ioc_get_policy_v1,
    abi::IOC_MAGIC,
    abi::NR_GET_POLICY,
    PolicyArgV1
);
nix::ioctl_write_ptr!(
    ioc_set_policy_v1,
    abi::IOC_MAGIC,
    abi::NR_SET_POLICY,
    PolicyArgV1
);
nix::ioctl_readwrite!(ioc_get_stats, abi::IOC_MAGIC, abi::NR_GET_STATS, StatsArg);
nix::ioctl_readwrite!(
    ioc_read_events,
    abi::IOC_MAGIC,
    abi::NR_READ_EVENTS,
    EventsArg
);

/// An open `/dev/rdna1_mtype` whose ABI version this rdna1ctl speaks: [`ABI_VERSION`], or
/// version 1 (a module loaded before an upgrade), spoken with version 1's structs.
pub struct Device {
    file: File,
    /// The module's ABI version (GET_VERSION).
    abi: u32,
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
        let mut dev = Device { file, abi: 0 };
        let v = dev.version()?;
        if !(ABI_VERSION_MIN..=ABI_VERSION).contains(&v.version) {
            bail!(
                "rdna1_mtype speaks ABI version {}, rdna1ctl versions {ABI_VERSION_MIN} to \
                 {ABI_VERSION}: install matching versions",
                v.version
            );
        }
        dev.abi = v.version;
        Ok(dev)
    }

    /// The module's ABI version.
    pub fn abi(&self) -> u32 {
        self.abi
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

    /// The policy as the module applies it. A version 1 module has neither VM scope nor
    /// `uc_request`: it changes every VM and rewrites requested UC, so its policy reads as VM
    /// scope `all` with `uc_request` on ([`V1_BEHAVIOUR`]).
    pub fn policy(&self) -> Result<Policy> {
        if self.abi == 1 {
            let mut a = PolicyArgV1::from_policy(&Policy::DEFAULT);
            // SAFETY: `a` is a valid PolicyArgV1 the kernel reads and writes for the call.
            unsafe { ioc_get_policy_v1(self.file.as_raw_fd(), &mut a) }
                .map_err(|e| explain(e, "GET_POLICY (ABI 1)"))?;
            return a
                .apply_to(&V1_BEHAVIOUR)
                .map_err(|e| anyhow::anyhow!("GET_POLICY returned an invalid policy: {e:?}"));
        }
        let mut a = PolicyArg::from_policy(&Policy::DEFAULT);
        // SAFETY: as above.
        unsafe { ioc_get_policy(self.file.as_raw_fd(), &mut a) }
            .map_err(|e| explain(e, "GET_POLICY"))?;
        a.to_policy()
            .map_err(|e| anyhow::anyhow!("GET_POLICY returned an invalid policy: {e:?}"))
    }

    /// Sets `p` in one step. A version 1 module is sent what version 1 can say, and refused a
    /// policy it cannot apply (see [`v1_refusal`]).
    pub fn set_policy(&self, p: &Policy) -> Result<()> {
        if self.abi == 1 {
            if let Some(why) = v1_refusal(p) {
                bail!("{why}");
            }
            let a = PolicyArgV1::from_policy(p);
            // SAFETY: `a` is a valid PolicyArgV1 the kernel reads for the call.
            unsafe { ioc_set_policy_v1(self.file.as_raw_fd(), &a) }
                .map_err(|e| explain(e, "SET_POLICY (ABI 1)"))?;
            return Ok(());
        }
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
                version: self.abi,
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
            version: self.abi,
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
        if self.abi == 1 {
            // Version 1 events have no VM kind (the byte is 0, which reads as graphics).
            for e in &mut buf {
                e.vm_kind = VmKind::Unknown as u8;
            }
        }
        Ok((buf, a.cursor, a.dropped))
    }
}

/// What a version 1 module does, in version 2's terms: every VM, requested UC rewritten.
pub const V1_BEHAVIOUR: Policy = Policy {
    vm_scope: VmScope::All,
    classes: Classes {
        uc_request: true,
        ..Classes::DEFAULT
    },
    ..Policy::DEFAULT
};

/// Why a version 1 module cannot be given `p`, if it cannot: it has no VM scope (it changes
/// every VM) and no `uc_request` class (it rewrites requested UC).
pub fn v1_refusal(p: &Policy) -> Option<String> {
    let mut missing = Vec::new();
    if p.vm_scope != VmScope::All {
        missing.push(format!(
            "VM scope {} (it changes every VM: only vm scope all can be set)",
            p.vm_scope.name()
        ));
    }
    if !p.classes.uc_request {
        missing.push(
            "classes without uc_request (it rewrites requested UC: uc_request must stay in \
             the classes)"
                .to_owned(),
        );
    }
    (!missing.is_empty()).then(|| {
        format!(
            "the loaded rdna1_mtype speaks ABI 1, which cannot set {}; nothing was changed. \
             Load the module installed with this rdna1ctl (sudo modprobe -r rdna1_mtype && \
             sudo modprobe rdna1_mtype), or ask for what ABI 1 does (--vm-scope all, classes \
             with uc_request)",
            missing.join(" or ")
        )
    })
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
    fn v1_request_codes_equal_the_shared_abi() {
        assert_eq!(
            nix::request_code_readwrite!(
                abi::IOC_MAGIC,
                abi::NR_GET_POLICY,
                size_of::<PolicyArgV1>()
            ) as u32,
            abi::IOC_GET_POLICY_V1
        );
        assert_eq!(
            nix::request_code_write!(abi::IOC_MAGIC, abi::NR_SET_POLICY, size_of::<PolicyArgV1>())
                as u32,
            abi::IOC_SET_POLICY_V1
        );
    }

    #[test]
    fn a_v1_module_is_refused_what_it_cannot_do() {
        assert_eq!(v1_refusal(&V1_BEHAVIOUR), None);
        let mut p = V1_BEHAVIOUR;
        p.mode = rdna1_mtype_shared::policy::Mode::Enforce;
        p.classes.uncached = true;
        assert_eq!(
            v1_refusal(&p),
            None,
            "mode, scope, coherent, uncached: v1 has them"
        );
        let e = v1_refusal(&Policy::DEFAULT).unwrap();
        assert!(
            e.contains("ABI 1, which cannot set VM scope compute"),
            "{e}"
        );
        assert!(e.contains("or classes without uc_request"), "{e}");
        assert!(e.contains("sudo modprobe rdna1_mtype"), "{e}");
        // What a v1 module reports reads back as its behaviour.
        let v1 = PolicyArgV1::from_policy(&p);
        assert_eq!(v1.apply_to(&V1_BEHAVIOUR), Ok(p));
    }

    #[test]
    fn missing_device_says_what_to_do() {
        let root = SysRoot::new(std::env::temp_dir().join("rdna1ctl-nodev"));
        let e = format!("{:#}", Device::open(&root).err().unwrap());
        assert!(e.contains("is rdna1_mtype loaded"), "{e}");
    }
}
