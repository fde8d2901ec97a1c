# The module arms only on the amdgpu whose BTF the DKMS build checked (kmod/arming.rs,
# shared/src/btf_id.rs): on Debian's kernel DKMS compiled that amdgpu's BTF id in, and
# tests/debian/run.sh built a second copy, rdna1_mtype_stale.ko, with another id (an amdgpu
# replaced after the build). Both ways of reading the loaded amdgpu's BTF are checked: from
# /sys/kernel/btf/amdgpu (amdgpu already live) and from amdgpu's own .BTF while it is coming.
# kernels: test debian
[ -e /opt/rdna1/rdna1_mtype_stale.ko ] ||
	{ echo "no module built with a BTF id here (a kernel without module BTF)"; exit 4; }
stale_refused() { # WHEN
	eq "$(armed)" N "stale module armed ($1)"
	grep -q "BTF (id 0x[0-9a-f]*) is not the one checked when this module was built (0x1)" \
		"$PARAMS/arm_error" || fail "arm_error ($1): $(cat "$PARAMS/arm_error")"
}
mtype_down
harness_up
# amdgpu live.
modprobe rdna1_mtype mode=enforce
eq "$(armed)" Y "DKMS-built module on the amdgpu it checked"
eq "$(cat "$PARAMS/arm_error")" "" "arm_error when armed"
rmmod rdna1_mtype
insmod /opt/rdna1/rdna1_mtype_stale.ko mode=enforce
stale_refused live
eq "$(mcall "$REQ_CC" plain "$IN")" CC "stale module: mapping not modified"
rmmod rdna1_mtype
# amdgpu coming.
rmmod rdna1_mtype_harness
modprobe -r amdgpu
insmod /opt/rdna1/rdna1_mtype_stale.ko mode=enforce
modprobe amdgpu
stale_refused coming
rmmod rdna1_mtype
modprobe -r amdgpu
modprobe rdna1_mtype mode=enforce
modprobe amdgpu
eq "$(armed)" Y "DKMS-built module armed as the checked amdgpu came"
insmod /opt/rdna1/rdna1_mtype_harness.ko
eq "$(mcall "$REQ_CC" plain "$IN")" NC "rewritten"
rmmod rdna1_mtype
