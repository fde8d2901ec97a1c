# fprobe's misses (calls whose exit handler it skipped, so never decided on: no room for the
# entry data on the return stack, or a kprobe already running) are reported: parameters/missed
# and `rdna1ctl status`. Nothing here can make fprobe miss on demand, so this proves the counter
# is there, reads 0 after calls that were all handled (each one was: its rewrite is checked)
# and that status prints it; not that a real miss is counted. Across a disarm/re-arm (amdgpu
# unloaded and loaded again): case 70, which reloads amdgpu anyway.
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce bo_layout=none
[ -r $PARAMS/missed ] || fail "no parameters/missed"
eq "$(cat $PARAMS/missed)" 0 "missed after load"
for i in 1 2 3 4 5 6 7 8; do
	mname "$(call "$REQ_CC" none "$IN")"
	eq "$M" NC "call $i"
done
eq "$(cat $PARAMS/missed)" 0 "missed after 8 handled calls"
rdna1ctl --json status | grep -q '"missed":0[,}]' || fail "status --json: $(rdna1ctl --json status)"
rmmod rdna1_mtype
