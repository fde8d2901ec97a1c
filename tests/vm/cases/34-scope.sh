# Device scope, through real pci_dev objects behind adev: only in-scope AMD devices are
# rewritten; out-of-scope, non-AMD and unidentifiable devices never are.
# kernels: test debian
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
eq "$(cat $PARAMS/scope)" rdna1 "default scope"
# expect SCOPE "rdna1 rdna1b rdna2 other unknown" -> MTYPE a CC request gets on each GPU
expect() {
	echo "$1" >$PARAMS/scope
	eq "$(cat $PARAMS/scope)" "$1" "scope read back"
	scope=$1
	set -- $2
	for gpu in rdna1 rdna1b rdna2 other unknown; do
		eq "$(mcall "$REQ_CC" none "$IN" $gpu)" "$1" "scope $scope, $gpu"
		shift
	done
}
expect rdna1 "NC NC CC CC CC"
expect gfx10 "NC NC NC CC CC"
expect 0000:04:00.0 "CC CC NC CC CC"
expect 0001:0a:00.0,0000:03:00.0 "NC NC CC CC CC"
# A listed non-AMD device is still never touched.
expect 0000:05:00.0 "CC CC CC CC CC"
rmmod rdna1_mtype
# Scope given at load.
modprobe rdna1_mtype mode=enforce scope=gfx10
eq "$(mcall "$REQ_CC" none "$IN" rdna2)" NC "scope=gfx10 at load"
rmmod rdna1_mtype
