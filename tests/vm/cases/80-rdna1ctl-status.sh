# rdna1ctl status reports what the module and the machine really are.
mtype_down
out=$(rdna1ctl status)
echo "$out" | grep -q 'rdna1_mtype is not loaded' || fail "not-loaded: $out"
echo "$out" | grep -q 'no AMD GPU found' || fail "gpus: $out"
modprobe rdna1_mtype mode=enforce
out=$(rdna1ctl status)
echo "$out" | grep -q "rdna1_mtype $(cat /sys/module/rdna1_mtype/version) loaded" || fail "version: $out"
echo "$out" | grep -q 'mode:    enforce' || fail "mode: $out"
echo "$out" | grep -q 'scope:   rdna1' || fail "scope: $out"
echo "$out" | grep -q 'hook:    armed' || fail "hook: $out"
rmmod rdna1_mtype
