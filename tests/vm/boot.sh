#!/usr/bin/env bash
# Boots the test VM under QEMU/TCG and judges the run from its serial log.
# usage: boot.sh KBUILD_DIR INITRAMFS JOB LOG [TIMEOUT_S]
# Fails on: a failed test, a kernel BUG/Oops/WARNING/KASAN/panic line, a timeout, or a VM
# that never reached the end of its job.
set -uo pipefail
kb=$1 initrd=$2 job=$3 log=$4 limit=${5:-900}
start=$(date +%s)
# KVM here is kvm_pvm and cannot run this kernel (see docs/TESTING.md): TCG only.
# RDNA1_SMP (default 1): guest CPUs. One CPU by default: with two under multi-threaded TCG a
# fresh-clone run died once in the core kernel's live code patching ("Oops: int3" in
# __schedule at a static-key site, on the other CPU, while fgraph unregistered its
# sched_switch probe as our fprobe went away at rmmod: a text_poke_bp int3 hit after the patch
# had completed, as a vCPU running stale translated code would). Two CPUs run single-threaded
# TCG (thread=single: both vCPUs in one host thread), which has no such race but makes every
# synchronize_rcu wait for the round-robin switch (the whole suite took over 900 s), so only
# the cases that need a second CPU (38) run there, in a second boot. docs/TESTING.md.
smp=${RDNA1_SMP:-1}
accel=tcg
[ "$smp" = 1 ] || accel=tcg,thread=single
timeout --foreground -k 10 "$limit" qemu-system-x86_64 -accel "$accel" -cpu max -smp "$smp" -m 2048 \
	-nographic -no-reboot -kernel "$kb/arch/x86/boot/bzImage" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=6 rdna1.job=$job${RDNA1_CASES:+ rdna1.cases=$RDNA1_CASES}" </dev/null >"$log" 2>&1
rc=$?
tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
secs=$(($(date +%s) - start))
fail=0
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	echo "VM: timed out after ${limit}s" >&2
	fail=1
fi
# Kernel reports are judged from the start of our job: a report during early boot comes before
# any of our code exists (seen once: KASAN in rcu_is_watching from an interrupt in identify_cpu
# under TCG); it is shown, not judged. One message is tolerated with a reason: the ORC unwinder
# cannot walk through fgraph's return_to_handler, where fprobe exit handlers run, when lockdep
# saves a stack trace there; it concerns that trace, not memory or locking.
report='BUG:|Oops|WARNING:|KASAN|UBSAN|Kernel panic|kernel BUG|Call Trace:|general protection fault|INFO: task .* blocked'
tolerated='WARNING: stack going in the wrong direction\? at return_to_handler'
if sed -n '1,/^RDNA1-VM: job/p' "$log" | grep -nE "$report" | head -n 3 | grep . >&2; then
	echo "VM: note: kernel report during early boot, before the job (not judged)" >&2
fi
if sed -n '/^RDNA1-VM: job/,$p' "$log" | grep -vE "$tolerated" | grep -nE "$report" >&2; then
	echo "VM: kernel reported a problem (lines above)" >&2
	fail=1
fi
if ! grep -q '^RDNA1-VM-DONE' "$log"; then
	echo "VM: never reached the end of job $job" >&2
	fail=1
fi
if [ "$job" = test ]; then
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n1)
	if [ -z "$summary" ]; then
		echo "VM: no test summary" >&2
		fail=1
	elif [ "$(echo "$summary" | cut -d' ' -f3)" != "0" ]; then
		# Each failed case with its indented output.
		awk '/^(PASS|FAIL|SKIP) /{show = /^FAIL/} show' "$log" >&2
		fail=1
	fi
	echo "VM tests: ${summary:-none} (${secs}s, log $log)" >&2
fi
exit $fail
