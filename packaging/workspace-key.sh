#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A key of what a cargo build of rdna1ctl in a source tree (source-tree.sh) depends on: the
# contents of the workspace's manifests and crates (Cargo.lock fixes the vendored crates). The
# tests' cargo caches are kept per key (tests/kernel/env.sh, cargo_cache).
# usage: workspace-key.sh DIR   prints 16 hex digits
set -euo pipefail
cd "$1"
# .cargo exists in a staged tree only (the vendored crates' config).
paths=()
for p in Cargo.toml Cargo.lock .cargo controller shared tests/abi-probe; do
	[ ! -e "$p" ] || paths+=("$p")
done
find "${paths[@]}" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
