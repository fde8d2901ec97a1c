// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_mtype: the C part, limited to what the Rust `kernel` crate of Linux 7.2 has no
 * abstraction for:
 *  - an fprobe on amdgpu's gmc_v10_0_get_vm_pte (entry saves the arguments, exit hands the
 *    computed PTE flags and the device to Rust),
 *  - reading the device from amdgpu's adev (struct layout, with a runtime check), and the
 *    kind of VM from amdgpu_vm.is_compute_context (offset from BTF or a checked copy),
 *  - a module notifier that arms the probe when amdgpu arrives and disarms it when it goes,
 *    after checking it is amdgpu's own function in the amdgpu build the DKMS build checked
 *    (built without that amdgpu's BTF: an in-tree amdgpu), and not an amdgpu unloading
 *    (struct module and sysfs, which the crate does not reach),
 *  - string module parameters writable at runtime (Rust params are integer and read-only):
 *    "mode", "scope", "classes", "vm_scope", "bo_layout", and the read-only "armed" and
 *    "stats".
 * Every decision is made in Rust (probe.rs, params.rs); this file only moves data.
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
 * The releases the module loads on. Built with the target amdgpu's BTF (kmod/dkms-make.sh:
 * rdna1ctl check-kernel found the contract there, and rdna1_check_identity_locked() arms only
 * on that very amdgpu): every release since 6.18, whose signature the contract states (6.12
 * to 6.17 have (adev, mapping, flags)). Built without: only 7.2 and 7.3, whose
 * gmc_v10_0_get_vm_pte, amdgpu_device head and amdgpu_bo were checked against their source
 * (tests/kernel/check-hook-source.sh); elsewhere the probe would read unknown arguments.
 */
#ifdef RDNA1_AMDGPU_BTF_ID
#define RDNA1_KERNEL_MIN KERNEL_VERSION(6, 18, 0)
#define RDNA1_KERNEL_END KERNEL_VERSION(255, 255, 255)
#define RDNA1_KERNEL_RANGE "6.18 and later, with the contract checked on the kernel's BTF"
#else
#define RDNA1_KERNEL_MIN KERNEL_VERSION(7, 2, 0)
#define RDNA1_KERNEL_END KERNEL_VERSION(7, 4, 0)
#define RDNA1_KERNEL_RANGE "7.2 to 7.3 (built without the kernel's BTF: source-verified releases)"
#endif

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
 * else, for the releases built without BTF (7.2, 7.3: RDNA1_KERNEL_RANGE), the copy
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
static const u64 rdna1_amdgpu_btf_id = RDNA1_AMDGPU_BTF_ID;

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

/* Serialises arming against the notifier and unload; "armed" is read locklessly by sysfs. */
static DEFINE_MUTEX(rdna1_arm_lock);
static bool rdna1_armed;

/*
 * Why the last arming failed, for the read-only "arm_error" parameter; "" if it did not, or if
 * that amdgpu has gone since. Written only under rdna1_arm_lock and rdna1_status_lock both.
 */
static char rdna1_arm_error[KSYM_SYMBOL_LEN + 64];

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

/* Sets arm_error from @fmt and returns @ret: "return rdna1_arm_failed(-EXDEV, ...)". */
static __printf(2, 3) int rdna1_arm_failed(int ret, const char *fmt, ...)
{
	char text[sizeof(rdna1_arm_error)];
	va_list args;

	lockdep_assert_held(&rdna1_arm_lock);
	va_start(args, fmt);
	vscnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	spin_lock(&rdna1_status_lock);
	strscpy(rdna1_arm_error, text);
	spin_unlock(&rdna1_status_lock);
	return ret;
}

static void rdna1_clear_arm_error(void)
{
	lockdep_assert_held(&rdna1_arm_lock);
	spin_lock(&rdna1_status_lock);
	rdna1_arm_error[0] = '\0';
	spin_unlock(&rdna1_status_lock);
}

