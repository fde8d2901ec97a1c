# An event logged from a kernel worker (KFD's restore worker after an eviction, SVM workers)
# names the process that owns the VM, as amdgpu recorded it (amdgpu_vm.task_info), not the
# worker: its pid and name, marked "*" (JSON origin "vm_owner"), so rdna1ctl verify and a
# reader attribute the mapping to the ROCm process. A worker whose VM's owner cannot be read
# (no VM) shows itself (origin "kernel_thread"); a process's own call shows its thread.
# kernels: test debian
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
layout_set
# In this shell, not a $(...) subshell: the VM's owner is this shell ($$).
call "$REQ_CC" vram "$IN" rdna1 worker >/dev/null
call "$REQ_CC" none "$IN" unknown worker none >/dev/null
call "$REQ_CC" vram "$IN" >/dev/null
ev=$(rdna1ctl events)
echo "$ev" | grep -E "^ +0 +[0-9.]+ +$$ +sh\* +0000:03:00.0 .* rewrite$" >/dev/null ||
	fail "worker's event names its VM's owner: $ev"
echo "$ev" | grep -E "^ +1 +[0-9.]+ +[0-9]+ +kworker/[^ ]* +unknown " >/dev/null ||
	fail "worker without a VM shows itself: $ev"
echo "$ev" | grep -E "^ +2 +[0-9.]+ +$$ +sh +0000:03:00.0 .* rewrite$" >/dev/null ||
	fail "own call shows this shell: $ev"
js=$(rdna1ctl --json events)
for o in vm_owner kernel_thread task; do
	echo "$js" | grep -q "\"origin\":\"$o\"" || fail "JSON origin $o: $js"
done
rmmod rdna1_mtype
