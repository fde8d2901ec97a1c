/* SPDX-License-Identifier: GPL-2.0 */
/* For the test-only modules: the entry address of a local symbol of a loaded module. */
#ifndef RDNA1_RESOLVE_SYMBOL_H
#define RDNA1_RESOLVE_SYMBOL_H

#include <linux/kprobes.h>
#include <asm/ibt.h>

/*
 * kallsyms_lookup_name is not exported: a transient kprobe resolves the name. kprobes step
 * over an ENDBR at the entry; with IBT an indirect call must land on it, so step back.
 */
static inline unsigned long rdna1_resolve_symbol(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	unsigned long addr;

	if (register_kprobe(&kp))
		return 0;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) &&
	    __is_endbr(*(u32 *)(addr - ENDBR_INSN_SIZE)))
		addr -= ENDBR_INSN_SIZE;
	return addr;
}

#endif
