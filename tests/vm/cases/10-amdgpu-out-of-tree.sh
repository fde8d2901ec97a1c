# An amdgpu built out of tree (taint O) that has gmc_v10_0_get_vm_pte, as AMD's amdgpu-dkms is,
# possibly with the pre-6.18 signature (tests/modules/oot-amdgpu: that signature). rdna1_mtype
# built without the kernel's BTF (the test kernel has no module BTF: id 0) cannot check its
# arguments, so it must not arm, and arm_error (status shows it) says why, whether that amdgpu
# was there first or came later. It armed on it while the identity check was skipped for id 0.
# And an amdgpu that is unloading when rdna1_mtype loads (its GOING notified before
# rdna1_mtype's notifier was registered; here its exit still runs, state going, still listed
# and traceable: the same amdgpu with exit_delay_ms): rdna1_mtype must not arm on it but wait,
# arm_error empty. It armed on it: the init path never asked whether amdgpu was going.
# First in the boot: amdgpu is not loaded yet, and nothing is left loaded.
# kernels: test
oot_refused() {
	eq "$(armed)" N "armed on an out-of-tree amdgpu, $1"
	case $(cat "$PARAMS/arm_error") in
	"amdgpu was built out of tree (taint O) and this module without its BTF: its arguments cannot be checked"*) ;;
	*) fail "arm_error, $1: '$(cat "$PARAMS/arm_error")'" ;;
	esac
}
# A failure must not leave this amdgpu to the cases after it (they would find no real one).
trap 'mtype_down; if grep -q "^amdgpu " /proc/modules; then rmmod amdgpu; fi' EXIT
mtype_down
if grep -q '^rdna1_mtype_harness ' /proc/modules; then rmmod rdna1_mtype_harness; fi
if grep -q '^amdgpu ' /proc/modules; then modprobe -r amdgpu; fi
insmod /opt/rdna1/oot/amdgpu.ko
case $(cat /sys/module/amdgpu/taint) in *O*) ;; *) fail "the test amdgpu is not tainted O" ;; esac
grep -q 'gmc_v10_0_get_vm_pte.*\[amdgpu\]' /proc/kallsyms || fail "the test amdgpu has no gmc_v10_0_get_vm_pte"
modprobe rdna1_mtype mode=enforce
oot_refused "amdgpu there first"
rdna1ctl status | grep -q 'built out of tree (taint O)' || fail "status: $(rdna1ctl status)"
rmmod rdna1_mtype
rmmod amdgpu
modprobe rdna1_mtype mode=enforce
eq "$(cat "$PARAMS/arm_error")" "" "arm_error with no amdgpu (waiting)"
insmod /opt/rdna1/oot/amdgpu.ko
oot_refused "amdgpu came later"
rmmod rdna1_mtype
rmmod amdgpu
# Unloading: its exit sleeps 15 s, while rdna1_mtype loads (modprobe under TCG took over 8 s
# on a loaded 2-core host: the case failed while nothing was wrong).
insmod /opt/rdna1/oot/amdgpu.ko exit_delay_ms=15000
rmmod amdgpu &
unload=$!
n=0
until [ "$(cat /sys/module/amdgpu/initstate 2>/dev/null)" = going ]; do
	n=$((n + 1))
	[ $n -lt 300 ] || fail "amdgpu was never going"
	sleep 0.1
done
modprobe rdna1_mtype mode=enforce
going=$(cat /sys/module/amdgpu/initstate 2>/dev/null || echo gone)
eq "$(armed)" N "armed on an amdgpu that is unloading"
eq "$(cat "$PARAMS/arm_error")" "" "arm_error, amdgpu unloading (waiting)"
wait $unload || fail "rmmod amdgpu"
eq "$going" going "amdgpu still going when rdna1_mtype was loaded (the 15 s were not enough)"
eq "$(armed)" N "armed after that amdgpu is gone"
rmmod rdna1_mtype
