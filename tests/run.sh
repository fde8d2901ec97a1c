#!/usr/bin/env bash
# The test command (README, .ci/run): every check, from a fresh machine if need be, with both
# host CPUs busy. After the host set-up, independent lanes run side by side:
#   kernel  the pinned test kernel (cached in ~/.cache/rdna1-mtype), then the modules against it;
#   bins    the static rdna1ctl and rdna1-abi-probe the VM runs;
#   checks  four sub-lanes: cargo fmt, clippy -D warnings, cargo test; (in the sid tools
#           root) the rustc floor, the in-process check's own tests, then with the static
#           rdna1ctl the layer battery and the in-process check on a CPU PyTorch, doctor's
#           reader on Debian's ROCm libraries;
#           the Arch and RPM packages; kernel rustfmt, the amdgpu struct copy
#           check, checkpatch, then (with the static rdna1ctl) the field kit on fixtures, its
#           user lookups with an NSS module named (no load), and check-kernel on Debian's
#           real kernel packages;
#   tools   the sid tools root those checks borrow (tests/sid-tools), made once;
#   debian  Debian's real kernels, 7.2 (sid) and 7.3 (trixie-backports): our Debian packages
#           built once, then installed with apt in each release's root (DKMS builds the
#           module with the rustc that built that kernel), then its vmlinuz booted with its
#           own amdgpu;
#   vm      once kernel and bins are done: the install tests, then the test kernel's VM boots
#           (1cpu and 2cpu: the real amdgpu.ko, rdna1_mtype.ko, the real
#           gmc_v10_0_get_vm_pte), then case 30's tables compared with each Debian boot's.
# Last, what the run left outside the clone, its cache and temporary directories
# (tests/leftovers.sh, against a list made after the host set-up): anything fails the run.
# Until what the first VM boot needs is built (cold: the kernel, the modules and the static
# binaries; warm: the static binaries), the other lanes' builds run niced: those builds keep
# the CPUs they can use. A VM boot holds one
# of two CPU slots (tests/vm/boot.sh), so at most two run at once.
# Every stage and every VM case is one result; the last line is "N passed, N failed, N skipped"
# (also when a stage fails or a boot times out), after the stages with their start and
# duration and the slowest VM cases, each named with its boot. A stage's output is in
# build/test/log/STAGE.log; a failed stage prints its last lines, and the stages that needed it
# are reported as not run (the other lanes go on, so one failure does not hide another).
# Time: the run keeps to RDNA1_TIME_BUDGET seconds (default 5,100: CI stops a run at 5,400).
# Each VM boot's limit is the time left when it gets its CPU slot, so a slower host gets the
# time there is instead of a figure tuned to one machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/kernel/env.sh"
# A clone or cache kbuild cannot build in is refused now, not after the long steps.
buildable_paths "$top" "$RDNA1_CACHE"
out=$top/build/test
# A run cut off (CI's kill) may leave the Debian stage's overlay and proc mounted below $out:
# unmount them before removing the tree, which must not reach into them.
findmnt -rn -o TARGET | { grep "^$out/" || true; } | sort -r | xargs -r -n1 umount -l
rm -rf --one-file-system "$out"
logs=$out/log
mkdir -p "$out" "$logs" "$out/slots"
t0=$(date +%s)
deadline=$((t0 + ${RDNA1_TIME_BUDGET:-5100}))
results=$out/results
: >"$out/cpu"
: >"$results"
# One lock file per host CPU: a VM boot runs while it holds one (tests/vm/boot.sh).
for ((i = 0; i < $(nproc); i++)); do : >"$out/slots/slot.$i"; done
export RDNA1_VM_SLOTS=$out/slots
# The boots end 60 s before the budget: the comparison and the summary come after them.
export RDNA1_DEADLINE=$((deadline - 60))
# The other lanes' work runs niced until what the first VM boot needs is built (env.sh, niced):
# on a cold machine the test kernel, the modules and the static binaries, with the kernel
# cached the static binaries (the VM boots hold the
# CPUs for most of a warm run, so they should start as early as they can). VM boots are never
# niced (a starved TCG guest misjudges time).
export RDNA1_NICE_UNTIL=$out/vm-inputs-built
# The checks lane (clippy, cargo test, packaging, ...) is off the critical path: it stays
# niced until Debian's boots are ready too (tests/debian/run.sh touches RDNA1_DEBIAN_READY
# before each boots), so that Debian's package and DKMS builds, which its boot waits for, get the CPU
# beside the test kernel's boots, and until those boots have ended (vm-boots-done): the boots
# hold the CPUs for most of a run and should not share them with compilers at equal priority;
# the checks take the CPU time they leave, and both CPUs once they have ended. Cold too: there,
# at equal priority after the kernel build, the checks lane's packaging (710 s) and the boots
# slowed each other (a one-CPU boot took 1,131 s against 668 s warm; docs/MEASUREMENTS.md,
# session 13).

