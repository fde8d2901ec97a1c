#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stages a Debian source tree of rdna1-mtype in DIR: the repository's files, debian/ from
# packaging/debian with a changelog at the workspace version, and the crates rdna1ctl builds
# with (cargo vendor), so that the build needs no network. Then, on Debian:
#   cd DIR && dpkg-buildpackage -b -us -uc   (Build-Depends: debhelper, dh-dkms, cargo, rustc)
#   sudo apt install ../rdna1ctl_*.deb ../rdna1-mtype-dkms_*.deb
# A native package (source format 3.0 (native)): its version is the workspace version.
# usage: debian-source.sh DIR   (DIR must not exist or be empty)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
die() { echo "debian-source.sh: $*" >&2; exit 1; }
[ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
mkdir -p "$dir"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)

# The files git knows (committed or not, minus ignored ones): no build output.
(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null --no-recursion -T - -cf -) |
	tar -xf - -C "$dir"
cp -r "$top/packaging/debian" "$dir/debian"
cat >"$dir/debian/changelog" <<EOF
rdna1-mtype ($version) unstable; urgency=medium

  * Version $version, built from the repository (packaging/debian-source.sh).

 -- rdna1-mtype developers <rdna1-mtype@users.noreply.invalid>  $(date -R)
EOF
mkdir -p "$dir/.cargo"
(cd "$top" && cargo vendor -q --locked --versioned-dirs "$dir/vendor") >/dev/null ||
	die "cargo vendor failed: the crates in Cargo.lock could not be fetched"
cat >"$dir/.cargo/config.toml" <<EOF
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"
EOF
echo "$dir"
