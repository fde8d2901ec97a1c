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
    """An SPDX expression in DEP-5's words; "MIT/Apache-2.0" (old Cargo style) is an "or"."""
    expr = expr.replace("/", " OR ")
    return re.sub(r"\b(OR|AND|WITH)\b", lambda m: m.group(1).lower(), " ".join(expr.split()))


def ids(expr):
    """The licences an expression names (not the exceptions after WITH)."""
    expr = re.sub(r"\bWITH\s+\S+", "", expr.replace("/", " "), flags=re.IGNORECASE)
    return set(re.findall(r"[A-Za-z0-9.+-]+", expr)) - {"OR", "AND", "or", "and"}


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
    for crate in sorted((tree / "vendor").iterdir()):
        manifest = crate / "Cargo.toml"
        if not manifest.is_file():
            continue
        package = tomllib.loads(manifest.read_text())["package"]
        licence = package.get("license")
        if not licence:
            sys.exit(f"debian-copyright.py: {manifest} declares no licence (license-file only): add its paragraph by hand")
        named |= ids(licence)
        authors = ", ".join(package.get("authors", [])) or f"the authors of {package['name']}"
        out += [
            f"Files: vendor/{crate.name}/*",
            f"Copyright: {authors}",
            f"License: {dep5(licence)}",
            f" Vendored from crates.io ({package['name']} {package['version']}) by packaging/source-tree.sh;",
            f" its own licence files are in vendor/{crate.name}/.",
            "",
        ]
    for lic in sorted(named):
        out.append(f"License: {lic}")
        if lic in COMMON:
            out.append(f" On Debian systems, the full text is in /usr/share/common-licenses/{COMMON[lic]}.")
        else:
            out.append(" The full text is in the licence file of each crate above that is under it.")
        out.append("")
    sys.stdout.write("\n".join(out))


main(Path(sys.argv[1]))
