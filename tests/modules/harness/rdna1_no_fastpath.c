// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_no_fastpath: makes kallsyms_lookup_name() find nothing for gmc_v10_0_get_vm_pte, in
 * any form ("amdgpu:gmc_v10_0_get_vm_pte" too), for case 74. ftrace_lookup_symbols() then
 * behaves as it did before its single-symbol fast path (docs/KERNELS.md: not in Linux 6.18 to
 * 7.1): its batch path alone, which compares bare names and so never matches a module-
 * qualified one. A kretprobe on kallsyms_lookup_name(): the entry handler picks the calls for
 * that name, the return handler makes them return 0. "hits" counts them. Test-only.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

static int hits;
module_param(hits, int, 0444);
MODULE_PARM_DESC(hits, "lookups of gmc_v10_0_get_vm_pte made to find nothing");

/* kallsyms_lookup_name(const char *name). */
static int no_fastpath_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	const char *name = (const char *)regs_get_kernel_argument(regs, 0);

	/* Non-zero: not ours, no return handler for this call. */
	return !(name && strstr(name, "gmc_v10_0_get_vm_pte"));
}

static int no_fastpath_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	regs_set_return_value(regs, 0);
	WRITE_ONCE(hits, READ_ONCE(hits) + 1);
	return 0;
}

static struct kretprobe no_fastpath_rp = {
	.kp.symbol_name = "kallsyms_lookup_name",
	.entry_handler = no_fastpath_entry,
	.handler = no_fastpath_ret,
	.maxactive = 8,
};

static int __init no_fastpath_init(void)
{
	return register_kretprobe(&no_fastpath_rp);
}

static void __exit no_fastpath_exit(void)
{
	unregister_kretprobe(&no_fastpath_rp);
}

module_init(no_fastpath_init);
module_exit(no_fastpath_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: ftrace symbol lookups as before the single-symbol fast path");
