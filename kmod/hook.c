// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_mtype: the C part, limited to what the Rust `kernel` crate has no abstraction for:
 *  - the fprobe on amdgpu's gmc_v10_0_get_vm_pte: its handlers (entry saves the arguments,
 *    exit hands the computed PTE flags and the device to Rust) and its registration;
 *  - struct layouts out-of-tree code cannot include: the device from amdgpu's adev (with a
 *    runtime check), the kind and owner of an amdgpu_vm (offsets from BTF or a checked copy),
 *    and what a struct module says of itself (taints, BTF, text range);
 *  - the module notifier, the arm lock, and the sysfs files arming reads;
 *  - string module parameters writable at runtime (Rust params are integer and read-only).
 * Every decision is made in Rust: when to arm and on what (arming.rs), what to do with a
 * mapping (probe.rs), the parameters' values (params.rs). This file moves data.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fprobe.h>
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/sched/task_stack.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/version.h>
#include <generated/utsrelease.h>
#include <drm/ttm/ttm_bo.h>

#include "amdgpu_bo_layout.h"
#include "amdgpu_vm_layout.h"
#include "hook.h"

#define HOOKED_MODULE "amdgpu"
#define HOOKED_SYMBOL "gmc_v10_0_get_vm_pte"

/*
 * The releases the module loads on (arming.rs refuses others at load). Built with the target
 * amdgpu's BTF (kmod/dkms-make.sh: rdna1ctl check-kernel found the contract there, and
 * arming.rs arms only on that very amdgpu): every release since 6.18, whose signature the
 * contract states (6.12 to 6.17 have (adev, mapping, flags)). Built without: only 7.2 and
 * 7.3, whose gmc_v10_0_get_vm_pte, amdgpu_device head and amdgpu_bo were checked against their
 * source (tests/kernel/check-hook-source.sh); elsewhere the probe would read unknown arguments.
 */
#ifdef RDNA1_AMDGPU_BTF_ID
const u32 rdna1_kernel_min = KERNEL_VERSION(6, 18, 0);
const u32 rdna1_kernel_end = KERNEL_VERSION(255, 255, 255);
#else
const u32 rdna1_kernel_min = KERNEL_VERSION(7, 2, 0);
const u32 rdna1_kernel_end = KERNEL_VERSION(7, 4, 0);
#endif
const u32 rdna1_kernel_version = LINUX_VERSION_CODE;
const char rdna1_kernel_release[65] = UTS_RELEASE;
const u8 rdna1_amdgpu_builtin = IS_BUILTIN(CONFIG_DRM_AMDGPU);

const u32 rdna1_ttm_bo_size = sizeof(struct ttm_buffer_object);
const u32 rdna1_ttm_bo_type_offset = offsetof(struct ttm_buffer_object, type);
#ifdef RDNA1_BTF_BO_LAYOUT
/*
 * The DKMS build read the target amdgpu's BTF (kmod/dkms-make.sh, rdna1ctl check-kernel): the
 * built-in layout is amdgpu's own, and the TTM struct these headers give must be the one its
 * BTF describes.
 */
const u32 rdna1_builtin_bo_layout[4] = { RDNA1_BTF_BO_LAYOUT };
static_assert(sizeof(struct ttm_buffer_object) == RDNA1_BTF_TTM_BO_SIZE);
static_assert(offsetof(struct ttm_buffer_object, type) == RDNA1_BTF_TTM_BO_TYPE);
#else
/* No BTF at build time: the copy, for the kernels whose source was verified against it. */
const u32 rdna1_builtin_bo_layout[4] = {
	sizeof(struct rdna1_amdgpu_bo_7_2),
	offsetof(struct rdna1_amdgpu_bo_7_2, preferred_domains),
	offsetof(struct rdna1_amdgpu_bo_7_2, tbo),
	offsetof(struct rdna1_amdgpu_bo_7_2, flags),
};
#endif

/*
 * Where amdgpu_vm.is_compute_context is: from the target amdgpu's BTF (kmod/dkms-make.sh),
 * else, for the releases built without BTF (7.2, 7.3: rdna1_kernel_min), the copy
 * (amdgpu_vm_layout.h). A BTF build that did not get the offset has none: the VM kind is
 * unknown, not guessed from a copy nobody checked against that kernel. (Before the default of
 * RDNA1_AMDGPU_BTF_ID below: here it is defined only by a BTF build.)
 */
