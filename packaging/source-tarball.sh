#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The release tarball the Arch and RPM packages are built from: OUT/rdna1-mtype-VERSION.tar.gz,
# the source tree (source-tree.sh: the repository's files and the vendored crates) under
# rdna1-mtype-VERSION/. Prints its path.
# usage: source-tarball.sh OUT
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$1
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$top/packaging/source-tree.sh" "$work/rdna1-mtype-$version"
mkdir -p "$out"
tar -C "$work" --owner=0 --group=0 --sort=name -czf "$out/rdna1-mtype-$version.tar.gz" "rdna1-mtype-$version"
echo "$out/rdna1-mtype-$version.tar.gz"
