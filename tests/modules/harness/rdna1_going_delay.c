// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_going_delay: holds amdgpu's MODULE_STATE_GOING notifier chain for delay_ms, for the
 * unload race of soak case 72. A module loaded meanwhile blocks in register_module_notifier()
 * (the chain holds the notifier rwsem for reading) and is released when the chain ends, while
 * module unload goes on to ftrace_release_mod(): rdna1_mtype's init then meets an amdgpu
 * whose GOING it never saw, still listed and still traceable. "holding" reads Y meanwhile.
 * Test-only.
 */
#include <linux/delay.h>
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
	return register_module_notifier(&going_delay_nb);
}

static void __exit going_delay_exit(void)
{
	unregister_module_notifier(&going_delay_nb);
}

module_init(going_delay_init);
module_exit(going_delay_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("rdna1-mtype test: holds amdgpu's GOING notifier chain");
