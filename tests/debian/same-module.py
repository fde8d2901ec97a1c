#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Whether two kernel modules are the same module: every ELF section the kernel loads or
links with (code, data, relocations, symbols, .modinfo, .BTF) byte for byte equal. Only the
DWARF debug sections and the build id (a hash that covers them) may differ: they hold the
paths of the kernel tree the module was built against.

usage: same-module.py A.ko B.ko   exit 0 if the same, 1 naming the sections that differ."""
import struct
import sys

MAY_DIFFER = (".debug_", ".rela.debug_", ".note.gnu.build-id")


def sections(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"same-module.py: {path} is not a little-endian ELF64 file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = data[strtab[4] : strtab[4] + strtab[5]]
    out = {}
    for name_off, sh_type, flags, _addr, offset, size, link, info, align, entsize in headers:
        name = names[name_off : names.index(b"\0", name_off)].decode()
        body = b"" if sh_type == 8 else data[offset : offset + size]  # SHT_NOBITS: no bytes
        # Several sections may share a name (.group, ...): each is compared, in order.
        out.setdefault(name, []).append((sh_type, flags, size, link, info, align, entsize, body))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = sections(sys.argv[1]), sections(sys.argv[2])
    differ = sorted(
        n for n in set(a) | set(b) if not n.startswith(MAY_DIFFER) and a.get(n) != b.get(n)
    )
    if differ:
        print(f"{sys.argv[1]} and {sys.argv[2]} differ in: {', '.join(differ)}")
        return 1
    kept = sum(len(a[n]) for n in a if not n.startswith(MAY_DIFFER))
    print(f"the same module: {kept} sections equal (debug info and build id aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
