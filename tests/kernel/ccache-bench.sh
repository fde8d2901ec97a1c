#!/usr/bin/env bash
# What ccache costs a cold kernel build (every object a miss), side by side in one run:
# kernel objects of the built test kernel compiled with their own kbuild commands by clang
# alone, through ccache in its default mode (on a miss it runs the preprocessor to hash the
# output, then compiles) and in depend mode (it compiles once and hashes the files in the
# compiler's dependency list; env.sh sets CCACHE_DEPEND=1). Each mode starts from an empty
# cache; the modes take turns, ROUNDS times. Prints the CPU seconds (user + system) per mode.
# usage: ccache-bench.sh [ROUNDS [OBJECT...]]   (objects relative to the kernel build dir)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
rounds=${1:-3}
shift || true
kb=$(kbuild_dir base)
[ -f "$kb/.rdna1-done" ] || die "no built test kernel in $kb: run tests/kernel/build.sh first"
objs=("$@")
[ ${#objs[@]} -gt 0 ] || objs=(drivers/gpu/drm/amd/amdgpu/gmc_v10_0.o drivers/gpu/drm/amd/amdgpu/amdgpu_vm.o
	drivers/gpu/drm/amd/amdgpu/../pm/swsmu/smu11/navi10_ppt.o drivers/acpi/acpica/dsutils.o kernel/sched/core.o
	arch/x86/kernel/setup.o mm/memory.o fs/proc/base.o)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$kb"
# The compile command of each object, as kbuild saved it (without the objtool step after it).
for o in "${objs[@]}"; do
	cmdf=$(dirname "$o")/.$(basename "$o").cmd
	[ -f "$cmdf" ] || die "$kb/$cmdf is missing: not an object of this build"
	c=$(sed -n "s|^savedcmd_$o := ||p" "$cmdf")
	c=${c%%; *}
	[[ $c == "ccache clang-$LLVM_VERSION "* ]] || die "$o was not compiled by ccache clang-$LLVM_VERSION: $c"
	echo "${c/ -o $o / -o $tmp/out.o }"
done >"$tmp/cmds"
# run MODE: compiles every object once in MODE, prints its CPU seconds.
run() {
	local dir
	dir=$(mktemp -d "$tmp/cache.XXXXXX")
	case $1 in
	clang) sed 's/^ccache //' "$tmp/cmds" >"$tmp/run.sh" ;;
	default) sed 's/^/env -u CCACHE_DEPEND CCACHE_NODEPEND=1 /' "$tmp/cmds" >"$tmp/run.sh" ;;
	depend) sed 's/^/env CCACHE_DEPEND=1 /' "$tmp/cmds" >"$tmp/run.sh" ;;
	esac
	CCACHE_DIR=$dir /usr/bin/time -f '%U %S' -o "$tmp/time" sh -e "$tmp/run.sh" >/dev/null 2>&1 || return 1
	awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/time"
	rm -rf "$dir"
}
declare -A sum
for ((r = 1; r <= rounds; r++)); do
	for m in clang default depend; do
		s=$(run $m) || die "compiling in mode $m failed"
		sum[$m]=$(awk -v a="${sum[$m]:-0}" -v b="$s" 'BEGIN { print a + b }')
	done
done
echo "ccache on a cold kernel build: ${#objs[@]} objects, $rounds rounds, CPU seconds per round"
for m in clang default depend; do
	echo "$m ${sum[$m]}" | awk -v r="$rounds" -v base="${sum[clang]}" \
		'{ printf "  %-8s %7.2f s  %+5.0f%%\n", $1, $2 / r, ($2 / base - 1) * 100 }'
done