/* amdgpu is between its GOING notification and being freed: its text must not be hooked. */
static bool rdna1_amdgpu_going;

/*
 * The symbol is looked up as "amdgpu:gmc_v10_0_get_vm_pte" (kallsyms_lookup_name's
 * module-qualified form), so another module defining the name is never chosen. The probe is
 * registered soft-disabled and enabled only once kallsyms confirms where it landed.
 */
static int rdna1_check_target_locked(void)
{
	const struct fprobe_hlist *h = rdna1_fprobe.hlist_array;
	char sym[KSYM_SYMBOL_LEN];

	if (!h || h->size != 1) {
		return rdna1_arm_failed(-EINVAL, "%s resolved to %d addresses", HOOKED_SYMBOL,
					h ? h->size : 0);
	}
	sprint_symbol_no_offset(sym, h->array[0].addr);
	if (strcmp(sym, HOOKED_SYMBOL " [" HOOKED_MODULE "]")) {
		return rdna1_arm_failed(-EXDEV, "%s resolved to %s, not to %s's own", HOOKED_SYMBOL,
					sym, HOOKED_MODULE);
	}
	return 0;
}

#ifdef CONFIG_DEBUG_INFO_BTF_MODULES
/* More than any module's BTF (amdgpu's is a few MiB): a bound on what is read. */
#define RDNA1_BTF_MAX (64U << 20)

/*
 * The id of the live amdgpu's BTF, from /sys/kernel/btf/amdgpu (a copy of its .BTF section).
 * Read with kernel_read(), not kernel_read_file(): the latter is for files the kernel loads
 * (firmware, modules, policies), and LSMs such as IPE warn on a read that is none of those.
 */
static int rdna1_live_btf_id(u64 *id)
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
#endif

/*
 * Reads /sys/module/amdgpu/@attr into @buf (at most @len - 1 bytes, NUL-terminated): what the
 * init path, which has no struct module for amdgpu (modules cannot look another one up), asks
 * of the amdgpu it found. -ENOENT once amdgpu's sysfs directory is gone (it is freed).
 */
static int rdna1_amdgpu_attr(const char *attr, char *buf, size_t len)
{
	char path[64];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/module/" HOOKED_MODULE "/%s", attr);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, len - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return 0;
}

/*
 * Built without the target amdgpu's BTF (id 0), the module knows amdgpu's arguments only from
 * the source of the releases it loads on (RDNA1_KERNEL_RANGE). An amdgpu built out of tree
 * (AMD's amdgpu-dkms: taint O) may have another signature (the pre-6.18 one) or layout, and
 * the probe would read its arguments as 7.2's and write through a junk pointer: refused.
 * @mod: amdgpu while it is coming (its taints are set before its COMING notification); NULL
 * on the init path, which asks sysfs.
 */
static int rdna1_check_in_tree_locked(struct module *mod)
{
	char taint[32];
	bool oot;
	int ret;

	if (mod) {
		oot = test_bit(TAINT_OOT_MODULE, &mod->taints);
	} else {
		ret = rdna1_amdgpu_attr("taint", taint, sizeof(taint));
		if (ret) {
			return rdna1_arm_failed(-ESTALE,
						"cannot read /sys/module/%s/taint (%d) to check %s was built in tree",
						HOOKED_MODULE, ret, HOOKED_MODULE);
		}
		/* module_flags_taint(): one letter per taint, 'O' for TAINT_OOT_MODULE. */
		oot = !!strchr(taint, 'O');
	}
	if (oot) {
		return rdna1_arm_failed(-ESTALE,
					"%s was built out of tree (taint O) and this module without its BTF: its arguments cannot be checked (a kernel with module BTF and dkms install --force rdna1-mtype/%s -k %s)",
					HOOKED_MODULE, RDNA1_MTYPE_VERSION, UTS_RELEASE);
	}
	return 0;
}

