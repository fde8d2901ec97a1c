// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_mtype: the C part, limited to what the Rust `kernel` crate of Linux 7.2 has no
 * abstraction for:
 *  - an fprobe on amdgpu's gmc_v10_0_get_vm_pte (entry saves the arguments, exit hands the
 *    computed PTE flags to Rust),
 *  - a module notifier that arms the probe when amdgpu arrives and disarms it when it goes,
 *  - the string module parameter "mode", writable at runtime (Rust params are integer and
 *    read-only), and the read-only "armed".
 * Every decision is made in Rust (rdna1_mtype_main.rs); this file only moves data.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fprobe.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

#include "hook.h"

#define HOOKED_MODULE "amdgpu"
#define HOOKED_SYMBOL "gmc_v10_0_get_vm_pte"

/* What the entry handler saves for the exit handler, per call. */
struct rdna1_call {
	u64 *flags;
	u32 vm_flags;
	bool has_bo;
};

static int rdna1_entry(struct fprobe *fp, unsigned long entry_ip,
		       unsigned long ret_ip, struct ftrace_regs *fregs,
		       void *data)
{
	struct rdna1_call *call = data;

	/* Nothing to do after the call in mode off: skip the exit handler. */
	if (!rdna1_mtype_wants_exit())
		return 1;
	/* gmc_v10_0_get_vm_pte(adev, vm, bo, vm_flags, flags) */
	call->has_bo = ftrace_regs_get_argument(fregs, 2) != 0;
	call->vm_flags = (u32)ftrace_regs_get_argument(fregs, 3);
	call->flags = (u64 *)ftrace_regs_get_argument(fregs, 4);
	return 0;
}

static void rdna1_exit(struct fprobe *fp, unsigned long entry_ip,
		       unsigned long ret_ip, struct ftrace_regs *fregs,
		       void *data)
{
	struct rdna1_call *call = data;

	rdna1_mtype_on_pte(call->vm_flags, call->has_bo, call->flags);
}

static struct fprobe rdna1_fprobe = {
	.entry_handler = rdna1_entry,
	.exit_handler = rdna1_exit,
	.entry_data_size = sizeof(struct rdna1_call),
};

/* Serialises arming against the notifier and unload; "armed" is read locklessly by sysfs. */
static DEFINE_MUTEX(rdna1_arm_lock);
static bool rdna1_armed;

static int rdna1_arm_locked(void)
{
	const char *sym = HOOKED_SYMBOL;
	int ret;

	lockdep_assert_held(&rdna1_arm_lock);
	if (rdna1_armed)
		return 0;
	ret = register_fprobe_syms(&rdna1_fprobe, &sym, 1);
	if (ret)
		return ret;
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
		/* Before amdgpu's init runs: its first VM mapping is already covered. */
		ret = rdna1_arm_locked();
		if (ret)
			pr_err("cannot arm on %s:%s (%d): mappings are NOT modified\n",
			       HOOKED_MODULE, HOOKED_SYMBOL, ret);
	} else if (state == MODULE_STATE_GOING) {
		rdna1_disarm_locked(HOOKED_MODULE " unloading");
	}
	mutex_unlock(&rdna1_arm_lock);
	return NOTIFY_DONE;
}

/* Above fprobe's own notifier (0): we unregister before it prunes amdgpu's addresses. */
static struct notifier_block rdna1_module_nb = {
	.notifier_call = rdna1_module_event,
	.priority = 1,
};

int rdna1_mtype_hook_init(void)
{
	int ret;

	ret = register_module_notifier(&rdna1_module_nb);
	if (ret)
		return ret;
	mutex_lock(&rdna1_arm_lock);
	ret = rdna1_arm_locked();
	mutex_unlock(&rdna1_arm_lock);
	/* -ENOENT: the symbol is not there, amdgpu is not loaded yet; the notifier arms later. */
	if (ret == -ENOENT) {
		pr_info("waiting for %s\n", HOOKED_MODULE);
		ret = 0;
	}
	if (ret) {
		unregister_module_notifier(&rdna1_module_nb);
		pr_err("cannot arm on %s:%s (%d)\n", HOOKED_MODULE, HOOKED_SYMBOL, ret);
	}
	return ret;
}

void rdna1_mtype_hook_exit(void)
{
	unregister_module_notifier(&rdna1_module_nb);
	mutex_lock(&rdna1_arm_lock);
	rdna1_disarm_locked("module unload");
	mutex_unlock(&rdna1_arm_lock);
}

static int rdna1_mode_set(const char *val, const struct kernel_param *kp)
{
	return rdna1_mtype_mode_store(val, strlen(val));
}

static int rdna1_mode_get(char *buf, const struct kernel_param *kp)
{
	return rdna1_mtype_mode_show(buf, PAGE_SIZE);
}

static const struct kernel_param_ops rdna1_mode_ops = {
	.set = rdna1_mode_set,
	.get = rdna1_mode_get,
};
module_param_cb(mode, &rdna1_mode_ops, NULL, 0644);
MODULE_PARM_DESC(mode, "off (pass through) or enforce (rewrite MTYPE to NC); default off");

static int rdna1_armed_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", READ_ONCE(rdna1_armed) ? 'Y' : 'N');
}

static const struct kernel_param_ops rdna1_armed_ops = {
	.get = rdna1_armed_get,
};
module_param_cb(armed, &rdna1_armed_ops, NULL, 0444);
MODULE_PARM_DESC(armed, "Y while the hook on amdgpu's " HOOKED_SYMBOL " is registered");

MODULE_VERSION(RDNA1_MTYPE_VERSION);