#if defined(RDNA1_BTF_VM_COMPUTE)
#define RDNA1_VM_COMPUTE_OFFSET ((size_t)(RDNA1_BTF_VM_COMPUTE))
#elif !defined(RDNA1_AMDGPU_BTF_ID)
#define RDNA1_VM_COMPUTE_OFFSET offsetof(struct rdna1_amdgpu_vm_7_2, is_compute_context)
#endif

/* Likewise for whose VM it is: amdgpu_vm.task_info, amdgpu_task_info.tgid and process_name. */
#if defined(RDNA1_BTF_VM_TASK_INFO)
#define RDNA1_VM_TASK_INFO_OFFSET ((size_t)(RDNA1_BTF_VM_TASK_INFO))
#define RDNA1_TASK_INFO_TGID_OFFSET ((size_t)(RDNA1_BTF_TASK_INFO_TGID))
#define RDNA1_TASK_INFO_NAME_OFFSET ((size_t)(RDNA1_BTF_TASK_INFO_NAME))
#elif !defined(RDNA1_AMDGPU_BTF_ID)
#define RDNA1_VM_TASK_INFO_OFFSET offsetof(struct rdna1_amdgpu_vm_7_2, task_info)
#define RDNA1_TASK_INFO_TGID_OFFSET offsetof(struct rdna1_amdgpu_task_info_7_2, tgid)
#define RDNA1_TASK_INFO_NAME_OFFSET offsetof(struct rdna1_amdgpu_task_info_7_2, process_name)
#endif

/*
 * The id (shared/src/btf_id.rs) of the amdgpu BTF the DKMS build checked the contract on; 0
 * when it had none to check (a kernel without module BTF, or one not installed there): then
 * the release range above is the only contract, and no id is compared.
 */
#if defined(RDNA1_AMDGPU_BTF_ID) && !defined(CONFIG_DEBUG_INFO_BTF_MODULES)
#error "an amdgpu BTF id is compared at load, which needs CONFIG_DEBUG_INFO_BTF_MODULES"
#endif
#ifndef RDNA1_AMDGPU_BTF_ID
#define RDNA1_AMDGPU_BTF_ID 0
#endif
const u64 rdna1_built_btf_id = RDNA1_AMDGPU_BTF_ID;

/*
 * The start of struct amdgpu_device, which out-of-tree code cannot include: amdgpu's own
 * definition begins with these two members (amdgpu.h) and sets dev = &pdev->dev.
 */
struct rdna1_adev_head {
	struct device *dev;
	struct pci_dev *pdev;
};

/*
 * Fills call->dev_* from adev. The layout is checked, not trusted: pdev is dereferenced only
 * if adev->dev == &adev->pdev->dev, which holds for every amdgpu_device and is vanishingly
 * unlikely to hold by accident if the layout ever changes.
 */
static void rdna1_read_device(const void *adev, struct rdna1_pte_call *call)
{
	const struct rdna1_adev_head *head = adev;
	struct pci_dev *pdev;
	int domain;

	/* Events copy dev_* even when unknown: never stale bytes of fprobe's data area. */
	call->dev_addr = 0;
	call->dev_vendor = 0;
	call->dev_device = 0;
	call->dev_known = 0;
	if (!head)
		return;
	pdev = READ_ONCE(head->pdev);
	if (!pdev || READ_ONCE(head->dev) != &pdev->dev || !pdev->bus)
		return;
	/*
	 * dev_addr has 16 bits of domain; VMD's start at 0x10000 (drivers/pci/controller/vmd.c)
	 * and would alias domain 0's: such a device is an unknown device, never in scope.
	 */
	domain = pci_domain_nr(pdev->bus);
	if (domain < 0 || domain > 0xffff)
		return;
	call->dev_vendor = pdev->vendor;
	call->dev_device = pdev->device;
	call->dev_addr = (u32)domain << 16 |
			 (u32)pdev->bus->number << 8 | pdev->devfn;
	call->dev_known = 1;
}

/*
 * The kind of the VM at @vm, asked by the Rust handler when its decision needs it: from its
 * is_compute_context (a bool amdgpu sets when KFD acquires the VM, under the VM's
 * reservation; a racing read sees the old or the new value). @vm is the hooked function's
 * argument, a live struct amdgpu_vm while the call lasts, and the offset is the target's own
 * (its BTF, or the copy checked identical to the releases built without BTF): a plain read.
 * A byte that is not a bool still makes the kind unknown, never a guess.
 */
