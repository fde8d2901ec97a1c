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
. "$top/tests/kernel/env.sh"
buildable_paths "$top" "$RDNA1_CACHE"
mkdir -p "$out"

# RDNA1_KBUILD_DIR: use an already built tree as it is (e.g. to rerun a benchmark on it).
if [ -n "${RDNA1_KBUILD_DIR:-}" ]; then
	kb=$RDNA1_KBUILD_DIR
	[ -f "$kb/.rdna1-done" ] || die "RDNA1_KBUILD_DIR=$kb is not a finished kernel build"
else
	kb=$("$top/tests/kernel/build.sh" "$flavour")
fi

"$here/build-modules.sh" "$kb" "$out"
"$here/build-bins.sh"
"$here/mkinitramfs.sh" "$kb" "$out/initramfs.cpio"
echo "$kb"
