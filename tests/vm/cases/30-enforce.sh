# mode=enforce: an MTYPE that came from the request (WC/CC, and UC without a BO) is written as
# NC, every other bit unchanged; NC stays NC; UC with a BO (which a coherent/uncached BO, incl.
# doorbell-like sg BOs, may have forced) is left alone; PRT and invalid entries are left alone.
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=enforce
eq "$(armed)" Y armed
table >/tmp/enforce
n=0
while read -r r b before; do
	after=$(grep "^$r $b " /tmp/enforce | cut -d' ' -f3)
	case "$r:$b" in
	WC:none | WC:plain | CC:none | CC:plain | UC:none)
		eq "$(mtype_name "$after")" NC "$r/$b"
		same_but_mtype "$before" "$after" "$r/$b"
		n=$((n + 1)) ;;
	*) eq "$after" "$before" "$r/$b unchanged" ;;
	esac
done </tmp/baseline
eq "$n" 5 "rewritten cases"
# PRT request and an invalid (unmapped) PTE: untouched.
eq "$(mtype_name "$(call "$(printf '0x%x' $(($(req CC) | 0x10)))" none "$IN")")" CC "PRT request"
eq "$(mtype_name "$(call "$(req CC)" none 0x66)")" CC "PTE without VALID"
rmmod rdna1_mtype
