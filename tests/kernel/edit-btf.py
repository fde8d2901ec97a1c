#!/usr/bin/env python3
"""Hand-edits the BTF of a real amdgpu.ko, so that check-kernel's refusals are tested on what
pahole really emits, not only on synthetic BTF.

    edit-btf.py SRC_TREE KVER DST_TREE EDIT

SRC_TREE holds Debian's kernel KVER unpacked (usr/lib/modules/KVER/{vmlinuz,.../amdgpu.ko.xz});
DST_TREE gets the same kernel with amdgpu.ko (uncompressed) edited in place. EDIT is one of:
  vm_flags-as-pointer   parameter 4 of gmc_v10_0_get_vm_pte gets parameter 5's type (uint64_t *)
  move-pdev             amdgpu_device.pdev moves from byte 8 to byte 16
The BTF format is include/uapi/linux/btf.h; split BTF continues the base's type ids and strings.
"""
import lzma
import os
import shutil
import struct
import subprocess
import sys

BTF_KIND = {1: 16, 2: 12, 3: 24, 4: None, 5: None, 6: None, 7: 12, 8: 12, 9: 12, 10: 12,
            11: 12, 12: 12, 13: None, 14: 16, 15: None, 16: 12, 17: 16, 18: 12, 19: None}


def elf_section(elf, name):
    """(offset, size) of section `name` in an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
    strtab_off = sh(shstrndx)[4]
    for i in range(shnum):
        h = sh(i)
        end = elf.index(b"\0", strtab_off + h[0])
        if elf[strtab_off + h[0]:end].decode() == name:
            return h[4], h[5]
    sys.exit(f"no section {name}")


def header(btf):
    _magic, _ver, _flags, hdr_len, type_off, type_len, str_off, str_len = \
        struct.unpack_from("<HBBIIIII", btf, 0)
    return hdr_len + type_off, type_len, hdr_len + str_off, str_len


def types(btf):
    """Yields (byte offset of the type, kind, name_off, vlen, size_or_type)."""
    start, length, _, _ = header(btf)
    p = start
    while p < start + length:
        name_off, info, size_type = struct.unpack_from("<III", btf, p)
        kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
        yield p, kind, name_off, vlen, size_type
        fixed = BTF_KIND[kind]
        if fixed is not None:
            p += fixed
        elif kind in (4, 5):
            p += 12 + 12 * vlen
        elif kind == 6:
            p += 12 + 8 * vlen
        elif kind == 13:
            p += 12 + 8 * vlen
        elif kind == 15:
            p += 12 + 12 * vlen
        elif kind == 19:
            p += 12 + 12 * vlen


def main():
    src, kver, dst, edit = sys.argv[1:5]
    mods = os.path.join(src, "usr/lib/modules", kver)
    ko_xz = next(os.path.join(d, f) for d, _, fs in os.walk(mods) for f in fs
                 if f == "amdgpu.ko.xz")
    image = open(os.path.join(mods, "vmlinuz"), "rb").read()
    setup_sects = image[0x1F1] or 4
    off, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + off
    # zstd complains about the size trailer after the frame (exit 1) but writes the frame.
    vmlinux = subprocess.run(["zstd", "-dcq", "--long=31"], input=image[start:start + length],
                             capture_output=True).stdout
    if not vmlinux.startswith(b"\x7fELF"):
        sys.exit("could not decompress the vmlinuz payload (zstd expected)")
    boff, bsize = elf_section(vmlinux, ".BTF")
    base = vmlinux[boff:boff + bsize]
    base_types = sum(1 for _ in types(base))
    _, _, bstr, bstr_len = header(base)

    elf = bytearray(lzma.decompress(open(ko_xz, "rb").read()))
    soff, ssize = elf_section(elf, ".BTF")
    btf = bytearray(elf[soff:soff + ssize])
    _, _, sstr, _ = header(btf)

    def name(o):
        if o < bstr_len:
            s, buf = bstr + o, base
        else:
            s, buf = sstr + o - bstr_len, btf
        return bytes(buf[s:buf.index(b"\0", s)]).decode()

    done = False
    all_types = list(types(btf))
    if edit == "vm_flags-as-pointer":
        for p, kind, name_off, vlen, size_type in all_types:
            if kind == 12 and name(name_off) == "gmc_v10_0_get_vm_pte":
                proto_id = size_type - base_types - 1
                pp = all_types[proto_id][0]
                assert all_types[proto_id][1] == 13 and all_types[proto_id][3] == 5
                t5, = struct.unpack_from("<I", btf, pp + 12 + 8 * 4 + 4)
                struct.pack_into("<I", btf, pp + 12 + 8 * 3 + 4, t5)
                done = True
    elif edit == "move-pdev":
        for p, kind, name_off, vlen, size_type in all_types:
            if kind == 4 and name(name_off) == "amdgpu_device":
                for i in range(vlen):
                    m = p + 12 + 12 * i
                    mname, _mtype, moff = struct.unpack_from("<III", btf, m)
                    if name(mname) == "pdev":
                        assert moff == 64, moff
                        struct.pack_into("<I", btf, m + 8, 128)
                        done = True
    else:
        sys.exit(f"unknown edit {edit}")
    if not done:
        sys.exit(f"{edit}: nothing edited")
    elf[soff:soff + ssize] = btf

    out_mods = os.path.join(dst, "usr/lib/modules", kver)
    rel = os.path.relpath(os.path.dirname(ko_xz), mods)
    os.makedirs(os.path.join(out_mods, rel), exist_ok=True)
    shutil.copy(os.path.join(mods, "vmlinuz"), os.path.join(out_mods, "vmlinuz"))
    open(os.path.join(out_mods, rel, "amdgpu.ko"), "wb").write(elf)


main()
