# mode=enforce in a compute VM (KFD's), every request x BO kind, other bits always identical
# to amdgpu's:
# - no amdgpu_bo layout (bo_layout=none): only mappings without a BO (KFD SVM) that request WC,
#   CC or UC (KFD's coherent SVM ranges: class coherent) are rewritten; any BO might be a
#   doorbell, so none is touched;
# - with the module's built-in layout (its default): requested WC/CC on memory BOs (GTT, VRAM,
#   userptr) and the UC amdgpu forces on coherent BOs (hipHostMalloc) become NC; a requested
#   UC on a BO (Mesa's GL2_BYPASS, seq64) is kept unless classes has uc_request; uncached BOs (class
#   not enabled by default), sg (KFD doorbell/MMIO-remap), KFD's coherent sg attachments,
#   doorbell-domain BOs and amdgpu's kernel BOs (seq64) stay as amdgpu made them.
# The built-in amdgpu_vm copy reads is_compute_context right: the compute VM is rewritten
# (its other bytes are 0, so a wrong offset would read "graphics"), a graphics VM under the
# default vm_scope=compute gives amdgpu's own table, and under vm_scope=all the compute one.
# kernels: test debian
mtype_down
harness_up
baseline >/dev/null
modprobe rdna1_mtype mode=enforce bo_layout=none
eq "$(armed)" Y armed
check_table() { # FILE WITH_LAYOUT(yes/no); both tables list the same calls in the same order
	n=0
	while read -r r b before && read -r r2 b2 after <&3; do
		[ "$r $b" = "$r2 $b2" ] || fail "tables out of step: $r $b vs $r2 $b2"
		want=same
		case "$((($before >> 48) & 7)):$b:$2" in
		0:*) ;;
		# A requested UC on a memory BO is kept: classes has no uc_request. Without a BO
		# it is a coherent SVM range: class coherent, rewritten (below).
		3:plain:yes | 3:vram:yes | 3:userptr:yes) ;;
		*:none:*) want=NC ;;
		*:plain:yes | *:vram:yes | *:userptr:yes | *:coherent:yes | *:ext_coherent:yes) want=NC ;;
		esac
		if [ $want = NC ]; then
			eq "$((($after >> 48) & 7))" 0 "$r/$b layout=$2: MTYPE (0 = NC)"
			same_but_mtype "$before" "$after" "$r/$b"
			n=$((n + 1))
		else
			eq "$after" "$before" "$r/$b layout=$2 unchanged"
		fi
	done </tmp/baseline 3<"$1"
	echo $n
}
table >/tmp/enforce-nolayout
eq "$(check_table /tmp/enforce-nolayout no)" 3 "rewritten without layout"
# The built-in layout (a copy of amdgpu_bo compiled against this kernel's headers) equals
# offsetof() from amdgpu's own header, and classifies the real BOs below.
echo builtin >$PARAMS/bo_layout
eq "$(cat $PARAMS/bo_layout)" "$(cat /sys/kernel/debug/rdna1_mtype_harness/layout)" "built-in layout"
eq "$(cat $PARAMS/bo_layout_source)" builtin "layout source"
eq "$(cat $PARAMS/bo_layout_status)" ok "layout status"
table >/tmp/enforce-layout
# none x WC/CC/UC = 3, plain/vram/userptr x WC/CC = 6, coherent/ext_coherent x 6 requests = 12
eq "$(check_table /tmp/enforce-layout yes)" 21 "rewritten with layout"
# A graphics VM under the default vm_scope=compute: amdgpu's own result everywhere.
eq "$(cat $PARAMS/vm_scope)" compute "default vm_scope"
table rdna1 graphics >/tmp/enforce-graphics
cmp /tmp/baseline /tmp/enforce-graphics || fail "graphics VM under vm_scope=compute differs from amdgpu's table"
# vm_scope=all: a graphics VM is rewritten exactly like a compute VM.
echo all >$PARAMS/vm_scope
eq "$(cat $PARAMS/vm_scope)" all "vm_scope read back"
table rdna1 graphics >/tmp/enforce-graphics-all
cmp /tmp/enforce-layout /tmp/enforce-graphics-all || fail "graphics VM under vm_scope=all differs from the compute VM's table"
echo compute >$PARAMS/vm_scope
# The three tables in the log: tests/run.sh requires them equal on Debian's kernel and ours.
for t in baseline enforce-nolayout enforce-layout; do sed "s/^/enforce-table: $t /" /tmp/$t; done
# uncached BOs opt in.
echo coherent,uncached >$PARAMS/classes
eq "$(mcall "$REQ_DEFAULT" uncached "$IN")" NC "uncached with classes=coherent,uncached"
# Requested UC on memory opts in with uc_request; amdgpu's kernel BO (seq64) never.
eq "$(mcall "$REQ_UC" plain "$IN")" UC "requested UC on memory, default classes"
echo coherent,uncached,uc_request >$PARAMS/classes
eq "$(cat $PARAMS/classes)" coherent,uncached,uc_request "classes read back"
eq "$(mcall "$REQ_UC" plain "$IN")" NC "requested UC on memory with uc_request"
eq "$(mcall "$REQ_UC" seq64 "$IN")" UC "seq64 (kernel BO) with every class"
echo none >$PARAMS/classes
eq "$(mcall "$REQ_DEFAULT" coherent "$IN")" UC "coherent with classes=none"
eq "$(mcall "$REQ_CC" plain "$IN")" NC "requested CC on memory with classes=none"
# PRT request and an invalid (unmapped) PTE: untouched.
eq "$(mcall "$(printf '0x%x' $(($REQ_CC | 0x10)))" none "$IN")" CC "PRT request"
eq "$(mcall "$REQ_CC" none 0x66)" CC "PTE without VALID"
rmmod rdna1_mtype
