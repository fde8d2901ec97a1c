#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The packaging files' own promises, checked without building a package (run.sh builds them):
#   - dkms.conf: no CLEAN but "true" (dkms 3.1.8 and later warn on any other on every build;
#     "true" is the form dkms keeps for older ones), and BUILD_EXCLUSIVE_ARCH lets x86_64 only,
#     matched as dkms matches it (bash's =~ against the architecture);
#   - packaging/debian-source.sh: the changelog's date is SOURCE_DATE_EPOCH's, or without it the
#     last commit's, not the time of the run (a reproducible package);
#   - debian/copyright: one paragraph per vendored crate, with the licence its Cargo.toml says;
#     each licence named quoted whole, unless Debian's common-licenses has it;
#   - packaging/debian/control: rdna1ctl, which ships battery.py, recommends (or depends on)
#     python3; rdna1-mtype-dkms's description says it needs the exact rustc of the kernel;
#   - packaging/debian/rules: dh_installsystemd --no-start;
#   - packaging/debian/rdna1-mtype-dkms.postrm: purge removes /var/cache/rdna1-mtype (the Rust
#     metadata rebuilt per kernel), remove and upgrade do not;
#   - packaging/rpm/rdna1-mtype.spec: debuginfo not disabled; the systemd scriptlets and
#     systemd-rpm-macros; a %check.
# usage: static.sh [TOP]   (TOP: a checkout, default this one; a clone of an older commit
# shows what these checks catch there)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "${1:-$here/../..}" && pwd)
fails=0
fail() { echo "packaging static: FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { echo "packaging static: ok: $*" >&2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# dkms.conf, read as dkms reads it (bash, then its variables).
(
	set +eu
	kernel_source_dir=/lib/modules/0/build kernelver=0
	. "$top/dkms.conf"
	case ${CLEAN-unset} in
	unset | true | /bin/true | /usr/bin/true) ;;
	*) echo "CLEAN=\"$CLEAN\": deprecated since dkms 3.1.8 (a warning on every build): remove it or set CLEAN=\"true\""; exit 1 ;;
	esac
	[ -n "${BUILD_EXCLUSIVE_ARCH:-}" ] || { echo "no BUILD_EXCLUSIVE_ARCH: dkms would build for any architecture"; exit 1; }
	[[ x86_64 =~ $BUILD_EXCLUSIVE_ARCH ]] || { echo "BUILD_EXCLUSIVE_ARCH=$BUILD_EXCLUSIVE_ARCH excludes x86_64"; exit 1; }
	for a in aarch64 i686 i386 riscv64 ppc64le x86_64_v2; do
		if [[ $a =~ $BUILD_EXCLUSIVE_ARCH ]]; then echo "BUILD_EXCLUSIVE_ARCH=$BUILD_EXCLUSIVE_ARCH lets $a"; exit 1; fi
	done
) >"$work/dkms.out" 2>&1 && pass "dkms.conf: CLEAN, BUILD_EXCLUSIVE_ARCH" || fail "dkms.conf: $(cat "$work/dkms.out")"

# The Debian changelog's date.
changelog_date() { # [SOURCE_DATE_EPOCH]: the date of the changelog debian-source.sh writes
	rm -rf "$work/deb"
	if [ -n "${1:-}" ]; then
		SOURCE_DATE_EPOCH=$1 "$top/packaging/debian-source.sh" "$work/deb" >/dev/null
	else
		env -u SOURCE_DATE_EPOCH "$top/packaging/debian-source.sh" "$work/deb" >/dev/null
	fi
	sed -n 's/^ -- .*>  //p' "$work/deb/debian/changelog"
}
got=$(changelog_date 1)
want="Thu, 01 Jan 1970 00:00:01 +0000"
[ "$got" = "$want" ] && pass "debian changelog: SOURCE_DATE_EPOCH=1 gives $got" ||
	fail "debian changelog with SOURCE_DATE_EPOCH=1 is dated \"$got\", not \"$want\" (not reproducible)"