u8 rdna1_mtype_vm_kind(const void *vm)
{
#ifdef RDNA1_VM_COMPUTE_OFFSET
	u8 v;

	if (!vm)
		return RDNA1_VM_UNKNOWN;
	v = READ_ONCE(*((const u8 *)vm + RDNA1_VM_COMPUTE_OFFSET));
	if (v > 1)
		return RDNA1_VM_UNKNOWN;
	return v ? RDNA1_VM_COMPUTE : RDNA1_VM_GRAPHICS;
#else
	return RDNA1_VM_UNKNOWN;
#endif
}

/*
 * The process whose VM @vm is, as amdgpu recorded it (amdgpu_vm_set_task_info(): for KFD, the
 * process that acquired the VM), for an event logged from a kernel thread (KFD's restore
 * worker, SVM workers). Every read is copy_from_kernel_nofault() at offsets from BTF or the
 * checked copy; the task_info stays allocated while the VM lives, which the hooked call
 * ensures. Returns 0 and fills @tgid and @name (NUL-terminated), or -ENOENT.
 */
int rdna1_mtype_vm_owner(const void *vm, u32 *tgid, char name[16])
{
#ifdef RDNA1_VM_TASK_INFO_OFFSET
	const u8 *info;
	s32 t;

	if (!vm || copy_from_kernel_nofault(&info, (const u8 *)vm + RDNA1_VM_TASK_INFO_OFFSET,
					    sizeof(info)) || !info)
		return -ENOENT;
	if (copy_from_kernel_nofault(&t, info + RDNA1_TASK_INFO_TGID_OFFSET, sizeof(t)) ||
	    t <= 0 || copy_from_kernel_nofault(name, info + RDNA1_TASK_INFO_NAME_OFFSET, 16))
		return -ENOENT;
	name[15] = '\0';
	*tgid = t;
	return 0;
#else
	return -ENOENT;
#endif
}

/* Calls rdna1_entry() refused because the flags pointer was not on the caller's stack. */
static atomic_long_t rdna1_rejected = ATOMIC_LONG_INIT(0);

/*
 * Whether @flags can be a caller's local u64: 8-byte aligned and wholly inside the live part
 * of this task's stack, above the hooked function's return address (at @sp, its stack pointer
 * on entry) and below the stack's top. Both of amdgpu's callers (amdgpu_vm_bo_update,
 * svm_range_get_pte_flags) pass the address of such a local. Below @sp are dead frames, where
 * the probe's own frames run at exit: object_is_on_stack() alone would accept those, and an
 * unaligned pointer or one straddling the top.
 */
static bool rdna1_flags_on_live_stack(const u64 *flags, unsigned long sp)
{
	unsigned long bottom = (unsigned long)task_stack_page(current);
	unsigned long top = bottom + THREAD_SIZE;
	unsigned long addr = (unsigned long)flags;

	return IS_ALIGNED(addr, sizeof(u64)) && sp >= bottom && sp < top && addr > sp &&
	       addr <= top - sizeof(u64);
}

static int rdna1_entry(struct fprobe *fp, unsigned long entry_ip,
		       unsigned long ret_ip, struct ftrace_regs *fregs,
		       void *data)
{
	struct rdna1_pte_call *call = data;
	u64 *flags = (u64 *)ftrace_regs_get_argument(fregs, 4);

	/*
	 * Anything but a caller's local means a caller or signature we do not know, and the exit
	 * handler would write through it. Returning non-zero skips the exit handler. The stack
	 * pointer is the one ftrace_caller saved: the function's, on entry (arch/x86's
	 * ftrace_64.S stores it in the regs' sp).
	 */
	if (unlikely(!rdna1_flags_on_live_stack(flags, ftrace_regs_get_stack_pointer(fregs)))) {
		atomic_long_inc(&rdna1_rejected);
		return 1;
	}
	/* gmc_v10_0_get_vm_pte(adev, vm, bo, vm_flags, flags) */
	call->flags = flags;
	call->vm = (const void *)ftrace_regs_get_argument(fregs, 1);
	call->bo = (const void *)ftrace_regs_get_argument(fregs, 2);
	call->vm_flags = (u32)ftrace_regs_get_argument(fregs, 3);
	rdna1_read_device((const void *)ftrace_regs_get_argument(fregs, 0), call);
	lockdep_assert_preemption_disabled();
	/*
	 * fprobe_fgraph_entry() runs us under rcu_sched, as the Rust handler requires. In mode
	 * off it counts the call and says the exit is of no interest: returning non-zero, fprobe
	 * then hooks no return, which is most of the mechanism's cost.
	 */
	return rdna1_mtype_on_entry(call) ? 0 : 1;
}

