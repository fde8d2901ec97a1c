# The handler takes no lock that sleeps on PREEMPT_RT: fprobe runs it with preemption off,
# which lockdep cannot see, so the harness calls the real function under a raw spinlock
# ("atomic"), where lockdep (PROVE_RAW_LOCK_NESTING) reports any spinlock_t, mutex or
# sleeping call ("Invalid wait context"; the host fails the run on it). Every path the
# handler has: mode off, audit and enforce, logged and counted-only decisions, BO reads, the
# rate-limited report of a BO that breaks an invariant.
grep -Eq '^ *debug_locks: +1$' /proc/lockdep_stats ||
	fail "lockdep is off (an earlier report turned it off): this case would prove nothing"
mtype_down
harness_up
modprobe rdna1_mtype mode=off
layout_set
for mode in off audit enforce; do
	echo $mode >$PARAMS/mode
	mname "$(call "$REQ_CC" vram "$IN" rdna1 atomic)"
	case $mode in enforce) eq "$M" NC "vram CC, $mode" ;; *) eq "$M" CC "vram CC, $mode" ;; esac
	call "$REQ_UC" coherent "$IN" rdna1 atomic >/dev/null
	call "$REQ_CC" sg_coherent "$IN" rdna1 atomic >/dev/null
	call "$REQ_CC" none "$IN" rdna1 atomic graphics >/dev/null
	call "$REQ_CC" plain "$IN" rdna2 atomic >/dev/null
	call "$REQ_CC" none "$IN" unknown atomic none >/dev/null
	call "$REQ_CC" corrupt "$IN" rdna1 atomic >/dev/null   # a broken BO: logged, rate-limited
done
# The logged decisions reached the ring (audit and enforce: vram, coherent, sg_coherent, the
# unknown device and the broken BO).
rdna1ctl events | tail -n 1 | grep -q '^10 events logged since load; 0 lost$' ||
	fail "events: $(rdna1ctl events | tail -n 3)"
dmesg | grep -q 'Invalid wait context' && fail "lockdep: a lock that sleeps on PREEMPT_RT in the handler"
rmmod rdna1_mtype
