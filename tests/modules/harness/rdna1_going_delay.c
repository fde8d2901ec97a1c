// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_going_delay: holds amdgpu's MODULE_STATE_GOING notifier chain for delay_ms, for the
 * unload race of case 72. A module loaded meanwhile blocks in register_module_notifier()
 * (the chain holds the notifier rwsem for reading) and is released when the chain ends, while
 * module unload goes on to ftrace_release_mod(): rdna1_mtype's init then meets an amdgpu
 * whose GOING it never saw, still listed and still traceable. "holding" reads Y meanwhile.
 *
 * The unload would usually win the race that follows (a few instructions to ftrace_release_mod
 * against an fprobe registration), so release_delay_ms also holds ftrace_release_mod() for
 * amdgpu: a kprobe spins there before it runs (preemption off; interrupts too unless the probe
 * was optimised into a jump). A registration made meanwhile on the other CPU needs nothing the
 * spinning CPU holds to find amdgpu's function among ftrace's records (ftrace_match_addr()):
 * it does so well within the spin, on the amdgpu that is going, every time. Test-only: a CPU
 * spinning for seconds.
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/string.h>

static unsigned int delay_ms = 3000;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "how long amdgpu's GOING chain is held, in ms");

static bool holding;
module_param(holding, bool, 0444);
MODULE_PARM_DESC(holding, "Y while amdgpu's GOING chain is held");

static unsigned int release_delay_ms;
module_param(release_delay_ms, uint, 0444);
MODULE_PARM_DESC(release_delay_ms, "how long ftrace_release_mod() waits for amdgpu, in ms (0: not)");

static bool released;
module_param(released, bool, 0444);
MODULE_PARM_DESC(released, "Y once ftrace_release_mod() was held for amdgpu");

/* ftrace_release_mod(struct module *mod): the argument in the first argument register. */
static int release_delay_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct module *mod = (struct module *)regs_get_kernel_argument(regs, 0);

	if (strcmp(mod->name, "amdgpu"))
		return 0;
	mdelay(release_delay_ms);
	WRITE_ONCE(released, true);
	return 0;
}

static struct kprobe release_delay_kp = {
	.symbol_name = "ftrace_release_mod",
	.pre_handler = release_delay_pre,
};

static int going_delay_event(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (state != MODULE_STATE_GOING || strcmp(mod->name, "amdgpu"))
		return NOTIFY_DONE;
	WRITE_ONCE(holding, true);
	msleep(READ_ONCE(delay_ms));
	WRITE_ONCE(holding, false);
	return NOTIFY_DONE;
}

/* Last in the chain, after rdna1_mtype's (1) and fprobe's (0). */
static struct notifier_block going_delay_nb = {
	.notifier_call = going_delay_event,
	.priority = INT_MIN,
};

static int __init going_delay_init(void)
{
	int ret;

	/* Interrupts may be off in the spin: under the hard-lockup threshold (10 s). */
	if (release_delay_ms > 10000)
		return -EINVAL;
	if (release_delay_ms) {
		ret = register_kprobe(&release_delay_kp);
		if (ret)
			return ret;
	}
	ret = register_module_notifier(&going_delay_nb);
	if (ret && release_delay_ms)
		unregister_kprobe(&release_delay_kp);
	return ret;
}

static void __exit going_delay_exit(void)
{
	unregister_module_notifier(&going_delay_nb);
	if (release_delay_ms)
		unregister_kprobe(&release_delay_kp);
}

module_init(going_delay_init);
module_exit(going_delay_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: holds amdgpu's GOING notifier chain and ftrace_release_mod()");