static void rdna1_exit(struct fprobe *fp, unsigned long entry_ip,
		       unsigned long ret_ip, struct ftrace_regs *fregs,
		       void *data)
{
	/* fprobe_return() runs us under rcu_sched: the Rust handler relies on it (state.rs). */
	lockdep_assert_preemption_disabled();
	/* data: what rdna1_entry() filled for this call. */
	rdna1_mtype_on_pte(data);
}

/*
 * No FPROBE_FL_KPROBE_SHARED: with it, fprobe skips the entry handler while a kprobe runs but
 * still hooks the return, and rdna1_exit() would read entry data rdna1_entry() never filled.
 */
static struct fprobe rdna1_fprobe = {
	.entry_handler = rdna1_entry,
	.exit_handler = rdna1_exit,
	.entry_data_size = sizeof(struct rdna1_pte_call),
};

/*
 * The arming glue for arming.rs, which decides when the probe is armed and on what: the lock
 * its state lives under, the module notifier, the fprobe's registration, and what amdgpu says
 * of itself (its struct module while it notifies; else its sysfs files). What touches the
 * fprobe or arm_error runs with rdna1_arm_lock held (asserted).
 */
static DEFINE_MUTEX(rdna1_arm_lock);

void rdna1_mtype_arm_lock(void)
{
	mutex_lock(&rdna1_arm_lock);
}

void rdna1_mtype_arm_unlock(void)
{
	mutex_unlock(&rdna1_arm_lock);
}

/*
 * Why the last arming failed, for the read-only "arm_error" parameter (arming.rs words it).
 * Written under rdna1_arm_lock and rdna1_status_lock both.
 */
static char rdna1_arm_error[256];

/* fprobe's misses in registrations before the current one (register_fprobe zeroes nmissed). */
static unsigned long rdna1_missed_before;

/*
 * What the "arm_error" and "missed" parameters read, guarded for those readers: they run under
 * the module's param_lock, and must not wait for rdna1_arm_lock, which is held across reads of
 * amdgpu's sysfs files (kernfs and seq_file locks, taken under param_lock when a parameter is
 * read) and across a module notification: lockdep's cycle param_lock -> rdna1_arm_lock ->
 * kernfs -> param_lock.
 */
static DEFINE_SPINLOCK(rdna1_status_lock);

void rdna1_set_arm_error(const char *text, size_t len)
{
	lockdep_assert_held(&rdna1_arm_lock);
	len = min(len, sizeof(rdna1_arm_error) - 1);
	spin_lock(&rdna1_status_lock);
	memcpy(rdna1_arm_error, text, len);
	rdna1_arm_error[len] = '\0';
	spin_unlock(&rdna1_status_lock);
}

/*
 * Registers the probe, soft-disabled, on every traceable function named HOOKED_SYMBOL, by
 * glob (fprobe's get_ips_from_filter() scans vmlinux's and every module's symbols): no
 * module-qualified lookup, which ftrace_lookup_symbols() resolves only through a fast path
 * newer than some releases the module loads on (docs/KERNELS.md).
 */
int rdna1_probe_register_by_name(void)
{
	lockdep_assert_held(&rdna1_arm_lock);
	disable_fprobe(&rdna1_fprobe);
	return register_fprobe(&rdna1_fprobe, HOOKED_SYMBOL, NULL);
}

/* Registers the probe, soft-disabled, on @addr alone (one of the sites found by name). */
int rdna1_probe_register_at(unsigned long addr)
{
	lockdep_assert_held(&rdna1_arm_lock);
	disable_fprobe(&rdna1_fprobe);
	return register_fprobe_ips(&rdna1_fprobe, &addr, 1);
}

/*
 * The addresses the registered probe is on: their number, and the first @max in @addrs.
 * hlist_array is set by the registration and freed by unregister_fprobe(), both under our lock.
 */
