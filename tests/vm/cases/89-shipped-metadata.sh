# The module DKMS built against headers that ship the kernel's Rust metadata, laid out as
# Arch's linux-headers and as Ubuntu's linux-headers + linux-lib-rust
# (tests/debian/headers-shape.sh): tests/debian/run.sh found each the same module as Debian's
# DKMS build (every loaded section equal); here each loads on Debian's kernel, arms on its
# amdgpu and rewrites a mapping through the real gmc_v10_0_get_vm_pte.
# kernels: debian-7.2
for shape in arch ubuntu; do
	[ -e "/opt/rdna1/rdna1_mtype_$shape.ko" ] || fail "no module built against $shape's headers"
done
mtype_down
harness_up
for shape in arch ubuntu; do
	insmod "/opt/rdna1/rdna1_mtype_$shape.ko" mode=enforce
	eq "$(armed)" Y "built against $shape's headers: armed"
	eq "$(cat "$PARAMS/arm_error")" "" "built against $shape's headers: arm_error"
	eq "$(mcall "$REQ_CC" plain "$IN")" NC "built against $shape's headers: CC rewritten"
	eq "$(mcall "$REQ_UC" plain "$IN")" UC "built against $shape's headers: requested UC kept"
	rmmod rdna1_mtype
done
