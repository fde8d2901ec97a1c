# /dev/rdna1_mtype: root-only node; every ioctl error path (unknown command, wrong size and
# version, bad values, bad and kernel pointers, ENOENT, EPERM for a non-root caller); then a
# seeded fuzz run that must only get documented answers (the host fails on any kernel warning).
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
[ -c /dev/rdna1_mtype ] || fail "no /dev/rdna1_mtype"
eq "$(ls -ln /dev/rdna1_mtype | awk '{print $1, $3, $4}')" "crw------- 0 0" "device node mode"
call "$REQ_CC" none "$IN" >/dev/null   # at least one event exists
rdna1-abi-probe errors
# No pipe: set -e sees only a pipeline's last command, so a failing fuzz must not be piped.
# 5,000 each: fuzz now also compares the policy after every rejected ioctl (case 64 adds more).
rdna1-abi-probe fuzz 5000 7
rdna1-abi-probe fuzz 5000 8
eq "$(cat $PARAMS/mode) $(cat $PARAMS/scope)" "enforce rdna1" "policy restored after fuzzing"
rmmod rdna1_mtype