/*
 * Whether amdgpu is unloading: -ESRCH while its initstate reads "going", -ENOENT once its
 * /sys/module directory is gone or being removed (a removed kernfs file reads -ENODEV), 0 while
 * live or coming, another error when sysfs cannot tell.
 */
static int rdna1_amdgpu_leaving(void)
{
	char state[16];
	int ret;

	ret = rdna1_amdgpu_attr("initstate", state, sizeof(state));
	if (ret == -ENOENT || ret == -ENODEV)
		return -ENOENT;
	if (ret)
		return ret;
	return strcmp(state, "going\n") ? 0 : -ESRCH;
}

/*
 * On the init path (@mod NULL), the amdgpu found must not be going: its GOING notification
 * may have run before our notifier was registered (register_module_notifier() waits for a
 * running chain, and module unload goes on from the chain's end to ftrace_release_mod()
 * without a lock we could take), and in between its function is still found, so arming
 * would succeed on text about to be freed, and nothing would ever disarm it. An amdgpu seen
 * live or coming here notifies us when it goes (we are registered by then), and that waits
 * for the arm lock we hold. -ESRCH: the amdgpu the probe was registered on is going or gone;
 * wait for the next one.
 */
static int rdna1_check_not_going_locked(struct module *mod)
{
	int ret;

	if (mod)
		return 0;
	ret = rdna1_amdgpu_leaving();
	if (ret == -ENOENT || ret == -ESRCH)
		return -ESRCH;
	if (ret) {
		return rdna1_arm_failed(-ESTALE,
					"cannot read /sys/module/%s/initstate (%d) to check %s is not unloading",
					HOOKED_MODULE, ret, HOOKED_MODULE);
	}
	return 0;
}

/*
 * The amdgpu about to be hooked must be the build whose BTF was checked. While it is coming
 * (@mod: this runs from its MODULE_STATE_COMING notifier, called by prepare_coming_module()
 * before load_module() frees the file copy that mod->btf_data points into), its .BTF
 * section; once live, /sys/kernel/btf/amdgpu, the kernel's copy of those bytes. An amdgpu
 * built out of tree has a distilled base (.BTF.base) and the kernel rewrites its copy against
 * vmlinux, so the two would differ; check-kernel reads no such module either: refused by name.
 */
static int rdna1_check_identity_locked(struct module *mod)
{
#ifdef CONFIG_DEBUG_INFO_BTF_MODULES
	const char *why = NULL;
	u64 id = 0;
	int ret;

	if (!rdna1_amdgpu_btf_id)
		return rdna1_check_in_tree_locked(mod);
	if (mod && !mod->btf_data) {
		why = "has no BTF";
	} else if (mod && mod->btf_base_data) {
		why = "was built out of tree (its BTF has a distilled base)";
	} else if (mod) {
		id = rdna1_mtype_btf_id(mod->btf_data, mod->btf_data_size);
	} else {
		ret = rdna1_live_btf_id(&id);
		if (ret) {
			return rdna1_arm_failed(-ESTALE,
						"cannot read /sys/kernel/btf/%s (%d) to check it is the %s this module was built for",
						HOOKED_MODULE, ret, HOOKED_MODULE);
		}
	}
	if (why) {
		return rdna1_arm_failed(-ESTALE,
					"%s %s: it is not the one checked when this module was built",
					HOOKED_MODULE, why);
	}
	if (id != rdna1_amdgpu_btf_id) {
		return rdna1_arm_failed(-ESTALE,
					"%s's BTF (id %#llx) is not the one checked when this module was built (%#llx): rebuild it (dkms install --force rdna1-mtype/%s -k %s)",
					HOOKED_MODULE, id, rdna1_amdgpu_btf_id, RDNA1_MTYPE_VERSION,
					UTS_RELEASE);
	}
	return 0;
#else
	return rdna1_check_in_tree_locked(mod);
#endif
}

