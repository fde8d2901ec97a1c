/* SPDX-License-Identifier: GPL-2.0 */
/* The interface between hook.c and the Rust half (ffi.rs imports it, with the same asserts). */
#ifndef RDNA1_MTYPE_HOOK_H
#define RDNA1_MTYPE_HOOK_H

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>

/*
 * One hooked call of gmc_v10_0_get_vm_pte: filled by the entry handler, kept by fprobe as the
 * call's entry data for the exit handler. Mirrored by `PteCall` in ffi.rs, which asserts the
 * same size and offsets.
 */
struct rdna1_pte_call {
	u64 *flags;		/* the function's u64 *flags argument */
	const void *bo;		/* its struct amdgpu_bo *bo argument, may be NULL */
	const void *vm;		/* its struct amdgpu_vm *vm argument, may be NULL */
	u32 vm_flags;		/* AMDGPU_VM_PAGE_* | AMDGPU_VM_MTYPE_* */
	u32 dev_addr;		/* PCI domain << 16 | bus << 8 | devfn */
	u16 dev_vendor;
	u16 dev_device;
	u8 dev_known;		/* dev_* valid: adev passed the layout check */
};

/* The kind of VM a mapping is in (`VmKind` of shared/src/policy.rs, asserted in ffi.rs). */
enum rdna1_vm_kind {
	RDNA1_VM_GRAPHICS = 0,	/* is_compute_context false */
	RDNA1_VM_COMPUTE = 1,	/* is_compute_context true: KFD acquired the VM */
	RDNA1_VM_UNKNOWN = 2,	/* no VM, no layout to read it with, or not a bool */
};

/* Which invariant a BO broke (`BadBo` in ffi.rs), for rdna1_mtype_report_bad_bo(). */
enum rdna1_bad_bo {
	RDNA1_BAD_BO_TTM_TYPE = 0,
	RDNA1_BAD_BO_FLAGS = 1,
	RDNA1_BAD_BO_NO_DOMAIN = 2,
	RDNA1_BAD_BO_DOMAIN = 3,
	RDNA1_BAD_BO_UNREADABLE = 4,	/* a field at an address that faults: a wrong layout */
};

static_assert(sizeof(struct rdna1_pte_call) == 40);
static_assert(offsetof(struct rdna1_pte_call, flags) == 0);
static_assert(offsetof(struct rdna1_pte_call, bo) == 8);
static_assert(offsetof(struct rdna1_pte_call, vm) == 16);
static_assert(offsetof(struct rdna1_pte_call, vm_flags) == 24);
static_assert(offsetof(struct rdna1_pte_call, dev_addr) == 28);
static_assert(offsetof(struct rdna1_pte_call, dev_vendor) == 32);
static_assert(offsetof(struct rdna1_pte_call, dev_device) == 34);
static_assert(offsetof(struct rdna1_pte_call, dev_known) == 36);

/* Which policy field a parameter reads or writes (`Field` in ffi.rs). */
enum rdna1_policy_field {
	RDNA1_FIELD_MODE = 0,
	RDNA1_FIELD_SCOPE = 1,
	RDNA1_FIELD_CLASSES = 2,
	RDNA1_FIELD_BO_LAYOUT = 3,
	RDNA1_FIELD_BO_LAYOUT_STATUS = 4,	/* read-only */
	RDNA1_FIELD_BO_LAYOUT_SOURCE = 5,	/* read-only */
	RDNA1_FIELD_VM_SCOPE = 6,
};

/* From the kernel's public TTM header, for Rust (which has no binding for it). */
extern const u32 rdna1_ttm_bo_size;
extern const u32 rdna1_ttm_bo_type_offset;
/* struct amdgpu_bo (amdgpu_bo_layout.h): size, preferred_domains, tbo, flags. */
extern const u32 rdna1_builtin_bo_layout[4];

/* C, called from Rust module init/exit: the supported releases, then the notifier and probe. */
int rdna1_mtype_check_kernel(void);
int rdna1_mtype_hook_init(void);
void rdna1_mtype_hook_exit(void);
/* C, for Rust's init and ioctl paths: the lock policy writers hold (may sleep). */
void rdna1_mtype_policy_lock(void);
void rdna1_mtype_policy_unlock(void);
/* C, for the Rust probe handler: logs (rate-limited) that a BO broke an invariant. */
void rdna1_mtype_report_bad_bo(u32 why);
/* C, for the Rust probe handler: the kind of VM (enum rdna1_vm_kind) of a live amdgpu_vm. */
u8 rdna1_mtype_vm_kind(const void *vm);
/* C, for the Rust probe handler: the process owning the VM, read without faulting; 0 or -ENOENT. */
int rdna1_mtype_vm_owner(const void *vm, u32 *tgid, char name[16]);
/* The module version (Cargo.toml), NUL-padded. */
extern const char rdna1_mtype_version[24];

/*
 * Rust, the probe's handlers (RCU-sched read side, may not sleep). on_entry: the call before
 * the function runs (flags not computed yet); true if on_pte must see its return. on_pte: the
 * call after it returned, with the flags it computed.
 */
bool rdna1_mtype_on_entry(const struct rdna1_pte_call *call);
void rdna1_mtype_on_pte(const struct rdna1_pte_call *call);
/* Rust; callers hold rdna1_policy_lock. */
int rdna1_mtype_policy_store(u32 field, const char *val, size_t len);
int rdna1_mtype_policy_show(u32 field, char *buf, size_t len);
/* Rust; lock-free. */
int rdna1_mtype_stats_show(char *buf, size_t len);
/* Rust (shared/src/btf_id.rs): the id of a module's .BTF section. */
u64 rdna1_mtype_btf_id(const void *data, size_t len);

#endif
