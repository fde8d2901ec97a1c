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

/* What the module was built for, for arming.rs's checks at load. */
extern const u32 rdna1_kernel_version;		/* LINUX_VERSION_CODE */
extern const char rdna1_kernel_release[65];	/* UTS_RELEASE, NUL-padded */
extern const u32 rdna1_kernel_min;		/* the first release it loads on */
extern const u32 rdna1_kernel_end;		/* the first release it does not */
extern const u8 rdna1_amdgpu_builtin;		/* CONFIG_DRM_AMDGPU=y */
extern const u64 rdna1_built_btf_id;		/* the amdgpu BTF checked at build; 0: none */

/* What amdgpu's module notifications are, for rdna1_mtype_on_amdgpu(). */
enum rdna1_amdgpu_event {
	RDNA1_AMDGPU_COMING = 0,	/* before its init; its text is traceable */
	RDNA1_AMDGPU_LIVE = 1,		/* its init succeeded */
	RDNA1_AMDGPU_GOING = 2,		/* unloading, or a failed load */
};

/* The files of /sys/module/amdgpu arming reads (rdna1_amdgpu_sysfs_read()). */
enum rdna1_amdgpu_attr {
	RDNA1_ATTR_INITSTATE = 0,
	RDNA1_ATTR_TAINT = 1,
};

/* What a struct module says of its own BTF (rdna1_module_btf()). */
enum rdna1_module_btf {
	RDNA1_BTF_READ = 0,		/* the id was computed */
	RDNA1_BTF_NONE = 1,		/* the module has no .BTF */
	RDNA1_BTF_DISTILLED = 2,	/* built out of tree: its BTF has a distilled base */
};

/*
 * C, for arming.rs (through arm_glue.rs): the arm lock, the module notifier, the fprobe, and
 * what amdgpu says of itself (sysfs, struct module). The probe_* functions and
 * rdna1_set_arm_error() need the lock held.
 */
void rdna1_mtype_arm_lock(void);
void rdna1_mtype_arm_unlock(void);
int rdna1_notifier_register(void);
void rdna1_notifier_unregister(void);
int rdna1_probe_register_by_name(void);
int rdna1_probe_register_at(unsigned long addr);
u32 rdna1_probe_sites(unsigned long *addrs, u32 max);
void rdna1_probe_site_name(unsigned long addr, char *buf, size_t len);
void rdna1_probe_enable(void);
void rdna1_probe_unregister(void);
bool rdna1_module_oot(const void *mod);
u32 rdna1_module_btf(const void *mod, u64 *id);
int rdna1_live_btf_id(u64 *id);
int rdna1_amdgpu_sysfs_read(u32 attr, char *buf, size_t len);
bool rdna1_sysfs_modules_reachable(void);
void rdna1_set_arm_error(const char *text, size_t len);
/* Rust (arming.rs): amdgpu's notifications, under no lock; whether the probe is armed. */
void rdna1_mtype_on_amdgpu(u32 event, const void *mod);
bool rdna1_mtype_armed(void);
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