# stage NAME CMD...: runs one stage, its output in $logs/NAME.log, and records
# "ok|not ok NAME SECONDS +START". A lane (a subshell) calls its stages one after the other;
# after one failed, the lane's later stages are recorded as "not-run" and not started.
lane_failed=""
stage() {
	local name=$1 s rc=0
	shift
	if [ -n "$lane_failed" ]; then
		echo "not-run $name - +$(($(date +%s) - t0))" >>"$results"
		return 1
	fi
	log "$name: started"
	s=$(date +%s)
	# In a subshell that reports, as it ends, the CPU time it and what it ran used.
	(
		"$@"
		r=$?
		times >"$logs/$name.cpu"
		exit $r
	) >"$logs/$name.log" 2>&1 || rc=$?
	echo "$name $(cpu_seconds <"$logs/$name.cpu")" >>"$out/cpu"
	local secs=$(($(date +%s) - s))
	if [ $rc -eq 0 ]; then
		echo "ok $name $secs +$((s - t0))" >>"$results"
		log "$name: ok ($secs s)"
		return 0
	fi
	echo "not ok $name $secs +$((s - t0))" >>"$results"
	lane_failed=$name
	{
		log "$name: FAILED (exit $rc after $secs s); the end of $logs/$name.log:"
		tail -n 60 "$logs/$name.log" | sed 's/^/  | /'
	} >&2
	return 1
}
# cpu_seconds: the CPU seconds (user and system, of the shell and its children) in `times`'s
# output on stdin ("0m1.500s 0m0.250s" lines).
cpu_seconds() { awk '{ for (i = 1; i <= NF; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } } END { printf "%d", t }'; }
not_run() { for n in "$@"; do echo "not-run $n - +$(($(date +%s) - t0))" >>"$results"; done; }

summary() {
	local rc=$?
	set +e
	# Lanes still running when the run itself stopped (set -e, a signal) end with it.
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	# VM case lines are "BOOT: VERDICT NAME SECONDS"; stage lines "VERDICT NAME SECONDS +START".
	if grep -q '^[a-z0-9.-]*: ' "$results"; then
		echo "slowest VM cases:"
		grep '^[a-z0-9.-]*: ' "$results" | awk '{ print $NF, $0 }' | sort -rn | cut -d' ' -f2- |
			head -n 8 | awk '{ t = $NF; $NF = ""; printf "  %8s s  %s\n", t, $0 }'
		echo "VM boots (cases, seconds of cases):"
		grep '^[a-z0-9.-]*: ' "$results" | awk '{ n[$1]++; s[$1] += $NF } END { for (b in n) printf "  %-11s %3d cases %6d s\n", b, n[b], s[b] }' | sort
	fi
	echo "stages (seconds, CPU seconds, started at +seconds):"
	grep -v '^[a-z0-9.-]*: ' "$results" | awk -v cpuf="$out/cpu" '
		BEGIN { while ((getline l < cpuf) > 0) { split(l, a, " "); cpu[a[1]] = a[2] } }
		{ st = $NF; t = $(NF-1); n = $(NF-2); $NF = ""; $(NF-1) = ""
		  printf "  %8s s %6s  %-40s %s\n", t, (n in cpu ? cpu[n] : "-"), $0, st }'
	# Here, not in $( ): a subshell's own children have used no time yet.
	times >"$out/cpu-total"
	echo "total: $(($(date +%s) - t0)) s (budget ${RDNA1_TIME_BUDGET:-5100} s), $(cpu_seconds <"$out/cpu-total") CPU seconds"
	local p f s
	p=$(grep -c '^\([a-z0-9.-]*: \)\?ok ' "$results")
	f=$(grep -c '^\([a-z0-9.-]*: \)\?\(not ok\|timeout\) ' "$results")
	s=$(grep -c '^[a-z0-9.-]*: skip ' "$results")
	# A run that stopped outside any stage (set -e in this script) still counts as failed.
	[ $rc -eq 0 ] || [ "$f" -gt 0 ] || { echo "not ok run.sh (exit $rc)" >>"$results"; f=1; }
	[ "$f" -eq 0 ] || rc=1
	echo "$p passed, $f failed, $s skipped"
	exit $rc
}
trap summary EXIT

