# rdna1ctl set changes the whole policy in one SET_POLICY; rdna1ctl events shows each logged
# decision with the caller's pid and comm; rdna1ctl status shows the per-device counters;
# out-of-scope calls, graphics VMs (vm_scope=compute) and unmaps are counted, not logged; an
# overrun ring reports the events it lost.
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype
out=$(rdna1ctl set --mode enforce --scope gfx10 --classes coherent,uncached)
echo "$out" | grep -q '^scope:   gfx10$' || fail "set output: $out"
eq "$(cat $PARAMS/mode) $(cat $PARAMS/scope) $(cat $PARAMS/classes)" "enforce gfx10 coherent,uncached" "sysfs after set"
if rdna1ctl set --mode turbo 2>/tmp/err; then fail "set --mode turbo accepted"; fi
grep -q 'not a mode' /tmp/err || fail "error text: $(cat /tmp/err)"
if rdna1ctl set 2>/dev/null; then fail "set with nothing accepted"; fi
layout_set
call "$REQ_CC" none "$IN" >/dev/null
call "$REQ_DEFAULT" uncached "$IN" >/dev/null
call "$REQ_CC" sg_coherent "$IN" rdna2 >/dev/null
call "$REQ_DEFAULT" none "$IN" >/dev/null     # already NC: counted, not logged
call "$REQ_CC" plain "$IN" rdna1 stack graphics >/dev/null   # graphics VM: counted, not logged
call "$REQ_CC" none 0x66 >/dev/null           # not a valid page (an unmap): counted, not logged
ev=$(rdna1ctl events)
echo "$ev" | grep -E " $$ +sh +0000:03:00.0 1002:731f +compute +CC +CC +NC +none +rewrite$" >/dev/null || fail "CC event: $ev"
echo "$ev" | grep -E " $$ +sh +0000:03:00.0 1002:731f +compute +DEFAULT +UC +NC +uncached +rewrite$" >/dev/null || fail "uncached event: $ev"
echo "$ev" | grep -E " 0000:04:00.0 1002:73bf +compute +CC +UC +UC +coherent_sg +keep:coherent_sg$" >/dev/null || fail "coherent sg event: $ev"
eq "$(echo "$ev" | grep -c ' sh ')" 3 "logged events (already-NC, graphics VM and unmap calls not logged)"
echo "$ev" | tail -n 1 | grep -q '^3 events logged since load; 0 lost$' || fail "summary: $ev"
st=$(rdna1ctl status)
echo "$st" | grep -q 'stats:   0000:03:00.0 \[1002:731f\]: 5 calls, rewritten WC 0 CC 1 UC 1' || fail "status stats: $st"
eq "$(stat 0000:03:00.0 skip_graphics_vm)" 1 "graphics VM call counted"
eq "$(stat 0000:03:00.0 skip_not_a_valid_page)" 1 "unmap counted"
# Out of scope: counted, never logged (the overrun figures below would be off by one).
echo rdna1 >$PARAMS/scope
call "$REQ_CC" none "$IN" rdna2 >/dev/null
eq "$(stat 0000:04:00.0 skip_out_of_scope)" 1 "out-of-scope call counted"
# Overrun: 1100 more logged decisions than the 1024-entry ring holds.
echo audit >$PARAMS/mode
rdna1-abi-probe calls 1100 "$REQ_CC" none "$IN" || fail "1100 calls"
ev=$(rdna1ctl events)
echo "$ev" | grep -q '^-- 79 events lost' || fail "lost line: $(echo "$ev" | head -n 3)"
echo "$ev" | tail -n 1 | grep -q '^1103 events logged since load; 79 lost$' || fail "overrun summary: $(echo "$ev" | tail -n 1)"
rmmod rdna1_mtype
