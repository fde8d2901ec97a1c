#!/usr/bin/env bash
# The main job (README): builds everything, boots the test VM, loads amdgpu and rdna1_mtype,
# shows `rdna1ctl status` and what the real gmc_v10_0_get_vm_pte writes with and without it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/demo
kb=$("$top/tests/vm/prepare.sh" "$out")
"$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" demo "$out/vm-demo.log" 1800 || {
	echo "demo VM failed; serial log: $out/vm-demo.log" >&2
	exit 1
}
sed -n '/^RDNA1-VM: job/,/^RDNA1-VM-DONE/p' "$out/vm-demo.log"
