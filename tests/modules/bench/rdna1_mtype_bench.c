// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_mtype_bench: ns per call of amdgpu's real gmc_v10_0_get_vm_pte with each way of hooking
 * it, measured side by side in one run (docs/DESIGN.md, "Hook mechanism").
 *
 * Mechanisms, each doing the same work (save vm_flags and the flags pointer on entry, write
 * MTYPE_NC into *flags after the function returned):
 *   none      - no hook (what a call costs by itself, plus whatever is already attached:
 *               with rdna1_mtype loaded, this row is rdna1_mtype's full hook)
 *   kretprobe - kprobe on entry (via ftrace) and a rethook return trampoline
 *   fprobe    - ftrace entry and fgraph return hooks (what rdna1_mtype uses)
 *   redirect  - ftrace IPMODIFY: the entry jumps to our wrapper, which calls the original
 *               (the callback lets calls from this module through) and rewrites after it
 * Rounds interleave the mechanisms so drift hits all alike; the median round is reported.
 * Results: debugfs rdna1_mtype_bench/results. Parameters: calls, rounds, mechanisms (all|none),
 * label (name of the "none" row), expect (nc|cc|any: the MTYPE the "none" row must end with,
 * so a row of rdna1_mtype's hook shows it did what its mode says).
 *
 * By default every call is the one rdna1_mtype has most to do for: a CC request for a VRAM BO
 * in a compute VM on an RX 5700 XT, real amdgpu objects from amdgpu's headers (as the harness
 * builds them): the device is identified, the VM's kind and the BO's class are read, the
 * decision is counted and, in audit and enforce, logged. Parameters bo=none and vm=graphics
 * leave parts of that out, to tell their costs apart.
 */
#include <linux/debugfs.h>
#include <linux/fprobe.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include "resolve_symbol.h"

#include "amdgpu.h"
#include "amdgpu_vm.h"

#define TARGET "gmc_v10_0_get_vm_pte"
#define MTYPE_MASK (7ULL << 48)
#define MAX_ROUNDS 15

static unsigned int calls = 100000;
module_param(calls, uint, 0444);
static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
static char *mechanisms = "all";
module_param(mechanisms, charp, 0444);
static char *label = "none";
module_param(label, charp, 0444);
static char *expect = "any";
module_param(expect, charp, 0444);
/* What the call passes, to tell apart what rdna1_mtype's work costs: "vram" (default) or "none" */
static char *bo = "vram";
module_param(bo, charp, 0444);
/* and "compute" (default) or "graphics" (a VM outside rdna1_mtype's default VM scope). */
static char *vm = "compute";
module_param(vm, charp, 0444);

/* AMDGPU_VM_MTYPE_CC | READABLE | WRITEABLE; MTYPE_CC in a gfx10 PTE */
#define REQ_CC ((3 << 5) | 0x6)
#define PTE_CC (2ULL << 48)

typedef void (*get_vm_pte_fn)(struct amdgpu_device *adev, struct amdgpu_vm *vm,
			      struct amdgpu_bo *bo, u32 vm_flags, u64 *flags);
static get_vm_pte_fn target;
static unsigned long target_addr;
static struct dentry *dir;
static char results[2048];
static struct debugfs_blob_wrapper results_blob = { .data = results };

struct saved {
	u64 *flags;
};

/* kretprobe */
static unsigned long krp_entries, krp_returns;

static int krp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	krp_entries++;
	((struct saved *)ri->data)->flags = (u64 *)regs_get_kernel_argument(regs, 4);
	return 0;
}

static int krp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 *f = ((struct saved *)ri->data)->flags;

	krp_returns++;
	*f &= ~MTYPE_MASK;
	return 0;
}

static struct kretprobe krp;

/* fprobe */
static int fp_entry(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	((struct saved *)data)->flags = (u64 *)ftrace_regs_get_argument(fregs, 4);
	return 0;
}

static void fp_exit(struct fprobe *fp, unsigned long ip, unsigned long ret_ip,
		    struct ftrace_regs *fregs, void *data)
{
	*((struct saved *)data)->flags &= ~MTYPE_MASK;
}

static struct fprobe fp = {
	.entry_handler = fp_entry,
	.exit_handler = fp_exit,
	.entry_data_size = sizeof(struct saved),
};

