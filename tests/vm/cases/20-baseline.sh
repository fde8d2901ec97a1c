# Without rdna1_mtype the real function does what amdgpu's source says. In particular a CC
# request gives CC: the rewrite tests below can fail.
# kernels: test debian
mtype_down
harness_up
baseline >/dev/null
check() { # REQ BO WANT
	M=""
	while read -r r b f; do
		[ "$r $b" != "$1 $2" ] || mname "$f"
	done </tmp/baseline
	eq "$M" "$3" "baseline $1/$2"
}
check CC none CC
check WC none WC
check UC none UC
check DEFAULT none NC
check RW none NC
check CC plain CC
check DEFAULT coherent UC
check DEFAULT ext_coherent UC
check DEFAULT uncached UC
check DEFAULT sg_coherent UC
# EXECUTABLE follows the request: bit 4 cleared for our non-executable requests.
out=$(call "$REQ_NC" none 0x77)
eq "$out" 0x0000000000000067 "EXECUTABLE cleared"
