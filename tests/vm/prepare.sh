#!/usr/bin/env bash
# Everything a VM run needs, built from scratch or taken from the cache: host packages, the
# pinned test kernel, rdna1_mtype.ko and the test harness module built against it, a static
# rdna1ctl, and the initramfs. Prints the kernel build dir on stdout.
# usage: prepare.sh OUT_DIR [FLAVOUR]   (FLAVOUR: base (default), btf or perf)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
flavour=${2:-base}
mkdir -p "$out"
. "$top/tests/kernel/env.sh"

# RDNA1_KBUILD_DIR: use an already built tree as it is (e.g. to rerun a benchmark on it).
if [ -n "${RDNA1_KBUILD_DIR:-}" ]; then
	kb=$RDNA1_KBUILD_DIR
	[ -f "$kb/.rdna1-done" ] || die "RDNA1_KBUILD_DIR=$kb is not a finished kernel build"
	grep -q '^CONFIG_CC_IS_CLANG=y' "$kb/.config" || KMAKE_LLVM=()
else
	kb=$("$top/tests/kernel/build.sh" "$flavour")
fi

log "building rdna1_mtype.ko and the test harness against $(cat "$kb/include/config/kernel.release")"
# CLIPPY=1: the kernel's own Rust lints (undocumented unsafe blocks, ...) apply to the module.
make -s -C "$top/kmod" KDIR="$kb" "${KMAKE_LLVM[@]}" CLIPPY=1 >"$out/kmod-build.log" 2>&1 ||
	{ cat "$out/kmod-build.log" >&2; die "rdna1_mtype.ko did not build"; }
if grep -E 'warning|error' "$out/kmod-build.log" >&2; then die "rdna1_mtype.ko built with warnings"; fi
for m in harness bench; do
	make -s -C "$kb" M="$top/tests/modules/$m" "${KMAKE_LLVM[@]}" modules >"$out/$m-build.log" 2>&1 ||
		{ cat "$out/$m-build.log" >&2; die "tests/modules/$m did not build"; }
done

log "building static rdna1ctl and rdna1-abi-probe for the VM"
# --target keeps crt-static off the proc-macro crates, which must stay dynamic.
(cd "$top" && RUSTFLAGS="-C target-feature=+crt-static" cargo build -q --release --locked \
	-p rdna1ctl -p rdna1-abi-probe --target x86_64-unknown-linux-gnu --target-dir target/vm)

"$here/mkinitramfs.sh" "$kb" "$out/initramfs.cpio"
echo "$kb"
