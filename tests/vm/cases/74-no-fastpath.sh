# The kernels most owners run (6.18 to 7.1: docs/KERNELS.md) resolve fprobe symbols without
# ftrace_lookup_symbols()'s single-symbol fast path, whose kallsyms_lookup_name() is the only
# lookup that understands "amdgpu:gmc_v10_0_get_vm_pte". rdna1_no_fastpath makes that lookup
# find nothing, as those kernels do: rdna1_mtype must still arm on amdgpu's own function,
# whether amdgpu was there first or came later, and rewrite. Before round 3 (registered by the
# module-qualified name) it said "amdgpu is loaded but has no traceable gmc_v10_0_get_vm_pte".
# The harness finds the function with kallsyms_lookup_name() too: it is loaded while
# rdna1_no_fastpath is not.
# kernels: test
trap 'if grep -q "^rdna1_no_fastpath " /proc/modules; then rmmod rdna1_no_fastpath; fi' EXIT
mtype_down
harness_up
insmod /opt/rdna1/rdna1_no_fastpath.ko
modprobe rdna1_mtype mode=enforce
eq "$(cat "$PARAMS/arm_error")" "" "arm_error, amdgpu there first"
eq "$(armed)" Y "armed without the fast path, amdgpu there first"
eq "$(mcall "$REQ_WC" none "$IN")" NC "WC without the fast path"
rmmod rdna1_mtype
rmmod rdna1_mtype_harness
modprobe -r amdgpu
modprobe rdna1_mtype mode=enforce
modprobe amdgpu
eq "$(cat "$PARAMS/arm_error")" "" "arm_error, amdgpu came later"
eq "$(armed)" Y "armed without the fast path, amdgpu came later"
# The stand-in works in this very run: the harness finds the function with
# kallsyms_lookup_name(), which now answers nothing, so it must not load (else the arming
# above proved nothing about a kernel without the fast path).
if insmod /opt/rdna1/rdna1_mtype_harness.ko 2>/dev/null; then
	fail "the harness found gmc_v10_0_get_vm_pte by kallsyms_lookup_name: rdna1_no_fastpath does not work"
fi
hits=$(cat /sys/module/rdna1_no_fastpath/parameters/hits)
[ "$hits" -ge 1 ] || fail "rdna1_no_fastpath answered no lookup of the name"
rmmod rdna1_no_fastpath
insmod /opt/rdna1/rdna1_mtype_harness.ko
eq "$(mcall "$REQ_WC" none "$IN")" NC "WC without the fast path, amdgpu came later"
rmmod rdna1_mtype
echo "no fast path: armed both ways ($hits lookups of the name by kallsyms_lookup_name made to fail)"
