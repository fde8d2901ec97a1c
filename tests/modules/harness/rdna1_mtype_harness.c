// SPDX-License-Identifier: GPL-2.0
/*
 * rdna1_mtype_harness: calls amdgpu's real gmc_v10_0_get_vm_pte, for tests.
 *
 * No machine running the tests has an AMD GPU, so nothing in amdgpu ever calls the function we
 * hook. This module does, through the function's own address in the loaded amdgpu, with real
 * argument objects (struct amdgpu_device, amdgpu_vm, amdgpu_bo from amdgpu's headers), so the
 * probe, the original code and rdna1_mtype's rewrite all run exactly as on a real mapping.
 *
 * debugfs rdna1_mtype_harness/call:
 *   write "<vm_flags> <bo> <pte_flags> [<gpu> [<where> [<vm>]]]" (hex), bo "none" or one of
 *   bo_kinds below (struct amdgpu_bo with the domains, creation flags, TTM type and parent
 *   amdgpu gives such a BO); gpu one of the fake_gpus below (default rdna1), each an
 *   amdgpu_device whose dev/pdev point to a real struct pci_dev on a struct pci_bus, as
 *   amdgpu's probe sets them, or "unknown": an amdgpu_device with no device behind it ("vmd"
 *   is at 10000:03:00.0, "fill0".."fill9" at 0000:10:00.0..0000:19:00.0). where
 *   "stack" (default) or "heap": the PTE flags in kmalloc'd memory instead of on the stack, as
 *   no amdgpu caller does (rdna1_mtype must refuse to touch them), or "atomic": on the stack,
 *   called with a raw spinlock held, so lockdep checks that the hook takes no lock that
 *   sleeps on PREEMPT_RT, or "worker": made by a kernel worker (as KFD's restore worker
 *   makes them), the VM's task_info naming the writing process, or "dead": in this task's
 *   stack but below every live frame, or "unaligned": on the live stack, one byte off (no
 *   amdgpu caller passes either: rdna1_mtype must refuse to touch them). vm "compute" (default: a
 *   real struct amdgpu_vm with is_compute_context set, as KFD's VMs have), "graphics" (one
 *   without, a DRM client's) or "none" (a NULL vm).
 *   Read back the PTE flags the call produced, as "0x%016llx".
 *   Kind "edge" is a plain BO whose struct ends at the last byte of a vmalloc'd area, so the
 *   next byte is vmalloc's unmapped guard page: where a layout that places a field past the
 *   real struct's end makes a reader fault (a kmalloc'd BO's neighbour is mapped memory).
 * debugfs rdna1_mtype_harness/batch: many such lines in one write, their results (one line
 *   each, in order) read back on the same open file.
 * debugfs rdna1_mtype_harness/loop: write "<n> <request as for call>" (n decimal, up to
 *   LOOP_MAX_CALLS): the request runs n times in a kernel loop (no system call per call:
 *   millions of calls under TCG + KASAN), on a BO and PTE flags of this write's own, so loops
 *   on several CPUs run at once (VM case 64). A read on the same open file returns
 *   "calls=N nc=N wc=N cc=N uc=N rsvd=N rest_differ=N first=0x..": the results by MTYPE, how
 *   many differed from the first in a bit other than MTYPE, and the first result.
 * debugfs rdna1_mtype_harness/layout: the real struct amdgpu_bo layout of this kernel, in the
 *   form rdna1_mtype's bo_layout parameter takes (what rdna1ctl derives from BTF).
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include "resolve_symbol.h"

#include "amdgpu.h"
#include "amdgpu_vm.h"

#define TARGET "gmc_v10_0_get_vm_pte"

typedef void (*get_vm_pte_fn)(struct amdgpu_device *adev, struct amdgpu_vm *vm,
			      struct amdgpu_bo *bo, uint32_t vm_flags, uint64_t *flags);

static get_vm_pte_fn get_vm_pte;
static struct amdgpu_vm *compute_vm, *graphics_vm;
static struct amdgpu_task_info *compute_task, *graphics_task;
static struct amdgpu_bo *bo, *parent_bo, *edge_bo;
static void *edge_area;
static u64 *heap_flags;
static struct dentry *dir;
static DEFINE_MUTEX(call_lock);
/* Held for reading by the loops, which call without call_lock; for writing to forget amdgpu. */
static DECLARE_RWSEM(loop_sem);
/* Held around "atomic" calls; see do_call(). */
static DEFINE_RAW_SPINLOCK(atomic_lock);
static u64 last_result;

