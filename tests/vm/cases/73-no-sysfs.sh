# rdna1_mtype loaded where /sys is not mounted (a mount namespace without it), amdgpu live: it
# cannot tell whether amdgpu is unloading, so it must not arm, and arm_error (status) must say
# why. Before round 3 it took the missing /sys/module/amdgpu/initstate for an amdgpu unloading:
# unarmed, with arm_error empty and "waiting" in the log.
# kernels: test
harness_up
mtype_down
ko=$(modinfo -n rdna1_mtype)
unshare -m --propagation private sh -c "umount -l /sys && insmod $ko mode=enforce" ||
	fail "insmod without /sys"
eq "$(armed)" N "armed without sysfs, where amdgpu's state cannot be read"
case $(cat "$PARAMS/arm_error") in
"/sys/module is not reachable where rdna1_mtype was loaded"*) ;;
*) fail "arm_error without sysfs: '$(cat "$PARAMS/arm_error")'" ;;
esac
rdna1ctl status | grep -q '/sys/module is not reachable' || fail "status: $(rdna1ctl status)"
rmmod rdna1_mtype
