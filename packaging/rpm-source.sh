#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stages an rpmbuild tree in TOPDIR: SPECS/rdna1-mtype.spec and its rpmlintrc (packaging/rpm) and
# SOURCES/rdna1-mtype-VERSION.tar.gz (source-tarball.sh). Then, on Fedora:
#   rpmbuild -bb --define "_topdir TOPDIR" TOPDIR/SPECS/rdna1-mtype.spec
#   sudo dnf install TOPDIR/RPMS/*/rdna1ctl-*.rpm TOPDIR/RPMS/noarch/rdna1-mtype-dkms-*.rpm
# usage: rpm-source.sh TOPDIR   (TARBALL=path: that tarball instead of a new one)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
mkdir -p "$dir/SPECS" "$dir/SOURCES"
if [ -n "${TARBALL:-}" ]; then
	cp "$TARBALL" "$dir/SOURCES/"
else
	"$top/packaging/source-tarball.sh" "$dir/SOURCES" >/dev/null
fi
cp "$top/packaging/rpm/rdna1-mtype.spec" "$top/packaging/rpm/rdna1-mtype.rpmlintrc" "$dir/SPECS/"
echo "$dir"