struct bo_kind {
	const char *name;
	u32 domains;
	u64 flags;
	enum ttm_bo_type type;
	bool parent;	/* bo->parent set (a KFD attachment's BO on the exporting GPU) */
	bool edge;	/* edge_bo: the BO that ends where an unmapped page begins */
};

#define GTT AMDGPU_GEM_DOMAIN_GTT
#define VRAM AMDGPU_GEM_DOMAIN_VRAM
static const struct bo_kind bo_kinds[] = {
	{ "plain", GTT, 0, ttm_bo_type_device },
	{ "vram", VRAM, 0, ttm_bo_type_device },
	{ "userptr", GTT, AMDGPU_AMDKFD_CREATE_USERPTR_BO, ttm_bo_type_device },
	/* hipHostMalloc, KFD coherent allocations */
	{ "coherent", GTT, AMDGPU_GEM_CREATE_COHERENT, ttm_bo_type_device },
	{ "ext_coherent", VRAM, AMDGPU_GEM_CREATE_EXT_COHERENT, ttm_bo_type_device },
	{ "uncached", GTT, AMDGPU_GEM_CREATE_UNCACHED, ttm_bo_type_device },
	/* KFD doorbell / MMIO-remap BO: sg BO, userspace asks COHERENT */
	{ "sg_coherent", GTT, AMDGPU_GEM_CREATE_COHERENT, ttm_bo_type_sg },
	/* sg BO without creation flags (a dma-buf import) */
	{ "sg", GTT, 0, ttm_bo_type_sg },
	/* GEM doorbell-domain BO */
	{ "doorbell", AMDGPU_GEM_DOMAIN_DOORBELL, 0, ttm_bo_type_device },
	/* what a wrong layout would read: a creation flag no amdgpu BO has */
	{ "corrupt", GTT, 1ULL << 40, ttm_bo_type_device },
	/*
	 * amdgpu's seq64 BO (amdgpu_seq64.c: amdgpu_bo_create_kernel, GTT), which it maps into
	 * every DRM client's VM with AMDGPU_VM_MTYPE_UC: a kernel-type TTM BO
	 */
	{ "seq64", GTT, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED | AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS,
	  ttm_bo_type_kernel },
	/* GEM_CREATE with domains = 0 (accepted by amdgpu_gem_are_domains_valid) */
	{ "domains0", 0, 0, ttm_bo_type_device },
	/*
	 * KFD's attachment of a peer GPU's coherent userptr memory (amdgpu_amdkfd_gpuvm.c:
	 * create_dmamap_sg_bo): sg, domain CPU, PREEMPTIBLE plus the parent's COHERENT, parent set
	 */
	{ "sg_attach", AMDGPU_GEM_DOMAIN_CPU,
	  AMDGPU_GEM_CREATE_PREEMPTIBLE | AMDGPU_GEM_CREATE_COHERENT, ttm_bo_type_sg, true },
	/* a plain BO followed by an unmapped page (edge_bo) */
	{ "edge", GTT, 0, ttm_bo_type_device, false, true },
};

struct fake_gpu {
	const char *name;
	u16 vendor, device;
	int domain;
	u8 bus, devfn;
	/* allocated at init */
	struct amdgpu_device *adev;
	struct pci_dev *pdev;
	struct pci_bus *pbus;
	struct pci_sysdata *sysdata;
};

