#!/usr/bin/env bash
# Boots the test VM under QEMU/TCG and judges the run from its serial log.
# usage: boot.sh KERNEL INITRAMFS JOB LOG LIMIT_S   (KERNEL: a kernel build dir or an image file)
# LIMIT_S is the time this boot may take: the caller derives it from the time its run has left
# (tests/run.sh), so no fixed figure tuned to one host turns a slower host red.
# RDNA1_VM_SLOTS=DIR: boot only while holding one of the lock files DIR/slot.* (make test makes
# one per host CPU, so boots started side by side never share a core); the wait does not count
# against LIMIT_S. RDNA1_DEADLINE (epoch seconds): the boot ends by then, whatever LIMIT_S says.
# Fails on: a failed case, a kernel BUG/Oops/WARNING/KASAN/panic line, a timeout (naming the
# case that was running), or a VM that never reached the end of its job.
# For job "test", the per-case results (KTAP, tests/vm/guest/runner.sh) are written to
# LOG.results as "ok|not ok|skip NAME SECONDS" lines, including the case cut off by a timeout.
set -uo pipefail
kb=$1 initrd=$2 job=$3 log=$4 limit=$5
image=$kb
[ -f "$image" ] || image=$kb/arch/x86/boot/bzImage
if [ -n "${RDNA1_VM_SLOTS:-}" ]; then
	waited=$(date +%s) got=""
	while :; do
		for slot in "$RDNA1_VM_SLOTS"/slot.*; do
			exec {slot_fd}>"$slot"
			if flock -n "$slot_fd"; then got=$slot; break; fi
			exec {slot_fd}>&-
		done
		[ -z "$got" ] || break
		sleep 2
	done
	echo "VM: $(basename "$log"): CPU slot $(basename "$got") after $(($(date +%s) - waited)) s" >&2
fi
start=$(date +%s)
[ -z "${RDNA1_DEADLINE:-}" ] || [ $((RDNA1_DEADLINE - start)) -ge "$limit" ] || limit=$((RDNA1_DEADLINE - start))
# KVM here is kvm_pvm and cannot run this kernel (see docs/TESTING.md): TCG only.
# RDNA1_SMP (default 1): guest CPUs. One CPU by default: with two under multi-threaded TCG a
# fresh-clone run died once in the core kernel's live code patching ("Oops: int3" in
# __schedule at a static-key site, on the other CPU, while fgraph unregistered its
# sched_switch probe as our fprobe went away at rmmod: a text_poke_bp int3 hit after the patch
# had completed, as a vCPU running stale translated code would). Two CPUs run single-threaded
# TCG (thread=single: both vCPUs in one host thread), which has no such race but makes every
# synchronize_rcu wait for the round-robin switch, so only the cases that declare
# `# needs: cpus=2` run there, in a second boot. docs/TESTING.md.
smp=${RDNA1_SMP:-1}
# RDNA1_SOAK=1 (make soak, tests/soak.sh): rdna1.soak=1, the cases with churn counts raise them.
accel=tcg
[ "$smp" = 1 ] || accel=tcg,thread=single
# RDNA1_ICOUNT=1 (make bench): guest time counts guest instructions (1 ns each), so a figure
# is an instruction count, the same whatever the host's load or the emulator's TLB does.
icount=()
[ "${RDNA1_ICOUNT:-0}" = 0 ] || icount=(-icount shift=0,sleep=off)
[ "$limit" -gt 0 ] || { echo "VM: no time left for this boot (limit ${limit}s)" >&2; exit 1; }
# No NIC, no VGA: fewer devices to emulate and probe (each PCI device costs seconds of boot).
# No ACPI PCI hotplug: its AML (a method per slot) made acpi_init take 33 s of the test
# kernel's boot under TCG, 13 s without; nothing here hotplugs.
# la57=off: with 5-level paging (which -cpu max offers) the KASAN kernel reported, in about a
# third of boots on a loaded host, a wild access in rcu_is_watching from an interrupt during
# identify_cpu (an address in the 5-level direct map), which turned lockdep off for the boot;
# none seen with 4-level paging, which RDNA1 owners' desktops use anyway.
# A boot whose early-boot report turned lockdep off before the job (tests/vm/init) is booted
# once more, within the same limit: under TCG that report comes and goes (about 1 boot in 5).
no_hotplug=(-global PIIX4_PM.acpi-pci-hotplug-with-bridge-support=off -global PIIX4_PM.acpi-root-pci-hotplug=off)
for attempt in 1 2; do
	left=$((limit - ($(date +%s) - start)))
	[ "$left" -gt 0 ] || left=1
	timeout --foreground -k 10 "$left" qemu-system-x86_64 -accel "$accel" "${icount[@]}" "${no_hotplug[@]}" -cpu max,la57=off -smp "$smp" -m 2048 -nic none -vga none \
		-nographic -no-reboot -kernel "$image" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=6 rdna1.job=$job rdna1.strict=${RDNA1_STRICT:-0}${RDNA1_CASES:+ rdna1.cases=$RDNA1_CASES}${RDNA1_SOAK:+ rdna1.soak=$RDNA1_SOAK}" </dev/null >"$log" 2>&1
	rc=$?
	grep -q '^RDNA1-VM: lockdep off before the job' "$log" || break
	echo "VM: lockdep was turned off by a report during early boot (attempt $attempt): booting again" >&2
	grep -nE 'BUG:|KASAN' "$log" | head -n 2 >&2
