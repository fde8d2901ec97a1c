# Helpers for the in-VM cases (busybox sh, 64-bit arithmetic).
set -e
HARNESS=/sys/kernel/debug/rdna1_mtype_harness/call
PARAMS=/sys/module/rdna1_mtype/parameters
# PTE flags amdgpu passes in for a mapped GTT page: VALID|SYSTEM|SNOOPED|READABLE|WRITEABLE.
IN=0x67
MTYPE_MASK=$((7 << 48))
REQUESTS="DEFAULT NC WC CC UC RW"
BOS="none plain vram userptr coherent ext_coherent uncached sg_coherent doorbell seq64 sg_attach"

fail() { echo "assertion failed: $*" >&2; exit 1; }
# vm_flags for AMDGPU_VM_MTYPE_<name> (amdgpu_drm.h: bits 5..8), plus READABLE|WRITEABLE.
# As variables: under TCG + KASAN + lockdep each fork for a "$(...)" costs a noticeable
# fraction of a second, so the helpers below fork nothing themselves.
REQ_DEFAULT=0x6 REQ_NC=0x26 REQ_WC=0x46 REQ_CC=0x66 REQ_UC=0x86 REQ_RW=0xa6
# call VM_FLAGS BO PTE_FLAGS [GPU [WHERE [VM]]]: runs the real gmc_v10_0_get_vm_pte for fake
# GPU (rdna1 = 1002:731f at 0000:03:00.0 by default; rdna1b = 1002:7340 at 0001:0a:00.0;
# rdna2 = 1002:73bf at 0000:04:00.0; other = 10de:2204 at 0000:05:00.0; unknown = no device;
# vmd = 1002:731f at 10000:03:00.0; fill0..fill9 = 1002:731f at 0000:10:00.0..0000:19:00.0),
# prints the flags it produced. WHERE "stack" (default), "heap" (the flags in kmalloc'd
# memory instead of on the stack), "atomic" (on the stack, called under a raw spinlock, where
# lockdep reports any lock that sleeps on PREEMPT_RT), "worker" (made by a kernel worker),
# "dead" (in the task's stack below every live frame) or "unaligned" (on the live stack, one
# byte off an 8-byte boundary). VM: "compute" (default; a real amdgpu_vm with
# is_compute_context set, as KFD's), "graphics" (a DRM client's) or "none" (NULL).
# BO: none (KFD SVM), plain (GTT), vram, userptr, coherent (hipHostMalloc), ext_coherent,
# uncached, sg_coherent (KFD doorbell/MMIO sg BO), sg (dma-buf import), doorbell (GEM doorbell
# domain), corrupt (an unknown creation flag: what a wrong layout reads), seq64 (amdgpu's
# kernel BO, which it maps UC), domains0 (GEM_CREATE with domains = 0), sg_attach (KFD's sg
# attachment of a peer GPU's coherent memory: domain CPU, COHERENT, a parent BO), edge (a
# plain BO whose struct ends right before an unmapped page).
call() {
	echo "$1 $2 $3 ${4:-rdna1} ${5:-stack} ${6:-compute}" >"$HARNESS" || fail "harness write '$*'"
	# The shell's own read: no fork of cat per call (under TCG + KASAN each fork is costly).
	read -r _out <"$HARNESS"
	echo "$_out"
}
# stat DEVICE_PREFIX FIELD: one counter of the module's stats line for a device (0 if none).
stat() {
	_v=""
	while read -r _dev _rest; do
		[ "$_dev" = "$1" ] || continue
		for _kv in $_rest; do
			case $_kv in "$2="*) _v=${_kv#*=} ;; esac
		done
		[ -n "$_v" ] || fail "no field $2 in stats: $_dev $_rest"
	done <"$PARAMS/stats"
	echo "${_v:-0}"
}
# mname FLAGS: sets M to the MTYPE name (no output, no fork).
mname() { case $((($1 >> 48) & 7)) in 0) M=NC ;; 1) M=WC ;; 2) M=CC ;; 3) M=UC ;; *) M=RSVD ;; esac; }
mtype_name() { case $((($1 >> 48) & 7)) in 0) echo NC ;; 1) echo WC ;; 2) echo CC ;; 3) echo UC ;; *) echo RSVD ;; esac; }
# mcall VM_FLAGS BO PTE_FLAGS [GPU [VM]]: as call (on the stack), but prints the MTYPE name of
# the result.
mcall() {
	echo "$1 $2 $3 ${4:-rdna1} stack ${5:-compute}" >"$HARNESS" || fail "harness write '$*'"
	read -r _out <"$HARNESS"
	mtype_name "$_out"
}
eq() { [ "$1" = "$2" ] || fail "${3:-value}: got '$1', want '$2'"; }
# Bits other than MTYPE must be identical.
same_but_mtype() { [ $((($1 ^ $2) & ~MTYPE_MASK)) -eq 0 ] || fail "$3: non-MTYPE bits differ: $1 vs $2"; }

# Gives rdna1_mtype the real amdgpu_bo layout (what rdna1ctl reads from BTF on a distro kernel).
layout_set() { cat /sys/kernel/debug/rdna1_mtype_harness/layout >"$PARAMS/bo_layout"; }

harness_up() {
	grep -q '^amdgpu ' /proc/modules || modprobe amdgpu
	grep -q '^rdna1_mtype_harness ' /proc/modules || insmod /opt/rdna1/rdna1_mtype_harness.ko
}
mtype_down() { if grep -q '^rdna1_mtype ' /proc/modules; then rmmod rdna1_mtype; fi; }
# The stand-in workloads of report and search must show GPU work as a ROCm program's process
# does: an entry in KFD's /sys/class/kfd/kfd/proc while it runs. Opening /dev/kfd cannot make
# one here (kfd_create_process refuses every process on a machine with no GPU node), so a
# tmpfs is mounted over that directory, in which a stand-in makes its own entry ($KFD_PROC/$$);
# the rest (the module, tracefs, the kernel log) stays real. kfd_standin_off unmounts it.
KFD_PROC=/sys/class/kfd/kfd/proc
kfd_standin_on() {
	grep -q '^amdgpu ' /proc/modules || modprobe amdgpu
	[ -d "$KFD_PROC" ] || fail "no $KFD_PROC (amdgpu without KFD?)"
	mount -t tmpfs -o mode=1777 kfd-standin "$KFD_PROC" || fail "mounting a tmpfs on $KFD_PROC"
}
kfd_standin_off() { umount "$KFD_PROC" 2>/dev/null || true; }
armed() { cat "$PARAMS/armed"; }

# table [GPU [VM]]: every request x BO kind ($REQUESTS x $BOS), "REQ BO FLAGS" per line, from
# the real function: one compiled process for the 66 calls (tests/abi-probe, `table`).
table() {
	rdna1-abi-probe table "${1:-rdna1}" "${2:-compute}" || fail "rdna1-abi-probe table"
}
# Baseline (no rdna1_mtype) recorded once by the first case that needs it.
baseline() {
	if [ ! -s /tmp/baseline ]; then
		grep -q '^rdna1_mtype ' /proc/modules && fail "baseline needs rdna1_mtype unloaded"
		table >/tmp/baseline
	fi
	cat /tmp/baseline
}
