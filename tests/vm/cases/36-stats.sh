# Per-device stats count exactly the calls made, by outcome.
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
[ -z "$(cat $PARAMS/stats)" ] || fail "stats not empty after load: $(cat $PARAMS/stats)"
call "$(req CC)" none "$IN" >/dev/null
call "$(req CC)" plain "$IN" >/dev/null
call "$(req WC)" none "$IN" >/dev/null
call "$(req UC)" none "$IN" >/dev/null
call "$(req DEFAULT)" none "$IN" >/dev/null
call "$(req DEFAULT)" sg_coherent "$IN" >/dev/null
call "$(req UC)" plain "$IN" >/dev/null
call "$(printf '0x%x' $(($(req CC) | 0x10)))" none "$IN" >/dev/null
call "$(req CC)" none 0x66 >/dev/null
call "$(req CC)" none "$IN" rdna2 >/dev/null
call "$(req CC)" none "$IN" unknown >/dev/null
echo audit >$PARAMS/mode
call "$(req CC)" none "$IN" >/dev/null
echo off >$PARAMS/mode
call "$(req WC)" none "$IN" >/dev/null
D=0000:03:00.0
eq "$(stat $D calls)" 11 "calls"
eq "$(stat $D rewritten_cc)" 2 rewritten_cc
eq "$(stat $D rewritten_wc)" 1 rewritten_wc
eq "$(stat $D rewritten_uc)" 1 rewritten_uc
eq "$(stat $D skip_already_nc)" 1 skip_already_nc
eq "$(stat $D skip_bo_uncached)" 2 skip_bo_uncached
eq "$(stat $D skip_not_a_valid_page)" 2 skip_not_a_valid_page
eq "$(stat $D would_rewrite_cc)" 1 would_rewrite_cc
eq "$(stat $D skip_mode_off)" 1 skip_mode_off
grep -q "^$D 1002:731f " $PARAMS/stats || fail "vendor:device: $(cat $PARAMS/stats)"
eq "$(stat 0000:04:00.0 skip_out_of_scope)" 1 "rdna2 out of scope"
eq "$(stat unknown-device skip_device_unknown)" 1 "unknown device"
rmmod rdna1_mtype
