// SPDX-License-Identifier: GPL-2.0
/*
 * A module named amdgpu (tests/modules/harness/Kbuild) without gmc_v10_0_get_vm_pte: what
 * an amdgpu whose function was renamed, inlined or removed looks like to rdna1_mtype. With it
 * loaded, rdna1_mtype must say it cannot arm, not that it waits for amdgpu (kmod/arming.rs).
 * Test-only.
 */
#include <linux/module.h>

static int __init fake_amdgpu_init(void)
{
	return 0;
}

static void __exit fake_amdgpu_exit(void)
{
}

module_init(fake_amdgpu_init);
module_exit(fake_amdgpu_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: a module named amdgpu without gmc_v10_0_get_vm_pte");