/* ftrace IPMODIFY redirect */
static void redirect_wrapper(struct amdgpu_device *adev, struct amdgpu_vm *vm,
			     struct amdgpu_bo *bo, u32 vm_flags, u64 *flags)
{
	target(adev, vm, bo, vm_flags, flags);
	*flags &= ~MTYPE_MASK;
}

static void notrace redirect_cb(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	/*
	 * The wrapper's own call of the original goes through: its return address lies within
	 * the wrapper's first bytes (a product would mark the call site instead; the benchmark's
	 * loop lives in this module too, so within_module() cannot tell them apart).
	 */
	if (parent_ip - (unsigned long)redirect_wrapper >= 64)
		ftrace_regs_set_instruction_pointer(fregs, (unsigned long)redirect_wrapper);
}

static struct ftrace_ops redirect_ops = {
	.func = redirect_cb,
	.flags = FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_RECURSION,
};

enum mech { M_NONE, M_KRETPROBE, M_FPROBE, M_REDIRECT, M_COUNT };
static const char * const mech_names[M_COUNT] = { "none", "kretprobe", "fprobe", "redirect" };

static int attach(enum mech m)
{
	const char *sym = TARGET;
	int ret;

	switch (m) {
	case M_KRETPROBE:
		/* A kretprobe cannot be registered again as unregister left it: start afresh. */
		krp = (struct kretprobe) {
			.kp.symbol_name = TARGET,
			.entry_handler = krp_entry,
			.handler = krp_ret,
			.data_size = sizeof(struct saved),
			.maxactive = 16,
		};
		return register_kretprobe(&krp);
	case M_FPROBE:
		return register_fprobe_syms(&fp, &sym, 1);
	case M_REDIRECT:
		ret = ftrace_set_filter_ip(&redirect_ops, target_addr, 0, 0);
		if (ret)
			return ret;
		ret = register_ftrace_function(&redirect_ops);
		if (ret)
			ftrace_set_filter_ip(&redirect_ops, target_addr, 1, 0);
		return ret;
	default:
		return 0;
	}
}

static void detach(enum mech m)
{
	switch (m) {
	case M_KRETPROBE:
		unregister_kretprobe(&krp);
		break;
	case M_FPROBE:
		unregister_fprobe(&fp);
		break;
	case M_REDIRECT:
		unregister_ftrace_function(&redirect_ops);
		ftrace_set_filter_ip(&redirect_ops, target_addr, 1, 0);
		break;
	default:
		break;
	}
}

/* The call's arguments: an RX 5700 XT at 0000:03:00.0, a compute VM, a VRAM BO. */
struct objects {
	struct amdgpu_device *adev;
	struct pci_dev *pdev;
	struct pci_bus *pbus;
	struct pci_sysdata *sysdata;
	struct amdgpu_vm *vm;
	struct amdgpu_bo *bo;
	struct amdgpu_bo *arg_bo;	/* bo, or NULL for bo=none */
};

static void objects_free(struct objects *o)
{
	kfree(o->bo);
	kfree(o->vm);
	kfree(o->sysdata);
	kfree(o->pbus);
	kfree(o->pdev);
	kvfree(o->adev);
}

static int objects_alloc(struct objects *o)
{
	o->adev = kvzalloc_obj(*o->adev);
	o->pdev = kzalloc_obj(*o->pdev);
	o->pbus = kzalloc_obj(*o->pbus);
	o->sysdata = kzalloc_obj(*o->sysdata);
	o->vm = kzalloc_obj(*o->vm);
	o->bo = kzalloc_obj(*o->bo);
	if (!o->adev || !o->pdev || !o->pbus || !o->sysdata || !o->vm || !o->bo)
		return -ENOMEM;
	o->pbus->number = 0x03;
	o->pbus->sysdata = o->sysdata;
	o->pdev->bus = o->pbus;
	o->pdev->vendor = PCI_VENDOR_ID_ATI;
	o->pdev->device = 0x731f;
	/* What amdgpu_pci_probe/amdgpu_device_init set. */
	o->adev->dev = &o->pdev->dev;
	o->adev->pdev = o->pdev;
	/* What amdgpu_vm_make_compute() sets when KFD acquires a VM. */
	o->vm->is_compute_context = !strcmp(vm, "compute");
	o->bo->preferred_domains = AMDGPU_GEM_DOMAIN_VRAM;
	o->bo->allowed_domains = AMDGPU_GEM_DOMAIN_VRAM;
	o->bo->tbo.type = ttm_bo_type_device;
	o->arg_bo = strcmp(bo, "none") ? o->bo : NULL;
	return 0;
}

