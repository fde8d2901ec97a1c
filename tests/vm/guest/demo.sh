# The main job: load amdgpu and rdna1_mtype as a user would, show rdna1ctl status and what the
# real gmc_v10_0_get_vm_pte produces for every MTYPE request, without and with the module.
. /opt/rdna1/guest/lib.sh
set +e
echo "== rdna1ctl status (nothing loaded)"
rdna1ctl status
modprobe amdgpu && insmod /opt/rdna1/rdna1_mtype_harness.ko || { echo "cannot load amdgpu/harness"; exit 1; }
baseline >/dev/null
modprobe rdna1_mtype mode=enforce || { echo "cannot load rdna1_mtype"; exit 1; }
# On a distro kernel: rdna1ctl layout --apply (module BTF). This test kernel has no BTF, so the
# harness, built against amdgpu's headers, gives the same numbers.
layout_set
echo "== rdna1ctl status (amdgpu + rdna1_mtype mode=enforce, amdgpu_bo layout set)"
rdna1ctl status
echo "== gmc_v10_0_get_vm_pte, PTE flags in $IN: MTYPE written without / with rdna1_mtype"
printf '%-8s %-13s %-20s %-7s %-20s %-7s %s\n' request bo before MTYPE after MTYPE note
table >/tmp/after
while read -r r b before; do
	after=$(grep "^$r $b " /tmp/after | cut -d' ' -f3)
	if [ "$before" = "$after" ]; then note=unchanged; else note="rewritten, other bits same: $([ $(((before ^ after) & ~MTYPE_MASK)) -eq 0 ] && echo yes || echo NO)"; fi
	printf '%-8s %-13s %-20s %-7s %-20s %-7s %s\n' "$r" "$b" "$before" "$(mtype_name "$before")" "$after" "$(mtype_name "$after")" "$note"
done </tmp/baseline
echo "== rdna1ctl status after the table"
rdna1ctl status | grep '^stats'
echo "== rdna1ctl events (last 8)"
rdna1ctl events | tail -n 9
echo "== kernel log of rdna1_mtype"
dmesg | grep 'rdna1_mtype:' 
