#!/usr/bin/env bash
# The test command (README, .ci/run): every check, from a fresh machine if need be.
#   1. host set-up and the pinned test kernel (cached in ~/.cache/rdna1-mtype),
#   2. Rust checks: fmt, clippy -D warnings, cargo tests,
#   3. kernel rustfmt, the amdgpu_bo copy check, checkpatch on our C, the field kit on fixtures,
#   4. install tests: staged install/uninstall, systemd-analyze/udevadm verify, dkms cycle,
#   5. Debian's real kernel: the Debian packages built and installed with apt in a sid root
#      (DKMS builds the module), then Debian's vmlinuz booted with its own amdgpu (tests/debian),
#   6. the VM tests: the real amdgpu.ko, rdna1_mtype.ko and the real gmc_v10_0_get_vm_pte.
# Every stage and every VM case is one result; the last line is "N passed, N failed, N skipped"
# (also when a stage fails or a boot times out), after the durations and the slowest VM cases.
# Time: the run keeps to RDNA1_TIME_BUDGET seconds (default 5,100: CI stops a run at 5,400).
# Each VM boot's limit is derived from the time left, so a slower host gets the time there is
# instead of a figure tuned to one machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/test
# A run cut off (CI's kill) may leave the Debian stage's overlay and proc mounted below $out:
# unmount them before removing the tree, which must not reach into them.
findmnt -rn -o TARGET | { grep "^$out/" || true; } | sort -r | xargs -r -n1 umount -l
rm -rf --one-file-system "$out"
mkdir -p "$out"
. "$top/tests/kernel/env.sh"
t0=$(date +%s)
deadline=$((t0 + ${RDNA1_TIME_BUDGET:-5100}))
results=$out/results
: >"$results"

# stage NAME CMD...: runs one stage, records "ok|not ok NAME SECONDS"; a failed stage ends the run.
stage() {
	local name=$1 s rc=0
	shift
	log "$name"
	s=$(date +%s)
	"$@" || rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $name $(($(date +%s) - s))" >>"$results"
	else
		echo "not ok $name $(($(date +%s) - s))" >>"$results"
		die "stage '$name' failed (exit $rc)"
	fi
}

summary() {
	local rc=$?
	set +e
	# "[vm: ]VERDICT NAME SECONDS" lines, printed as "SECONDS  VERDICT NAME".
	fmt() { awk '{ t = $NF; $NF = ""; printf "  %8s s  %s\n", t, $0 }'; }
	if grep -q '^\(vm\|debian\):' "$results"; then
		echo "slowest VM cases:"
		grep '^\(vm\|debian\):' "$results" | awk '{ print $NF, $0 }' | sort -rn | cut -d' ' -f2- |
			head -n 8 | fmt
	fi
	echo "stages:"
	grep -v '^\(vm\|debian\):' "$results" | fmt
	echo "total: $(($(date +%s) - t0)) s (budget ${RDNA1_TIME_BUDGET:-5100} s)"
	local p f s
	p=$(grep -c '^\(\(vm\|debian\): \)\?ok ' "$results")
	f=$(grep -c '^\(\(vm\|debian\): \)\?\(not ok\|timeout\) ' "$results")
	s=$(grep -c '^\(vm\|debian\): skip ' "$results")
	# A run that stopped outside any stage (set -e in this script) still counts as failed.
	[ $rc -eq 0 ] || [ "$f" -gt 0 ] || { echo "not ok run.sh (exit $rc)" >>"$results"; f=1; }
	echo "$p passed, $f failed, $s skipped"
	exit $rc
}
trap summary EXIT

left() { echo $((deadline - $(date +%s))); }

cd "$top"
stage host-setup "$top/tests/kernel/setup-host.sh"
stage cargo-fmt cargo fmt --all --check
stage cargo-clippy cargo clippy -q --workspace --all-targets --locked -- -D warnings
cargo_test() { cargo test -q --workspace --locked 2>&1 | tee "$out/cargo-test.log"; }
stage cargo-test cargo_test

prepare() { "$top/tests/vm/prepare.sh" "$out" >"$out/kbuild-dir"; }
stage "kernel+modules+initramfs" prepare
kb=$(cat "$out/kbuild-dir")

