/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The built-in struct amdgpu_bo layout when the build had no BTF of the target amdgpu (with
 * BTF, kmod/dkms-make.sh passes amdgpu's own offsets instead: hook.c): a copy of amdgpu's
 * definition (amdgpu_object.h), for kernels whose amdgpu_bo was checked identical to it (Linux
 * 7.2.13 and 7.3.4; see tests/kernel/check-hook-source.sh, and tests/kernel/check-bo-copy.sh).
 *
 * Why a copy: amdgpu's private headers are not in distro kernel-header packages, so a DKMS
 * build cannot include amdgpu_object.h. Its members before `flags` are public TTM types, whose
 * sizes depend on the kernel's config (lockdep grows struct ttm_buffer_object): compiling
 * this copy against the target kernel's headers gives that kernel's offsets, which a fixed
 * table of numbers would not. The layout is still checked at set time and on every BO read.
 */
#ifndef RDNA1_MTYPE_AMDGPU_BO_LAYOUT_H
#define RDNA1_MTYPE_AMDGPU_BO_LAYOUT_H

#include <linux/mmu_notifier.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>

struct amdgpu_vm_bo_base;
struct kgd_mem;

/* AMDGPU_BO_MAX_PLACEMENTS */
#define RDNA1_AMDGPU_BO_MAX_PLACEMENTS 3

/* Member for member as struct amdgpu_bo in Linux 7.2 and 7.3. */
struct rdna1_amdgpu_bo_7_2 {
	u32 preferred_domains;
	u32 allowed_domains;
	struct ttm_place placements[RDNA1_AMDGPU_BO_MAX_PLACEMENTS];
	struct ttm_placement placement;
	struct ttm_buffer_object tbo;
	struct ttm_bo_kmap_obj kmap;
	u64 flags;
	struct amdgpu_vm_bo_base *vm_bo;
	struct rdna1_amdgpu_bo_7_2 *parent;
#ifdef CONFIG_MMU_NOTIFIER
	struct mmu_interval_notifier notifier;
#endif
	struct kgd_mem *kfd_bo;
	s8 xcp_id;
};

#endif