got=$(changelog_date)
want=$(LC_ALL=C date -u -R -d "@$(git -C "$top" log -1 --format=%ct)")
[ "$got" = "$want" ] && pass "debian changelog: the last commit's date, $got" ||
	fail "debian changelog without SOURCE_DATE_EPOCH is dated \"$got\", not the last commit's \"$want\""

# debian/copyright (packaging/debian-copyright.py, from the tree debian-source.sh just staged):
# every vendored crate has a paragraph of its own, naming the licences its Cargo.toml declares.
# The copyright before said "vendor/*: MIT or Apache-2.0" for all, false for btf-rs and others.
if python3 - "$work/deb" >"$work/copyright.out" 2>&1 <<'PY'; then
import re, sys, tomllib
from pathlib import Path
tree = Path(sys.argv[1])
text = (tree / "debian/copyright").read_text()
paras = {}
bad_files = {}
for p in text.split("\n\n"):
    f = re.search(r"^Files: vendor/([^/\s]+)/\*$", p, re.M)
    l = re.search(r"^License: (.+)$", p, re.M)
    if f and l:
        paras[f.group(1)] = l.group(1)
        # DEP-5: lines under a Files paragraph's License field are that licence's text, and
        # then its standalone paragraph goes unused (lintian: unused-license-paragraph).
        body = re.search(r"^License: .+\n((?: .*\n?)+)", p + "\n", re.M)
        if body:
            bad_files.setdefault("text", f"{f.group(1)}: text under its License field ({body.group(1).strip()[:60]!r}): a Comment field holds notes")
        # DEP-5's form of an exception: "with <word> exception".
        if re.search(r"\bwith\s+\S+-exception\b", l.group(1)):
            bad_files.setdefault("exception", f"{f.group(1)}: {l.group(1)!r}: an exception is written 'with NAME exception'")
def names(e):
    e = re.sub(r"\bWITH\s+\S+(\s+exception\b)?", "", e.replace("/", " "), flags=re.I)
    return set(re.findall(r"[A-Za-z0-9.+-]+", e)) - {"OR", "AND", "or", "and"}
bad = list(bad_files.values())
crates = [c for c in sorted((tree / "vendor").iterdir()) if (c / "Cargo.toml").is_file()]
for c in crates:
    want = tomllib.loads((c / "Cargo.toml").read_text())["package"].get("license", "")
    got = paras.get(c.name)
    if got is None:
        bad.append(f"{c.name}: no paragraph of its own (its Cargo.toml: {want})")
    elif names(got) != names(want):
        bad.append(f"{c.name}: says {got}, its Cargo.toml {want}")
# Every licence named, in a standalone paragraph: Debian's common-licenses by name, any other
# quoted whole (the binary packages carry this file, not the crates' own licence files).
COMMON = {"Apache-2.0", "GPL-2.0-only", "GPL-2.0-or-later", "LGPL-2.1-only", "LGPL-2.1-or-later", "MPL-2.0", "CC0-1.0"}
standalone = {}
for p in text.split("\n\n"):
    lines = p.strip("\n").splitlines()
    # A standalone paragraph: "License: NAME", its text on the continuation lines after it.
    if lines and re.fullmatch(r"License: \S+", lines[0]):
        body = []
        for l in lines[1:]:
            if not l.startswith(" "):
                break
            body.append(l)
        standalone[lines[0].split()[1]] = "\n".join(body) + "\n"
named = set().union(*(names(v) for v in paras.values())) if paras else set()
for lic in sorted(named):
    body = standalone.get(lic)
    if body is None:
        bad.append(f"{lic}: no standalone License paragraph")
    elif lic in COMMON:
        if "/usr/share/common-licenses/" not in body:
            bad.append(f"{lic}: does not point at common-licenses")
    elif body.count("\n") < 5:
        bad.append(f"{lic}: not quoted whole ({body.strip()[:80]!r})")
