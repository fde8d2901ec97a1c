# The module exactly as the real dkms built and installed it (tests/install/run.sh) loads on
# the test kernel, arms on amdgpu and rewrites a call.
# must-pass
ko=/opt/rdna1/dkms/rdna1_mtype.ko
if [ ! -f "$ko" ]; then
	echo "no DKMS-built module in this image: make test's install-tests stage builds it (where it failed, build/test/log/install-tests.log says why); tests/vm/run-cases.sh does not"
	exit 4
fi
mtype_down
harness_up
insmod "$ko" mode=enforce
eq "$(cat /sys/module/rdna1_mtype/version)" "$(cat /opt/rdna1/version)" "version of the DKMS module"
eq "$(armed)" Y armed
eq "$(cat $PARAMS/bo_layout_source)" builtin "layout source"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO through the DKMS module"
rmmod rdna1_mtype