static struct fake_gpu gpus[] = {
	{ "rdna1", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x03, PCI_DEVFN(0, 0) },	/* RX 5700 XT */
	{ "rdna1b", PCI_VENDOR_ID_ATI, 0x7340, 1, 0x0a, PCI_DEVFN(0, 0) },	/* RX 5500 XT */
	{ "rdna2", PCI_VENDOR_ID_ATI, 0x73bf, 0, 0x04, PCI_DEVFN(0, 0) },	/* RX 6800 XT */
	{ "other", PCI_VENDOR_ID_NVIDIA, 0x2204, 0, 0x05, PCI_DEVFN(0, 0) },
	{ "unknown" },	/* adev->dev/pdev left NULL */
	/* Behind an Intel VMD, whose domains start at 0x10000 (drivers/pci/controller/vmd.c). */
	{ "vmd", PCI_VENDOR_ID_ATI, 0x731f, 0x10000, 0x03, PCI_DEVFN(0, 0) },
	/* Ten more RX 5700 XTs (0000:10:00.0 to 0000:19:00.0): stats for more than a page holds. */
	{ "fill0", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x10, PCI_DEVFN(0, 0) },
	{ "fill1", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x11, PCI_DEVFN(0, 0) },
	{ "fill2", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x12, PCI_DEVFN(0, 0) },
	{ "fill3", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x13, PCI_DEVFN(0, 0) },
	{ "fill4", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x14, PCI_DEVFN(0, 0) },
	{ "fill5", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x15, PCI_DEVFN(0, 0) },
	{ "fill6", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x16, PCI_DEVFN(0, 0) },
	{ "fill7", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x17, PCI_DEVFN(0, 0) },
	{ "fill8", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x18, PCI_DEVFN(0, 0) },
	{ "fill9", PCI_VENDOR_ID_ATI, 0x731f, 0, 0x19, PCI_DEVFN(0, 0) },
};

static int fake_gpu_alloc(struct fake_gpu *g)
{
	g->adev = kvzalloc_obj(*g->adev);
	if (!g->adev)
		return -ENOMEM;
	if (!g->vendor)
		return 0;
	g->pdev = kzalloc_obj(*g->pdev);
	g->pbus = kzalloc_obj(*g->pbus);
	g->sysdata = kzalloc_obj(*g->sysdata);
	if (!g->pdev || !g->pbus || !g->sysdata)
		return -ENOMEM;
	g->sysdata->domain = g->domain;
	g->pbus->number = g->bus;
	g->pbus->sysdata = g->sysdata;
	g->pdev->bus = g->pbus;
	g->pdev->devfn = g->devfn;
	g->pdev->vendor = g->vendor;
	g->pdev->device = g->device;
	/* What amdgpu_pci_probe/amdgpu_device_init set. */
	g->adev->dev = &g->pdev->dev;
	g->adev->pdev = g->pdev;
	return 0;
}

static void fake_gpus_free(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(gpus); i++) {
		kfree(gpus[i].sysdata);
		kfree(gpus[i].pbus);
		kfree(gpus[i].pdev);
		kvfree(gpus[i].adev);
	}
}

/* A call made by a kernel worker, as KFD's restore worker and SVM's make them. */
struct worker_call {
	struct work_struct work;
	struct amdgpu_device *adev;
	struct amdgpu_vm *vm;
	struct amdgpu_bo *bo;
	u32 vm_flags;
	u64 flags;
};

static void worker_call_fn(struct work_struct *work)
{
	struct worker_call *w = container_of(work, struct worker_call, work);
	/* amdgpu's callers pass a local of their own (rdna1_mtype refuses anything else). */
	u64 flags = w->flags;

	get_vm_pte(w->adev, w->vm, w->bo, w->vm_flags, &flags);
	w->flags = flags;
}

/* One parsed request line: the arguments of one call of the real function. */
struct call_spec {
	u32 vm_flags;
	u64 flags;
	const struct bo_kind *kind;	/* NULL: no BO */
	struct amdgpu_device *adev;
	struct amdgpu_vm *vm;
	/* where: heap, atomic, worker, dead, unaligned or (none set) stack */
	bool heap, atomic, worker, dead, unaligned;
};

