//! TheRock's kernel packs: the GPU code of a multi-arch install, split from its host libraries
//! into one `.kpack` file per library group and target (`_rocm_sdk_libraries/.kpack/
//! blas_lib_gfx1010.kpack` from `rocm-sdk-device-gfx1010`, `torch/.kpack/torch_gfx1010.kpack`
//! from `amd-torch-device-gfx1010`). The format is rocm-kpack's (ROCm/rocm-kpack e3483286
//! `python/rocm_kpack/kpack.py` `PackedKernelArchive.write`, `runtime/src/archive.cpp`): "KPAK",
//! a little-endian u32 version (1), a u64 offset of the table of contents; the table is one
//! MessagePack map (`gfx_arches`: the targets the pack carries; `toc`: binary -> target ->
//! code object) running to the end of the file. Only the header and the table are read, never
//! the code objects (packs run to hundreds of megabytes).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rmpv::Value;

/// The format version rocm-kpack writes and its runtime accepts.
const VERSION: u32 = 1;
/// The table of contents read at most (a pack's is a few kilobytes per library).
const TOC_MAX: u64 = 16 << 20;

/// What a pack says it carries.
#[derive(Debug, PartialEq, Eq)]
pub struct Pack {
    /// `gfx_arches`: the targets of its code objects (`gfx1010`, `gfx942:xnack+`).
    pub arches: Vec<String>,
    /// Code objects listed (binaries times targets).
    pub entries: usize,
}

/// Reads the header and table of contents of the pack at `path`.
pub fn read(path: &Path) -> Result<Pack, String> {
    let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = [0u8; 16];
    f.read_exact(&mut head)
        .map_err(|_| format!("{}: shorter than a kpack header", path.display()))?;
    if &head[..4] != b"KPAK" {
        return Err(format!("{}: not a kpack (no KPAK magic)", path.display()));
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if version != VERSION {
        return Err(format!(
            "{}: kpack format version {version}, not {VERSION}",
            path.display()
        ));
    }
    let mut off = [0u8; 8];
    off.copy_from_slice(&head[8..16]);
    let toc = u64::from_le_bytes(off);
    if toc < 16 || toc >= len || len - toc > TOC_MAX {
        return Err(format!(
            "{}: its table of contents (at {toc} of {len} bytes) is out of place",
            path.display()
        ));
    }
    f.seek(SeekFrom::Start(toc))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    f.take(TOC_MAX)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let value = rmpv::decode::read_value(&mut bytes.as_slice()).map_err(|e| {
        format!(
            "{}: its table of contents is not MessagePack: {e}",
            path.display()
        )
    })?;
    let field = |name: &str| -> Option<&Value> {
        value
            .as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(name))
            .map(|(_, v)| v)
    };
    let arches: Vec<String> = field("gfx_arches")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: no gfx_arches in its table of contents", path.display()))?
        .iter()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect();
    let entries = field("toc").and_then(Value::as_map).map_or(0, |m| {
        m.iter()
            .map(|(_, per)| per.as_map().map_or(0, Vec::len))
            .sum()
    });
    Ok(Pack { arches, entries })
}

/// The packs of library group `group` in `dir` (`<group>_<target>.kpack`), sorted.
pub fn packs(dir: &Path, group: &str) -> Vec<PathBuf> {
    let prefix = format!("{group}_");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".kpack"))
        })
        .collect();
    v.sort();
    v
}
