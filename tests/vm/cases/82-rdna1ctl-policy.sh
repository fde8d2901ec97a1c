# rdna1ctl enable/disable/set/apply/events against the real module: each prints the policy the
# module reads back, bad input is refused before anything is sent (exit 2 for the command
# line, 1 for a bad config), non-root gets exit 4, and a missing module exit 5.
# kernels: test debian
# boot: 2cpu
mtype_down
harness_up
# as_nobody CMD...: runs CMD as uid/gid 65534 (busybox su needs a passwd entry).
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
# The initramfs root is 0700 (root's): nobody could not even start a shell, so open it up
# while these checks run, and put it back at the end.
# (command: lib.sh has a stat helper of its own)
rootmode=$(command stat -c %a /)
[ ${#rootmode} -eq 3 ] || fail "mode of /: '$rootmode'"
chmod 755 /
as_nobody() { su -s /bin/sh -c "$*" nobody; }
rc() { set +e; "$@" >/tmp/rc.out 2>&1; echo $?; set -e; }
# exits WANT CMD...: CMD exits WANT (its output is shown if not).
exits() {
	want=$1
	shift
	got=$(rc "$@")
	[ "$got" = "$want" ] || fail "$*: exit $got, want $want: $(cat /tmp/rc.out)"
}

exits 5 rdna1ctl enable
grep -q 'rdna1_mtype loaded' /tmp/rc.out || fail "no-module message: $(cat /tmp/rc.out)"
modprobe rdna1_mtype
eq "$(cat $PARAMS/mode)" off "default mode"

rdna1ctl enable --scope gfx10 >/tmp/out
grep -q '^mode:    enforce' /tmp/out || fail "enable output: $(cat /tmp/out)"
eq "$(cat $PARAMS/mode)" enforce "mode after enable"
eq "$(cat $PARAMS/scope)" gfx10 "scope after enable"
eq "$(rdna1ctl --json disable)" '{"schema_version":2,"command":"policy","mode":"off","scope":"gfx10","classes":"coherent","vm_scope":"compute"}' "disable --json"
eq "$(cat $PARAMS/mode)" off "mode after disable"

# Bad values never reach the module.
exits 2 rdna1ctl set --mode turbo
grep -q 'not a mode: use off, audit or enforce' /tmp/rc.out || fail "bad mode message: $(cat /tmp/rc.out)"
exits 2 rdna1ctl set --scope 0000:03:00.0,0000:03:00.0,1,2,3,4,5,6,7
eq "$(cat $PARAMS/scope)" gfx10 "scope after refused input"

# Non-root: reading status works, changing the policy does not.
exits 0 as_nobody rdna1ctl status
exits 4 as_nobody rdna1ctl enable
grep -qi 'root' /tmp/rc.out || fail "non-root message: $(cat /tmp/rc.out)"
eq "$(cat $PARAMS/mode)" off "mode after non-root enable"

# apply: the whole file is checked first; an unknown key is named and nothing changes.
mkdir -p /etc/rdna1-mtype
printf 'schema = 1\nmode = "enforce"\nscope = "rdna1"\nclases = ["coherent"]\n' >/etc/rdna1-mtype/config.toml
exits 1 rdna1ctl apply
grep -q 'clases' /tmp/rc.out || fail "unknown key not named: $(cat /tmp/rc.out)"
eq "$(cat $PARAMS/mode)" off "mode after a refused config"
# The shipped default config, as the systemd unit runs it.
cp /opt/rdna1/dist/config/config.toml /etc/rdna1-mtype/config.toml
echo none >$PARAMS/bo_layout
rdna1ctl apply --dry-run >/tmp/out
eq "$(cat $PARAMS/mode)" off "mode after --dry-run"
grep -q 'would set' /tmp/out || fail "dry-run output: $(cat /tmp/out)"
rdna1ctl apply >/tmp/out
grep -q 'applied' /tmp/out || fail "apply output: $(cat /tmp/out)"
eq "$(cat $PARAMS/mode)" enforce "mode after apply"
eq "$(cat $PARAMS/scope)" rdna1 "scope after apply"
eq "$(cat $PARAMS/classes)" coherent "classes after apply"
# layout = "auto": the one read from amdgpu's BTF where the kernel has module BTF (Debian's),
# else the built-in layout (the test kernel).
if [ -e /sys/kernel/btf/amdgpu ]; then
	eq "$(cat $PARAMS/bo_layout_source)" set "layout after apply (from BTF)"
else
	eq "$(cat $PARAMS/bo_layout_source)" builtin "layout after apply"
fi
eq "$(cat $PARAMS/bo_layout)" "$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)" "layout value after apply"
exits 4 as_nobody rdna1ctl apply --config /etc/rdna1-mtype/config.toml

# events: the decisions the calls above cause, as text and JSON.
call "$REQ_CC" plain "$IN" >/dev/null
call "$REQ_UC" doorbell "$IN" >/dev/null
rdna1ctl events >/tmp/out
grep -q 'CC .*NC .*memory .*rewrite' /tmp/out || fail "events text: $(cat /tmp/out)"
rdna1ctl --json events >/tmp/out
grep -q '"requested":"cc","before":"cc","written":"nc","class":"memory","action":"rewrite","skip_reason":null' /tmp/out ||
	fail "events json: $(cat /tmp/out)"
grep -q '"pci_address":"0000:03:00.0","vendor_id":"0x1002","device_id":"0x[0-9a-f]\{4\}"' /tmp/out ||
	fail "events json ids: $(cat /tmp/out)"
grep -q '"class":"never","action":"keep","skip_reason":"never_class"' /tmp/out || fail "doorbell keep event: $(cat /tmp/out)"
exits 4 as_nobody rdna1ctl events
chmod "$rootmode" /
rmmod rdna1_mtype