static int parse_call(const char *line, struct call_spec *c)
{
	char kind[16], gpu[16] = "rdna1", where[16] = "stack", vm_kind[16] = "compute";
	int i;

	if (sscanf(line, "%x %15s %llx %15s %15s %15s", &c->vm_flags, kind, &c->flags, gpu, where,
		   vm_kind) < 3)
		return -EINVAL;
	if (strcmp(where, "stack") && strcmp(where, "heap") && strcmp(where, "atomic") &&
	    strcmp(where, "worker") && strcmp(where, "dead") && strcmp(where, "unaligned"))
		return -EINVAL;
	c->heap = !strcmp(where, "heap");
	c->atomic = !strcmp(where, "atomic");
	c->worker = !strcmp(where, "worker");
	c->dead = !strcmp(where, "dead");
	c->unaligned = !strcmp(where, "unaligned");
	if (!strcmp(vm_kind, "compute"))
		c->vm = compute_vm;
	else if (!strcmp(vm_kind, "graphics"))
		c->vm = graphics_vm;
	else if (!strcmp(vm_kind, "none"))
		c->vm = NULL;
	else
		return -EINVAL;
	c->adev = NULL;
	for (i = 0; i < ARRAY_SIZE(gpus); i++)
		if (!strcmp(gpu, gpus[i].name))
			c->adev = gpus[i].adev;
	if (!c->adev)
		return -EINVAL;
	c->kind = NULL;
	if (strcmp(kind, "none")) {
		for (i = 0; i < ARRAY_SIZE(bo_kinds); i++)
			if (!strcmp(kind, bo_kinds[i].name))
				c->kind = &bo_kinds[i];
		if (!c->kind)
			return -EINVAL;
	}
	return 0;
}

/* Makes a BO of the given kind of *arg. */
static void bo_set(struct amdgpu_bo *arg, const struct bo_kind *k)
{
	arg->preferred_domains = k->domains;
	arg->allowed_domains = k->domains;
	arg->flags = k->flags;
	arg->tbo.type = k->type;
	arg->parent = k->parent ? parent_bo : NULL;
}

/* One call of the real function for one request line; the caller holds call_lock. */
static int do_call(const char *line, u64 *result)
{
	struct amdgpu_bo *arg = NULL;
	struct call_spec c;
	u64 flags;
	int ret;

	lockdep_assert_held(&call_lock);
	ret = parse_call(line, &c);
	if (ret)
		return ret;
	if (c.kind) {
		arg = c.kind->edge ? edge_bo : bo;
		bo_set(arg, c.kind);
	}
	if (!get_vm_pte)
		return -ENODEV;
	if (c.heap) {
		*heap_flags = c.flags;
		get_vm_pte(c.adev, c.vm, arg, c.vm_flags, heap_flags);
		*result = *heap_flags;
		return 0;
	}
	if (c.dead) {
		/*
		 * The flags in this task's stack but below every live frame: 1 KiB above the
		 * stack's bottom, which no frame reaches (the probe's own frames run below the
		 * hooked function's stack pointer too, nearer the top). object_is_on_stack()
		 * accepts it; no amdgpu caller passes such a pointer.
		 */
		u64 *dead = (u64 *)((unsigned long)task_stack_page(current) + SZ_1K);

		WRITE_ONCE(*dead, c.flags);
		get_vm_pte(c.adev, c.vm, arg, c.vm_flags, dead);
		*result = READ_ONCE(*dead);
		return 0;
	}
	if (c.unaligned) {
		/* On this frame's live stack, one byte off an 8-byte boundary. */
		u8 buf[2 * sizeof(u64)] __aligned(sizeof(u64));
		u64 *odd = (u64 *)(buf + 1);

		put_unaligned(c.flags, odd);
		get_vm_pte(c.adev, c.vm, arg, c.vm_flags, odd);
		*result = get_unaligned(odd);
		return 0;
	}
	/* As amdgpu_vm_set_task_info() does when a process acquires or submits on a VM. */
	if (c.vm) {
		c.vm->task_info->tgid = current->tgid;
		get_task_comm(c.vm->task_info->process_name, current->group_leader);
	}
	if (c.worker) {
		struct worker_call w = {
			.adev = c.adev, .vm = c.vm, .bo = arg, .vm_flags = c.vm_flags,
			.flags = c.flags,
		};

		INIT_WORK_ONSTACK(&w.work, worker_call_fn);
		queue_work(system_unbound_wq, &w.work);
		flush_work(&w.work);
		destroy_work_on_stack(&w.work);
		*result = w.flags;
		return 0;
	}
	flags = c.flags;
	if (c.atomic) {
		/*
		 * fprobe runs the handlers with preemption off, where PREEMPT_RT's spinlock_t
		 * and mutexes sleep; lockdep cannot see that context, but it checks what is
		 * taken under a raw spinlock (PROVE_RAW_LOCK_NESTING: "Invalid wait context").
		 */
		raw_spin_lock(&atomic_lock);
		get_vm_pte(c.adev, c.vm, arg, c.vm_flags, &flags);
		raw_spin_unlock(&atomic_lock);
	} else {
		get_vm_pte(c.adev, c.vm, arg, c.vm_flags, &flags);
	}
	*result = flags;
	return 0;
}

