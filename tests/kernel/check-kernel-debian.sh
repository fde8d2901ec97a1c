#!/usr/bin/env bash
# check-kernel on Debian's real kernel packages, as installed (make test's stage):
#  - sid's 7.2.13 is hookable, with the amdgpu_bo layout its BTF gives;
#  - trixie's 6.12 is refused, naming the pre-6.18 signature;
#  - 7.2.13's real amdgpu.ko with its BTF edited by hand (a parameter's type; a member the
#    module's C code reads at a fixed offset, moved) is refused, naming the difference.
#
#   check-kernel-debian.sh RDNA1CTL WORKDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
. "$here/debian-kernels.sh"
rdna1ctl=${1:?usage: check-kernel-debian.sh RDNA1CTL WORKDIR}
work=${2:?usage: check-kernel-debian.sh RDNA1CTL WORKDIR}
rm -rf "$work" && mkdir -p "$work"

fails=0
expect() { # WHAT WANT_EXIT PATTERN ROOT KVER
	local what=$1 want=$2 pattern=$3 root=$4 kver=$5 got=0
	"$rdna1ctl" --root "$root" check-kernel "$kver" >"$work/out" 2>&1 || got=$?
	if [ "$got" != "$want" ] || ! grep -qF -- "$pattern" "$work/out"; then
		echo "FAIL $what: exit $got (want $want), output:"
		sed 's/^/    /' "$work/out"
		echo "    (wanted a line containing: $pattern)"
		fails=$((fails + 1))
	else
		echo "ok   $what: $(grep -F -- "$pattern" "$work/out" | head -n1 | sed 's/^ *//')"
	fi
}

new=$(dk_tree "$DEBIAN_KVER" "$DEBIAN_KVER_VERSION")
old=$(dk_tree "$DEBIAN_OLD_KVER" "$DEBIAN_OLD_KVER_VERSION")

expect "$DEBIAN_KVER hookable" 0 "$DEBIAN_KVER: hookable" "$new" "$DEBIAN_KVER"
expect "$DEBIAN_KVER layout" 0 "bo layout:  size=736 preferred_domains=0 tbo=96 flags=608" \
	"$new" "$DEBIAN_KVER"
expect "$DEBIAN_OLD_KVER refused" 3 \
	"parameter 2 of gmc_v10_0_get_vm_pte is \`struct amdgpu_bo_va_mapping *\`: this is the pre-6.18 signature" \
	"$old" "$DEBIAN_OLD_KVER"

python3 "$here/edit-btf.py" "$new" "$DEBIAN_KVER" "$work/param" vm_flags-as-pointer
expect "edited parameter type refused" 3 \
	"parameter 4 of gmc_v10_0_get_vm_pte (vm_flags) is \`uint64_t *\`" "$work/param" "$DEBIAN_KVER"
python3 "$here/edit-btf.py" "$new" "$DEBIAN_KVER" "$work/pdev" move-pdev
expect "edited fixed offset refused" 3 \
	"amdgpu_device.pdev is at byte 16, the module's code reads it at 8" "$work/pdev" "$DEBIAN_KVER"

[ "$fails" -eq 0 ] || die "$fails check-kernel expectation(s) failed"
