#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes debian/copyright for a staged source tree (packaging/debian-source.sh): the
repository's own files, then one paragraph per vendored crate with the licence its Cargo.toml
declares (an SPDX expression, written with DEP-5's "or"/"and"), then a standalone paragraph for
each licence named, pointing at Debian's common-licenses or at the crates' own licence files.
A crate's licence is read, never assumed: a claim like "vendor/*: MIT or Apache-2.0" was false
for btf-rs (LGPL-2.1-or-later) and others.
usage: debian-copyright.py SOURCE_TREE > SOURCE_TREE/debian/copyright"""
import re
import sys
import tomllib
from pathlib import Path

# Licences whose text Debian ships in /usr/share/common-licenses.
COMMON = {
    "Apache-2.0": "Apache-2.0",
    "GPL-2.0-only": "GPL-2",
    "GPL-2.0-or-later": "GPL-2",
    "LGPL-2.1-only": "LGPL-2.1",
    "LGPL-2.1-or-later": "LGPL-2.1",
    "MPL-2.0": "MPL-2.0",
    "CC0-1.0": "CC0-1.0",
}


def dep5(expr):
    """An SPDX expression in DEP-5's words; "MIT/Apache-2.0" (old Cargo style) is an "or", and
    SPDX's "WITH LLVM-exception" is DEP-5's "with LLVM exception"."""
    expr = expr.replace("/", " OR ")
    expr = re.sub(r"\bWITH\s+(\S+)-exception\b", r"with \1 exception", expr)
    return re.sub(r"\b(OR|AND|WITH)\b", lambda m: m.group(1).lower(), " ".join(expr.split()))


def ids(expr):
    """The licences an expression names (not the exceptions after WITH)."""
    expr = re.sub(r"\bWITH\s+\S+", "", expr.replace("/", " "), flags=re.IGNORECASE)
    return set(re.findall(r"[A-Za-z0-9.+-]+", expr)) - {"OR", "AND", "or", "and"}


def full_text(tree, lic, crates):
    """(where it is from, the text) of licence `lic`: LICENSES/LIC.txt of this tree, else the
    licence file of a vendored crate under it (a file named for it, as LICENSE-ZLIB, or the one
    licence file of a crate under it alone)."""
    ours = tree / "LICENSES" / f"{lic}.txt"
    if ours.is_file():
        return f"The text in LICENSES/{lic}.txt.", ours.read_text()
    key = re.sub(r"[^a-z0-9]", "", lic.lower())
    for crate, licence in crates:
        if lic not in ids(licence):
            continue
        files = [f for f in sorted(crate.iterdir()) if f.is_file()
                 and re.match(r"(LICEN[CS]E|COPYING|UNLICENSE)", f.name, re.IGNORECASE)]
        named = [f for f in files if key in re.sub(r"[^a-z0-9]", "", f.name.lower())]
        # LICENSE-BSD for BSD-2-Clause: the family's name, if no other licence of the crate's
        # shares it.
        family = lic.split("-")[0].lower()
        if not named and sum(i.split("-")[0].lower() == family for i in ids(licence)) == 1:
            named = [f for f in files if re.search(rf"[-_.]{re.escape(family)}(\.|$)", f.name.lower())]
        if not named and ids(licence) == {lic} and len(files) == 1:
            named = files
        if named:
            return f"The text as in vendor/{crate.name}/{named[0].name}.", named[0].read_text(errors="replace")
    sys.exit(f"debian-copyright.py: no text of {lic} in LICENSES/ or in a vendored crate: add LICENSES/{lic}.txt")


def main(tree):
    out = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
        "Upstream-Name: rdna1-mtype",
        "",
        "Files: *",
        "Copyright: rdna1-mtype developers",
        "License: GPL-2.0-only",
        "",
    ]
    named = {"GPL-2.0-only"}
    crates = []
    for crate in sorted((tree / "vendor").iterdir()):
        manifest = crate / "Cargo.toml"
        if not manifest.is_file():
            continue
        package = tomllib.loads(manifest.read_text())["package"]
        licence = package.get("license")
        if not licence:
            sys.exit(f"debian-copyright.py: {manifest} declares no licence (license-file only): add its paragraph by hand")
        named |= ids(licence)
        crates.append((crate, licence))
        authors = ", ".join(package.get("authors", [])) or f"the authors of {package['name']}"
        out += [
            f"Files: vendor/{crate.name}/*",
            f"Copyright: {authors}",
            f"License: {dep5(licence)}",
            f"Comment: Vendored from crates.io ({package['name']} {package['version']}) by",
            f" packaging/source-tree.sh; its own licence files are in vendor/{crate.name}/.",
            "",
        ]
    for lic in sorted(named):
        out.append(f"License: {lic}")
        if lic in COMMON:
            out.append(f" On Debian systems, the full text is in /usr/share/common-licenses/{COMMON[lic]}.")
        else:
            # Debian policy 12.5: a licence not in common-licenses is quoted whole, as the
            # binary packages carry this file but not the vendored crates' own files.
            where, text = full_text(tree, lic, crates)
            out += [f" {l}" if l.strip() else " ." for l in text.strip("\n").splitlines()]
            out.append(f"Comment: {where}")
        out.append("")
    sys.stdout.write("\n".join(out))


main(Path(sys.argv[1]))