static ssize_t call_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	char buf[96];
	u64 flags;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	mutex_lock(&call_lock);
	ret = do_call(buf, &flags);
	if (!ret)
		last_result = flags;
	mutex_unlock(&call_lock);
	return ret ? ret : len;
}

static ssize_t call_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	char buf[24];
	int n;

	mutex_lock(&call_lock);
	n = scnprintf(buf, sizeof(buf), "0x%016llx\n", last_result);
	mutex_unlock(&call_lock);
	return simple_read_from_buffer(ubuf, len, off, buf, n);
}

/*
 * batch: many calls in one write, one request line each (as for call), all in one write(2);
 * a read on the same open file returns one result line per request, in order. A whole table
 * of calls costs two system calls instead of two per call, which under TCG + KASAN is most of
 * a call's cost. A bad line fails the write (the calls before it have run) and keeps the
 * previous results.
 */
struct batch_results {
	size_t len;
	char text[];
};

#define BATCH_MAX_CALLS 2048
#define RESULT_LEN 19 /* "0x%016llx\n" */

static ssize_t batch_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	size_t cap = BATCH_MAX_CALLS * RESULT_LEN + 1, n = 0;
	struct batch_results *r;
	char *buf, *cur, *line;
	u64 flags;
	int ret = 0;

	if (!len || len > BATCH_MAX_CALLS * 64)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	r = kvmalloc(struct_size(r, text, cap), GFP_KERNEL);
	if (!r) {
		kfree(buf);
		return -ENOMEM;
	}
	r->len = 0;
	cur = buf;
	mutex_lock(&call_lock);
	while ((line = strsep(&cur, "\n"))) {
		if (!*line)
			continue;
		if (n++ == BATCH_MAX_CALLS) {
			ret = -E2BIG;
			break;
		}
		ret = do_call(line, &flags);
		if (ret)
			break;
		r->len += scnprintf(r->text + r->len, cap - r->len, "0x%016llx\n", flags);
	}
	if (!ret) {
		swap(f->private_data, r);
		/* Read the new results from their start. */
		*off = 0;
	}
	mutex_unlock(&call_lock);
	kvfree(r);
	kfree(buf);
	return ret ? ret : len;
}

static ssize_t batch_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	struct batch_results *r;
	ssize_t ret = 0;

	mutex_lock(&call_lock);
	r = f->private_data;
	if (r)
		ret = simple_read_from_buffer(ubuf, len, off, r->text, r->len);
	mutex_unlock(&call_lock);
	return ret;
}

static int batch_release(struct inode *inode, struct file *f)
{
	kvfree(f->private_data);
	return 0;
}

static const struct file_operations batch_fops = {
	.owner = THIS_MODULE,
	.read = batch_read,
	.write = batch_write,
	.release = batch_release,
};

/*
 * loop: one request, run n times by a kernel loop; several loops (one per CPU) run at once,
 * each with a BO and heap flags of its own (kind "edge" is refused: its BO is shared; where
 * "atomic", "worker", "dead" and "unaligned" too: one call each is what they are for).
 */
struct loop_results {
	u64 calls, by_mtype[8], rest_differ, first;
};

#define LOOP_MAX_CALLS 100000000
/* The NV10 MTYPE field (amdgpu_vm.h: AMDGPU_PTE_MTYPE_NV10_MASK, bits 48..50). */
#define MTYPE_SHIFT 48

static void loop_calls(const struct call_spec *c, struct amdgpu_bo *arg, u64 *heap, u64 n,
		       struct loop_results *r)
{
	u64 i, flags, rest = 0;

