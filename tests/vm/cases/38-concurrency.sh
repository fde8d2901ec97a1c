# Policy flips and an unload while another CPU keeps calling the real function: every result is
# a whole old-or-new outcome, the kernel reports nothing (the host fails on any WARNING/BUG),
# and after the unload the function behaves as without the module.
# needs: cpus=2
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce
# A compiled caller pinned to CPU 1 and the flips and the unload on CPU 0 (tests/abi-probe,
# race.rs): far more calls interleave with the flips than a shell loop managed.
rdna1-abi-probe race 100
grep -q '^rdna1_mtype ' /proc/modules && fail "rdna1_mtype still loaded after the race"
eq "$(mcall "$REQ_CC" none "$IN")" CC "after unload"