u32 rdna1_probe_sites(unsigned long *addrs, u32 max)
{
	const struct fprobe_hlist *h = rdna1_fprobe.hlist_array;
	u32 i, n;

	lockdep_assert_held(&rdna1_arm_lock);
	n = h ? h->size : 0;
	for (i = 0; i < n && i < max; i++)
		addrs[i] = h->array[i].addr;
	return n;
}

/* "name [module]" of the function at @addr (its name alone if in vmlinux); "" if @len is short. */
void rdna1_probe_site_name(unsigned long addr, char *buf, size_t len)
{
	if (len < KSYM_SYMBOL_LEN) {
		if (len)
			buf[0] = '\0';
		return;
	}
	sprint_symbol_no_offset(buf, addr);
}

void rdna1_probe_enable(void)
{
	lockdep_assert_held(&rdna1_arm_lock);
	enable_fprobe(&rdna1_fprobe);
}

/* Waits an RCU grace period: no handler runs after this returns. */
void rdna1_probe_unregister(void)
{
	lockdep_assert_held(&rdna1_arm_lock);
	unregister_fprobe(&rdna1_fprobe);
	spin_lock(&rdna1_status_lock);
	rdna1_missed_before += READ_ONCE(rdna1_fprobe.nmissed);
	WRITE_ONCE(rdna1_fprobe.nmissed, 0);
	spin_unlock(&rdna1_status_lock);
}

/* Its taints are set before its COMING notification. */
bool rdna1_module_oot(const void *mod)
{
	return test_bit(TAINT_OOT_MODULE, &((const struct module *)mod)->taints);
}

/*
 * Its .BTF, only while it is COMING: prepare_coming_module() notifies before load_module()
 * frees the file copy that btf_data points into (do_init_module() clears the pointer later).
 */
u32 rdna1_module_btf(const void *mod, u64 *id)
{
#ifdef CONFIG_DEBUG_INFO_BTF_MODULES
	const struct module *m = mod;

	if (!m->btf_data)
		return RDNA1_BTF_NONE;
	if (m->btf_base_data)
		return RDNA1_BTF_DISTILLED;
	*id = rdna1_mtype_btf_id(m->btf_data, m->btf_data_size);
	return RDNA1_BTF_READ;
#else
	return RDNA1_BTF_NONE;
#endif
}

#ifdef CONFIG_DEBUG_INFO_BTF_MODULES
/* More than any module's BTF (amdgpu's is a few MiB): a bound on what is read. */
#define RDNA1_BTF_MAX (64U << 20)

/*
 * The id of the live amdgpu's BTF, from /sys/kernel/btf/amdgpu (a copy of its .BTF section).
 * Read with kernel_read(), not kernel_read_file(): the latter is for files the kernel loads
 * (firmware, modules, policies), and LSMs such as IPE warn on a read that is none of those.
 */