	for (i = 0; i < n; i++) {
		flags = c->flags;
		if (c->heap) {
			*heap = flags;
			get_vm_pte(c->adev, c->vm, arg, c->vm_flags, heap);
			flags = *heap;
		} else {
			get_vm_pte(c->adev, c->vm, arg, c->vm_flags, &flags);
		}
		if (!i) {
			r->first = flags;
			rest = flags & ~AMDGPU_PTE_MTYPE_NV10_MASK;
		}
		r->by_mtype[(flags & AMDGPU_PTE_MTYPE_NV10_MASK) >> MTYPE_SHIFT]++;
		if ((flags & ~AMDGPU_PTE_MTYPE_NV10_MASK) != rest)
			r->rest_differ++;
		r->calls++;
		/* Millions of calls: let the other tasks of this CPU (a policy writer) run. */
		if (!(i & 1023)) {
			cond_resched();
			if (fatal_signal_pending(current))
				break;
		}
	}
}

static ssize_t loop_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	struct loop_results *r;
	struct amdgpu_bo *arg = NULL;
	struct call_spec c;
	char buf[112], *spec;
	u64 n, *heap;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	spec = strchr(buf, ' ');
	if (!spec)
		return -EINVAL;
	*spec++ = 0;
	ret = kstrtou64(buf, 10, &n);
	if (ret)
		return ret;
	if (!n || n > LOOP_MAX_CALLS)
		return -EINVAL;
	ret = parse_call(spec, &c);
	if (ret)
		return ret;
	if ((c.kind && c.kind->edge) || c.atomic || c.worker || c.dead || c.unaligned)
		return -EINVAL;
	r = kzalloc_obj(*r);
	heap = kzalloc_obj(*heap);
	if (c.kind)
		arg = kzalloc_obj(*arg);
	if (!r || !heap || (c.kind && !arg)) {
		ret = -ENOMEM;
		goto out;
	}
	if (c.kind)
		bo_set(arg, c.kind);
	down_read(&loop_sem);
	if (get_vm_pte)
		loop_calls(&c, arg, heap, n, r);
	else
		ret = -ENODEV;
	up_read(&loop_sem);
	if (!ret) {
		mutex_lock(&call_lock);
		swap(f->private_data, r);
		*off = 0;
		mutex_unlock(&call_lock);
	}
out:
	kfree(arg);
	kfree(heap);
	kfree(r);
	return ret ? ret : len;
}

static ssize_t loop_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	struct loop_results *r;
	char buf[256];
	int n = 0;

	mutex_lock(&call_lock);
	r = f->private_data;
	if (r)
		n = scnprintf(buf, sizeof(buf),
			      "calls=%llu nc=%llu wc=%llu cc=%llu uc=%llu rsvd=%llu rest_differ=%llu first=0x%016llx\n",
			      r->calls, r->by_mtype[0], r->by_mtype[1], r->by_mtype[2],
			      r->by_mtype[3],
			      r->by_mtype[4] + r->by_mtype[5] + r->by_mtype[6] + r->by_mtype[7],
			      r->rest_differ, r->first);
	mutex_unlock(&call_lock);
	return simple_read_from_buffer(ubuf, len, off, buf, n);
}

static int loop_release(struct inode *inode, struct file *f)
{
	kfree(f->private_data);
	return 0;
}

static const struct file_operations loop_fops = {
	.owner = THIS_MODULE,
	.read = loop_read,
	.write = loop_write,
	.release = loop_release,
};

static ssize_t layout_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	char buf[96];
	int n = scnprintf(buf, sizeof(buf), "size=%zu preferred_domains=%zu tbo=%zu flags=%zu\n",
			  sizeof(struct amdgpu_bo),
			  offsetof(struct amdgpu_bo, preferred_domains),
			  offsetof(struct amdgpu_bo, tbo),
			  offsetof(struct amdgpu_bo, flags));

	return simple_read_from_buffer(ubuf, len, off, buf, n);
}

static const struct file_operations layout_fops = {
	.owner = THIS_MODULE,
	.read = layout_read,
};

