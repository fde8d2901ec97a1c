#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stages what makepkg builds the Arch packages from in DIR: PKGBUILD (packaging/arch) with the
# tarball's sha256 and the tarball (source-tarball.sh). Then, on Arch:
#   cd DIR && makepkg -si    (rdna1-mtype-dkms and rdna1ctl; dkms's hooks build the module)
# usage: arch-source.sh DIR   (TARBALL=path: that tarball instead of a new one)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
mkdir -p "$dir"
if [ -n "${TARBALL:-}" ]; then
	cp "$TARBALL" "$dir/"
	tarball=$dir/${TARBALL##*/}
else
	tarball=$("$top/packaging/source-tarball.sh" "$dir")
fi
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
sed "s/^sha256sums=.*/sha256sums=('$sum')/" "$top/packaging/arch/PKGBUILD" >"$dir/PKGBUILD"
echo "$dir"
