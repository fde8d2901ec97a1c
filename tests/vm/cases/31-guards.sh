# The hook's guard on the flags pointer: amdgpu's callers pass the address of a local, so the
# module touches the PTE flags only on the caller's stack (kmod/hook.c, rdna1_entry). The same
# call with the flags in kmalloc'd memory keeps amdgpu's result and counts as rejected.
# Without the guard, the heap call below would come back NC and this case fails.
# must-pass
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
eq "$(armed)" Y armed
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
rmmod rdna1_mtype
