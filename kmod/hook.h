/* SPDX-License-Identifier: GPL-2.0 */
/* The interface between hook.c and the Rust half (rdna1_mtype_main.rs). */
#ifndef RDNA1_MTYPE_HOOK_H
#define RDNA1_MTYPE_HOOK_H

#include <linux/types.h>

/* C, called from Rust module init/exit. */
int rdna1_mtype_hook_init(void);
void rdna1_mtype_hook_exit(void);

/* Rust, called from the probe handlers (atomic context) and the parameter ops. */
bool rdna1_mtype_wants_exit(void);
void rdna1_mtype_on_pte(u32 vm_flags, bool has_bo, u64 *flags);
int rdna1_mtype_mode_store(const char *val, size_t len);
int rdna1_mtype_mode_show(char *buf, size_t len);

#endif
