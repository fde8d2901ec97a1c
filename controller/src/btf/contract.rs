//! The hook's contract (`rdna1_mtype_shared::contract`) checked against a kernel's BTF: the
//! prototype of the hooked function, every member the module reads and the enumerators it
//! relies on. One implementation, used by `check-kernel`, `doctor` and the DKMS build.

use std::collections::BTreeMap;

use btf_rs::Btf;
use rdna1_mtype_shared::bo::BoLayout;
use rdna1_mtype_shared::contract::{
    ParamType, ENUM_VALUES, FIELDS, HOOKED_SYMBOL, OLD_SIGNATURE_PARAM, PARAMS, SOURCE_VERIFIED,
};
use schemars::JsonSchema;
use serde::Serialize;

use super::query::{self, Shape};

/// What a verdict rests on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The kernel's own amdgpu BTF.
    Btf,
    /// No BTF, but a release whose source was verified ([`SOURCE_VERIFIED`]).
    VerifiedSource,
    /// No BTF and a release whose source was not verified: not hookable.
    #[default]
    None,
    /// The kernel's files could not be read (not installed, unknown compression): not
    /// hookable, and not a verdict on the kernel itself.
    Unreadable,
}

/// What the check found. The kernel is hookable iff `problems` is empty.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct Verdict {
    /// What the verdict rests on.
    pub basis: Basis,
    /// The hooked function's prototype as the kernel declares it, if found.
    pub prototype: Option<String>,
    /// `struct.member` → byte offset, for every member the module reads that was found.
    pub offsets: BTreeMap<String, u32>,
    /// `struct amdgpu_bo`'s layout, if every part of it was found.
    pub bo_layout: Option<String>,
    /// Each difference from the contract, as a sentence.
    pub problems: Vec<String>,
    /// What the reader should know beside the verdict, as sentences.
    pub notes: Vec<String>,
}

impl Verdict {
    pub fn hookable(&self) -> bool {
        self.problems.is_empty()
    }

    fn offset(&self, key: &str) -> Option<u32> {
        self.offsets.get(key).copied()
    }
}

/// Checks `btf` (amdgpu's module BTF, split on its kernel's base) against the contract.
pub fn check(btf: &Btf) -> Verdict {
    let mut v = Verdict {
        basis: Basis::Btf,
        ..Verdict::default()
    };
    check_prototype(btf, &mut v);
    check_fields(btf, &mut v);
    for (e, member, want) in ENUM_VALUES {
        match query::enum_value(btf, e, member) {
            Ok(got) if got == i64::from(want) => {}
            Ok(got) => v.problems.push(format!(
                "{member} is {got} in enum {e}, the module assumes {want}"
            )),
            Err(err) => v.problems.push(format!("{err:#}")),
        }
    }
    check_bo_layout(btf, &mut v);
    v
}

/// The verdict for a kernel without BTF to check: hookable only if its release is one whose
/// source was verified. `why` says why there is no BTF.
pub fn without_btf(kver: &str, why: &str) -> Verdict {
    let verified = SOURCE_VERIFIED
        .iter()
        .any(|&(maj, min)| major_minor(kver) == Some((maj, min)));
    let list = SOURCE_VERIFIED
        .iter()
        .map(|(a, b)| format!("{a}.{b}"))
        .collect::<Vec<_>>()
        .join(", ");
    if verified {
        Verdict {
            basis: Basis::VerifiedSource,
            notes: vec![format!(
                "{why}; Linux {kver} is a release whose source was verified ({list}), so the \
                 module's built-in knowledge applies"
            )],
            ..Verdict::default()
        }
    } else {
        Verdict {
            basis: Basis::None,
            problems: vec![format!(
                "{why}; without BTF only releases whose source was verified ({list}) are \
                 accepted. Boot a kernel with CONFIG_DEBUG_INFO_BTF_MODULES=y"
            )],
            ..Verdict::default()
        }
    }
}

