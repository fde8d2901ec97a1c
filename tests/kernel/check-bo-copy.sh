#!/usr/bin/env bash
# The module's copies of amdgpu's private structs must be member for member amdgpu's own in the
# pinned source: struct amdgpu_bo (kmod/amdgpu_bo_layout.h, from amdgpu_object.h), struct
# amdgpu_vm up to is_compute_context with the private types it embeds, and struct
# amdgpu_task_info, which amdgpu_vm.task_info points to (kmod/amdgpu_vm_layout.h, from
# amdgpu_vm.h). Compares the member lists with comments, blank lines, u64/uint64_t and the
# renamed identifiers normalised. The VM tests then check the compiled amdgpu_bo offsets
# against offsetof() on amdgpu's real header (cases 30 and 35), and the VM kind read through
# the amdgpu_vm copy on real amdgpu_vm objects (case 30).
# usage: check-bo-copy.sh [KERNEL_SOURCE_DIR]   (default: the pinned source, $KSRC)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/kernel/env.sh"
src=${1:-$KSRC}
hdr=$src/drivers/gpu/drm/amd/amdgpu/amdgpu_object.h
members() { # FILE STRUCT [LAST]: the struct's body (up to member LAST), one normalised member per line
	sed -n "/^struct $2 {/,/^};/p" "$1" | { if [ -n "${3:-}" ]; then sed "/\b$3;/q"; else cat; fi; } | sed -e 's#/\*.*\*/##g' -e '/^\s*\/\?\*/d' -e 's#//.*##' |
		tr -s ' \t' ' ' | sed -e 's/^ //' -e 's/ $//' -e 's/ \([*]*[a-z_]*[\[;]\)/ \1/' | grep -v '^$' |
		sed -e 's/rdna1_amdgpu_bo_7_2/amdgpu_bo/g' -e 's/RDNA1_AMDGPU_BO_MAX_PLACEMENTS/AMDGPU_BO_MAX_PLACEMENTS/g' -e 's/^int8_t /s8 /' \
			-e 's/^uint64_t /u64 /' -e 's/rdna1_\(amdgpu_[a-z_]*\)_7_2/\1/g' -e 's/RDNA1_\([A-Z_]*\)/\1/g' \
			-e 's/^DECLARE_KFIFO(\([a-z_]*\), \([a-z0-9_]*\), \([0-9]*\));$/DECLARE_KFIFO(\1,\2,\3);/' |
		grep -v '^};$\|^struct [a-z0-9_]* {$'
}
ours=$(members "$top/kmod/amdgpu_bo_layout.h" rdna1_amdgpu_bo_7_2)
theirs=$(members "$hdr" amdgpu_bo)
[ -n "$theirs" ] || die "struct amdgpu_bo not found in $hdr"
diff -u <(echo "$theirs") <(echo "$ours") || die "kmod/amdgpu_bo_layout.h differs from $hdr (above)"
want=$(awk '/#define AMDGPU_BO_MAX_PLACEMENTS/{print $3}' "$hdr")
have=$(awk '/#define RDNA1_AMDGPU_BO_MAX_PLACEMENTS/{print $3}' "$top/kmod/amdgpu_bo_layout.h")
[ "$want" = "$have" ] || die "AMDGPU_BO_MAX_PLACEMENTS is $want in $hdr, $have in our copy"
echo "kmod/amdgpu_bo_layout.h: struct amdgpu_bo member for member as in $hdr ($(echo "$theirs" | wc -l) lines)" >&2

# struct amdgpu_vm up to is_compute_context (the member hook.c reads; task_info is before it),
# the private types and constants it embeds, and struct amdgpu_task_info (hook.c reads its tgid
# and process_name: whose VM it is).
vmhdr=$src/drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h
ttmhdr=$src/drivers/gpu/drm/amd/amdgpu/amdgpu_ttm.h
ourvm=$top/kmod/amdgpu_vm_layout.h
for s in amdgpu_mem_stats amdgpu_vm_bo_status amdgpu_vm_bo_base "amdgpu_vm is_compute_context" amdgpu_task_info; do
	set -- $s
	# A struct not found is empty (grep finds no line), said below rather than by set -e.
	ours=$(members "$ourvm" "rdna1_$1_7_2" ${2:-}) || ours=
	theirs=$(members "$vmhdr" "$1" ${2:-}) || theirs=
	[ -n "$theirs" ] || die "struct $1 not found in $vmhdr"
	[ -n "$ours" ] || die "kmod/amdgpu_vm_layout.h has no struct rdna1_$1_7_2 (the copy of $vmhdr's struct $1)"
	diff -u <(echo "$theirs") <(echo "$ours") || die "kmod/amdgpu_vm_layout.h: struct $1 differs from $vmhdr (above)"
done
for c in "AMDGPU_MAX_VMHUBS $vmhdr" "__AMDGPU_PL_NUM $ttmhdr"; do
	set -- $c
	want=$(sed -n "s/^#define $1\s\+//p" "$2" | tr -d ' \t()')
	have=$(sed -n "s/^#define RDNA1_$1\s\+//p" "$ourvm" | tr -d ' \t()')
	[ -n "$want" ] && [ "$want" = "$have" ] || die "$1 is '$want' in $2, '$have' in our copy"
done
echo "kmod/amdgpu_vm_layout.h: struct amdgpu_vm up to is_compute_context and struct amdgpu_task_info member for member as in $vmhdr" >&2