int rdna1_live_btf_id(u64 *id)
{
	const char *path = "/sys/kernel/btf/" HOOKED_MODULE;
	struct file *f;
	loff_t size, pos = 0;
	ssize_t n;
	void *buf;
	int ret = 0;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	size = i_size_read(file_inode(f));
	if (size <= 0 || size > RDNA1_BTF_MAX) {
		ret = -EFBIG;
		goto out;
	}
	buf = vmalloc(size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (pos < size) {
		n = kernel_read(f, buf + pos, size - pos, &pos);
		if (n <= 0) {
			ret = n ? n : -EIO;
			break;
		}
	}
	if (!ret)
		*id = rdna1_mtype_btf_id(buf, size);
	vfree(buf);
out:
	filp_close(f, NULL);
	return ret;
}
#else
int rdna1_live_btf_id(u64 *id)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * Reads /sys/module/amdgpu/@attr into @buf (at most @len - 1 bytes, NUL-terminated); returns
 * the length read. What the init path, which has no struct module for amdgpu (modules cannot
 * look another one up), asks of the amdgpu it found.
 */
int rdna1_amdgpu_sysfs_read(u32 attr, char *buf, size_t len)
{
	static const char * const paths[] = {
		[RDNA1_ATTR_INITSTATE] = "/sys/module/" HOOKED_MODULE "/initstate",
		[RDNA1_ATTR_TAINT] = "/sys/module/" HOOKED_MODULE "/taint",
	};
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	if (attr >= ARRAY_SIZE(paths) || !len)
		return -EINVAL;
	f = filp_open(paths[attr], O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, len - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

/* Whether this task sees sysfs's /sys/module at all (it is resolved in its mount namespace). */
bool rdna1_sysfs_modules_reachable(void)
{
	struct path p;

	if (kern_path("/sys/module", LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &p))
		return false;
	path_put(&p);
	return true;
}

static int rdna1_module_event(struct notifier_block *nb, unsigned long state,
			      void *data)
{
	struct module *mod = data;
	u32 event;

	if (strcmp(mod->name, HOOKED_MODULE))
		return NOTIFY_DONE;
	switch (state) {
	case MODULE_STATE_COMING:
		event = RDNA1_AMDGPU_COMING;
		break;
	case MODULE_STATE_LIVE:
		event = RDNA1_AMDGPU_LIVE;
		break;
	case MODULE_STATE_GOING:
		event = RDNA1_AMDGPU_GOING;
		break;
	default:
		return NOTIFY_DONE;
	}
	rdna1_mtype_on_amdgpu(event, mod);
	return NOTIFY_DONE;
}

/* Above fprobe's own notifier (0): we unregister before it prunes amdgpu's addresses. */
static struct notifier_block rdna1_module_nb = {
	.notifier_call = rdna1_module_event,
	.priority = 1,
};

int rdna1_notifier_register(void)
{
	return register_module_notifier(&rdna1_module_nb);
}

/* Waits for a notification in progress to end (the chain's rwsem). */
void rdna1_notifier_unregister(void)
{
	unregister_module_notifier(&rdna1_module_nb);
}

/*
 * Serialises policy writers (parameters are also written at load, before module init, so this
 * must be a statically initialised C mutex). Readers in the hook take no lock: Rust publishes
 * each new policy with one atomic store and waits an RCU grace period before reusing a slot.
 */
static DEFINE_MUTEX(rdna1_policy_lock);

void rdna1_mtype_policy_lock(void)
{
	mutex_lock(&rdna1_policy_lock);
}

void rdna1_mtype_policy_unlock(void)
{
	mutex_unlock(&rdna1_policy_lock);
}

void rdna1_mtype_report_bad_bo(u32 why)
{
	static const char * const invariant[] = {
		[RDNA1_BAD_BO_TTM_TYPE] = "an unknown TTM type",
		[RDNA1_BAD_BO_FLAGS] = "an unknown creation flag",
		[RDNA1_BAD_BO_NO_DOMAIN] = "no preferred domain",
		[RDNA1_BAD_BO_DOMAIN] = "an unknown domain",
		[RDNA1_BAD_BO_UNREADABLE] = "a field at an unreadable address",
	};

	pr_warn_ratelimited("an amdgpu_bo has %s: left as amdgpu mapped it (class unknown, this call only)\n",
			    why < ARRAY_SIZE(invariant) ? invariant[why] : "?");
}

const char rdna1_mtype_version[24] = RDNA1_MTYPE_VERSION;

static int rdna1_policy_set(const char *val, const struct kernel_param *kp)
{
	u32 field = (u32)(uintptr_t)kp->arg;
	int ret;

	mutex_lock(&rdna1_policy_lock);
	ret = rdna1_mtype_policy_store(field, val, strlen(val));
	mutex_unlock(&rdna1_policy_lock);
	return ret;
}

static int rdna1_policy_get(char *buf, const struct kernel_param *kp)
{
	u32 field = (u32)(uintptr_t)kp->arg;
	int ret;

	mutex_lock(&rdna1_policy_lock);
	ret = rdna1_mtype_policy_show(field, buf, PAGE_SIZE);
	mutex_unlock(&rdna1_policy_lock);
	return ret;
}

static const struct kernel_param_ops rdna1_policy_ops = {
	.set = rdna1_policy_set,
	.get = rdna1_policy_get,
};
module_param_cb(mode, &rdna1_policy_ops, (void *)RDNA1_FIELD_MODE, 0644);
MODULE_PARM_DESC(mode, "off (pass through), audit (count what enforce would do) or enforce (rewrite MTYPE to NC); default off");
module_param_cb(scope, &rdna1_policy_ops, (void *)RDNA1_FIELD_SCOPE, 0644);
MODULE_PARM_DESC(scope, "rdna1 (default), gfx10, or up to 8 PCI addresses: 0000:03:00.0,...");
module_param_cb(classes, &rdna1_policy_ops, (void *)RDNA1_FIELD_CLASSES, 0644);
MODULE_PARM_DESC(classes, "what UC is rewritten, a list of: coherent (BOs created coherent; default), uncached (BOs created uncached), uc_request (memory BOs whose mapping requests UC); or none");
module_param_cb(vm_scope, &rdna1_policy_ops, (void *)RDNA1_FIELD_VM_SCOPE, 0644);
MODULE_PARM_DESC(vm_scope, "compute (default: only VMs KFD acquired, ROCm/HIP) or all (graphics clients too)");
module_param_cb(bo_layout, &rdna1_policy_ops, (void *)RDNA1_FIELD_BO_LAYOUT, 0644);
MODULE_PARM_DESC(bo_layout, "struct amdgpu_bo layout: size=N preferred_domains=N tbo=N flags=N (from BTF), builtin (default), or none");
module_param_cb(bo_layout_status, &rdna1_policy_ops, (void *)RDNA1_FIELD_BO_LAYOUT_STATUS, 0444);
MODULE_PARM_DESC(bo_layout_status, "unset (BOs are not classified) or ok");
module_param_cb(bo_layout_source, &rdna1_policy_ops, (void *)RDNA1_FIELD_BO_LAYOUT_SOURCE, 0444);
MODULE_PARM_DESC(bo_layout_source, "builtin (the module's own, for Linux 7.2-7.3), set (written by root) or none");

static int rdna1_stats_get(char *buf, const struct kernel_param *kp)
{
	return rdna1_mtype_stats_show(buf, PAGE_SIZE);
}

static const struct kernel_param_ops rdna1_stats_ops = {
	.get = rdna1_stats_get,
};
module_param_cb(stats, &rdna1_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "per-device counters, one line per device");

static int rdna1_armed_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", rdna1_mtype_armed() ? 'Y' : 'N');
}

static const struct kernel_param_ops rdna1_armed_ops = {
	.get = rdna1_armed_get,
};
module_param_cb(armed, &rdna1_armed_ops, NULL, 0444);
MODULE_PARM_DESC(armed, "Y while the hook on amdgpu's " HOOKED_SYMBOL " is registered");

static int rdna1_rejected_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&rdna1_rejected));
}