/*
 * On the init path, whatever failed while amdgpu is unloading is a wait for the next amdgpu
 * (-ESRCH), not an error: one going, or one gone under a registration or check that had found
 * it (ftrace releases its records and sysfs its files under us). A registration's -ENOENT with
 * no amdgpu at all stays -ENOENT (not loaded: the caller waits as ever).
 */
static int rdna1_init_failure_locked(int ret)
{
	int leaving = rdna1_amdgpu_leaving();

	if (leaving == -ESRCH || (leaving == -ENOENT && ret != -ENOENT)) {
		rdna1_clear_arm_error();
		return -ESRCH;
	}
	return ret;
}

static int rdna1_arm_locked(struct module *mod)
{
	const char *sym = HOOKED_MODULE ":" HOOKED_SYMBOL;
	int ret;

	lockdep_assert_held(&rdna1_arm_lock);
	if (rdna1_armed)
		return 0;
	rdna1_clear_arm_error();
	if (rdna1_amdgpu_going)
		return -ENOENT;
	disable_fprobe(&rdna1_fprobe);
	ret = register_fprobe_syms(&rdna1_fprobe, &sym, 1);
	if (ret && !mod)
		ret = rdna1_init_failure_locked(ret);
	if (ret) {
		/*
		 * -ENOENT: amdgpu is not loaded (or has no such function); -ESRCH: it is
		 * unloading. The caller decides.
		 */
		if (ret != -ENOENT && ret != -ESRCH)
			return rdna1_arm_failed(ret, "registering the fprobe on %s failed (%d)",
						sym, ret);
		return ret;
	}
	ret = rdna1_check_target_locked();
	if (!ret)
		ret = rdna1_check_not_going_locked(mod);
	if (!ret)
		ret = rdna1_check_identity_locked(mod);
	if (ret) {
		unregister_fprobe(&rdna1_fprobe);
		return mod ? ret : rdna1_init_failure_locked(ret);
	}
	enable_fprobe(&rdna1_fprobe);
	WRITE_ONCE(rdna1_armed, true);
	pr_info("armed on %s:%s\n", HOOKED_MODULE, HOOKED_SYMBOL);
	return 0;
}

static void rdna1_disarm_locked(const char *why)
{
	lockdep_assert_held(&rdna1_arm_lock);
	if (!rdna1_armed)
		return;
	/* Waits an RCU grace period: no exit handler runs after this returns. */
	unregister_fprobe(&rdna1_fprobe);
	spin_lock(&rdna1_status_lock);
	rdna1_missed_before += READ_ONCE(rdna1_fprobe.nmissed);
	WRITE_ONCE(rdna1_fprobe.nmissed, 0);
	spin_unlock(&rdna1_status_lock);
	WRITE_ONCE(rdna1_armed, false);
	pr_info("disarmed (%s)\n", why);
}

static int rdna1_module_event(struct notifier_block *nb, unsigned long state,
			      void *data)
{
	struct module *mod = data;
	int ret;

	if (strcmp(mod->name, HOOKED_MODULE))
		return NOTIFY_DONE;
	mutex_lock(&rdna1_arm_lock);
	if (state == MODULE_STATE_COMING) {
		/*
		 * A module of this name can only come once the one before it is freed, so an
		 * arming still here is on text that is gone (a GOING we never saw): never
		 * "already armed", always armed anew on this amdgpu.
		 */
		if (rdna1_armed) {
			pr_warn("still armed on an %s that is gone: arming on the new one\n",
				HOOKED_MODULE);
			rdna1_disarm_locked("stale");
		}
		/* Before amdgpu's init runs: its first VM mapping is already covered. */
		rdna1_amdgpu_going = false;
		ret = rdna1_arm_locked(mod);
		if (ret == -ENOENT)
			rdna1_arm_failed(ret, "%s has no traceable %s", HOOKED_MODULE,
					 HOOKED_SYMBOL);
		if (ret)
			pr_err("cannot arm on %s:%s (%d%s%s): mappings are NOT modified\n",
			       HOOKED_MODULE, HOOKED_SYMBOL, ret,
			       rdna1_arm_error[0] ? ": " : "", rdna1_arm_error);
	} else if (state == MODULE_STATE_GOING) {
		rdna1_amdgpu_going = true;
		rdna1_disarm_locked(HOOKED_MODULE " unloading");
		/* Why this amdgpu was not armed says nothing of the next one: waiting. */
		rdna1_clear_arm_error();
	}
	mutex_unlock(&rdna1_arm_lock);
	return NOTIFY_DONE;
}

