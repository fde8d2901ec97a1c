# After rmmod the function behaves exactly as with no module: nothing stays armed.
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=enforce
eq "$(mcall "$REQ_CC" none "$IN")" NC "loaded"
rmmod rdna1_mtype
[ ! -d /sys/module/rdna1_mtype ] || fail "sysfs dir left"
table >/tmp/after-rmmod
cmp /tmp/baseline /tmp/after-rmmod || fail "after rmmod differs from no module"
dmesg | grep -q 'rdna1_mtype: unloaded: nothing armed' || fail "no unload line"
