# The amdgpu_bo layout: refused when it cannot be right, used when set, and dropped (no BO
# touched, status says so) as soon as a BO read through it breaks an invariant.
mtype_down
harness_up
good=$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)
# By default the module uses its built-in layout, equal to amdgpu's real one.
modprobe rdna1_mtype mode=enforce
eq "$(cat $PARAMS/bo_layout)" "$good" "built-in layout at load"
eq "$(cat $PARAMS/bo_layout_source)" builtin "source at load"
eq "$(cat $PARAMS/bo_layout_status)" ok "status at load"
dmesg | grep -q "rdna1_mtype: amdgpu_bo layout: built-in $good" || fail "no dmesg line for the built-in layout"
rmmod rdna1_mtype
# bo_layout=none at load: no layout, and the built-in one is not picked behind root's back.
modprobe rdna1_mtype mode=enforce bo_layout=none
eq "$(cat $PARAMS/bo_layout)" none "layout at load"
eq "$(cat $PARAMS/bo_layout_source)" set "source with bo_layout=none"
eq "$(cat $PARAMS/bo_layout_status)" unset "status at load"
size=$(echo "$good" | tr ' ' '\n' | grep ^size= | cut -d= -f2)
for bad in "size=70000 preferred_domains=0 tbo=56 flags=64" \
	"size=$size preferred_domains=0 tbo=8 flags=$size" \
	"size=$size preferred_domains=2 tbo=8 flags=16" \
	"size=$size preferred_domains=0 tbo=8 flags=8" \
	"size=$size" "garbage" "size=1 size=1 preferred_domains=0 tbo=0 flags=0"; do
	if printf '%s' "$bad" >$PARAMS/bo_layout 2>/dev/null; then fail "layout '$bad' accepted"; fi
	eq "$(cat $PARAMS/bo_layout)" none "layout after writing '$bad'"
done
layout_set
eq "$(cat $PARAMS/bo_layout)" "$good" "layout read back"
eq "$(cat $PARAMS/bo_layout_source)" set "source after a write"
eq "$(cat $PARAMS/bo_layout_status)" ok status
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO with layout"
# A BO no amdgpu BO can be (what a wrong layout reads) disables classification.
eq "$(mcall "$REQ_CC" corrupt "$IN")" CC "corrupt BO"
eq "$(cat $PARAMS/bo_layout_status)" invalid "status after a corrupt BO"
dmesg | grep -q 'rdna1_mtype: amdgpu_bo layout failed validation' || fail "no dmesg line"
eq "$(mcall "$REQ_CC" plain "$IN")" CC "memory BO after the layout failed"
eq "$(mcall "$REQ_CC" none "$IN")" NC "no BO: still enforced"
# Setting a layout again re-enables it; none clears it.
layout_set
eq "$(cat $PARAMS/bo_layout_status)" ok "status after setting again"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO again"
echo none >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout_status)" unset "status after none"
eq "$(mcall "$REQ_CC" plain "$IN")" CC "memory BO without layout"
# builtin brings the module's own layout back.
echo builtin >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout)" "$good" "layout after builtin"
eq "$(cat $PARAMS/bo_layout_source)" builtin "source after builtin"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO with the built-in layout"
rmmod rdna1_mtype
