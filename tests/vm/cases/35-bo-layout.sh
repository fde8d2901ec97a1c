# The amdgpu_bo layout: refused when it cannot be right, used when set. A BO that breaks an
# invariant (a corrupt one, or a render node's GEM_CREATE with domains = 0) is unknown for that
# call only: kept, counted (layout_unknown), logged with the invariant; the next call's BO is
# classified as before and the status stays ok (no BO can switch classification off).
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
D=0000:03:00.0
for bad in corrupt domains0; do
	unknown=$(stat $D skip_layout_unknown)
	eq "$(mcall "$REQ_CC" $bad "$IN")" CC "$bad BO"
	eq "$(stat $D skip_layout_unknown)" $((unknown + 1)) "$bad BO counted layout_unknown"
	eq "$(cat $PARAMS/bo_layout_status)" ok "status after a $bad BO"
	eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO right after a $bad BO"
done
dmesg | grep -q 'rdna1_mtype: an amdgpu_bo has an unknown creation flag: left as amdgpu mapped it' ||
	fail "no dmesg line for the corrupt BO"
# Which invariant, never the BO's bytes (at most the ratelimit may have eaten this one).
if dmesg | grep 'rdna1_mtype: an amdgpu_bo has' | grep -q '0x'; then fail "raw values logged"; fi
eq "$(mcall "$REQ_CC" none "$IN")" NC "no BO: enforced"
echo none >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout_status)" unset "status after none"
eq "$(mcall "$REQ_CC" plain "$IN")" CC "memory BO without layout"
# builtin brings the module's own layout back.
echo builtin >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout)" "$good" "layout after builtin"
eq "$(cat $PARAMS/bo_layout_source)" builtin "source after builtin"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "memory BO with the built-in layout"
rmmod rdna1_mtype