left() { echo $((deadline - $(date +%s))); }

# Cargo never forgets old artifacts (env.sh, RDNA1_CARGO_TARGET): past 8 GB its trees start over.
if [ -d "$RDNA1_CACHE/cargo" ] && [ "$(du -sm "$RDNA1_CACHE/cargo" | cut -f1)" -gt 8192 ]; then
	rm -rf "$RDNA1_CACHE/cargo"
fi

cd "$top"
stage host-setup "$top/tests/kernel/setup-host.sh" || exit 1
stage leftovers-before "$top/tests/leftovers.sh" snapshot "$out/paths-before" || exit 1

rdna1ctl=$top/target/vm/x86_64-unknown-linux-gnu/release/rdna1ctl
kernel_cached=
[ ! -f "$(kbuild_dir base)/.rdna1-done" ] || kernel_cached=1
# Everything niced but the checks lane shares the CPUs from now on, once.
unnice_all() {
	[ -e "$RDNA1_NICE_UNTIL" ] && return 0
	touch "$RDNA1_NICE_UNTIL"
	unnice_tree $$ "${checks_pid:-0}"
}

lane_kernel() {
	stage kernel sh -c '"$1"/tests/kernel/build.sh base >"$2"' sh "$top" "$out/kbuild-dir" || :
	stage modules "$top/tests/vm/build-modules.sh" "$(cat "$out/kbuild-dir" 2>/dev/null)" "$out" || :
	# Cold: these and the static binaries were what the VM boots waited for.
	if [ -z "$kernel_cached" ]; then
		after static-binaries || :
		unnice_all
	fi
	[ -z "$lane_failed" ]
}

# The static binaries are a VM input like the kernel: at full priority, cold and warm (cold 8
# built them niced beside the kernel: they were done 165 s after it, and the boots waited).
# Warm they are the last input, and the other lanes' niced work is let go when they are built
# (or failed).
lane_bins() {
	local rc=0
	stage static-binaries "$top/tests/vm/build-bins.sh" || rc=1
	[ -z "$kernel_cached" ] || unnice_all
	return $rc
}
# after STAGE: waits until STAGE (of another lane) has ended; fails unless it passed.
after() {
	until grep -q "^[a-z -]* $1 " "$results"; do sleep 1; done
	grep -q "^ok $1 " "$results"
}

