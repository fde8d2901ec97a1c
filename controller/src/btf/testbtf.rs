//! BTF written byte by byte for tests (format: include/uapi/linux/btf.h).

const KIND_INT: u32 = 1;
const KIND_PTR: u32 = 2;
const KIND_ARRAY: u32 = 3;
const KIND_STRUCT: u32 = 4;
const KIND_ENUM: u32 = 6;
const KIND_TYPEDEF: u32 = 8;
const KIND_FUNC: u32 = 12;
const KIND_FUNC_PROTO: u32 = 13;
/// `BTF_INT_SIGNED`, in an int's encoding bits.
const INT_SIGNED: u32 = 1;
/// `BTF_INT_BOOL`, in an int's encoding bits.
const INT_BOOL: u32 = 4;

/// A BTF blob under construction. `str_base`/`id_base` are the base's string section
/// length and type count for split BTF (0/0 for a base).
pub struct BtfWriter {
    types: Vec<u8>,
    strings: Vec<u8>,
    str_base: u32,
    next_id: u32,
}

impl BtfWriter {
    pub fn new(str_base: u32, id_base: u32) -> Self {
        // A base starts its strings with "", a split one continues the base's.
        let strings = if str_base == 0 { vec![0] } else { Vec::new() };
        BtfWriter {
            types: Vec::new(),
            strings,
            str_base,
            next_id: id_base + 1,
        }
    }

    fn str(&mut self, s: &str) -> u32 {
        let off = self.str_base + self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        off
    }

    fn words(&mut self, w: &[u32]) {
        for x in w {
            self.types.extend_from_slice(&x.to_le_bytes());
        }
    }

    pub fn int(&mut self, name: &str, bytes: u32) -> u32 {
        let n = self.str(name);
        self.words(&[n, KIND_INT << 24, bytes, bytes * 8]);
        self.next_id += 1;
        self.next_id - 1
    }

    /// A signed int (`int`): the SIGNED encoding.
    pub fn signed(&mut self, name: &str, bytes: u32) -> u32 {
        let n = self.str(name);
        self.words(&[n, KIND_INT << 24, bytes, (INT_SIGNED << 24) | (bytes * 8)]);
        self.next()
    }

    /// `elem[nelems]`, indexed by type `index` (pahole: `__ARRAY_SIZE_TYPE__`, an int).
    pub fn array(&mut self, elem: u32, index: u32, nelems: u32) -> u32 {
        self.words(&[0, KIND_ARRAY << 24, 0, elem, index, nelems]);
        self.next()
    }

    /// C's `_Bool`: a one-byte int with the BOOL encoding.
    pub fn boolean(&mut self) -> u32 {
        let n = self.str("_Bool");
        self.words(&[n, KIND_INT << 24, 1, INT_BOOL << 24 | 8]);
        self.next()
    }

    /// `members`: (name, type id, byte offset).
    pub fn structure(&mut self, name: &str, size: u32, members: &[(&str, u32, u32)]) -> u32 {
        let n = self.str(name);
        self.words(&[n, KIND_STRUCT << 24 | members.len() as u32, size]);
        for (mname, ty, off) in members {
            let mn = self.str(mname);
            self.words(&[mn, *ty, off * 8]);
        }
        self.next_id += 1;
        self.next_id - 1
    }

    /// `name` → type `ty`.
    pub fn typedef(&mut self, name: &str, ty: u32) -> u32 {
        let n = self.str(name);
        self.words(&[n, KIND_TYPEDEF << 24, ty]);
        self.next()
    }

    /// A pointer to `ty`.
    pub fn ptr(&mut self, ty: u32) -> u32 {
        self.words(&[0, KIND_PTR << 24, ty]);
        self.next()
    }

    /// `enum name { (member, value), ... }`, 4 bytes.
    pub fn enumeration(&mut self, name: &str, members: &[(&str, u32)]) -> u32 {
        let n = self.str(name);
        self.words(&[n, KIND_ENUM << 24 | members.len() as u32, 4]);
        for (m, v) in members {
            let mn = self.str(m);
            self.words(&[mn, *v]);
        }
        self.next()
    }

