# mode=off, at load or switched at runtime, is identical to no module at all.
# kernels: test debian
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=off
eq "$(cat $PARAMS/mode)" off mode
table >/tmp/off
cmp /tmp/baseline /tmp/off || fail "mode=off at load differs from no module"
# Counted at the function's entry (no return hooked): each call once, as mode_off.
D=0000:03:00.0
n=$(stat $D calls)
[ "$n" -gt 0 ] || fail "no call counted in mode off: $(cat $PARAMS/stats)"
eq "$(stat $D skip_mode_off)" "$n" "mode_off = calls"
echo enforce >$PARAMS/mode
eq "$(mcall "$REQ_CC" none "$IN")" NC "after switch to enforce"
echo off >$PARAMS/mode
table >/tmp/off2
cmp /tmp/baseline /tmp/off2 || fail "mode switched to off differs from no module"
rmmod rdna1_mtype