cargo_test() { niced cargo test -q --workspace --locked; }
# The checks lane: four sub-lanes side by side, each stage waiting only for what it needs, so
# that once the VM boots have ended their stages share both CPUs (cold 7 ran them one after
# the other: 316 s after the boots, one CPU idle for a third of it). A failed stage marks only
# its own sub-lane's later stages as not run.
checks_cargo() {
	stage cargo-fmt cargo fmt --all --check || :
	stage cargo-clippy niced cargo clippy -q --workspace --all-targets --locked -- -D warnings || :
	stage cargo-test cargo_test || :
	[ -z "$lane_failed" ]
}
# These run in the sid tools root (lane_tools made it).
checks_tools() {
	if after sid-tools-root; then
		# What kmod compiles from shared/src, with the oldest kernel's rustc (Debian 7.3.4's 1.85.1).
		stage rustc-floor niced "$top/tests/kernel/rustc-floor.sh" || :
		# The in-process check's own tests (its parts, whole programs with faults below torch,
		# PyTorch's own samples and behaviours with and without it) under Debian's CPU PyTorch.
		stage check-python niced "$top/tests/field-kit/check-python.sh" || :
		# With the static rdna1ctl (the bins lane): the shipped battery and in-process check
		# under a real PyTorch without a GPU (Debian's CPU build), and rdna1ctl running a real
		# training script with them; doctor's code-object reader on Debian's real ROCm
		# libraries, against LLVM's (sid tools).
		if after static-binaries; then
			stage check-cpu niced "$top/tests/field-kit/check-cpu.sh" "$rdna1ctl" || :
			stage rocm-code-objects niced "$top/tests/rocm/code-objects.sh" "$rdna1ctl" || :
		else
			not_run check-cpu rocm-code-objects
		fi
	else
		not_run rustc-floor check-python check-cpu rocm-code-objects
	fi
	[ -z "$lane_failed" ]
}
# The Arch and RPM packages, built by makepkg and rpmbuild (in the sid tools root), installed
# with pacman --root: the checks lane's largest build, in a sub-lane of its own so that it
# starts as soon as the tools root is made (cold 8 ran it after the Python check and rustc-floor's
# downloads: it began 120 s after the boots had ended and was the run's last 240 s).
checks_packages() {
	if after sid-tools-root; then
		stage packaging niced "$top/tests/packaging/run.sh" "$out/packaging" || :
	else
		not_run packaging
	fi
	[ -z "$lane_failed" ]
}
checks_source() {
	# A clone or cache path kbuild cannot build in is refused first (tests/kernel/env.sh).
	stage clone-paths "$top/tests/paths/unbuildable.sh" || :
	# kmod's Rust, in the kernel's own style.
	stage kernel-rustfmt rustfmt --edition 2021 --config-path "$KSRC/.rustfmt.toml" --check kmod/*.rs || :
	stage bo-copy-check tests/kernel/check-bo-copy.sh || :
	# LINUX_VERSION_CODE: checkpatch's rule is for in-tree code; an out-of-tree module built
	# against many kernels must check which one it is on (kmod/hook.c, supported range).
	stage checkpatch "$KSRC/scripts/checkpatch.pl" --no-tree --quiet --strict --ignore LINUX_VERSION_CODE \
		-f kmod/hook.c kmod/hook.h kmod/amdgpu_bo_layout.h kmod/amdgpu_vm_layout.h \
		tests/modules/harness/rdna1_mtype_harness.c tests/modules/harness/rdna1_mtype_decoy.c \
		tests/modules/harness/rdna1_fake_amdgpu.c tests/modules/harness/rdna1_going_delay.c \
		tests/modules/harness/rdna1_no_fastpath.c tests/modules/slow-amdgpu/rdna1_slow_amdgpu.c \
		tests/modules/oot-amdgpu/rdna1_oot_amdgpu.c tests/modules/bench/rdna1_mtype_bench.c \
		tests/modules/include/resolve_symbol.h || :
	# These need the static rdna1ctl (the bins lane).
	if after static-binaries; then
		stage field-kit-fixtures "$top/tests/field-kit/run.sh" "$rdna1ctl" || :
		stage static-nss "$top/tests/static/nss.sh" "$rdna1ctl" || :
		stage check-kernel-debian niced "$top/tests/kernel/check-kernel-debian.sh" "$rdna1ctl" "$out/check-kernel" || :
	else
		not_run field-kit-fixtures static-nss check-kernel-debian
	fi
	# The DKMS scripts' own checks (trust, inputs, messages, make install twice): the VM needs
	# nothing from them, so they are not on its path.
	if after kernel && after static-binaries; then
		stage dkms-scripts niced "$top/tests/install/dkms-scripts.sh" "$out/dkms-scripts" \
			"$(cat "$out/kbuild-dir")" "$rdna1ctl" || :
	else
		not_run dkms-scripts
	fi
	[ -z "$lane_failed" ]
}
lane_checks() {
	export RDNA1_NICE_UNTIL=$out/checks-unniced
	# In the cache (env.sh): a fresh clone rebuilds only the workspace's own crates.
	export CARGO_TARGET_DIR=$RDNA1_CARGO_TARGET/host
	local pids=() p rc=0
	checks_cargo &
	pids+=($!)
	checks_tools &
	pids+=($!)
	checks_packages &
	pids+=($!)
	checks_source &
	pids+=($!)
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}

# The sid tools root (tests/sid-tools: PyTorch, LLVM 21, makepkg, rpmbuild) that some checks
# borrow, made from the start (niced, mostly downloads and unpacking) rather than when the first
# of them needs it: cold, that was after the kernel build, beside the VM boots.
lane_tools() { stage sid-tools-root niced sh -c '"$1"/tests/sid-tools/root.sh >/dev/null' sh "$top"; }

# Debian's real kernels (tests/debian/): every release's root at once (mostly downloads and
# unpacking), our Debian packages built once in 7.2's, then each release side by side: its
# install and builds (niced until the VM boots' inputs are built), then its boot as soon as it
# is ready, which may use all the time left when it gets its CPU slot (RDNA1_DEADLINE). A
# release whose root failed does not stop the other.
debian_stage() {
	local rel=$1 rc=0
	RDNA1_DEBIAN_READY=$out/debian-ready-$rel "$top/tests/debian/run.sh" "$rel" "$out/debian-$rel" \
		"$(left)" "$out/debian/debs" || rc=$?
	# Also when it failed before its boot: the checks lane must not wait for it.
	touch "$out/debian-ready-$rel"
	[ ! -f "$out/debian-$rel/vm.log.results" ] ||
		sed "s/^/debian-$rel: /" "$out/debian-$rel/vm.log.results" >>"$results"
	return $rc
}
lane_debian() {
	local r p pids=() rc=0
	for r in $DEBIAN_RELEASES; do
		(stage "debian-root-$r" niced sh -c '"$1"/tests/debian/root.sh "$2" >/dev/null' sh "$top" "$r") &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	if after debian-root-7.2; then
		stage debian-packages "$top/tests/debian/packages.sh" "$out/debian" || rc=1
	else
		not_run debian-packages
	fi
	pids=()
	for r in $DEBIAN_RELEASES; do
		if grep -q '^ok debian-packages ' "$results" && after "debian-root-$r"; then
			(lane_failed="" && stage "debian-$r" debian_stage "$r") &
			pids+=($!)
		else
			not_run "debian-$r"
			touch "$out/debian-ready-$r"
		fi
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}
debian_ready() { for r in $DEBIAN_RELEASES; do [ -e "$out/debian-ready-$r" ] || return 1; done; }

# The VM tests, chosen by the case headers (docs/TESTING.md, "Adding a case"): the cases for
# the test kernel (`# kernels:` names `test`, or no such line) run in two boots side by side:
# 2cpu (two CPUs, single-threaded TCG: tests/vm/boot.sh) those whose header says
# `# boot: ... 2cpu` or `# needs: cpus=2`, 1cpu the others and those that say `1cpu`. Each boot
# costs a kernel boot and an amdgpu load (about a minute under TCG), so there are two.
numbers() { tr , '\n' | grep . | sort -u; }
test_cases=$({
	tests/vm/cases-with.sh -v 'kernels: .*'
	tests/vm/cases-with.sh 'kernels: .*\<test\>.*'
} | numbers)
smp_cases=$(tests/vm/cases-with.sh 'needs: cpus=2' | numbers)
cases_2cpu_all=$({
	tests/vm/cases-with.sh 'boot: .*\<2cpu\>.*'
	echo "$smp_cases"
} | numbers)
cases_1cpu_all=$({
	tests/vm/cases-with.sh -v 'boot: .*'
	tests/vm/cases-with.sh 'boot: .*\<1cpu\>.*'
} | numbers)
only() { comm -12 <(echo "$1") <(echo "$2") | comm -23 - <(echo "$3") | sort -n | paste -sd, -; }
cases_1cpu=$(only "$test_cases" "$cases_1cpu_all" "$smp_cases")
cases_2cpu=$(only "$test_cases" "$cases_2cpu_all" "")

# boot NAME INITRAMFS SMP CASES: one boot of the test kernel; its case results go to the run's
# results as "NAME: ...". Every case it was given must have passed (a skip counts only where
# the case allows it: runner.sh, rdna1.strict=1).
boot() {
	local name=$1 initrd=$2 smp=$3 cases=$4 rc=0 kb
	kb=$(cat "$out/kbuild-dir")
	echo "boot $name: cases $cases"
	RDNA1_STRICT=1 RDNA1_SMP=$smp RDNA1_CASES=$cases "$top/tests/vm/boot.sh" "$kb" "$initrd" test \
		"$out/vm-$name.log" "$(left)" || rc=$?
	[ ! -f "$out/vm-$name.log.results" ] || sed "s/^/$name: /" "$out/vm-$name.log.results" >>"$results"
	return $rc
}
# holds_slot NAME: waits until boot NAME has its CPU slot (or has ended), so the boots take
# the slots in the order they are started: the longest first.
holds_slot() {
	until grep -q 'CPU slot' "$logs/vm-boot-$1.log" 2>/dev/null || grep -q " vm-boot-$1 " "$results"; do sleep 1; done
}

lane_vm() {
	local kb
	kb=$(cat "$out/kbuild-dir")
	# 2cpu needs nothing from the install tests: it boots the plain initramfs.
	if ! stage initramfs "$top/tests/vm/mkinitramfs.sh" "$kb" "$out/initramfs.cpio"; then
		not_run install-tests initramfs-installed vm-boot-1cpu vm-boot-2cpu
		return 1
	fi
	# In its own subshell: its failure must not mark the 1cpu boot below as not run.
	(stage vm-boot-2cpu boot 2cpu "$out/initramfs.cpio" 2 "$cases_2cpu") &
	local pids=($!)
	# With what the install tests made: where they failed, without it (cases 12 and 14, which
	# need it, then fail saying so; the other cases run).
	initramfs_installed() {
		local ko=$out/install/dkms/rdna1_mtype.ko tree=$out/install/installed
		[ -f "$ko" ] || ko=""
		[ -d "$tree" ] || tree=""
		RDNA1_DKMS_KO=$ko RDNA1_INSTALLED=$tree \
			"$top/tests/vm/mkinitramfs.sh" "$kb" "$out/initramfs-installed.cpio"
	}
	stage install-tests "$top/tests/install/run.sh" "$out/install" "$kb" "$rdna1ctl" || :
	(lane_failed="" && stage initramfs-installed initramfs_installed) || :
	holds_slot 2cpu
	(lane_failed="" && stage vm-boot-1cpu boot 1cpu "$out/initramfs-installed.cpio" 1 "$cases_1cpu") &
	pids+=($!)
	local rc=0 p
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	[ -z "$lane_failed" ] && return $rc
}

# same_tables RELEASE: the same calls through Debian's real amdgpu of RELEASE and through ours
# gave the same PTE flags, without and with rdna1_mtype (case 30's tables, every request x BO
# kind).
same_tables() {
	local ours=$out/enforce-tables.test theirs=$out/enforce-tables.debian-$1
	grep '^# enforce-table: ' "$out/vm-1cpu.log" >"$ours" || true
	[ "$(wc -l <"$ours")" -ge 100 ] || { echo "case 30 logged $(wc -l <"$ours") table lines" >&2; return 1; }
	grep '^# enforce-table: ' "$out/debian-$1/vm.log" >"$theirs" || true
	diff "$ours" "$theirs" >&2 || { echo "Debian $1's amdgpu and ours differ (above: < ours, > Debian's)" >&2; return 1; }
	echo "Debian $1: the same $(wc -l <"$theirs") table lines as ours"
}

# The checks lane first: the others know its pid (unnice_all leaves it niced).
{
	rc=0
	lane_checks || rc=$?
	touch "$out/checks-done"
	exit $rc
} &
checks_pid=$!
lane_kernel &
kernel_pid=$!
lane_bins &
bins_pid=$!
lane_debian &
debian_pid=$!
lane_tools &
tools_pid=$!
# The checks lane's work shares the CPUs once the VM boots' inputs are built, Debian's boots are
# ready and the test kernel's boots have ended.
(
	until [ -e "$RDNA1_NICE_UNTIL" ] && debian_ready && [ -e "$out/vm-boots-done" ]; do
		# A lane that ended early leaves nothing to renice (and its pid may be reused).
		[ ! -e "$out/checks-done" ] || exit 0
		sleep 1
	done
	touch "$out/checks-unniced"
	[ -e "$out/checks-done" ] || unnice_tree "$checks_pid"
) &
unnice_checks_pid=$!
rc=0
wait $kernel_pid || rc=1
wait $bins_pid || rc=1
if [ $rc -eq 0 ]; then
	lane_vm || rc=1
else
	not_run initramfs install-tests initramfs-installed vm-boot-1cpu vm-boot-2cpu
fi
touch "$out/vm-boots-done"
wait $checks_pid || rc=1
wait $tools_pid || rc=1
debian_rc=0
wait $debian_pid || debian_rc=1
# It has ended, or ends within a second: checks-done exists by now.
wait "$unnice_checks_pid" || true
[ $debian_rc -eq 0 ] || rc=1
for r in $DEBIAN_RELEASES; do
	if grep -q '^ok vm-boot-1cpu ' "$results" && grep -q "^ok debian-$r " "$results"; then
		(lane_failed="" && stage "debian-$r-same-tables" same_tables "$r") || rc=1
	else
		not_run "debian-$r-same-tables"
	fi
done
stage leftovers "$top/tests/leftovers.sh" check "$out/paths-before" || rc=1
[ $rc -ne 0 ] || log "all tests passed in $(($(date +%s) - t0)) s"
exit $rc