    /// A static function `name` returning `ret` with `params` (name, type id).
    pub fn function(&mut self, name: &str, ret: u32, params: &[(&str, u32)]) -> u32 {
        let mut names = Vec::new();
        for (p, _) in params {
            names.push(self.str(p));
        }
        self.words(&[0, KIND_FUNC_PROTO << 24 | params.len() as u32, ret]);
        for (n, (_, t)) in names.iter().zip(params) {
            self.words(&[*n, *t]);
        }
        let proto = self.next();
        let n = self.str(name);
        self.words(&[n, KIND_FUNC << 24, proto]);
        self.next()
    }

    fn next(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// How many types were written, ids of a split's base included.
    pub fn types_len(&self) -> u32 {
        self.next_id - 1
    }

    pub fn strings_len(&self) -> u32 {
        self.strings.len() as u32
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let (tl, sl) = (self.types.len() as u32, self.strings.len() as u32);
        out.extend_from_slice(&0xeb9f_u16.to_le_bytes());
        out.extend_from_slice(&[1, 0]);
        for w in [24u32, 0, tl, tl, sl] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strings);
        out
    }
}

/// What a test kernel's BTF differs in from Debian 7.2.13's.
#[derive(Clone, Copy)]
pub struct Edit {
    pub old_signature: bool,
    pub vm_flags_bytes: u32,
    pub pdev_offset: u32,
    pub tbo_offset: u32,
    pub kernel_value: u32,
    pub sg_value: u32,
    /// `amdgpu_vm.is_compute_context`'s offset; `None`: no such member.
    pub vm_compute: Option<u32>,
    /// It is an `unsigned int` rather than a `bool`.
    pub vm_compute_as_u32: bool,
    /// `amdgpu_vm.task_info`'s offset; `None`: no such member.
    pub vm_task_info: Option<u32>,
    /// `amdgpu_task_info.tgid` is an `unsigned int` rather than a `pid_t`.
    pub tgid_as_u32: bool,
    /// The length of `amdgpu_task_info.process_name`, a `char` array.
    pub name_len: u32,
}

pub const DEBIAN: Edit = Edit {
    old_signature: false,
    vm_flags_bytes: 4,
    pdev_offset: 8,
    tbo_offset: 96,
    kernel_value: 1,
    sg_value: 2,
    vm_compute: Some(3048),
    vm_compute_as_u32: false,
    vm_task_info: Some(TASK_INFO),
    tgid_as_u32: false,
    name_len: 16,
};

/// Debian 7.2.13's offsets of `amdgpu_vm.task_info` and in `struct amdgpu_task_info`
/// (`rdna1ctl --root <its unpacked package> check-kernel 7.2.13+deb14-amd64`).
pub const TASK_INFO: u32 = 2448;
pub const TGID: u32 = 36;
pub const PROCESS_NAME: u32 = 20;

