//! Where the fields of `amdgpu:amdgpu_vm_update_ptes` and of a ring-buffer page are, read from
//! the kernel's own descriptions (the event's `format` file and `events/header_page`), never
//! hard-coded: field order and sizes may change between kernels.
//!
//! Parsing the text is left to `tracepoint_decode` (docs/DEPENDENCIES.md); this file only picks
//! the fields verify needs and checks their sizes.

use anyhow::{anyhow, bail, Context, Result};
use tracepoint_decode::{PerfEventFormat, PerfFieldFormat};

/// The event verify reads.
pub const SYSTEM: &str = "amdgpu";
pub const EVENT: &str = "amdgpu_vm_update_ptes";

/// One fixed-size field: where it is in the record and how many bytes it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

impl Field {
    fn end(self) -> usize {
        self.offset + self.size
    }

    /// The field's value in `rec` (native-endian, zero-extended); `None` if `rec` is short.
    #[inline]
    pub fn read(self, rec: &[u8]) -> Option<u64> {
        let b = rec.get(self.offset..self.offset + self.size)?;
        Some(match self.size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_ne_bytes(b.try_into().ok()?)),
            4 => u64::from(u32::from_ne_bytes(b.try_into().ok()?)),
            8 => u64::from_ne_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }
}

/// The fields of `amdgpu_vm_update_ptes` that verify decodes (`dst` is not needed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdatePtesLayout {
    /// The event's id: the value of `common_type` in its records.
    pub id: u64,
    pub common_type: Field,
    pub start: Field,
    pub end: Field,
    pub flags: Field,
    pub nptes: Field,
    pub incr: Field,
    pub pid: Field,
    pub vm_ctx: Field,
    /// A record shorter than this cannot hold every field above.
    pub min_len: usize,
}

fn field(fmt: &PerfEventFormat, name: &str, sizes: &[usize]) -> Result<Field> {
    let f: &PerfFieldFormat = fmt
        .fields()
        .iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| anyhow!("the format has no field `{name}`"))?;
    let fld = Field {
        offset: f.offset().into(),
        size: f.size().into(),
    };
    if !sizes.contains(&fld.size) {
        bail!("field `{name}` has size {}, expected {sizes:?}", fld.size);
    }
    Ok(fld)
}

impl UpdatePtesLayout {
    /// Parses the text of `events/amdgpu/amdgpu_vm_update_ptes/format`.
    pub fn parse(text: &str) -> Result<UpdatePtesLayout> {
        let fmt = PerfEventFormat::parse(cfg!(target_pointer_width = "64"), SYSTEM, text)
            .ok_or_else(|| anyhow!("not an event format file (no name or ID)"))?;
        if fmt.name() != EVENT {
            bail!("format is for event `{}`, not {EVENT}", fmt.name());
        }
        let l = UpdatePtesLayout {
            id: fmt.id().into(),
            common_type: field(&fmt, "common_type", &[2])?,
            start: field(&fmt, "start", &[8])?,
            end: field(&fmt, "end", &[8])?,
            flags: field(&fmt, "flags", &[8])?,
            nptes: field(&fmt, "nptes", &[4])?,
            incr: field(&fmt, "incr", &[8])?,
            pid: field(&fmt, "pid", &[4])?,
            vm_ctx: field(&fmt, "vm_ctx", &[8])?,
            min_len: 0,
        };
        let min_len = [
            l.common_type,
            l.start,
            l.end,
            l.flags,
            l.nptes,
            l.incr,
            l.pid,
            l.vm_ctx,
        ]
        .iter()
        .map(|f| f.end())
        .max()
        .unwrap_or(0);
        Ok(UpdatePtesLayout { min_len, ..l })
    }
}

/// A ring-buffer page (sub-buffer) as `events/header_page` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageLayout {
    /// `local_t commit`: bytes of data committed, plus the missed-events flags (bits 30, 31).
    pub commit: Field,
    /// `char data`: where the records start and how much room there is.
    pub data: Field,
}

