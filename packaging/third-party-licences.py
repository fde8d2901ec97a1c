#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the licence notices of every crate linked into rdna1ctl: the set
controller/tests/licences.rs checks (`cargo tree -p rdna1ctl`, normal dependencies for x86_64
Linux, not through proc macros, which run in the compiler), each crate found with `cargo
metadata`. For each: its name, version, licence expression and repository, then the text of each
licence file it ships (LICENSE*, LICENCE*, COPYING*, NOTICE*, its Cargo.toml's license-file).
MIT and the like require their copyright notices in every binary distribution: the packages
install this file with rdna1ctl (Arch in /usr/share/licenses/rdna1ctl, Fedora as %license);
Debian's copyright file names the same crates (packaging/debian-copyright.py).
A crate that ships no licence file (Microsoft's tracepoint_decode and eventheader_types) gets
the copyright lines at the head of its lib.rs and the texts in LICENSES/ of the licences its
Cargo.toml names; one with neither fails the run, naming it: its notice would be missing.
usage: third-party-licences.py SOURCE_TREE > THIRD-PARTY-LICENSES   (cargo runs offline in it)"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = "rdna1ctl"
TARGET = "x86_64-unknown-linux-gnu"
LICENCE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|UNLICENSE|COPYRIGHT)([-._].*)?$", re.IGNORECASE)


def cargo(tree, *args):
    return subprocess.run(["cargo", *args, "--locked", "--offline"], cwd=tree, check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def linked(tree):
    """(name, version) of each crate rdna1ctl links, itself and the workspace's included."""
    out = cargo(tree, "tree", "-p", ROOT, "--target", TARGET, "-e", "normal,no-proc-macro",
                "--prefix", "none", "-f", "{p}")
    # "name v1.2.3", "name v1.2.3 (/path)" for the workspace's, " (*)" when listed above.
    return {tuple(l.split()[:2]) for l in out.splitlines() if l.strip()}


def licence_files(package):
    folder = Path(package["manifest_path"]).parent
    files = sorted(f for f in folder.iterdir() if f.is_file() and LICENCE_FILE.match(f.name))
    if package.get("license_file"):
        extra = folder / package["license_file"]
        if extra.is_file() and extra not in files:
            files.append(extra)
    return files


def fallback(package, tree):
    """For a crate without licence files: its lib.rs's copyright lines and LICENSES/ texts."""
    lib = Path(package["manifest_path"]).parent / "src" / "lib.rs"
    head = lib.read_text(errors="replace").splitlines()[:20] if lib.is_file() else []
    notice = [l.lstrip("/! ").rstrip() for l in head if "copyright" in l.lower()]
    ids = sorted(set(re.findall(r"[A-Za-z0-9.+-]+", package.get("license") or "")) - {"OR", "AND", "WITH"})
    texts = [tree / "LICENSES" / f"{i}.txt" for i in ids]
    if not notice or not texts or not all(t.is_file() for t in texts):
        return None
    out = ["-" * 78, f"{lib.relative_to(lib.parents[1])} (the crate ships no licence file):", ""] + notice + [""]
    for t in texts:
        out += ["-" * 78, f"{t.name}:", "", t.read_text().rstrip(), ""]
    return out


def main(tree):
    meta = json.loads(cargo(tree, "metadata", "--format-version", "1", "--filter-platform", TARGET))
    want = linked(tree)
    # Workspace members (no source) are this project's own: COPYING.
    third = sorted((p for p in meta["packages"]
                    if (p["name"], "v" + p["version"]) in want and p["source"] is not None),
                   key=lambda p: (p["name"], p["version"]))
    found = {(p["name"], "v" + p["version"]) for p in meta["packages"]}
    if want - found:
        sys.exit(f"third-party-licences.py: cargo metadata does not know {sorted(want - found)}")
    out = [
        f"Crates linked into {ROOT} and their licences ({len(third)} crates; {ROOT} itself:",
        "GPL-2.0-only, /usr/share/licenses or /usr/share/common-licenses). Written by",
        "packaging/third-party-licences.py from each crate's own files.",
        "",
    ]
    missing = []
    first = {}
    for p in third:
        files = licence_files(p)
        texts = []
        for f in files:
            text = f.read_text(errors="replace").rstrip()
            # An identical text (Apache-2.0's, mostly) once: its copyright lines are the same.
            if text in first:
                texts += ["-" * 78, f"{f.name}: the same text as {first[text]} above", ""]
                continue
            first[text] = f"{p['name']} {p['version']}'s {f.name}"
            texts += ["-" * 78, f"{f.name}:", "", text, ""]
        if not files:
            texts = fallback(p, tree)
            if texts is None:
                missing.append(f"{p['name']} {p['version']}")
                continue
        out += ["=" * 78, f"{p['name']} {p['version']}: {p.get('license') or 'see below'}"]
        if p.get("repository"):
            out.append(p["repository"])
        out += texts
    if missing:
        sys.exit("third-party-licences.py: these crates ship no licence file, so their notice "
                 f"cannot be passed on: {', '.join(missing)}; add their texts by hand")
    sys.stdout.write("\n".join(out) + "\n")


main(Path(sys.argv[1]))
