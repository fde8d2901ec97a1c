# After everything above loaded, used and unloaded rdna1_mtype (and amdgpu) many times:
# kmemleak finds no unreferenced object allocated by rdna1_mtype or its test modules.
# (KASAN and lockdep reports fail the run through the host's log scan.)
# boot: 1cpu 2cpu
K=/sys/kernel/debug/kmemleak
if [ ! -e $K ]; then
	echo "this kernel has no kmemleak (CONFIG_DEBUG_KMEMLEAK)"
	exit 4
fi
mtype_down
# Objects must be seen unreferenced by two scans before they are reported.
echo scan >$K
sleep 6
echo scan >$K
leaks=$(cat $K)
n=$(echo "$leaks" | grep -c 'unreferenced object' || true)
if echo "$leaks" | grep -q 'rdna1'; then
	echo "$leaks" | head -n 60
	fail "kmemleak reports objects from rdna1 modules"
fi
echo "kmemleak: $n unreferenced objects in all, none allocated by rdna1 modules"
