# While /dev/rdna1_mtype is open the module cannot be unloaded: the misc device's
# file_operations name the module as owner, so misc_open pins it (refcnt 1). rmmod (busybox's
# and kmod's) and modprobe -r (what package scripts run) fail, "in use", and the module keeps
# working while the device is held, by this shell (fd 3) or by a background `rdna1ctl events
# --follow`, also once its file is gone (what `dkms remove` does); once closed it unloads. Without the owner, rmmod succeeds and the holder's next
# ioctl or close runs freed module text (a kernel oops, which fails the boot: seen without the
# fix, "BUG: unable to handle page fault ... filp_flush ... [last unloaded: rdna1_mtype(O)]").
# kernels: test debian
mtype_down
modprobe rdna1_mtype mode=enforce
refcnt=/sys/module/rdna1_mtype/refcnt
eq "$(cat $refcnt)" 0 "refcnt with the device closed"

# Held by this shell.
exec 3</dev/rdna1_mtype
# busybox rmmod: the kernel's own answer for a module in use, EWOULDBLOCK (O_NONBLOCK).
if rmmod rdna1_mtype 2>/tmp/rmmod-err; then
	fail "rmmod succeeded while /dev/rdna1_mtype is open"
fi
grep -q 'Resource temporarily unavailable' /tmp/rmmod-err || fail "rmmod error: $(cat /tmp/rmmod-err)"
eq "$(cat $refcnt)" 1 "refcnt with the device open"
# kmod's rmmod and modprobe -r (what a distribution's scripts run) say "in use".
ln -sf /opt/kmod/kmod /tmp/rmmod
if /tmp/rmmod rdna1_mtype 2>/tmp/rmmod-err; then
	fail "kmod rmmod succeeded while /dev/rdna1_mtype is open"
fi
grep -q 'in use' /tmp/rmmod-err || fail "kmod rmmod error: $(cat /tmp/rmmod-err)"
if /opt/kmod/modprobe -r rdna1_mtype 2>/tmp/rmmod-err; then
	fail "modprobe -r succeeded while /dev/rdna1_mtype is open"
fi
grep -q 'in use' /tmp/rmmod-err || fail "modprobe -r error: $(cat /tmp/rmmod-err)"
grep -q '^rdna1_mtype ' /proc/modules || fail "module gone while held"
rdna1ctl status | grep -q 'mode:    enforce' || fail "status while held: $(rdna1ctl status)"
# What `dkms remove` does meanwhile: it deletes the installed module and runs depmod, and never
# unloads one (tests/install/run.sh checks the dkms it runs); the held module keeps serving.
# Where it is installed: updates/ here, updates/dkms/ (maybe compressed) where DKMS put it.
ko=$(find /lib/modules/"$(uname -r)" -name 'rdna1_mtype.ko*' | head -n 1)
[ -n "$ko" ] || fail "no installed rdna1_mtype module under /lib/modules/$(uname -r)"
mv "$ko" /tmp/rdna1_mtype.ko.removed
/opt/kmod/depmod
if /opt/kmod/modprobe -r rdna1_mtype 2>/tmp/rmmod-err; then
	fail "modprobe -r succeeded after the module's file was removed, while held"
fi
grep -q '^rdna1_mtype ' /proc/modules || fail "module gone after its file was removed"
rdna1ctl events >/dev/null || fail "events after the module's file was removed"
exec 3<&-
eq "$(cat $refcnt)" 0 "refcnt after close"
rmmod rdna1_mtype
mv /tmp/rdna1_mtype.ko.removed "$ko"
/opt/kmod/depmod

# Held by a background reader, as `rdna1ctl events --follow` in a terminal.
modprobe rdna1_mtype mode=enforce
rdna1ctl events --follow >/dev/null &
pid=$!
n=0
until ls -l /proc/$pid/fd 2>/dev/null | grep -q rdna1_mtype; do
	n=$((n + 1))
	[ $n -le 60 ] || fail "rdna1ctl events --follow never opened the device"
	sleep 1
done
if /tmp/rmmod rdna1_mtype 2>/tmp/rmmod-err; then
	fail "rmmod succeeded while rdna1ctl events --follow holds the device"
fi
grep -q 'in use' /tmp/rmmod-err || fail "rmmod error: $(cat /tmp/rmmod-err)"
eq "$(cat $refcnt)" 1 "refcnt held by rdna1ctl events --follow"
# The follower keeps polling (READ_EVENTS ioctls) through the refused unload.
sleep 1
kill -0 $pid || fail "rdna1ctl events --follow died"
kill $pid
wait $pid || true
rmmod rdna1_mtype
[ ! -d /sys/module/rdna1_mtype ] || fail "sysfs dir left"
