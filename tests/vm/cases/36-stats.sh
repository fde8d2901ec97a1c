# Per-device stats count exactly the calls made, by outcome (every skip named as shared's
# Skip names it), in compute VMs unless a call says otherwise.
# kernels: test debian
# boot: 2cpu
mtype_down
harness_up
modprobe rdna1_mtype mode=enforce bo_layout=none
[ -z "$(cat $PARAMS/stats)" ] || fail "stats not empty after load: $(cat $PARAMS/stats)"
call "$REQ_CC" plain "$IN" >/dev/null                 # layout_unknown
layout_set
call "$REQ_CC" none "$IN" >/dev/null                  # rewritten_cc
call "$REQ_CC" plain "$IN" >/dev/null                 # rewritten_cc
call "$REQ_WC" none "$IN" >/dev/null                  # rewritten_wc
call "$REQ_UC" plain "$IN" >/dev/null                 # class_not_enabled (no uc_request)
call "$REQ_UC" none "$IN" >/dev/null                  # rewritten_uc (coherent SVM range)
call "$REQ_DEFAULT" coherent "$IN" >/dev/null         # rewritten_uc
call "$REQ_DEFAULT" none "$IN" >/dev/null             # already_nc
call "$REQ_DEFAULT" sg_coherent "$IN" >/dev/null      # coherent_sg
call "$REQ_DEFAULT" sg_attach "$IN" >/dev/null        # coherent_sg
call "$REQ_UC" seq64 "$IN" >/dev/null                 # never_class (kernel BO)
call "$REQ_CC" plain "$IN" rdna1 stack graphics >/dev/null   # graphics_vm
call "$REQ_CC" plain "$IN" rdna1 stack none >/dev/null       # vm_unknown
call "$REQ_CC" doorbell "$IN" >/dev/null              # never_class
call "$REQ_DEFAULT" uncached "$IN" >/dev/null         # class_not_enabled
call "$(printf '0x%x' $(($REQ_CC | 0x10)))" none "$IN" >/dev/null   # not_a_valid_page
call "$REQ_CC" none 0x66 >/dev/null                   # not_a_valid_page
call "$REQ_CC" none "$IN" rdna2 >/dev/null            # rdna2: out_of_scope
call "$REQ_CC" none "$IN" unknown >/dev/null          # unknown-device: device_unknown
echo audit >$PARAMS/mode
call "$REQ_CC" none "$IN" >/dev/null                  # would_rewrite_cc
echo off >$PARAMS/mode
call "$REQ_WC" none "$IN" >/dev/null                  # mode_off
D=0000:03:00.0
eq "$(stat $D calls)" 19 "calls"
eq "$(stat $D skip_layout_unknown)" 1 skip_layout_unknown
eq "$(stat $D rewritten_cc)" 2 rewritten_cc
eq "$(stat $D rewritten_wc)" 1 rewritten_wc
eq "$(stat $D rewritten_uc)" 2 rewritten_uc
eq "$(stat $D skip_already_nc)" 1 skip_already_nc
eq "$(stat $D skip_never_class)" 2 skip_never_class
eq "$(stat $D skip_class_not_enabled)" 2 skip_class_not_enabled
eq "$(stat $D skip_coherent_sg)" 2 skip_coherent_sg
eq "$(stat $D skip_graphics_vm)" 1 skip_graphics_vm
eq "$(stat $D skip_vm_unknown)" 1 skip_vm_unknown
eq "$(stat $D skip_not_a_valid_page)" 2 skip_not_a_valid_page
eq "$(stat $D would_rewrite_cc)" 1 would_rewrite_cc
eq "$(stat $D skip_mode_off)" 1 skip_mode_off
grep -q "^$D 1002:731f " $PARAMS/stats || fail "vendor:device: $(cat $PARAMS/stats)"
eq "$(stat 0000:04:00.0 skip_out_of_scope)" 1 "rdna2 out of scope"
eq "$(stat unknown-device skip_device_unknown)" 1 "unknown device"
rmmod rdna1_mtype
