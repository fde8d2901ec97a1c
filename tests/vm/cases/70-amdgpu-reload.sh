# amdgpu unloaded under rdna1_mtype disarms it; amdgpu loaded again re-arms it.
# kernels: test debian
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
eq "$(armed)" Y "armed"
rmmod rdna1_mtype_harness
modprobe -r amdgpu
eq "$(armed)" N "armed after amdgpu unload"
modprobe amdgpu
eq "$(armed)" Y "armed after amdgpu reload"
insmod /opt/rdna1/rdna1_mtype_harness.ko
eq "$(mcall "$REQ_WC" none "$IN")" NC "WC after reload"
rmmod rdna1_mtype
