# Every device (RDNA1 x2, RDNA2, non-AMD, unidentifiable) x requested MTYPE (6) x BO kind (none,
# GTT, VRAM, userptr, coherent, ext_coherent, uncached, KFD doorbell/MMIO-remap sg, sg import,
# GEM doorbell) x mode x scope (rdna1, gfx10) x classes x layout (unset, set): 7200 calls of the
# real function, each compared with the documented decision (policy::decide).
mtype_down
harness_up
modprobe rdna1_mtype
rdna1-abi-probe matrix
rmmod rdna1_mtype
