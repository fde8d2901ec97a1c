# mode=audit changes nothing (table identical to no module) and counts, per device, exactly
# what enforce would rewrite.
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=audit
layout_set
table >/tmp/audit
cmp /tmp/baseline /tmp/audit || fail "audit changed PTE flags"
# For rdna1 (a compute VM): WC and CC on none/plain/vram/userptr (4 each); UC: every request on
# coherent and ext_coherent (12) and the UC requested without a BO (a coherent SVM range: class
# coherent), not the UC requested on the 3 memory BOs (no uc_request).
eq "$(stat 0000:03:00.0 would_rewrite_wc)" 4 would_rewrite_wc
eq "$(stat 0000:03:00.0 would_rewrite_cc)" 4 would_rewrite_cc
eq "$(stat 0000:03:00.0 would_rewrite_uc)" 13 would_rewrite_uc
eq "$(stat 0000:03:00.0 rewritten_cc)" 0 rewritten_cc
eq "$(stat 0000:03:00.0 calls)" 66 calls
rmmod rdna1_mtype
