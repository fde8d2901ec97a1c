// SPDX-License-Identifier: GPL-2.0
/*
 * A module named amdgpu, built out of tree (taint O), with a traceable gmc_v10_0_get_vm_pte of
 * the pre-6.18 signature (adev, mapping, flags), as AMD's amdgpu-dkms may have: rdna1_mtype
 * built without the kernel's BTF cannot check its arguments and must not arm on it
 * (kmod/arming.rs, check_in_tree()). Nothing calls the function. With exit_delay_ms,
 * its exit sleeps: an amdgpu unloading (state going, still listed and traceable) for that
 * long, which rdna1_mtype loaded meanwhile must not arm on (kmod/arming.rs, check_not_going()).
 * Test-only.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static unsigned int exit_delay_ms;
module_param(exit_delay_ms, uint, 0444);
MODULE_PARM_DESC(exit_delay_ms, "how long module exit sleeps, in ms");

/* Static, as amdgpu's is: in kallsyms and traceable, kept by the pointer below. */
static noinline void gmc_v10_0_get_vm_pte(void *adev, void *mapping, u64 *flags)
{
	barrier();
}

static void (*const keep_gmc_v10_0_get_vm_pte)(void *, void *, u64 *) __used =
	gmc_v10_0_get_vm_pte;

static int __init oot_amdgpu_init(void)
{
	return 0;
}

static void __exit oot_amdgpu_exit(void)
{
	msleep(exit_delay_ms);
}

module_init(oot_amdgpu_init);
module_exit(oot_amdgpu_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: an out-of-tree amdgpu with gmc_v10_0_get_vm_pte");
