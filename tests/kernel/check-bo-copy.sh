#!/usr/bin/env bash
# The module's copy of struct amdgpu_bo (kmod/amdgpu_bo_layout.h) must be member for member
# amdgpu's own (amdgpu_object.h) in the pinned source: compares the two member lists with
# comments, blank lines and the renamed identifiers normalised. The VM tests then check the
# compiled offsets against offsetof() on amdgpu's real header (cases 30 and 35).
# usage: check-bo-copy.sh [KERNEL_SOURCE_DIR]   (default: the pinned source, $KSRC)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/kernel/env.sh"
src=${1:-$KSRC}
hdr=$src/drivers/gpu/drm/amd/amdgpu/amdgpu_object.h
members() { # FILE STRUCT: the struct's body, one normalised member or #directive per line
	sed -n "/^struct $2 {/,/^};/p" "$1" | sed -e 's#/\*.*\*/##g' -e '/^\s*\/\?\*/d' -e 's#//.*##' |
		tr -s ' \t' ' ' | sed -e 's/^ //' -e 's/ $//' -e 's/ \([*]*[a-z_]*[\[;]\)/ \1/' | grep -v '^$' |
		sed -e 's/rdna1_amdgpu_bo_7_2/amdgpu_bo/g' -e 's/RDNA1_AMDGPU_BO_MAX_PLACEMENTS/AMDGPU_BO_MAX_PLACEMENTS/g' -e 's/^int8_t /s8 /'
}
ours=$(members "$top/kmod/amdgpu_bo_layout.h" rdna1_amdgpu_bo_7_2)
theirs=$(members "$hdr" amdgpu_bo)
[ -n "$theirs" ] || die "struct amdgpu_bo not found in $hdr"
diff -u <(echo "$theirs") <(echo "$ours") || die "kmod/amdgpu_bo_layout.h differs from $hdr (above)"
want=$(awk '/#define AMDGPU_BO_MAX_PLACEMENTS/{print $3}' "$hdr")
have=$(awk '/#define RDNA1_AMDGPU_BO_MAX_PLACEMENTS/{print $3}' "$top/kmod/amdgpu_bo_layout.h")
[ "$want" = "$have" ] || die "AMDGPU_BO_MAX_PLACEMENTS is $want in $hdr, $have in our copy"
echo "kmod/amdgpu_bo_layout.h: struct amdgpu_bo member for member as in $hdr ($(echo "$theirs" | wc -l) lines)" >&2
