# The safe-by-default policy (issue 13), row by row on the real gmc_v10_0_get_vm_pte, built-in
# layout, mode=enforce, default classes (coherent) and vm_scope (compute):
# - compute VM (KFD's: a real amdgpu_vm with is_compute_context): a requested CC/WC on a memory
#   BO becomes NC; a requested UC (Mesa's GL2_BYPASS) is kept unless classes has uc_request;
#   a coherent BO (hipHostMalloc) becomes NC with class coherent, an uncached one only with
#   class uncached; amdgpu's seq64 kernel BO with its UC request is kept even with every class
#   on; KFD's sg attachment of coherent memory is kept and counted coherent_sg; doorbell and sg
#   BOs are kept;
# - graphics VM (a DRM client's) under vm_scope=compute: nothing changes, counted graphics_vm,
#   and no BO is read: a domains=0 BO there does not count layout_unknown, nor in mode off or
#   on an out-of-scope GPU; a NULL VM is vm_unknown; under vm_scope=all both are rewritten as
#   a compute VM is;
# - a domains=0 BO is unknown for its call only: the next call's memory BO is rewritten.
# kernels: test debian
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
D=0000:03:00.0
eq "$(cat $PARAMS/vm_scope) $(cat $PARAMS/classes)" "compute coherent" "defaults"
# Compute VM rows.
eq "$(mcall "$REQ_CC" plain "$IN")" NC "compute: CC on memory"
eq "$(mcall "$REQ_WC" vram "$IN")" NC "compute: WC on VRAM"
eq "$(mcall "$REQ_UC" plain "$IN")" UC "compute: requested UC (GL2_BYPASS) kept"
eq "$(mcall "$REQ_DEFAULT" coherent "$IN")" NC "compute: coherent BO"
eq "$(mcall "$REQ_DEFAULT" uncached "$IN")" UC "compute: uncached BO, class off"
eq "$(mcall "$REQ_DEFAULT" doorbell "$IN")" NC "compute: doorbell BO, NC as amdgpu made it"
eq "$(mcall "$REQ_CC" doorbell "$IN")" CC "compute: CC doorbell kept"
eq "$(mcall "$REQ_DEFAULT" sg_coherent "$IN")" UC "compute: KFD doorbell/MMIO sg kept"
eq "$(mcall "$REQ_CC" sg "$IN")" CC "compute: sg import kept"
sg=$(stat $D skip_coherent_sg)
eq "$(mcall "$REQ_DEFAULT" sg_attach "$IN")" UC "compute: KFD coherent sg attachment kept"
eq "$(stat $D skip_coherent_sg)" $((sg + 1)) "sg attachment counted coherent_sg"
echo coherent,uncached,uc_request >$PARAMS/classes
eq "$(mcall "$REQ_UC" plain "$IN")" NC "compute: requested UC with uc_request"
eq "$(mcall "$REQ_DEFAULT" uncached "$IN")" NC "compute: uncached BO with class uncached"
eq "$(mcall "$REQ_UC" seq64 "$IN")" UC "compute: seq64 kernel BO with every class"
eq "$(mcall "$REQ_DEFAULT" sg_attach "$IN")" UC "compute: sg attachment with every class"
echo none >$PARAMS/classes
eq "$(mcall "$REQ_DEFAULT" coherent "$IN")" UC "compute: coherent BO, classes=none"
echo coherent >$PARAMS/classes
# Graphics VM: untouched, counted, and its BO never read.
gvm=$(stat $D skip_graphics_vm)
unknown=$(stat $D skip_layout_unknown)
eq "$(mcall "$REQ_CC" plain "$IN" rdna1 graphics)" CC "graphics: CC on memory"
eq "$(mcall "$REQ_DEFAULT" coherent "$IN" rdna1 graphics)" UC "graphics: coherent BO"
eq "$(mcall "$REQ_CC" domains0 "$IN" rdna1 graphics)" CC "graphics: domains=0 BO"
eq "$(stat $D skip_graphics_vm)" $((gvm + 3)) "graphics VM calls counted"
eq "$(stat $D skip_layout_unknown)" "$unknown" "no BO read in a graphics VM"
eq "$(mcall "$REQ_CC" plain "$IN" rdna1 none)" CC "NULL VM"
eq "$(stat $D skip_vm_unknown)" 1 "NULL VM counted vm_unknown"
eq "$(mcall "$REQ_CC" domains0 "$IN" rdna2)" CC "out of scope: domains=0 BO"
eq "$(stat 0000:04:00.0 skip_layout_unknown)" 0 "no BO read out of scope"
echo off >$PARAMS/mode
eq "$(mcall "$REQ_CC" domains0 "$IN")" CC "mode off: domains=0 BO"
eq "$(stat $D skip_layout_unknown)" "$unknown" "no BO read in mode off"
echo enforce >$PARAMS/mode
# A domains=0 BO, read in a compute VM: unknown for that call, the next one as before.
eq "$(mcall "$REQ_CC" domains0 "$IN")" CC "compute: domains=0 BO"
eq "$(stat $D skip_layout_unknown)" $((unknown + 1)) "domains=0 BO counted layout_unknown"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "compute: memory BO right after a domains=0 BO"
eq "$(cat $PARAMS/bo_layout_status)" ok "layout status after a domains=0 BO"
# vm_scope=all: graphics and unknown VMs like compute ones.
echo all >$PARAMS/vm_scope
eq "$(mcall "$REQ_CC" plain "$IN" rdna1 graphics)" NC "vm_scope=all: graphics CC on memory"
eq "$(mcall "$REQ_DEFAULT" coherent "$IN" rdna1 graphics)" NC "vm_scope=all: graphics coherent BO"
eq "$(mcall "$REQ_UC" plain "$IN" rdna1 graphics)" UC "vm_scope=all: graphics requested UC kept"
eq "$(mcall "$REQ_UC" seq64 "$IN" rdna1 graphics)" UC "vm_scope=all: seq64 kept"
eq "$(mcall "$REQ_CC" plain "$IN" rdna1 none)" NC "vm_scope=all: NULL VM"
if echo graphics >$PARAMS/vm_scope 2>/dev/null; then fail "vm_scope=graphics accepted"; fi
eq "$(cat $PARAMS/vm_scope)" all "vm_scope after a refused write"
rmmod rdna1_mtype
# vm_scope given at load.
modprobe rdna1_mtype mode=enforce vm_scope=all
eq "$(mcall "$REQ_CC" plain "$IN" rdna1 graphics)" NC "vm_scope=all at load"
rmmod rdna1_mtype
