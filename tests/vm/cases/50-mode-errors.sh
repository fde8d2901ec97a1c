# Invalid modes are refused and change nothing; an invalid mode at load refuses the load.
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
# (A newline alone is what `echo >mode` writes.)
for bad in Enforce audit "off x" " off" "
"; do
	if printf '%s' "$bad" >$PARAMS/mode 2>/dev/null; then fail "mode '$bad' accepted"; fi
	eq "$(cat $PARAMS/mode)" enforce "mode after writing '$bad'"
done
eq "$(mtype_name "$(call "$(req UC)" none "$IN")")" NC "still enforcing"
rmmod rdna1_mtype
if modprobe rdna1_mtype mode=bogus 2>/dev/null; then fail "mode=bogus loaded"; fi
grep -q '^rdna1_mtype ' /proc/modules && fail "module present after refused load"
true
