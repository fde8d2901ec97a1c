// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_mtype_decoy: a module that is not amdgpu but defines a function named
 * gmc_v10_0_get_vm_pte, as an out-of-tree or vendor module could. rdna1_mtype takes the symbol
 * by name, so it must keep only the site that is amdgpu's own (kmod/arming.rs, own_site()).
 * Test-only; never called.
 */
#include <linux/module.h>
#include <linux/types.h>

noinline void gmc_v10_0_get_vm_pte(void *adev, void *vm, void *bo, u32 vm_flags, u64 *flags);

noinline void gmc_v10_0_get_vm_pte(void *adev, void *vm, void *bo, u32 vm_flags, u64 *flags)
{
	/* Never called: a body the compiler keeps, so the symbol is real and traceable. */
	barrier();
}

static int __init decoy_init(void)
{
	pr_info("%s at %pS\n", "gmc_v10_0_get_vm_pte", gmc_v10_0_get_vm_pte);
	return 0;
}

static void __exit decoy_exit(void)
{
}

module_init(decoy_init);
module_exit(decoy_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: a non-amdgpu gmc_v10_0_get_vm_pte");
