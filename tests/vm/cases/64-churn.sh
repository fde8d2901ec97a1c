# Churn (issue 14), on the KASAN/lockdep/kmemleak kernel (the host fails the run on any kernel
# report): random ioctls as root and as uid 65534 (through a root-opened fd: every SET_POLICY
# EPERM), the policy byte-identical (GET_POLICY and sysfs) after every rejected one; policy
# flips through sysfs and SET_POLICY while a kernel loop on each CPU calls the real function
# (every result NC or amdgpu's own, other bits amdgpu's); load/unload cycles of rdna1_mtype
# while CPU 1 calls it, then the function as without the module. (amdgpu reload cycles: case
# 70, one CPU: a reload takes minutes on two.) Small counts here; RDNA1_SOAK=1 (`make soak`,
# kernel command line rdna1.soak=1) gives issue 14's full counts.
# needs: cpus=2
read -r t0 _ </proc/uptime
if [ "${RDNA1_SOAK:-0}" = 1 ]; then
	fuzz_n=25000 seeds="1 2 3 4" calls=1000000 cycles=100
else
	fuzz_n=2000 seeds="1 2" calls=100000 cycles=3
fi
echo "churn counts: fuzz $fuzz_n x seeds ($seeds) as root and as uid 65534, $calls calls, $cycles load cycles"
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=enforce
call "$REQ_CC" none "$IN" >/dev/null   # at least one event to read
# No pipe: a failing run must fail the case (set -e sees only a pipeline's last command).
for s in $seeds; do
	rdna1-abi-probe fuzz "$fuzz_n" "$s"
	rdna1-abi-probe fuzz "$fuzz_n" "$((s + 100))" nobody
done
eq "$(cat $PARAMS/mode) $(cat $PARAMS/scope)" "enforce rdna1" "policy restored after fuzzing"
rdna1-abi-probe flips "$calls"
# Leaves rdna1_mtype unloaded; then every request and BO kind as without the module.
rdna1-abi-probe cycles "$cycles"
grep -q '^rdna1_mtype ' /proc/modules && fail "rdna1_mtype loaded after the cycles"
table >/tmp/after-cycles
cmp /tmp/baseline /tmp/after-cycles || fail "after the cycles the function differs from no module"
read -r t1 _ </proc/uptime
echo "churn: $((${t1%.*} - ${t0%.*})) s in all"
