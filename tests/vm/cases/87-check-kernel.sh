# rdna1ctl check-kernel and doctor's kernel.contract on the running kernel, amdgpu loaded: with
# module BTF (Debian's kernel) the verdict is read from it, and the offsets it derives equal
# what the harness, compiled against amdgpu's headers, knows; without (the test kernel, no
# BTF) it rests on the release whose source was verified. Either way: hookable, exit 0.
# kernels: test debian
# boot: 2cpu
mtype_down
harness_up
rc=0
out=$(rdna1ctl --json check-kernel) || rc=$?
eq "$rc" 0 "check-kernel exit ($out)"
echo "$out" | grep -q '"hookable":true' || fail "check-kernel: $out"
if [ -e /sys/kernel/btf/amdgpu ]; then
	echo "$out" | grep -q '"basis":"btf"' || fail "basis with module BTF: $out"
	# The amdgpu_bo layout check-kernel derived is the one the harness was compiled with.
	truth=$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)
	rdna1ctl check-kernel | grep -q "$truth" || fail "check-kernel's layout is not $truth: $(rdna1ctl check-kernel)"
else
	echo "$out" | grep -q '"basis":"verified_source"' || fail "basis without module BTF: $out"
fi
doc=$(rdna1ctl doctor --json) || true
echo "$doc" | grep -q '{"id":"kernel.contract","status":"ok"' || fail "doctor kernel.contract: $doc"