/// Base + split BTF shaped as Debian 7.2.13's (offsets and types as read from it), edited.
pub fn kernel(e: Edit) -> (Vec<u8>, Vec<u8>) {
    let mut b = BtfWriter::new(0, 0);
    let u32_ = b.int("unsigned int", 4);
    let u64_ = b.int("long long unsigned int", 8);
    let uint32_t = b.typedef("uint32_t", u32_);
    let uint64_t = b.typedef("uint64_t", u64_);
    let device = b.structure("device", 768, &[("parent", u64_, 0)]);
    let pci_dev = b.structure("pci_dev", 2560, &[("devfn", u32_, 0)]);
    let bool_ = b.boolean();
    let int = b.signed("int", 4);
    // `char`, unsigned (the kernel builds with -funsigned-char); shape() takes either.
    let char_ = b.int("char", 1);
    let array_index = b.int("__ARRAY_SIZE_TYPE__", 4);
    let mut s = BtfWriter::new(b.strings_len(), b.types_len());
    let bo_type = s.enumeration(
        "ttm_bo_type",
        &[
            ("ttm_bo_type_device", 0),
            ("ttm_bo_type_kernel", e.kernel_value),
            ("ttm_bo_type_sg", e.sg_value),
        ],
    );
    let ttm = s.structure("ttm_buffer_object", 480, &[("type", bo_type, 376)]);
    let pdev = s.ptr(device);
    let ppci = s.ptr(pci_dev);
    let adev = s.structure(
        "amdgpu_device",
        386672,
        &[("dev", pdev, 0), ("pdev", ppci, e.pdev_offset)],
    );
    // pid_t as include/linux/types.h spells it.
    let kernel_pid_t = s.typedef("__kernel_pid_t", int);
    let pid_t = s.typedef("pid_t", kernel_pid_t);
    let comm = s.array(char_, array_index, 16);
    let wedge = s.structure(
        "drm_wedge_task_info",
        20,
        &[("pid", pid_t, 0), ("comm", comm, 4)],
    );
    let tgid_ty = if e.tgid_as_u32 { u32_ } else { pid_t };
    let name = s.array(char_, array_index, e.name_len);
    let task_info = s.structure(
        "amdgpu_task_info",
        44,
        &[
            ("task", wedge, 0),
            ("process_name", name, PROCESS_NAME),
            ("tgid", tgid_ty, TGID),
            ("refcount", u32_, 40),
        ],
    );
    let ptask_info = s.ptr(task_info);
    let compute_ty = if e.vm_compute_as_u32 { u32_ } else { bool_ };
    let mut vm_members: Vec<(&str, u32, u32)> = match e.vm_compute {
        Some(off) => vec![("is_compute_context", compute_ty, off)],
        None => vec![("pasid", u32_, 3048)],
    };
    if let Some(off) = e.vm_task_info {
        vm_members.insert(0, ("task_info", ptask_info, off));
    }
    let vm = s.structure("amdgpu_vm", 3072, &vm_members);
    let bo = s.structure(
        "amdgpu_bo",
        736,
        &[
            ("preferred_domains", u32_, 0),
            ("tbo", ttm, e.tbo_offset),
            ("flags", u64_, 608),
        ],
    );
    let mapping = s.structure("amdgpu_bo_va_mapping", 96, &[("offset", u64_, 0)]);
    let (padev, pvm, pbo, pmap) = (s.ptr(adev), s.ptr(vm), s.ptr(bo), s.ptr(mapping));
    let pflags = s.ptr(uint64_t);
    let vm_flags = if e.vm_flags_bytes == 8 {
        uint64_t
    } else {
        uint32_t
    };
    if e.old_signature {
        s.function(
            "gmc_v10_0_get_vm_pte",
            0,
            &[("adev", padev), ("mapping", pmap), ("flags", pflags)],
        );
    } else {
        s.function(
            "gmc_v10_0_get_vm_pte",
            0,
            &[
                ("adev", padev),
                ("vm", pvm),
                ("bo", pbo),
                ("vm_flags", vm_flags),
                ("flags", pflags),
            ],
        );
    }
    (b.bytes(), s.bytes())
}

/// An ELF64 relocatable object with a `.BTF` section holding `btf`, written by hand (the
/// `object` crate here reads only).
pub fn elf_with_btf(btf: &[u8]) -> Vec<u8> {
    let shstrtab = b"\0.BTF\0.shstrtab\0";
    let data_off = 64u64;
    let shstr_off = data_off + btf.len() as u64;
    let sh_off = (shstr_off + shstrtab.len() as u64).next_multiple_of(8);
    let mut e = Vec::new();
    e.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    e.extend_from_slice(&1u16.to_le_bytes()); // e_type: ET_REL
    e.extend_from_slice(&62u16.to_le_bytes()); // e_machine: EM_X86_64
    e.extend_from_slice(&1u32.to_le_bytes()); // e_version
    e.extend_from_slice(&0u64.to_le_bytes()); // e_entry
    e.extend_from_slice(&0u64.to_le_bytes()); // e_phoff
    e.extend_from_slice(&sh_off.to_le_bytes());
    e.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    for v in [64u16, 0, 0, 64, 3, 2] {
        e.extend_from_slice(&v.to_le_bytes());
    }
    e.extend_from_slice(btf);
    e.extend_from_slice(shstrtab);
    e.resize(sh_off as usize, 0);
    let mut sh = |name: u32, ty: u32, off: u64, size: u64| {
        e.extend_from_slice(&name.to_le_bytes());
        e.extend_from_slice(&ty.to_le_bytes());
        e.extend_from_slice(&0u64.to_le_bytes()); // flags
        e.extend_from_slice(&0u64.to_le_bytes()); // addr
        e.extend_from_slice(&off.to_le_bytes());
        e.extend_from_slice(&size.to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes()); // link
        e.extend_from_slice(&0u32.to_le_bytes()); // info
        e.extend_from_slice(&1u64.to_le_bytes()); // align
        e.extend_from_slice(&0u64.to_le_bytes()); // entsize
    };
    sh(0, 0, 0, 0);
    sh(1, 1, data_off, btf.len() as u64);
    sh(6, 3, shstr_off, shstrtab.len() as u64);
    e
}