done
tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
secs=$(($(date +%s) - start))
fail=0
timed_out=0
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	timed_out=1
	fail=1
fi
# Kernel reports are judged from the start of our job: a report during early boot comes before
# any of our code exists (KASAN in rcu_is_watching from an interrupt in identify_cpu under
# TCG, in about 1 boot in 5); it is shown, not judged, and a boot where it turned lockdep off
# was booted again above. One message is tolerated with a reason: the ORC unwinder
# cannot walk through fgraph's return_to_handler, where fprobe exit handlers run, when lockdep
# saves a stack trace there; it concerns that trace, not memory or locking. The test kernel
# unwinds with frame pointers (tests/kernel/config/base.config): this is for the ORC kernels
# booted here too (Debian's).
report='BUG:|Oops|WARNING:|KASAN|UBSAN|Kernel panic|kernel BUG|Call Trace:|general protection fault|INFO: task .* blocked'
tolerated='WARNING: stack going in the wrong direction\? at return_to_handler'
if sed -n '1,/^RDNA1-VM: job/p' "$log" | grep -nE "$report" | head -n 3 | grep . >&2; then
	echo "VM: note: kernel report during early boot, before the job (not judged)" >&2
fi
if sed -n '/^RDNA1-VM: job/,$p' "$log" | grep -vE "$tolerated" | grep -nE "$report" >&2; then
	echo "VM: kernel reported a problem (lines above)" >&2
	fail=1
fi
if [ "$job" = test ]; then
	# KTAP results with each case's duration ("# NAME: S.SS s" precedes its result line).
	awk -v cut="$timed_out" '
		/^# running / { running = $3 }
		/^# [0-9A-Za-z_-]+: [0-9.]+ s$/ { t = $3 }
		/^(not )?ok [0-9]+ / {
			name = ($1 == "not") ? $4 : $3
			verdict = ($1 == "not") ? "not ok" : (/# SKIP/ ? "skip" : "ok")
			print verdict, name, t; running = ""; t = ""
		}
		END { if (running != "") print (cut ? "timeout" : "not ok"), running, "-" }
	' "$log" >"$log.results"
	if [ $timed_out = 1 ]; then
		running=$(awk '$1 == "timeout" { print $2 }' "$log.results")
		echo "VM: timed out after ${limit}s${running:+ while running case $running}" >&2
	fi
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n1)
	if [ -z "$summary" ]; then
		if grep -q '^RDNA1-VM: lockdep off before the job' "$log"; then
			echo "VM: lockdep was off before the job in both boots: nothing was tested" >&2
		elif [ $timed_out = 0 ]; then
			echo "VM: no test summary" >&2
		fi
		fail=1
	elif [ "$(echo "$summary" | cut -d' ' -f3)" != "0" ]; then
		# Each failed case with its output (the "# " lines since its "# running").
		awk '/^# running /{buf = ""} {buf = buf $0 "\n"} /^not ok /{printf "%s", buf}' "$log" >&2
		fail=1
	fi
	echo "VM tests: ${summary:-none} (${secs}s, log $log)" >&2
elif [ $timed_out = 1 ]; then
	echo "VM: timed out after ${limit}s" >&2
fi
if ! grep -q '^RDNA1-VM-DONE' "$log"; then
	[ $timed_out = 1 ] || echo "VM: never reached the end of job $job" >&2
	fail=1
fi
exit $fail