/* Above fprobe's own notifier (0): we unregister before it prunes amdgpu's addresses. */
static struct notifier_block rdna1_module_nb = {
	.notifier_call = rdna1_module_event,
	.priority = 1,
};

/*
 * Whether a module named amdgpu is loaded: modules cannot search the module list, but a
 * loaded module has /sys/module/NAME/initstate (a built-in one does not). Without sysfs
 * mounted this says no, and the caller waits as before.
 */
static bool rdna1_amdgpu_present(void)
{
	struct path p;

	if (kern_path("/sys/module/" HOOKED_MODULE "/initstate", LOOKUP_FOLLOW, &p))
		return false;
	path_put(&p);
	return true;
}

int rdna1_mtype_check_kernel(void)
{
	if (LINUX_VERSION_CODE < RDNA1_KERNEL_MIN || LINUX_VERSION_CODE >= RDNA1_KERNEL_END) {
		pr_err("Linux %s is outside %s: %s's arguments there are unknown; refusing to load\n",
		       UTS_RELEASE, RDNA1_KERNEL_RANGE, HOOKED_SYMBOL);
		return -EOPNOTSUPP;
	}
	return 0;
}

int rdna1_mtype_hook_init(void)
{
	int ret;

	ret = register_module_notifier(&rdna1_module_nb);
	if (ret)
		return ret;
	mutex_lock(&rdna1_arm_lock);
	ret = rdna1_arm_locked(NULL);
	if (ret == -ENOENT && rdna1_amdgpu_present()) {
		/* amdgpu is there, its function is not: an error to show, not a wait. */
		rdna1_arm_failed(ret, "%s is loaded but has no traceable %s", HOOKED_MODULE,
				 HOOKED_SYMBOL);
		pr_err("not armed: %s\n", rdna1_arm_error);
		ret = 0;
	} else if (ret == -ENOENT) {
		/* amdgpu is not loaded (or is unloading): the notifier arms when it comes. */
		pr_info("waiting for %s\n", HOOKED_MODULE);
		ret = 0;
	} else if (ret == -ESRCH) {
		/* The amdgpu found is unloading: the next one's COMING arms. */
		pr_info("waiting for %s (the one loaded is unloading)\n", HOOKED_MODULE);
		ret = 0;
	} else if (ret == -EXDEV || ret == -ESTALE) {
		/* Not amdgpu's own function, or not the amdgpu checked: stay loaded, unarmed. */
		pr_err("not armed: %s\n", rdna1_arm_error);
		ret = 0;
	} else if (ret) {
		pr_err("cannot arm on %s:%s (%d: %s)\n", HOOKED_MODULE, HOOKED_SYMBOL, ret,
		       rdna1_arm_error);
	}
	mutex_unlock(&rdna1_arm_lock);
	if (ret)
		unregister_module_notifier(&rdna1_module_nb);
	return ret;
}

void rdna1_mtype_hook_exit(void)
{
	unregister_module_notifier(&rdna1_module_nb);
	mutex_lock(&rdna1_arm_lock);
	rdna1_disarm_locked("module unload");
	mutex_unlock(&rdna1_arm_lock);
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
	return sysfs_emit(buf, "%c\n", READ_ONCE(rdna1_armed) ? 'Y' : 'N');
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