# kmod's Rust, in the kernel's own style.
stage kernel-rustfmt rustfmt --edition 2021 --config-path "$KSRC/.rustfmt.toml" --check kmod/*.rs
stage bo-copy-check tests/kernel/check-bo-copy.sh
# LINUX_VERSION_CODE: checkpatch's rule is for in-tree code; an out-of-tree module built
# against many kernels must check which one it is on (kmod/hook.c, supported range).
stage checkpatch "$KSRC/scripts/checkpatch.pl" --no-tree --quiet --strict --ignore LINUX_VERSION_CODE \
	-f kmod/hook.c kmod/hook.h kmod/amdgpu_bo_layout.h kmod/amdgpu_vm_layout.h tests/modules/harness/rdna1_mtype_harness.c \
	tests/modules/harness/rdna1_mtype_decoy.c tests/modules/harness/rdna1_fake_amdgpu.c \
	tests/modules/bench/rdna1_mtype_bench.c tests/modules/include/resolve_symbol.h
rdna1ctl=$top/target/vm/x86_64-unknown-linux-gnu/release/rdna1ctl
stage field-kit-fixtures "$top/tests/field-kit/run.sh" "$rdna1ctl"
stage check-kernel-debian "$top/tests/kernel/check-kernel-debian.sh" "$rdna1ctl" "$out/check-kernel"
stage install-tests "$top/tests/install/run.sh" "$out/install" "$kb" "$rdna1ctl"
# Its boot may take a quarter of the time left; the test kernel's boots get the rest.
debian() {
	local rc=0
	"$top/tests/debian/run.sh" "$out/debian" $(($(left) / 4)) || rc=$?
	[ ! -f "$out/debian/vm.log.results" ] || sed 's/^/debian: /' "$out/debian/vm.log.results" >>"$results"
	return $rc
}
stage debian-real-kernel debian
initramfs() {
	RDNA1_DKMS_KO=$out/install/dkms/rdna1_mtype.ko RDNA1_INSTALLED=$out/install/installed \
		"$top/tests/vm/mkinitramfs.sh" "$kb" "$out/initramfs.cpio"
}
stage initramfs-with-install initramfs

# The VM tests, chosen by the case headers (docs/TESTING.md, "Adding a case"): a one-CPU boot
# runs every case for the test kernel (`# kernels:` names `test`, or no such line); the cases
# whose header says `# needs: cpus=2` (they skip there) run again in a two-CPU boot
# (tests/vm/boot.sh says why).
test_cases=$({
	tests/vm/cases-with.sh -v 'kernels: .*'
	tests/vm/cases-with.sh 'kernels: .*\<test\>.*'
} | tr , '\n' | grep . | sort -n | paste -sd, -)
smp_cases=$(tests/vm/cases-with.sh 'needs: cpus=2')
vm_results() { # LOG: the boot's case results into the run's, then whether the boot passed
	[ ! -f "$1.results" ] || sed 's/^/vm: /' "$1.results" >>"$results"
}
boot_main() {
	# Three quarters of the time left, so the two-CPU boot keeps the rest.
	local rc=0
	RDNA1_STRICT=1 RDNA1_CASES=$test_cases "$top/tests/vm/boot.sh" "$kb" "$out/initramfs.cpio" test \
		"$out/vm-test.log" $(($(left) * 3 / 4)) || rc=$?
	# Cases that need two CPUs are judged in their own boot, not by their skip here.
	grep -v "^skip \($(echo "$smp_cases" | sed 's/,/\\|/g')\)-" "$out/vm-test.log.results" >"$out/r" 2>/dev/null &&
		mv "$out/r" "$out/vm-test.log.results"
	vm_results "$out/vm-test.log"
	return $rc
}
boot_smp() {
	local rc=0
	RDNA1_STRICT=1 RDNA1_SMP=2 RDNA1_CASES=$smp_cases "$top/tests/vm/boot.sh" "$kb" \
		"$out/initramfs.cpio" test "$out/vm-test-smp.log" "$(left)" || rc=$?
	vm_results "$out/vm-test-smp.log"
	for n in ${smp_cases//,/ }; do
		grep -q "^ok $n-" "$out/vm-test-smp.log.results" 2>/dev/null ||
			{ echo "case $n did not pass on two CPUs" >&2; rc=1; }
	done
	return $rc
}
stage vm-boot-1cpu boot_main
[ -z "$smp_cases" ] || stage vm-boot-2cpu boot_smp
# The same calls through Debian's real amdgpu and through ours gave the same PTE flags,
# without and with rdna1_mtype (case 30's tables, every request x BO kind).
same_tables() {
	local ours=$out/enforce-tables.test debian=$out/enforce-tables.debian
	grep '^# enforce-table: ' "$out/vm-test.log" >"$ours" || true
	grep '^# enforce-table: ' "$out/debian/vm.log" >"$debian" || true
	[ "$(wc -l <"$ours")" -ge 100 ] || { echo "case 30 logged $(wc -l <"$ours") table lines" >&2; return 1; }
	diff "$ours" "$debian" >&2 || { echo "Debian's amdgpu and ours differ (above: < ours, > Debian's)" >&2; return 1; }
}
stage debian-same-tables same_tables
log "all tests passed in $(($(date +%s) - t0)) s"