static const struct file_operations call_fops = {
	.owner = THIS_MODULE,
	.read = call_read,
	.write = call_write,
};

/* amdgpu exports nothing to pin it with: forget its address when it goes. */
static int module_event(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (state == MODULE_STATE_GOING && !strcmp(mod->name, "amdgpu")) {
		down_write(&loop_sem);
		mutex_lock(&call_lock);
		get_vm_pte = NULL;
		mutex_unlock(&call_lock);
		up_write(&loop_sem);
	}
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = { .notifier_call = module_event };

static void free_objects(void)
{
	kfree(heap_flags);
	kfree(parent_bo);
	kfree(bo);
	vfree(edge_area);
	kfree(graphics_vm);
	kfree(compute_vm);
	kfree(graphics_task);
	kfree(compute_task);
	fake_gpus_free();
}

static int __init harness_init(void)
{
	unsigned long addr;
	int i, ret;

	/* First, so amdgpu cannot go unnoticed between lookup and use. */
	ret = register_module_notifier(&module_nb);
	if (ret)
		return ret;
	addr = rdna1_resolve_symbol(TARGET);
	if (!addr) {
		unregister_module_notifier(&module_nb);
		pr_err("%s not found: is amdgpu loaded?\n", TARGET);
		return -ENOENT;
	}
	get_vm_pte = (get_vm_pte_fn)addr;
	compute_vm = kzalloc_obj(*compute_vm);
	graphics_vm = kzalloc_obj(*graphics_vm);
	compute_task = kzalloc_obj(*compute_task);
	graphics_task = kzalloc_obj(*graphics_task);
	bo = kzalloc_obj(*bo);
	parent_bo = kzalloc_obj(*parent_bo);
	heap_flags = kzalloc_obj(*heap_flags);
	/*
	 * vmalloc follows every area with an unmapped guard page (no VM_NO_GUARD): edge_bo ends
	 * at the area's last byte. sizeof is a multiple of the alignment, which divides PAGE_SIZE.
	 */
	edge_area = vzalloc(PAGE_ALIGN(sizeof(*edge_bo)));
	if (edge_area)
		edge_bo = edge_area + PAGE_ALIGN(sizeof(*edge_bo)) - sizeof(*edge_bo);
	ret = compute_vm && graphics_vm && compute_task && graphics_task && bo && parent_bo &&
	      heap_flags && edge_bo ? 0 : -ENOMEM;
	if (!ret) {
		/* amdgpu_vm_create_task_info() at amdgpu_vm_init() */
		kref_init(&compute_task->refcount);
		kref_init(&graphics_task->refcount);
		compute_vm->task_info = compute_task;
		graphics_vm->task_info = graphics_task;
		/* What amdgpu_vm_make_compute() sets when KFD acquires a VM. */
		compute_vm->is_compute_context = true;
		/* A coherent GTT BO, as the hipHostMalloc memory a KFD attachment points to. */
		parent_bo->preferred_domains = AMDGPU_GEM_DOMAIN_GTT;
		parent_bo->allowed_domains = AMDGPU_GEM_DOMAIN_GTT;
		parent_bo->flags = AMDGPU_GEM_CREATE_COHERENT;
	}
	for (i = 0; i < ARRAY_SIZE(gpus) && !ret; i++)
		ret = fake_gpu_alloc(&gpus[i]);
	if (ret) {
		unregister_module_notifier(&module_nb);
		free_objects();
		return ret;
	}
	dir = debugfs_create_dir("rdna1_mtype_harness", NULL);
	debugfs_create_file("call", 0600, dir, NULL, &call_fops);
	debugfs_create_file("batch", 0600, dir, NULL, &batch_fops);
	debugfs_create_file("loop", 0600, dir, NULL, &loop_fops);
	debugfs_create_file("layout", 0400, dir, NULL, &layout_fops);
	pr_info("calling %s at %pS\n", TARGET, (void *)addr);
	return 0;
}

static void __exit harness_exit(void)
{
	debugfs_remove_recursive(dir);
	unregister_module_notifier(&module_nb);
	free_objects();
}

module_init(harness_init);
module_exit(harness_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test-only: calls amdgpu's gmc_v10_0_get_vm_pte with real objects");
