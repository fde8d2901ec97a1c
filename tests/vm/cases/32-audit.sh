# mode=audit changes nothing (table identical to no module) and counts, per device, exactly
# what enforce would rewrite.
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=audit
layout_set
table >/tmp/audit
cmp /tmp/baseline /tmp/audit || fail "audit changed PTE flags"
# For rdna1: WC and CC on none/plain/vram/userptr (4 each); UC: those 4 plus every request on
# coherent and ext_coherent (12).
eq "$(stat 0000:03:00.0 would_rewrite_wc)" 4 would_rewrite_wc
eq "$(stat 0000:03:00.0 would_rewrite_cc)" 4 would_rewrite_cc
eq "$(stat 0000:03:00.0 would_rewrite_uc)" 16 would_rewrite_uc
eq "$(stat 0000:03:00.0 rewritten_cc)" 0 rewritten_cc
eq "$(stat 0000:03:00.0 calls)" 54 calls
rmmod rdna1_mtype
