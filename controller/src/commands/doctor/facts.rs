//! Facts several groups of checks need, read once: the kernel release and config and the AMD
//! GPUs. A fact that cannot be read is kept as the reason, so the checks that need it can say
//! why they could not run instead of aborting the whole report.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result};
use rdna1_mtype_shared::devices::Rdna1Chip;

use crate::gpus::{self, Gpu};
use crate::sysroot::SysRoot;

use super::kconfig::KernelConfig;

pub struct Facts {
    /// `/proc/sys/kernel/osrelease`, e.g. `7.2.13-amd64`.
    pub release: Result<String, String>,
    /// The running kernel's config: `Ok(None)` if there is none to read.
    pub config: Result<Option<KernelConfig>, String>,
    /// AMD GPUs (only `address`, `device_id`, `rdna1` and `driver` are used).
    pub gpus: Result<Vec<Gpu>, String>,
}

impl Facts {
    pub fn gather(root: &SysRoot) -> Facts {
        let release = read_release(root).map_err(|e| crate::exit::message(&e));
        let config = match &release {
            Ok(r) => load_config(root, r).map_err(|e| crate::exit::message(&e)),
            Err(e) => Err(format!("kernel release unknown: {e}")),
        };
        let gpus = gpus::discover(root).map_err(|e| crate::exit::message(&e));
        Facts {
            release,
            config,
            gpus,
        }
    }

    /// The config, if one was read.
    pub fn config(&self) -> Option<&KernelConfig> {
        self.config.as_ref().ok().and_then(Option::as_ref)
    }

    /// RDNA1 GPUs: (PCI address, chip).
    pub fn rdna1(&self) -> Vec<(&str, Rdna1Chip)> {
        match &self.gpus {
            Ok(g) => g
                .iter()
                .filter_map(|g| g.rdna1.map(|c| (g.address.as_str(), c)))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn read_release(root: &SysRoot) -> Result<String> {
    let p = root.path("/proc/sys/kernel/osrelease");
    root.read_attr(&p)
        .with_context(|| format!("reading {}", p.display()))?
        .with_context(|| format!("{} does not exist", p.display()))
}

/// `/proc/config.gz` (CONFIG_IKCONFIG_PROC) is the running kernel's own; `/boot/config-<release>`
/// is what distributions install beside it. The first that exists wins.
fn load_config(root: &SysRoot, release: &str) -> Result<Option<KernelConfig>> {
    let gz = root.path("/proc/config.gz");
    match std::fs::File::open(&gz) {
        Ok(f) => {
            let mut text = String::new();
            flate2::read::GzDecoder::new(f)
                .read_to_string(&mut text)
                .with_context(|| format!("decompressing {}", gz.display()))?;
            return Ok(Some(KernelConfig::parse(&text, gz)));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("opening {}", gz.display())),
    }
    let boot: PathBuf = root.path(&format!("/boot/config-{release}"));
    match std::fs::read_to_string(&boot) {
        Ok(text) => Ok(Some(KernelConfig::parse(&text, boot))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", boot.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::Tree;
    use std::io::Write;

    #[test]
    fn config_gz_wins_over_boot_config() {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", "7.2.13-amd64\n");
        t.write("boot/config-7.2.13-amd64", "CONFIG_RUST=y\n");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"# CONFIG_RUST is not set\n").unwrap();
        t.write_bytes("proc/config.gz", &gz.finish().unwrap());
        let f = Facts::gather(&t.root());
        let c = f.config().expect("config read");
        assert!(!c.is_set("CONFIG_RUST"));
        assert!(c.source.ends_with("proc/config.gz"));
    }

    #[test]
    fn boot_config_of_the_running_release() {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", "7.2.13-amd64\n");
        t.write("boot/config-7.2.0-other", "CONFIG_RUST=n\n");
        t.write("boot/config-7.2.13-amd64", "CONFIG_RUST=y\n");
        let f = Facts::gather(&t.root());
        assert_eq!(f.release.as_deref(), Ok("7.2.13-amd64"));
        assert!(f.config().unwrap().is_set("CONFIG_RUST"));
    }

    #[test]
    fn missing_release_and_config_are_reasons_not_errors() {
        let t = Tree::new();
        let f = Facts::gather(&t.root());
        assert!(f.release.unwrap_err().contains("osrelease"));
        assert!(f.config.is_err());
        t.write("proc/sys/kernel/osrelease", "7.2.13\n");
        let f = Facts::gather(&t.root());
        assert!(matches!(f.config, Ok(None)));
    }

    #[test]
    fn corrupt_config_gz_is_reported() {
        let t = Tree::new();
        t.write("proc/sys/kernel/osrelease", "7.2.13\n");
        t.write("proc/config.gz", "not gzip");
        let f = Facts::gather(&t.root());
        assert!(f.config.unwrap_err().contains("decompressing"));
    }
}
