#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The source tree every package of rdna1-mtype is built from, staged in DIR: the files git
# knows (committed or not, minus ignored ones: no build output) and the crates rdna1ctl is
# built with (cargo vendor, with the .cargo/config.toml that makes cargo use them), so that a
# package build needs no network. Every file carries the last commit's time (SOURCE_DATE_EPOCH
# overrides), as reproducible release tarballs do: two trees of the same sources are the same,
# whenever they were checked out. debian-source.sh, source-tarball.sh (Arch, RPM) build on it.
# usage: source-tree.sh DIR   (DIR must not exist or be empty)
# workspace-key.sh DIR names what a cargo build of such a tree depends on.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
die() { echo "source-tree.sh: $*" >&2; exit 1; }
[ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
mkdir -p "$dir"
(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null --no-recursion -T - -cf -) |
	tar -xf - -C "$dir"
mkdir -p "$dir/.cargo"
(cd "$top" && cargo vendor -q --locked --versioned-dirs "$dir/vendor") >/dev/null ||
	die "cargo vendor failed: the crates in Cargo.lock could not be fetched"
cat >"$dir/.cargo/config.toml" <<EOT
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"
EOT
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct)}
find "$dir" -exec touch -h -d "@$epoch" {} +
