# The stats parameter fits its 4 KiB sysfs page however many devices are counted: a line that
# does not fit is left out whole, and a last "truncated:" line says how many were (GET_STATS has
# them all); reading it never fails (it was -EINVAL past 4 KiB, from the 11th device on). A
# device in a PCI domain >= 0x10000 (behind an Intel VMD) cannot be packed into the ABI's 32-bit
# address: it is an unknown device (never in scope, counted under unknown-device), never the
# domain-0 device whose address it would alias (10000:03:00.0 -> 0000:03:00.0).
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce bo_layout=none
# 14 devices (every slot of the table) and the unknown one: ~5.5 KiB of lines.
for g in rdna1 rdna1b rdna2 other fill0 fill1 fill2 fill3 fill4 fill5 fill6 fill7 fill8 fill9 unknown; do
	call "$REQ_CC" none "$IN" $g >/dev/null
done
cat $PARAMS/stats >/tmp/stats || fail "reading stats with 14 devices failed"
n=$(wc -c </tmp/stats)
[ "$n" -le 4096 ] || fail "stats is $n bytes"
last=$(tail -n 1 /tmp/stats)
case $last in
"truncated: "*) ;;
*) fail "no truncated line last: $last" ;;
esac
shown=$(grep -c ' skip_coherent_sg=[0-9]*$' /tmp/stats)
[ "$shown" -eq $(($(wc -l </tmp/stats) - 1)) ] || fail "a partial line: $(cat /tmp/stats)"
left=$(echo "$last" | sed -n 's/^truncated: \([0-9]*\) more lines.*/\1/p')
eq "$((shown + left))" 15 "lines shown ($shown) + left out ($left)"
grep -q '^0000:03:00.0 1002:731f calls=1 ' /tmp/stats || fail "first device: $(cat /tmp/stats)"
rmmod rdna1_mtype
modprobe rdna1_mtype mode=enforce bo_layout=none scope=0000:03:00.0
mname "$(call "$REQ_CC" none "$IN" vmd)"
eq "$M" CC "10000:03:00.0 rewritten as if it were the in-scope 0000:03:00.0"
eq "$(stat 0000:03:00.0 calls)" 0 "10000:03:00.0 counted as 0000:03:00.0"
eq "$(stat unknown-device skip_device_unknown)" 1 "10000:03:00.0 counted as an unknown device"
mname "$(call "$REQ_CC" none "$IN" rdna1)"
eq "$M" NC "0000:03:00.0 itself"
eq "$(stat 0000:03:00.0 rewritten_cc)" 1 "0000:03:00.0 counted"
rmmod rdna1_mtype
