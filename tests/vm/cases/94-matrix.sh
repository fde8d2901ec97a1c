# Every device (RDNA1 x2, RDNA2, non-AMD, unidentifiable) x requested MTYPE (6) x BO kind (none,
# GTT, VRAM, userptr, coherent, ext_coherent, uncached, KFD doorbell/MMIO-remap sg, sg import,
# GEM doorbell, seq64 kernel BO, KFD coherent sg attachment, domains=0) x VM (compute, graphics,
# none) x mode x (scope, vm_scope) (rdna1/compute, gfx10/compute, rdna1/all) x classes (default;
# coherent,uncached,uc_request) x layout (unset, set): 42120 calls of the real function, each
# compared with the documented decision (policy::decide).
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype
rdna1-abi-probe matrix
rmmod rdna1_mtype
