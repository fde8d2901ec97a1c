//! What the hook assumes of the kernel it hooks: the function, its prototype and every private
//! amdgpu member the module reads. `rdna1ctl check-kernel` compares a target kernel's BTF with
//! this and refuses any kernel that differs. `kmod/hook.c` (C) spells the same symbol and
//! argument positions out itself; `tests/kernel/check-kernel-debian.sh` ties the two together
//! on a real amdgpu.

/// The module that defines the hooked function.
pub const HOOKED_MODULE: &str = "amdgpu";
/// The hooked function (drivers/gpu/drm/amd/amdgpu/gmc_v10_0.c, static).
pub const HOOKED_SYMBOL: &str = "gmc_v10_0_get_vm_pte";

/// The type a parameter must have, after typedefs and qualifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// `struct NAME *`.
    StructPtr(&'static str),
    /// An unsigned integer of this many bytes (`uint32_t`).
    Unsigned(u32),
    /// A signed integer of this many bytes (`pid_t`).
    Signed(u32),
    /// `char NAME[N]`: an array of N one-byte integers (`char[TASK_COMM_LEN]`).
    CharArray(u32),
    /// A pointer to an unsigned integer of this many bytes (`uint64_t *`).
    UnsignedPtr(u32),
    /// C's `bool` (`_Bool`, one byte).
    Bool,
}

/// One parameter of the hooked function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name in the source (BTF keeps it).
    pub name: &'static str,
    /// Its type.
    pub ty: ParamType,
}

/// `gmc_v10_0_get_vm_pte(adev, vm, bo, vm_flags, flags)`, since Linux 6.18 ("drm/amdgpu: rework
/// how PTE flags are generated"); the function returns nothing and writes `*flags`.
pub const PARAMS: [Param; 5] = [
    Param {
        name: "adev",
        ty: ParamType::StructPtr("amdgpu_device"),
    },
    Param {
        name: "vm",
        ty: ParamType::StructPtr("amdgpu_vm"),
    },
    Param {
        name: "bo",
        ty: ParamType::StructPtr("amdgpu_bo"),
    },
    Param {
        name: "vm_flags",
        ty: ParamType::Unsigned(4),
    },
    Param {
        name: "flags",
        ty: ParamType::UnsignedPtr(8),
    },
];

/// The type of the pre-6.18 second parameter, `(adev, mapping, flags)`: named when a kernel
/// has it, so the refusal says why.
pub const OLD_SIGNATURE_PARAM: &str = "amdgpu_bo_va_mapping";

/// A member the module reads, and where the module's C part assumes it is (`None`: anywhere;
/// the offset is passed to the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The struct.
    pub strukt: &'static str,
    /// The member.
    pub member: &'static str,
    /// The byte offset the module's code assumes, if fixed.
    pub fixed_offset: Option<u32>,
    /// The type the module reads it as, where a wrong one would mislead it.
    pub ty: Option<ParamType>,
}

/// Every private member the module reads. `amdgpu_device`'s head is fixed in `kmod/hook.c`
/// (`struct rdna1_adev_head`); the rest are read at offsets the module is given or was built
/// with (kmod/dkms-make.sh passes check-kernel's offsets to the build; kmod/Kbuild):
/// - `amdgpu_vm.is_compute_context` (`RDNA1_BTF_VM_COMPUTE`): the VM's kind, a byte the hook
///   reads as 0 or 1, so it must be a one-byte `bool`;
/// - `amdgpu_vm.task_info` (`RDNA1_BTF_VM_TASK_INFO`), then `amdgpu_task_info.tgid`
///   (`RDNA1_BTF_TASK_INFO_TGID`) and `.process_name` (`RDNA1_BTF_TASK_INFO_NAME`): the process
///   that owns the VM, for events logged from a kernel thread (KFD's restore worker, SVM
///   workers), whose own pid and comm name no process. The module copies a 4-byte `pid_t` and
///   16 bytes of name, so the types must be exactly those.
pub const FIELDS: [Field; 10] = [
    Field {
        strukt: "amdgpu_device",
        member: "dev",
        fixed_offset: Some(0),
        ty: Some(ParamType::StructPtr("device")),
    },
    Field {
        strukt: "amdgpu_device",
        member: "pdev",
        fixed_offset: Some(8),
        ty: Some(ParamType::StructPtr("pci_dev")),
    },
    Field {
        strukt: "amdgpu_bo",
        member: "preferred_domains",
        fixed_offset: None,
        ty: Some(ParamType::Unsigned(4)),
    },
    Field {
        strukt: "amdgpu_bo",
        member: "tbo",
        fixed_offset: None,
        ty: None,
    },
    Field {
        strukt: "amdgpu_bo",
        member: "flags",
        fixed_offset: None,
        ty: Some(ParamType::Unsigned(8)),
    },
    Field {
        strukt: "ttm_buffer_object",
        member: "type",
        fixed_offset: None,
        ty: None,
    },
    Field {
        strukt: "amdgpu_vm",
        member: "is_compute_context",
        fixed_offset: None,
        ty: Some(ParamType::Bool),
    },
    Field {
        strukt: "amdgpu_vm",
        member: "task_info",
        fixed_offset: None,
        ty: Some(ParamType::StructPtr("amdgpu_task_info")),
    },
    Field {
        strukt: "amdgpu_task_info",
        member: "tgid",
        fixed_offset: None,
        ty: Some(ParamType::Signed(4)),
    },
    Field {
        strukt: "amdgpu_task_info",
        member: "process_name",
        fixed_offset: None,
        ty: Some(ParamType::CharArray(TASK_COMM_LEN)),
    },
];

/// Linux's `TASK_COMM_LEN` (include/linux/sched.h): the length of `amdgpu_task_info.process_name`
/// and of the name the module copies out of it.
pub const TASK_COMM_LEN: u32 = 16;

/// Enumerators whose values the module relies on: (enum, enumerator, value). `classify`
/// tells kernel BOs (never rewritten) and sg BOs by them.
pub const ENUM_VALUES: [(&str, &str, u32); 2] = [
    (
        "ttm_bo_type",
        "ttm_bo_type_kernel",
        crate::bo::TTM_BO_TYPE_KERNEL,
    ),
    ("ttm_bo_type", "ttm_bo_type_sg", crate::bo::TTM_BO_TYPE_SG),
];

/// The first release (major, minor) with the contract's signature of `gmc_v10_0_get_vm_pte`
/// ("drm/amdgpu: rework how PTE flags are generated", 6.18-rc1). `kmod/hook.c` and
/// `kmod/dkms-make.sh` spell the same floor out in C and sh.
pub const FIRST_RELEASE: (u32, u32) = (6, 18);

/// Releases (major, minor) whose `gmc_v10_0_get_vm_pte`, `amdgpu_device` head and
/// `amdgpu_bo` were checked against their source (tests/kernel/check-hook-source.sh): the only
/// kernels accepted without BTF to check.
pub const SOURCE_VERIFIED: [(u32, u32); 2] = [(7, 2), (7, 3)];
