# Invalid modes and scopes are refused and change nothing; invalid values at load refuse the
# load.
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
# (A newline alone is what `echo >mode` writes.)
for bad in Enforce AUDIT "off x" " off" "
"; do
	if printf '%s' "$bad" >$PARAMS/mode 2>/dev/null; then fail "mode '$bad' accepted"; fi
	eq "$(cat $PARAMS/mode)" enforce "mode after writing '$bad'"
done
eq "$(mcall "$REQ_CC" none "$IN")" NC "still enforcing"
for bad in RDNA1 all "0000:03:00.0," "03:00.0" "0000:03:00.8" \
	"0000:01:00.0,0000:02:00.0,0000:03:00.0,0000:04:00.0,0000:05:00.0,0000:06:00.0,0000:07:00.0,0000:08:00.0,0000:09:00.0"; do
	if printf '%s' "$bad" >$PARAMS/scope 2>/dev/null; then fail "scope '$bad' accepted"; fi
	eq "$(cat $PARAMS/scope)" rdna1 "scope after writing '$bad'"
done
rmmod rdna1_mtype
for bad in mode=bogus scope=bogus; do
	if modprobe rdna1_mtype $bad 2>/dev/null; then fail "$bad loaded"; fi
	grep -q '^rdna1_mtype ' /proc/modules && fail "module present after refused load ($bad)"
done
true
