//! PCI addresses (`DDDD:BB:DD.F`) and the identity of the device a mapping is for.

use core::fmt;

/// A PCI function address: domain, bus, device (0..31), function (0..7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct PciAddr(u32);

impl PciAddr {
    /// The address `domain:bus:dev.func`; `None` if `dev > 31` or `func > 7`.
    pub const fn new(domain: u16, bus: u8, dev: u8, func: u8) -> Option<PciAddr> {
        if dev > 31 || func > 7 {
            return None;
        }
        Some(PciAddr::from_raw(
            ((domain as u32) << 16) | ((bus as u32) << 8) | ((dev as u32) << 3) | func as u32,
        ))
    }

    /// From the packed form `domain << 16 | bus << 8 | devfn`, as the kernel module reports it.
    pub const fn from_raw(raw: u32) -> PciAddr {
        PciAddr(raw)
    }

    /// The packed form `domain << 16 | bus << 8 | devfn`.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// Parses `DDDD:BB:DD.F` (hex, either case), as sysfs and lspci -D print it.
    pub fn parse(s: &[u8]) -> Option<PciAddr> {
        // Fixed width: 4 + 1 + 2 + 1 + 2 + 1 + 1.
        if s.len() != 12 || s[4] != b':' || s[7] != b':' || s[10] != b'.' {
            return None;
        }
        let domain = hex(&s[0..4])?;
        let bus = hex(&s[5..7])?;
        let dev = hex(&s[8..10])?;
        let func = hex(&s[11..12])?;
        PciAddr::new(domain as u16, bus as u8, dev as u8, func as u8)
    }
}

fn hex(digits: &[u8]) -> Option<u32> {
    let mut v: u32 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u32::from(d);
    }
    Some(v)
}

impl fmt::Display for PciAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            r >> 16,
            (r >> 8) & 0xff,
            (r >> 3) & 0x1f,
            r & 7
        )
    }
}

/// What the hook knows about the device of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceId {
    /// PCI address.
    pub addr: PciAddr,
    /// PCI vendor id.
    pub vendor: u16,
    /// PCI device id.
    pub device: u16,
}

/// A `core::fmt::Write` into a fixed byte buffer (for the kernel, which has no `String`).
/// Writing past the end fails and leaves what fitted.
pub struct SliceWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceWriter<'a> {
    /// A writer that fills `buf` from its start.
    pub fn new(buf: &'a mut [u8]) -> Self {
        SliceWriter { buf, len: 0 }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size of the buffer: how much can be written in all.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Forgets what was written past `len` bytes (nothing if fewer were written).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

impl fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let b = s.as_bytes();
        let end = self.len.checked_add(b.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_writer_truncates_and_writes_on() {
        use core::fmt::Write;
        let mut buf = [0u8; 8];
        let mut w = SliceWriter::new(&mut buf);
        assert_eq!(w.capacity(), 8);
        w.write_str("abcdef").unwrap();
        assert!(w.write_str("ghi").is_err());
        w.truncate(2);
        w.truncate(5);
        assert_eq!(w.len(), 2);
        w.write_str("xyz").unwrap();
        assert_eq!(&buf[..5], b"abxyz");
    }
    use core::fmt::Write;

    #[test]
    fn parses_and_prints_sysfs_form() {
        let a = PciAddr::parse(b"0000:03:00.0").unwrap();
        assert_eq!(a, PciAddr::new(0, 3, 0, 0).unwrap());
        assert_eq!(a.to_string(), "0000:03:00.0");
        let b = PciAddr::parse(b"10DE:Ff:1f.7").unwrap();
        assert_eq!(b.to_string(), "10de:ff:1f.7");
        assert_eq!(PciAddr::from_raw(b.raw()), b);
    }

    #[test]
    fn rejects_malformed_addresses() {
        for bad in [
            &b""[..],
            b"03:00.0",
            b"0000:03:00.8",
            b"0000:03:20.0",
            b"0000-03:00.0",
            b"0000:03:00.0\n",
            b"000g:03:00.0",
            b"0000:03:00:0",
        ] {
            assert_eq!(PciAddr::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn slice_writer_stops_at_the_end() {
        let mut buf = [0u8; 8];
        let mut w = SliceWriter::new(&mut buf);
        assert!(w.write_str("0123").is_ok());
        assert!(w.write_str("45678").is_err());
        assert_eq!(w.len(), 4);
        assert_eq!(&buf[..4], b"0123");
    }
}
