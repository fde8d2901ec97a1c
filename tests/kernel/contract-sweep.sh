#!/usr/bin/env bash
# Runs `rdna1ctl check-kernel` on Debian's real kernel packages, unpacked as installed, and
# prints one table row per kernel (release, package version, verdict, amdgpu_bo layout, and the
# offsets of ttm_buffer_object.type, amdgpu_vm.is_compute_context and .task_info,
# amdgpu_task_info.tgid and .process_name).
#
#   contract-sweep.sh RDNA1CTL [--table FILE] [KVER...]
#
# Without KVER: every amd64 and rt-amd64 kernel in sid, trixie, trixie-backports and
# bookworm-backports (several GB of downloads; not in make test, which checks two).
# --table FILE writes the rows as a Markdown table (docs/KERNELS.md carries one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
. "$here/debian-kernels.sh"

rdna1ctl=${1:?usage: contract-sweep.sh RDNA1CTL [--table FILE] [KVER...]}
shift
table=
if [ "${1:-}" = --table ]; then
	table=${2:?--table needs a file}
	shift 2
fi

if [ $# -eq 0 ]; then
	mapfile -t kernels < <(dk_list)
else
	kernels=()
	for k in "$@"; do kernels+=("$k"); done
fi

rows=()
for line in "${kernels[@]}"; do
	read -r kver version <<<"$line"
	# One kernel that cannot be fetched is a row saying so, not the end of the sweep.
	if ! tree=$(dk_tree "$kver" "${version:-}" 2>"$RDNA1_CACHE/sweep.err"); then
		why=$(tail -n1 "$RDNA1_CACHE/sweep.err" | sed 's/^error: //')
		echo "error: $why" >&2
		row="| $kver | ${version:-newest} | not checked: $why | | | | | | |"
		echo "$row"
		rows+=("$row")
		continue
	fi
	json=$("$rdna1ctl" --root "$tree" --json check-kernel "$kver" || true)
	row=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
o = d.get("offsets", {})
verdict = "hookable" if d["hookable"] else "refused: " + "; ".join(d["problems"])
cols = [sys.argv[2], sys.argv[3] or "newest", verdict, d.get("bo_layout") or "",
        str(o.get("ttm_buffer_object.type", "")), str(o.get("amdgpu_vm.is_compute_context", "")),
        str(o.get("amdgpu_vm.task_info", "")), str(o.get("amdgpu_task_info.tgid", "")),
        str(o.get("amdgpu_task_info.process_name", ""))]
print("| " + " | ".join(c.replace("|", "/") for c in cols) + " |")
' "$json" "$kver" "${version:-}")
	echo "$row"
	rows+=("$row")
done

if [ -n "$table" ]; then
	{
		echo "| Kernel | Package | check-kernel | amdgpu_bo layout | ttm_buffer_object.type | amdgpu_vm.is_compute_context | amdgpu_vm.task_info | amdgpu_task_info.tgid | amdgpu_task_info.process_name |"
		echo "|---|---|---|---|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
	} >"$table"
fi