/* ns per call over `calls` calls; -1 if the hook did not do its work. */
static s64 measure(enum mech m, const struct objects *o)
{
	u64 flags = 0;
	u64 t0, t1;
	unsigned int i;

	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++) {
		flags = 0x67;
		target(o->adev, o->vm, o->arg_bo, REQ_CC, &flags);
	}
	t1 = ktime_get_ns();
	/* Every mechanism must have rewritten the CC the function wrote. */
	if (m != M_NONE && (flags & MTYPE_MASK))
		return -1;
	/* The "none" row: what the mode of whatever is attached must give. */
	if (m == M_NONE && ((!strcmp(expect, "nc") && (flags & MTYPE_MASK)) ||
			    (!strcmp(expect, "cc") && (flags & MTYPE_MASK) != PTE_CC)))
		return -1;
	return div_u64(t1 - t0, calls);
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static int __init bench_init(void)
{
	s64 ns[M_COUNT][MAX_ROUNDS];
	int nmech = strcmp(mechanisms, "none") ? M_COUNT : 1;
	struct objects o = {};
	int m, r, n = 0, ret = 0;

	if (!calls || !rounds || rounds > MAX_ROUNDS)
		return -EINVAL;
	if (strcmp(expect, "nc") && strcmp(expect, "cc") && strcmp(expect, "any"))
		return -EINVAL;
	if ((strcmp(bo, "vram") && strcmp(bo, "none")) ||
	    (strcmp(vm, "compute") && strcmp(vm, "graphics")))
		return -EINVAL;
	target_addr = rdna1_resolve_symbol(TARGET);
	if (!target_addr)
		return -ENOENT;
	target = (get_vm_pte_fn)target_addr;
	ret = objects_alloc(&o);
	if (ret)
		goto out;
	for (r = 0; r < rounds; r++) {
		for (m = 0; m < nmech; m++) {
			ret = attach(m);
			if (ret) {
				pr_err("attaching %s: %d\n", mech_names[m], ret);
				goto out;
			}
			ns[m][r] = measure(m, &o);
			detach(m);
		}
	}
	n += scnprintf(results + n, sizeof(results) - n, "%-28s %10s %12s\n",
		       "mechanism", "ns/call", "overhead ns");
	for (m = 0; m < nmech; m++) {
		sort(ns[m], rounds, sizeof(s64), cmp_s64, NULL);
		if (ns[m][0] < 0) {
			ret = -EIO;
			pr_err("%s did not give the MTYPE expected (%s; kretprobe: %lu entries, %lu returns)\n",
			       m == M_NONE ? label : mech_names[m],
			       m == M_NONE ? expect : "nc", krp_entries, krp_returns);
			goto out;
		}
	}
	/* Overhead is relative to the no-hook row of the same run; a lone row has none. */
	for (m = 0; m < nmech; m++) {
		if (nmech == 1)
			n += scnprintf(results + n, sizeof(results) - n, "%-28s %10lld %12s\n",
				       label, ns[m][rounds / 2], "-");
		else
			n += scnprintf(results + n, sizeof(results) - n, "%-28s %10lld %12lld\n",
				       m == M_NONE ? label : mech_names[m], ns[m][rounds / 2],
				       ns[m][rounds / 2] - ns[M_NONE][rounds / 2]);
	}
	n += scnprintf(results + n, sizeof(results) - n,
		       "(median of %u rounds of %u calls each)\n", rounds, calls);
	dir = debugfs_create_dir("rdna1_mtype_bench", NULL);
	results_blob.size = n;
	debugfs_create_blob("results", 0444, dir, &results_blob);
out:
	objects_free(&o);
	return ret;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test-only: ns per call of gmc_v10_0_get_vm_pte per hook mechanism");