/// `(major, minor)` of a release such as `7.2.13+deb14-amd64`.
pub fn major_minor(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

fn describe(t: ParamType) -> String {
    match t {
        ParamType::StructPtr(s) => format!("struct {s} *"),
        ParamType::Unsigned(n) => format!("a {}-bit unsigned integer", n * 8),
        ParamType::Signed(n) => format!("a {}-bit signed integer", n * 8),
        ParamType::CharArray(n) => format!("char[{n}]"),
        ParamType::UnsignedPtr(n) => format!("a pointer to a {}-bit unsigned integer", n * 8),
        ParamType::Bool => "a one-byte bool".into(),
    }
}

fn matches(got: &Shape, want: ParamType) -> bool {
    match (got, want) {
        (Shape::StructPtr(g), ParamType::StructPtr(w)) => g == w,
        (Shape::Unsigned(g), ParamType::Unsigned(w)) => *g == w,
        (Shape::Signed(g), ParamType::Signed(w)) => *g == w,
        (Shape::CharArray(g), ParamType::CharArray(w)) => *g == w,
        (Shape::UnsignedPtr(g), ParamType::UnsignedPtr(w)) => *g == w,
        (Shape::Bool(1), ParamType::Bool) => true,
        _ => false,
    }
}

fn check_prototype(btf: &Btf, v: &mut Verdict) {
    let proto = match query::prototype(btf, HOOKED_SYMBOL) {
        Ok(p) => p,
        Err(e) if format!("{e}").starts_with("no function") => {
            v.problems.push(format!(
                "{e:#}: this amdgpu has no {HOOKED_SYMBOL} (not an amdgpu with GFX10 support, \
                 or the function was renamed or inlined)"
            ));
            return;
        }
        Err(e) => {
            v.problems.push(format!("{e:#}"));
            return;
        }
    };
    v.prototype = Some(format!(
        "{} {HOOKED_SYMBOL}{}",
        query::c_type(btf, proto.ret),
        query::render_params(btf, &proto)
    ));
    if proto.ret != 0 {
        v.problems.push(format!(
            "{HOOKED_SYMBOL} returns {}, not void",
            query::c_type(btf, proto.ret)
        ));
    }
    let old = proto.params.get(1).is_some_and(|(_, t)| {
        query::shape(btf, *t) == Shape::StructPtr(OLD_SIGNATURE_PARAM.into())
    });
    if old {
        v.problems.push(format!(
            "parameter 2 of {HOOKED_SYMBOL} is `{}`: this is the pre-6.18 signature \
             (adev, mapping, flags), which the hook cannot read; Linux 6.18 or later is needed",
            query::c_type(btf, proto.params[1].1)
        ));
        return;
    }
    if proto.params.len() != PARAMS.len() {
        v.problems.push(format!(
            "{HOOKED_SYMBOL} has {} parameters, the hook reads {}",
            proto.params.len(),
            PARAMS.len()
        ));
        return;
    }
    for (i, ((name, ty), want)) in proto.params.iter().zip(PARAMS).enumerate() {
        if !matches(&query::shape(btf, *ty), want.ty) {
            v.problems.push(format!(
                "parameter {} of {HOOKED_SYMBOL} ({name}) is `{}`, the hook reads it as {}",
                i + 1,
                query::c_type(btf, *ty),
                describe(want.ty)
            ));
        }
    }
}

fn check_fields(btf: &Btf, v: &mut Verdict) {
    let mut structs: Vec<(&str, anyhow::Result<query::StructDef>)> = Vec::new();
    for f in FIELDS {
        if !structs.iter().any(|(n, _)| *n == f.strukt) {
            structs.push((f.strukt, query::struct_def(btf, f.strukt)));
        }
        let Some((_, def)) = structs.iter().find(|(n, _)| *n == f.strukt) else {
            continue;
        };
        let def = match def {
            Ok(d) => d,
            Err(e) => {
                let msg = format!("{e:#}");
                if !v.problems.contains(&msg) {
                    v.problems.push(msg);
                }
                continue;
            }
        };
        let key = format!("{}.{}", f.strukt, f.member);
        let member = match def.member(f.member) {
            Ok(m) => m,
            Err(e) => {
                v.problems.push(format!("{e:#}"));
                continue;
            }
        };
        let Some(off) = member.offset else {
            v.problems.push(format!("{key} is a bitfield"));
            continue;
        };
        v.offsets.insert(key.clone(), off);
        if let Some(want) = f.fixed_offset
            && off != want
        {
            v.problems.push(format!(
                "{key} is at byte {off}, the module's code reads it at {want}"
            ));
        }
        if let Some(want) = f.ty
            && !matches(&query::shape(btf, member.type_id), want)
        {
            v.problems.push(format!(
                "{key} is `{}`, the module reads it as {}",
                member.ty,
                describe(want)
            ));
        }
    }
    for (name, def) in &structs {
        if let Ok(d) = def {
            v.offsets.insert(format!("sizeof(struct {name})"), d.size);
        }
    }
}

fn check_bo_layout(btf: &Btf, v: &mut Verdict) {
    let (Some(size), Some(pd), Some(tbo), Some(flags)) = (
        v.offset("sizeof(struct amdgpu_bo)"),
        v.offset("amdgpu_bo.preferred_domains"),
        v.offset("amdgpu_bo.tbo"),
        v.offset("amdgpu_bo.flags"),
    ) else {
        return;
    };
    let layout = BoLayout {
        size,
        preferred_domains: pd,
        tbo,
        flags,
    };
    // The module checks a layout against its own sizeof(struct ttm_buffer_object); this is
    // the target's.
    let ttm = match query::struct_def(btf, "ttm_buffer_object") {
        Ok(d) => d.size,
        Err(_) => return,
    };
    match layout.check(ttm) {
        Ok(()) => v.bo_layout = Some(layout.to_string()),
        Err(e) => v.problems.push(format!(
            "struct amdgpu_bo's layout {layout} is refused: {e:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::testbtf::{kernel, BtfWriter, Edit, DEBIAN, PROCESS_NAME, TASK_INFO, TGID};

    fn problems(e: Edit) -> String {
        let (base, split) = kernel(e);
        let base = Btf::from_bytes(&base).unwrap();
        let v = check(&Btf::from_split_bytes(&split, &base).unwrap());
        assert!(!v.hookable(), "{v:?}");
        v.problems.join("\n")
    }

    #[test]
    fn debian_7_2_shape_is_hookable_with_its_offsets() {
        let (base, split) = kernel(DEBIAN);
        let base = Btf::from_bytes(&base).unwrap();
        let v = check(&Btf::from_split_bytes(&split, &base).unwrap());
        assert!(v.hookable(), "{:?}", v.problems);
        assert_eq!(
            v.prototype.as_deref(),
            Some(
                "void gmc_v10_0_get_vm_pte(struct amdgpu_device *adev, struct amdgpu_vm *vm, \
                 struct amdgpu_bo *bo, uint32_t vm_flags, uint64_t *flags)"
            )
        );
        assert_eq!(
            v.bo_layout.as_deref(),
            Some("size=736 preferred_domains=0 tbo=96 flags=608")
        );
        assert_eq!(v.offsets["ttm_buffer_object.type"], 376);
        assert_eq!(v.offsets["amdgpu_vm.is_compute_context"], 3048);
        assert_eq!(v.offsets["amdgpu_vm.task_info"], TASK_INFO);
        assert_eq!(v.offsets["amdgpu_task_info.tgid"], TGID);
        assert_eq!(v.offsets["amdgpu_task_info.process_name"], PROCESS_NAME);
    }

    #[test]
    fn pre_6_18_signature_is_named() {
        let p = problems(Edit {
            old_signature: true,
            ..DEBIAN
        });
        assert!(
            p.contains("parameter 2 of gmc_v10_0_get_vm_pte is `struct amdgpu_bo_va_mapping *`")
                && p.contains("pre-6.18"),
            "{p}"
        );
    }

    #[test]
    fn other_parameter_type_is_named() {
        let p = problems(Edit {
            vm_flags_bytes: 8,
            ..DEBIAN
        });
        assert!(
            p.contains("parameter 4 of gmc_v10_0_get_vm_pte (vm_flags) is `uint64_t`")
                && p.contains("32-bit unsigned"),
            "{p}"
        );
    }

    #[test]
    fn moved_fixed_offset_is_named() {
        let p = problems(Edit {
            pdev_offset: 16,
            ..DEBIAN
        });
        assert!(
            p.contains("amdgpu_device.pdev is at byte 16, the module's code reads it at 8"),
            "{p}"
        );
    }

    #[test]
    fn moved_bo_member_that_breaks_the_layout_is_refused() {
        // tbo (480 bytes) at 200 overlaps flags at 608.
        let p = problems(Edit {
            tbo_offset: 200,
            ..DEBIAN
        });
        assert!(
            p.contains("layout size=736 preferred_domains=0 tbo=200 flags=608 is refused"),
            "{p}"
        );
    }

    #[test]
    fn changed_enumerator_is_named() {
        let p = problems(Edit {
            sg_value: 3,
            ..DEBIAN
        });
        assert!(
            p.contains("ttm_bo_type_sg is 3 in enum ttm_bo_type, the module assumes 2"),
            "{p}"
        );
    }

    #[test]
    fn is_compute_context_must_be_a_one_byte_bool() {
        let p = problems(Edit {
            vm_compute_as_u32: true,
            ..DEBIAN
        });
        assert!(
            p.contains(
                "amdgpu_vm.is_compute_context is `unsigned int`, the module reads it as a \
                 one-byte bool"
            ),
            "{p}"
        );
        let p = problems(Edit {
            vm_compute: None,
            ..DEBIAN
        });
        assert!(
            p.contains("struct amdgpu_vm has no member is_compute_context"),
            "{p}"
        );
    }

    #[test]
    fn missing_task_info_is_named() {
        let p = problems(Edit {
            vm_task_info: None,
            ..DEBIAN
        });
        assert!(
            p.contains("struct amdgpu_vm has no member task_info"),
            "{p}"
        );
    }

    #[test]
    fn tgid_must_be_a_4_byte_signed_int() {
        let p = problems(Edit {
            tgid_as_u32: true,
            ..DEBIAN
        });
        assert!(
            p.contains(
                "amdgpu_task_info.tgid is `unsigned int`, the module reads it as a 32-bit \
                 signed integer"
            ),
            "{p}"
        );
    }

    #[test]
    fn process_name_must_be_char_16() {
        let p = problems(Edit {
            name_len: 32,
            ..DEBIAN
        });
        assert!(
            p.contains(
                "amdgpu_task_info.process_name is `char[32]`, the module reads it as char[16]"
            ),
            "{p}"
        );
    }

    #[test]
    fn changed_kernel_bo_type_is_named() {
        let p = problems(Edit {
            kernel_value: 3,
            ..DEBIAN
        });
        assert!(
            p.contains("ttm_bo_type_kernel is 3 in enum ttm_bo_type, the module assumes 1"),
            "{p}"
        );
    }

    #[test]
    fn without_btf_only_source_verified_releases() {
        let v = without_btf("7.3.4+deb13-amd64", "x.ko has no .BTF section");
        assert!(v.hookable());
        assert_eq!(v.basis, Basis::VerifiedSource);
        assert!(v.notes[0].contains("x.ko has no .BTF section"), "{v:?}");
        let v = without_btf("6.18.5+deb13-amd64", "x.ko has no .BTF section");
        assert!(!v.hookable());
        assert!(
            v.problems[0].contains("only releases whose source was verified (7.2, 7.3)"),
            "{v:?}"
        );
        assert!(!without_btf("7.20.1", "none").hookable());
    }

    #[test]
    fn amdgpu_without_the_function_is_refused() {
        let mut b = BtfWriter::new(0, 0);
        b.int("unsigned int", 4);
        let base = Btf::from_bytes(&b.bytes()).unwrap();
        let s = BtfWriter::new(b.strings_len(), 1);
        let v = check(&Btf::from_split_bytes(&s.bytes(), &base).unwrap());
        let p = v.problems.join("\n");
        assert!(p.contains("no function gmc_v10_0_get_vm_pte"), "{p}");
        assert!(p.contains("no struct amdgpu_bo"), "{p}");
    }
}
