# A root-given amdgpu_bo layout whose fields lie past the real BO's end cannot crash or leak:
# the module reads BO fields with copy_from_kernel_nofault, so a field on an unmapped page (the
# harness's "edge" BO ends right before vmalloc's guard page) makes that call's BO unknown:
# left as amdgpu mapped it, counted layout_unknown, logged without any byte read, the next
# call classified as before. A layout reaching 64 KiB past a kmalloc'd BO raises no KASAN
# report (boot.sh fails the boot on one). Without the fix the first edge call oopses (page
# fault on the guard page in the probe's exit handler).
mtype_down
harness_up
good=$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)
for kv in $good; do
	case $kv in size=*) size=${kv#*=} ;; tbo=*) tbo=${kv#*=} ;; esac
done
modprobe rdna1_mtype mode=enforce
D=0000:03:00.0
eq "$(mcall "$REQ_CC" edge "$IN")" NC "edge BO with the real layout"
# Valid by BoLayout::check (in bounds of its size, aligned, no overlap), but both u32 and u64
# lie in the 16 bytes right after the real struct: on the edge BO, the unmapped guard page.
past="size=$((size + 16)) preferred_domains=$size tbo=$tbo flags=$((size + 8))"
printf '%s' "$past" >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout)" "$past" "layout past the BO's end accepted"
unknown=$(stat $D skip_layout_unknown)
eq "$(mcall "$REQ_CC" edge "$IN")" CC "edge BO read past its end: left as amdgpu mapped it"
eq "$(stat $D skip_layout_unknown)" $((unknown + 1)) "unreadable BO counted layout_unknown"
eq "$(cat $PARAMS/bo_layout_status)" ok "status after an unreadable BO"
dmesg | grep -q 'rdna1_mtype: an amdgpu_bo has a field at an unreadable address: left as amdgpu mapped it' ||
	fail "no dmesg line for the unreadable BO"
if dmesg | grep 'rdna1_mtype: an amdgpu_bo has' | grep -q '0x'; then fail "raw values logged"; fi
# As far as a layout may reach (64 KiB) past a kmalloc'd BO, as amdgpu's are: whatever lies
# there is read without a fault or a KASAN report (its class does not matter: a wrong layout).
far="size=65536 preferred_domains=65520 tbo=$tbo flags=65528"
printf '%s' "$far" >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout)" "$far" "layout reaching 64 KiB accepted"
case $(mcall "$REQ_CC" plain "$IN") in NC | CC) ;; *) fail "plain BO with a 64 KiB layout" ;; esac
# The right layout again: the same BOs classified as before.
layout_set
eq "$(mcall "$REQ_CC" edge "$IN")" NC "edge BO with the real layout again"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "plain BO with the real layout again"
rmmod rdna1_mtype