static const struct kernel_param_ops rdna1_rejected_ops = {
	.get = rdna1_rejected_get,
};
module_param_cb(rejected, &rdna1_rejected_ops, NULL, 0444);
MODULE_PARM_DESC(rejected, "calls left to amdgpu because their PTE flags were not on the caller's stack");

/*
 * fprobe's nmissed: calls whose exit handler fprobe skipped (no room for the entry data on the
 * return stack, a kprobe already running, or the probe list grown since the entry was sized),
 * so they kept amdgpu's MTYPE undecided. fprobe counts it unlocked: a close, not exact, count.
 */
static int rdna1_missed_get(char *buf, const struct kernel_param *kp)
{
	unsigned long n;

	spin_lock(&rdna1_status_lock);
	n = rdna1_missed_before + READ_ONCE(rdna1_fprobe.nmissed);
	spin_unlock(&rdna1_status_lock);
	return sysfs_emit(buf, "%lu\n", n);
}

static const struct kernel_param_ops rdna1_missed_ops = {
	.get = rdna1_missed_get,
};
module_param_cb(missed, &rdna1_missed_ops, NULL, 0444);
MODULE_PARM_DESC(missed, "calls fprobe did not hand to the exit handler (its nmissed, over every arming): kept as amdgpu made them");

static int rdna1_arm_error_get(char *buf, const struct kernel_param *kp)
{
	int n;

	spin_lock(&rdna1_status_lock);
	n = sysfs_emit(buf, "%s\n", rdna1_arm_error);
	spin_unlock(&rdna1_status_lock);
	return n;
}

static const struct kernel_param_ops rdna1_arm_error_ops = {
	.get = rdna1_arm_error_get,
};
module_param_cb(arm_error, &rdna1_arm_error_ops, NULL, 0444);
MODULE_PARM_DESC(arm_error, "why the hook is not armed on amdgpu's " HOOKED_SYMBOL ", or empty");

MODULE_VERSION(RDNA1_MTYPE_VERSION);
