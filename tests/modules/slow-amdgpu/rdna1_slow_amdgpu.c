// SPDX-License-Identifier: GPL-2.0
/*
 * A module named amdgpu with a traceable gmc_v10_0_get_vm_pte of the 6.18 signature, marked
 * as built in tree (no taint O, as a distribution's amdgpu), whose load can be held between
 * its MODULE_STATE_COMING notification and its sysfs set-up: load_module() parses the
 * module's parameters in between (prepare_coming_module(), parse_args(), mod_sysfs_setup()),
 * and "hold_ms=N" sleeps there, logging "holding its load" first (its own sysfs files do not
 * exist yet). A module loaded meanwhile finds this amdgpu's function traceable, its COMING
 * notified, and no /sys/module/amdgpu: the window of case 71. Nothing calls the function.
 * Test-only.
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

/* Static, as amdgpu's is: in kallsyms and traceable, kept by the pointer below. */
static noinline void gmc_v10_0_get_vm_pte(void *adev, void *vm, void *bo, u32 vm_flags,
					  u64 *flags)
{
	barrier();
}

static void (*const keep_gmc_v10_0_get_vm_pte)(void *, void *, void *, u32, u64 *) __used =
	gmc_v10_0_get_vm_pte;

static int hold_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms > 60000)
		return -EINVAL;
	pr_info("holding its load for %u ms, before its sysfs set-up\n", ms);
	msleep(ms);
	return 0;
}

static const struct kernel_param_ops hold_ops = {
	.set = hold_set,
};
module_param_cb(hold_ms, &hold_ops, NULL, 0);
MODULE_PARM_DESC(hold_ms, "sleep this long while the module's parameters are parsed, in ms");

static int __init slow_amdgpu_init(void)
{
	return 0;
}

static void __exit slow_amdgpu_exit(void)
{
}

module_init(slow_amdgpu_init);
module_exit(slow_amdgpu_exit);
/* What modpost adds to in-tree modules: the kernel then does not taint this one O. */
MODULE_INFO(intree, "Y");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: an in-tree-like amdgpu whose load is held before its sysfs");
