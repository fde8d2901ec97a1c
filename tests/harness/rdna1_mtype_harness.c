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
 *   write "<vm_flags> <bo> <pte_flags>" (hex), bo one of: none plain coherent ext_coherent
 *   uncached sg_coherent (a KFD doorbell/MMIO-remap BO: ttm sg BO created COHERENT);
 *   read back the PTE flags the call produced, as "0x%016llx".
 */
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/ibt.h>

#include "amdgpu.h"
#include "amdgpu_vm.h"

#define TARGET "gmc_v10_0_get_vm_pte"

typedef void (*get_vm_pte_fn)(struct amdgpu_device *adev, struct amdgpu_vm *vm,
			      struct amdgpu_bo *bo, uint32_t vm_flags, uint64_t *flags);

static get_vm_pte_fn get_vm_pte;
static struct amdgpu_device *adev;
static struct amdgpu_vm *vm;
static struct amdgpu_bo *bo;
static struct dentry *dir;
static DEFINE_MUTEX(call_lock);
static u64 last_result;

struct bo_kind {
	const char *name;
	u64 flags;
	enum ttm_bo_type type;
};

static const struct bo_kind bo_kinds[] = {
	{ "plain", 0, ttm_bo_type_device },
	{ "coherent", AMDGPU_GEM_CREATE_COHERENT, ttm_bo_type_device },
	{ "ext_coherent", AMDGPU_GEM_CREATE_EXT_COHERENT, ttm_bo_type_device },
	{ "uncached", AMDGPU_GEM_CREATE_UNCACHED, ttm_bo_type_device },
	{ "sg_coherent", AMDGPU_GEM_CREATE_COHERENT, ttm_bo_type_sg },
};

/* The entry address of a local symbol of a loaded module (kallsyms_lookup_name is not exported). */
static unsigned long resolve(const char *name)
{
	struct kprobe kp = { .symbol_name = name };
	unsigned long addr;

	if (register_kprobe(&kp))
		return 0;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/* kprobes steps over an ENDBR; with IBT an indirect call must land on it. */
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) &&
	    __is_endbr(*(u32 *)(addr - ENDBR_INSN_SIZE)))
		addr -= ENDBR_INSN_SIZE;
	return addr;
}

static ssize_t call_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	char buf[96], kind[16];
	u32 vm_flags;
	u64 flags;
	struct amdgpu_bo *arg = NULL;
	int i;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%x %15s %llx", &vm_flags, kind, &flags) != 3)
		return -EINVAL;
	mutex_lock(&call_lock);
	if (strcmp(kind, "none")) {
		for (i = 0; i < ARRAY_SIZE(bo_kinds); i++)
			if (!strcmp(kind, bo_kinds[i].name))
				break;
		if (i == ARRAY_SIZE(bo_kinds)) {
			mutex_unlock(&call_lock);
			return -EINVAL;
		}
		bo->flags = bo_kinds[i].flags;
		bo->tbo.type = bo_kinds[i].type;
		arg = bo;
	}
	if (!get_vm_pte) {
		mutex_unlock(&call_lock);
		return -ENODEV;
	}
	get_vm_pte(adev, vm, arg, vm_flags, &flags);
	last_result = flags;
	mutex_unlock(&call_lock);
	return len;
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
		mutex_lock(&call_lock);
		get_vm_pte = NULL;
		mutex_unlock(&call_lock);
	}
	return NOTIFY_DONE;
}

static struct notifier_block module_nb = { .notifier_call = module_event };

static void free_objects(void)
{
	kfree(bo);
	kfree(vm);
	kvfree(adev);
}

static int __init harness_init(void)
{
	unsigned long addr;
	int ret;

	/* First, so amdgpu cannot go unnoticed between lookup and use. */
	ret = register_module_notifier(&module_nb);
	if (ret)
		return ret;
	addr = resolve(TARGET);
	if (!addr) {
		unregister_module_notifier(&module_nb);
		pr_err("%s not found: is amdgpu loaded?\n", TARGET);
		return -ENOENT;
	}
	get_vm_pte = (get_vm_pte_fn)addr;
	adev = kvzalloc(sizeof(*adev), GFP_KERNEL);
	vm = kzalloc(sizeof(*vm), GFP_KERNEL);
	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!adev || !vm || !bo) {
		unregister_module_notifier(&module_nb);
		free_objects();
		return -ENOMEM;
	}
	dir = debugfs_create_dir("rdna1_mtype_harness", NULL);
	debugfs_create_file("call", 0600, dir, NULL, &call_fops);
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
