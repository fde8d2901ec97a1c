# The hook's guards (kmod/arming.rs, kmod/hook.c):
# - module ownership: with a module that is not amdgpu defining gmc_v10_0_get_vm_pte loaded
#   after amdgpu, the name has two traceable sites; rdna1_mtype keeps only amdgpu's own (its
#   kallsyms name) and arms there alone: the PTE flags come back rewritten. (Round 2 looked the
#   name up with a first-match bare-name lookup once, which found the decoy: checked, this
#   case then failed);
# - the flags pointer: amdgpu's callers pass the address of a local, so the module touches the
#   PTE flags only on the caller's stack. The same call with the flags in kmalloc'd memory keeps
#   amdgpu's result and counts as rejected. Without the guard, the heap call comes back NC.
#   So do flags in the task's stack but below every live frame ("dead": object_is_on_stack()
#   alone let them through, and the module wrote NC there) and flags on the live stack one
#   byte off an 8-byte boundary ("unaligned": let through, written NC).
# must-pass
# kernels: test debian
mtype_down
harness_up
insmod /opt/rdna1/rdna1_mtype_decoy.ko
modprobe rdna1_mtype mode=enforce
eq "$(armed)" Y "armed with a decoy loaded after amdgpu"
eq "$(cat $PARAMS/arm_error)" "" "arm_error when armed"
before=$(cat $PARAMS/rejected)
stack=$(call "$REQ_CC" plain "$IN")
mname "$stack"
eq "$M" NC "CC on a memory BO, flags on the stack"
heap=$(call "$REQ_CC" plain "$IN" rdna1 heap)
mname "$heap"
eq "$M" CC "CC on a memory BO, flags on the heap: amdgpu's result kept"
same_but_mtype "$stack" "$heap" "stack vs heap"
eq "$(cat $PARAMS/rejected)" $((before + 1)) "rejected calls"
for where in dead unaligned; do
	got=$(call "$REQ_CC" plain "$IN" rdna1 "$where")
	mname "$got"
	eq "$M" CC "CC on a memory BO, flags $where: amdgpu's result kept"
	same_but_mtype "$stack" "$got" "stack vs $where"
done
eq "$(cat $PARAMS/rejected)" $((before + 3)) "rejected calls, dead and unaligned too"
rmmod rdna1_mtype
rmmod rdna1_mtype_decoy
