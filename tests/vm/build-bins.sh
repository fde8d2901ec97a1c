#!/usr/bin/env bash
# The userspace binaries the VM runs, static (the initramfs has no libc): rdna1ctl and
# rdna1-abi-probe, in target/vm/x86_64-unknown-linux-gnu/release/. Needs no kernel, so
# make test builds them beside the kernel.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/kernel/env.sh"
log "building static rdna1ctl and rdna1-abi-probe for the VM"
# --target keeps crt-static off the proc-macro crates, which must stay dynamic. Built in the
# cache (env.sh), then copied into the tree, where rdna1ctl finds the tree's dist/ (report).
cd "$top"
# Profile vmtest (Cargo.toml): release without LTO.
RUSTFLAGS="-C target-feature=+crt-static" cargo build -q --profile vmtest --locked \
	-p rdna1ctl -p rdna1-abi-probe --target x86_64-unknown-linux-gnu --target-dir "$RDNA1_CARGO_TARGET/vm"
for b in rdna1ctl rdna1-abi-probe; do
	install -D -m 755 "$RDNA1_CARGO_TARGET/vm/x86_64-unknown-linux-gnu/vmtest/$b" \
		"$top/target/vm/x86_64-unknown-linux-gnu/release/$b"
done