if "MIT" in standalone and "Permission is hereby granted" not in standalone["MIT"]:
    bad.append("MIT: its paragraph does not hold MIT's text")
if bad:
    print("; ".join(bad[:8]) + (f"; and {len(bad) - 8} more" if len(bad) > 8 else ""))
    sys.exit(1)
print(f"{len(crates)} vendored crates, each with its own licence; {len(named)} licences, each quoted or in common-licenses")
PY
	pass "debian copyright: $(cat "$work/copyright.out")"
else
	fail "debian copyright: $(cat "$work/copyright.out")"
fi

# debian/control: one paragraph per package.
para() { awk -v p="Package: $1" '$0 == p {on = 1} on && /^$/ {exit} on' "$top/packaging/debian/control"; }
ctl=$(para rdna1ctl)
grep -q '^usr/share/rdna1-mtype/battery.py$' "$top/packaging/debian/rdna1ctl.install" ||
	fail "rdna1ctl.install does not ship battery.py: this check must follow it"
if echo "$ctl" | grep -Eq '^(Recommends|Depends):.*\bpython3\b'; then pass "debian: rdna1ctl recommends python3"; else fail "debian: rdna1ctl ships battery.py but neither recommends nor depends on python3"; fi
if para rdna1-mtype-dkms | grep -q 'exact rustc that built the kernel'; then pass "debian: rdna1-mtype-dkms's description names the exact rustc"; else fail "debian: rdna1-mtype-dkms's description does not say it needs the exact rustc that built the kernel"; fi

# debian/rules: the unit enabled but not started by apt, as make install leaves it (the
# DKMS build may still be running, and the policy is applied at boot): docs/INSTALL.md.
if grep -Eq '^[[:space:]]+dh_installsystemd .*--no-start' "$top/packaging/debian/rules"; then
	pass "debian: dh_installsystemd --no-start"
else fail "debian: dh_installsystemd starts rdna1-mtype.service during apt install (no --no-start)"; fi

# postrm, with an rm that only says what it was asked.
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "rm $*" >>"%s/rm.log"\n' "$work" >"$work/bin/rm"
chmod +x "$work/bin/rm"
postrm() { : >"$work/rm.log"; PATH="$work/bin:$PATH" sh "$top/packaging/debian/rdna1-mtype-dkms.postrm" "$@" && cat "$work/rm.log"; }
[ "$(postrm purge)" = "rm -rf /var/cache/rdna1-mtype" ] && pass "postrm purge removes /var/cache/rdna1-mtype" ||
	fail "postrm purge does not remove /var/cache/rdna1-mtype (ran: $(postrm purge))"
for a in remove upgrade failed-upgrade abort-install abort-upgrade disappear; do
	[ -z "$(postrm "$a" 0.1.0)" ] || fail "postrm $a removes something: $(postrm "$a" 0.1.0)"
done
pass "postrm remove/upgrade/abort-*/disappear remove nothing"

# The spec: what rpmbuild cannot be asked about on Debian (it builds with --nodeps).
spec=$top/packaging/rpm/rdna1-mtype.spec
if grep -Eq '^%(global|define)[[:space:]]+debug_package[[:space:]]+%\{nil\}' "$spec"; then
	fail "the spec disables debuginfo (debug_package %{nil})"
else pass "spec: debuginfo not disabled"; fi
grep -q '^BuildRequires:[[:space:]]*systemd-rpm-macros$' "$spec" && pass "spec: BuildRequires systemd-rpm-macros" ||
	fail "the spec has no BuildRequires: systemd-rpm-macros"
for m in systemd_post systemd_preun systemd_postun; do
	grep -Eq "^%${m}(_with_restart)? rdna1-mtype\.service$" "$spec" || fail "the spec has no %$m rdna1-mtype.service"
done
grep -q '^%check$' "$spec" && pass "spec: %check" || fail "the spec has no %check"

[ $fails = 0 ] || { echo "packaging static: $fails check(s) failed" >&2; exit 1; }
echo "packaging static: all checks pass" >&2
