#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stages a Debian source tree of rdna1-mtype in DIR: the source tree (source-tree.sh: the
# repository's files and the vendored crates, so that the build needs no network) and debian/
# from packaging/debian with a changelog at the workspace version. Then, on Debian:
#   cd DIR && dpkg-buildpackage -b -us -uc   (Build-Depends: debhelper, dh-dkms, cargo, rustc)
#   sudo apt install ../rdna1ctl_*.deb ../rdna1-mtype-dkms_*.deb
# A native package (source format 3.0 (native)): its version is the workspace version.
# usage: debian-source.sh DIR   (DIR must not exist or be empty)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
"$top/packaging/source-tree.sh" "$dir"
cp -r "$top/packaging/debian" "$dir/debian"
# debian/copyright, of what the tree holds: the vendored crates' own licences, read from them
# (packaging/debian has no copyright of its own: it would go stale with Cargo.lock).
python3 "$top/packaging/debian-copyright.py" "$dir" >"$dir/debian/copyright"
# The changelog's date, the package's timestamp (dpkg sets SOURCE_DATE_EPOCH from it): the
# last commit's time, as source-tree.sh gives the files (SOURCE_DATE_EPOCH overrides; outside a
# git checkout, a fixed one), so the same sources give the same package whenever it is built.
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || true)}
case $epoch in "" | *[!0-9]*) epoch=1 ;; esac
date=$(LC_ALL=C date -u -R -d "@$epoch")
cat >"$dir/debian/changelog" <<EOF
rdna1-mtype ($version) unstable; urgency=medium

  * Version $version, built from the repository (packaging/debian-source.sh).

 -- rdna1-mtype developers <rdna1-mtype@users.noreply.invalid>  $date
EOF
echo "$dir"
