/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where struct amdgpu_vm keeps is_compute_context and task_info, and where struct
 * amdgpu_task_info keeps tgid and process_name, when the build had no BTF of the target amdgpu
 * (with BTF, kmod/dkms-make.sh passes amdgpu's own offsets instead: hook.c): copies of amdgpu's
 * definitions (amdgpu_vm.h), struct amdgpu_vm up to is_compute_context, for the kernels whose
 * structs were checked identical to them (Linux 7.2.13; tests/kernel/check-bo-copy.sh).
 *
 * As for amdgpu_bo_layout.h: amdgpu's private headers are not in distro header packages, and
 * the public members (mutex, spinlock_t, drm_sched_entity, ...) change size with the kernel's
 * config, so the copy is compiled against the target's headers instead of hard-coding a
 * number. Its private members' types are copied too, renamed. The byte read through it is
 * checked at run time (0 or 1, else the VM kind is unknown).
 */
#ifndef RDNA1_MTYPE_AMDGPU_VM_LAYOUT_H
#define RDNA1_MTYPE_AMDGPU_VM_LAYOUT_H

#include <linux/kfifo.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/gpu_scheduler.h>
#include <drm/ttm/ttm_resource.h>

struct amdgpu_bo;
struct amdgpu_vmid;
struct amdgpu_vm_update_funcs;
struct amdkfd_process_info;
struct amdgpu_task_info;
struct rdna1_amdgpu_vm_7_2;

/* __AMDGPU_PL_NUM (amdgpu_ttm.h) */
#define RDNA1___AMDGPU_PL_NUM (TTM_PL_PRIV + 6)
/* AMDGPU_MAX_VMHUBS (amdgpu_vm.h) */
#define RDNA1_AMDGPU_MAX_VMHUBS 13

/* Member for member as in amdgpu_vm.h of Linux 7.2. */
struct rdna1_amdgpu_mem_stats_7_2 {
	struct drm_memory_stats drm;
	u64 evicted;
};

struct rdna1_amdgpu_vm_bo_status_7_2 {
	struct list_head evicted;
	struct list_head needs_update;
	struct list_head idle;
};

struct rdna1_amdgpu_vm_bo_base_7_2 {
	struct rdna1_amdgpu_vm_7_2 *vm;
	struct amdgpu_bo *bo;
	struct rdna1_amdgpu_vm_bo_base_7_2 *next;
	struct list_head vm_status;
	bool shared;
	bool moved;
};

/*
 * Whose VM it is (amdgpu_vm_set_task_info(): the process that acquired it, for KFD), read for
 * events a kernel thread logs. The refcount is never taken: the fields are read without
 * faulting while the hooked call keeps the VM alive.
 */
struct rdna1_amdgpu_task_info_7_2 {
	struct drm_wedge_task_info task;
	char		process_name[TASK_COMM_LEN];
	pid_t		tgid;
	struct kref	refcount;
};

/* struct amdgpu_vm up to is_compute_context; the rest is never read. */
struct rdna1_amdgpu_vm_7_2 {
	struct rb_root_cached va;
	struct mutex eviction_lock;	/* amdgpu's locks: never taken here */
	bool evicting;
	unsigned int saved_flags;
	spinlock_t stats_lock;		/* as above */
	struct rdna1_amdgpu_mem_stats_7_2 stats[RDNA1___AMDGPU_PL_NUM];
	struct rdna1_amdgpu_vm_bo_status_7_2 kernel;
	struct rdna1_amdgpu_vm_bo_status_7_2 always_valid;
	spinlock_t individual_lock;	/* as above */
	struct rdna1_amdgpu_vm_bo_status_7_2 individual;
	struct list_head freed;
	struct rdna1_amdgpu_vm_bo_base_7_2 root;
	struct dma_fence *last_update;
	struct drm_sched_entity immediate;
	struct drm_sched_entity delayed;
	atomic64_t tlb_seq;
	struct dma_fence *last_tlb_flush;
	atomic64_t kfd_last_flushed_seq;
	u64 tlb_fence_context;
	u64 generation;
	struct dma_fence *last_unlocked;
	unsigned int pasid;
	struct amdgpu_vmid *reserved_vmid[RDNA1_AMDGPU_MAX_VMHUBS];
	bool use_cpu_for_update;
	const struct amdgpu_vm_update_funcs *update_funcs;
	DECLARE_KFIFO(faults, u64, 128);
	struct amdkfd_process_info *process_info;
	struct list_head vm_list_node;
	u64 pd_phys_addr;
	struct amdgpu_task_info *task_info;
	struct ttm_lru_bulk_move lru_bulk_move;
	bool is_compute_context;
};

#endif
