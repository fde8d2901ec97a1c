# mode=audit changes nothing (table identical to no module) and counts, per device, exactly
# what enforce would rewrite.
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=audit
table >/tmp/audit
cmp /tmp/baseline /tmp/audit || fail "audit changed PTE flags"
# The table made, for rdna1: WC x {none, plain}, CC x {none, plain}, UC x {none} rewritable.
eq "$(stat 0000:03:00.0 would_rewrite_wc)" 2 would_rewrite_wc
eq "$(stat 0000:03:00.0 would_rewrite_cc)" 2 would_rewrite_cc
eq "$(stat 0000:03:00.0 would_rewrite_uc)" 1 would_rewrite_uc
eq "$(stat 0000:03:00.0 rewritten_cc)" 0 rewritten_cc
eq "$(stat 0000:03:00.0 calls)" 36 calls
rmmod rdna1_mtype
