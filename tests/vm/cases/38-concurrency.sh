# Policy flips and an unload while another CPU keeps calling the real function: every result is
# a whole old-or-new outcome, the kernel reports nothing (the host fails on any WARNING/BUG),
# and after the unload the function behaves as without the module.
# needs: cpus=2
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
# The harness serialises its own calls; run a caller and a flipper on different CPUs.
(
	i=0
	while [ $i -lt 200 ]; do
		r=$(mtype_name "$(call "$(req CC)" none "$IN")")
		case $r in NC | CC) ;; *) echo "bad result $r" >/tmp/conc-bad ;; esac
		i=$((i + 1))
	done
	echo done >/tmp/conc-caller
) &
caller=$!
i=0
while [ $i -lt 100 ]; do
	echo audit >$PARAMS/mode
	echo 0000:04:00.0 >$PARAMS/scope
	echo enforce >$PARAMS/mode
	echo rdna1 >$PARAMS/scope
	i=$((i + 1))
done
rmmod rdna1_mtype
wait $caller
[ -f /tmp/conc-caller ] || fail "caller did not finish"
[ ! -f /tmp/conc-bad ] || fail "$(cat /tmp/conc-bad)"
eq "$(mtype_name "$(call "$(req CC)" none "$IN")")" CC "after unload"