impl PageLayout {
    /// Parses the text of `events/header_page`.
    pub fn parse(text: &str) -> Result<PageLayout> {
        let mut commit = None;
        let mut data = None;
        for line in text.lines() {
            let Some(f) = PerfFieldFormat::parse(cfg!(target_pointer_width = "64"), line) else {
                continue;
            };
            let fld = Field {
                offset: f.offset().into(),
                size: f.size().into(),
            };
            match f.name() {
                "commit" => commit = Some(fld),
                "data" => data = Some(fld),
                _ => {}
            }
        }
        let commit = commit.context("header_page has no `commit` field")?;
        let data = data.context("header_page has no `data` field")?;
        if !matches!(commit.size, 4 | 8) {
            bail!("header_page: `commit` has size {}", commit.size);
        }
        if data.offset < commit.end() || data.size == 0 {
            bail!("header_page: `data` at {} size {}", data.offset, data.size);
        }
        Ok(PageLayout { commit, data })
    }

    /// Bytes of one page as `trace_pipe_raw` returns it.
    pub fn page_size(&self) -> usize {
        self.data.end()
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Verbatim from the 7.2.13 test kernel (tests/vm, QEMU x86_64, 2026-11-21).
    pub const FORMAT_7_2: &str = include_str!("fixtures/amdgpu_vm_update_ptes.format");
    pub const HEADER_PAGE_7_2: &str = include_str!("fixtures/header_page");

    #[test]
    fn real_7_2_format_gives_the_kernels_offsets() {
        let l = UpdatePtesLayout::parse(FORMAT_7_2).unwrap();
        // TP_STRUCT__entry order after the 8-byte trace_entry: start, end, flags, nptes (4 +
        // 4 padding), incr, pid (4 + 4 padding), vm_ctx, then the 4-byte __data_loc of dst.
        assert_eq!(l.common_type, Field { offset: 0, size: 2 });
        assert_eq!(l.start, Field { offset: 8, size: 8 });
        assert_eq!(
            l.end,
            Field {
                offset: 16,
                size: 8
            }
        );
        assert_eq!(
            l.flags,
            Field {
                offset: 24,
                size: 8
            }
        );
        assert_eq!(
            l.nptes,
            Field {
                offset: 32,
                size: 4
            }
        );
        assert_eq!(
            l.incr,
            Field {
                offset: 40,
                size: 8
            }
        );
        assert_eq!(
            l.pid,
            Field {
                offset: 48,
                size: 4
            }
        );
        assert_eq!(
            l.vm_ctx,
            Field {
                offset: 56,
                size: 8
            }
        );
        assert_eq!(l.min_len, 64);
        assert_eq!(l.id, 656);
    }

    #[test]
    fn offsets_follow_the_file_not_a_table() {
        // Same event with `flags` moved: the parser must follow the file.
        let moved = FORMAT_7_2
            .replace("offset:24;", "offset:999;")
            .replace("u64 flags;\toffset:999;", "u64 flags;\toffset:72;");
        let l = UpdatePtesLayout::parse(&moved).unwrap();
        assert_eq!(l.flags.offset, 72);
        assert_eq!(l.min_len, 80);
    }

    #[test]
    fn missing_or_resized_fields_are_refused() {
        let e = UpdatePtesLayout::parse(&FORMAT_7_2.replace("vm_ctx", "vm_context"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("vm_ctx"), "{e}");
        let resized = FORMAT_7_2.replace(
            "u64 flags;\toffset:24;\tsize:8;",
            "u64 flags;\toffset:24;\tsize:4;",
        );
        assert_ne!(resized, FORMAT_7_2);
        let e = UpdatePtesLayout::parse(&resized).unwrap_err().to_string();
        assert!(e.contains("`flags` has size 4"), "{e}");
        assert!(UpdatePtesLayout::parse("name: other\nID: 5\nformat:\n").is_err());
        assert!(UpdatePtesLayout::parse("garbage").is_err());
    }

    #[test]
    fn real_7_2_header_page() {
        let p = PageLayout::parse(HEADER_PAGE_7_2).unwrap();
        assert_eq!(p.commit, Field { offset: 8, size: 8 });
        assert_eq!(p.data.offset, 16);
        assert_eq!(p.page_size(), 4096);
        assert!(
            PageLayout::parse("field: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n").is_err()
        );
    }

    #[test]
    fn field_read_sizes() {
        let rec = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(Field { offset: 0, size: 1 }.read(&rec), Some(1));
        assert_eq!(
            Field { offset: 1, size: 8 }.read(&rec),
            Some(u64::from_ne_bytes([2, 3, 4, 5, 6, 7, 8, 9]))
        );
        assert_eq!(Field { offset: 2, size: 8 }.read(&rec), None);
        assert_eq!(Field { offset: 0, size: 3 }.read(&rec), None);
    }
}
