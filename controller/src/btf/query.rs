//! Questions asked of a kernel's BTF: a struct's members, a function's prototype, an enum's
//! values, and a type rendered as C for messages.

use anyhow::{bail, Context, Result};
use btf_rs::{Btf, BtfType, Type};

/// One member of a struct, as BTF describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberDef {
    pub name: String,
    /// Byte offset; `None` for a bitfield or a member not on a byte boundary.
    pub offset: Option<u32>,
    /// The member's type, as C.
    pub ty: String,
    /// The member's type id (in the BTF it was read from).
    pub type_id: u32,
}

/// A struct: its size and members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructDef {
    pub name: String,
    pub size: u32,
    pub members: Vec<MemberDef>,
}

impl StructDef {
    pub fn member(&self, name: &str) -> Result<&MemberDef> {
        self.members
            .iter()
            .find(|m| m.name == name)
            .with_context(|| format!("struct {} has no member {name}", self.name))
    }

    /// The byte offset of `name`; an error for a missing member or a bitfield.
    pub fn offset_of(&self, name: &str) -> Result<u32> {
        self.member(name)?
            .offset
            .with_context(|| format!("{}.{name} is a bitfield", self.name))
    }
}

/// The struct `name`. pahole does not always deduplicate a module's types (Debian 7.3.4's
/// amdgpu.ko defines `struct amdgpu_bo` 11 times): several definitions are one struct if they
/// agree; if they do not, the first difference is the error.
pub fn struct_def(btf: &Btf, name: &str) -> Result<StructDef> {
    let mut defs = Vec::new();
    for id in btf.resolve_ids_by_name(name).unwrap_or_default() {
        if let Ok(Type::Struct(s)) = btf.resolve_type_by_id(id) {
            defs.push(read_struct(btf, name, &s)?);
        }
    }
    let Some(first) = defs.first() else {
        bail!("no struct {name}");
    };
    for other in &defs[1..] {
        if let Some(diff) = first_difference(first, other) {
            bail!(
                "{} definitions of struct {name} disagree: {diff}",
                defs.len()
            );
        }
    }
    Ok(first.clone())
}

fn read_struct(btf: &Btf, name: &str, s: &btf_rs::Struct) -> Result<StructDef> {
    let mut members = Vec::with_capacity(s.members.len());
    for m in &s.members {
        let bitfield = m.bitfield_size().is_some_and(|b| b != 0) || m.bit_offset() % 8 != 0;
        members.push(MemberDef {
            name: btf.resolve_name(m).unwrap_or_default(),
            offset: (!bitfield).then(|| m.bit_offset() / 8),
            ty: m
                .get_type_id()
                .map_or_else(|| "?".into(), |id| c_type(btf, id)),
            type_id: m.get_type_id().unwrap_or(0),
        });
    }
    Ok(StructDef {
        name: name.to_owned(),
        size: u32::try_from(s.size()).with_context(|| format!("struct {name} size"))?,
        members,
    })
}

/// Compared member by member in order (names may repeat: anonymous unions).
fn first_difference(a: &StructDef, b: &StructDef) -> Option<String> {
    if a.size != b.size {
        return Some(format!("size {} against {}", a.size, b.size));
    }
    if a.members.len() != b.members.len() {
        return Some(format!(
            "{} members against {}",
            a.members.len(),
            b.members.len()
        ));
    }
    for (m, o) in a.members.iter().zip(&b.members) {
        if m.name != o.name {
            return Some(format!("member {} against {}", m.name, o.name));
        }
        if m.offset != o.offset {
            return Some(format!(
                "{} at {} against {}",
                m.name,
                show_offset(m.offset),
                show_offset(o.offset)
            ));
        }
    }
    None
}

fn show_offset(o: Option<u32>) -> String {
    o.map_or_else(|| "a bitfield".into(), |o| o.to_string())
}

/// A function's parameters: (name, type id).
pub struct Prototype {
    pub ret: u32,
    pub params: Vec<(String, u32)>,
}

/// The prototype of function `name`; an error if there is none, or several that disagree.
pub fn prototype(btf: &Btf, name: &str) -> Result<Prototype> {
    let mut found: Vec<Prototype> = Vec::new();
    for id in btf.resolve_ids_by_name(name).unwrap_or_default() {
        let Ok(Type::Func(f)) = btf.resolve_type_by_id(id) else {
            continue;
        };
        let Ok(Type::FuncProto(p)) = btf.resolve_chained_type(&f) else {
            bail!("function {name} has no prototype");
        };
        let params = p
            .parameters
            .iter()
            .map(|q| {
                (
                    btf.resolve_name(q).unwrap_or_default(),
                    q.get_type_id().unwrap_or(0),
                )
            })
            .collect();
        found.push(Prototype {
            // Cannot panic: a FuncProto always has a type (its return type).
            ret: p.return_type_id(),
            params,
        });
    }
    let Some(first) = found.pop() else {
        bail!("no function {name}");
    };
    if found
        .iter()
        .any(|p| render_params(btf, p) != render_params(btf, &first))
    {
        bail!("function {name} has several different prototypes");
    }
    Ok(first)
}

/// `(type name, type name, ...)`, for messages and comparisons.
pub fn render_params(btf: &Btf, p: &Prototype) -> String {
    let parts: Vec<String> = p
        .params
        .iter()
        .map(|(n, t)| {
            // `uint64_t *flags`, as C is written.
            let ty = c_type(btf, *t);
            let sep = if ty.ends_with('*') { "" } else { " " };
            format!("{ty}{sep}{n}")
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// The value of enumerator `member` of `enum name`.
pub fn enum_value(btf: &Btf, name: &str, member: &str) -> Result<i64> {
    for id in btf.resolve_ids_by_name(name).unwrap_or_default() {
        match btf.resolve_type_by_id(id) {
            Ok(Type::Enum(e)) => {
                for m in &e.members {
                    if btf.resolve_name(m).is_ok_and(|n| n == member) {
                        return Ok(if e.is_signed() {
                            i64::from(m.val() as i32)
                        } else {
                            i64::from(m.val())
                        });
                    }
                }
            }
            Ok(Type::Enum64(e)) => {
                for m in &e.members {
                    if btf.resolve_name(m).is_ok_and(|n| n == member) {
                        return i64::try_from(m.val()).context("enumerator out of range");
                    }
                }
            }
            _ => {}
        }
    }
    bail!("no enumerator {member} in enum {name}")
}

/// What a type is, once typedefs and qualifiers are looked through.
#[derive(Debug, PartialEq, Eq)]
pub enum Shape {
    StructPtr(String),
    Unsigned(u32),
    Signed(u32),
    UnsignedPtr(u32),
    /// `bool` (`_Bool`) of this many bytes.
    Bool(u32),
    /// An array of this many one-byte integers (`char`, signed or not: C leaves `char`'s
    /// signedness to the ABI, and a name's bytes read the same either way).
    CharArray(u32),
    Other,
}

/// The shape of type `id` (typedefs, const, volatile, restrict and type tags looked through).
pub fn shape(btf: &Btf, id: u32) -> Shape {
    match strip(btf, id) {
        Some(Type::Int(i)) if i.is_bool() => {
            u32::try_from(i.size()).map_or(Shape::Other, Shape::Bool)
        }
        Some(Type::Int(i)) if !i.is_signed() => {
            u32::try_from(i.size()).map_or(Shape::Other, Shape::Unsigned)
        }
        Some(Type::Int(i)) => u32::try_from(i.size()).map_or(Shape::Other, Shape::Signed),
        Some(Type::Array(a)) => match a.get_type_id().and_then(|t| strip(btf, t)) {
            Some(Type::Int(i)) if i.size() == 1 && !i.is_bool() => {
                u32::try_from(a.len()).map_or(Shape::Other, Shape::CharArray)
            }
            _ => Shape::Other,
        },
        Some(Type::Ptr(p)) => match p.get_type_id().and_then(|t| strip(btf, t)) {
            Some(Type::Struct(s)) => Shape::StructPtr(btf.resolve_name(&s).unwrap_or_default()),
            Some(Type::Fwd(f)) if f.is_struct() => {
                Shape::StructPtr(btf.resolve_name(&f).unwrap_or_default())
            }
            Some(Type::Int(i)) if !i.is_signed() && !i.is_bool() => {
                u32::try_from(i.size()).map_or(Shape::Other, Shape::UnsignedPtr)
            }
            _ => Shape::Other,
        },
        _ => Shape::Other,
    }
}

fn strip(btf: &Btf, mut id: u32) -> Option<Type> {
    // A chain longer than this is a loop in a corrupt BTF.
    for _ in 0..32 {
        let t = btf.resolve_type_by_id(id).ok()?;
        match &t {
            Type::Typedef(x) => id = x.get_type_id()?,
            Type::Const(x) | Type::Volatile(x) | Type::Restrict(x) => id = x.get_type_id()?,
            Type::TypeTag(x) => id = x.get_type_id()?,
            _ => return Some(t),
        }
    }
    None
}

/// Type `id` as C, as the source spells it (`uint64_t *`, `struct amdgpu_bo *`).
pub fn c_type(btf: &Btf, id: u32) -> String {
    c_type_depth(btf, id, 0)
}

fn c_type_depth(btf: &Btf, id: u32, depth: u32) -> String {
    if id == 0 {
        return "void".into();
    }
    if depth > 16 {
        return "?".into();
    }
    let Ok(t) = btf.resolve_type_by_id(id) else {
        return format!("<type {id}>");
    };
    let name = |x: &dyn BtfType| btf.resolve_name(x).unwrap_or_default();
    let inner = |x: &dyn BtfType| {
        x.get_type_id()
            .map_or_else(|| "?".into(), |t| c_type_depth(btf, t, depth + 1))
    };
    match &t {
        Type::Void => "void".into(),
        Type::Int(x) => name(x),
        Type::Float(x) => name(x),
        Type::Typedef(x) => name(x),
        Type::Struct(x) => format!("struct {}", name(x)),
        Type::Union(x) => format!("union {}", name(x)),
        Type::Enum(x) => format!("enum {}", name(x)),
        Type::Enum64(x) => format!("enum {}", name(x)),
        Type::Fwd(x) if x.is_union() => format!("union {}", name(x)),
        Type::Fwd(x) => format!("struct {}", name(x)),
        Type::Ptr(x) => format!("{} *", inner(x)),
        Type::Const(x) => format!("const {}", inner(x)),
        Type::Volatile(x) => format!("volatile {}", inner(x)),
        Type::Restrict(x) => format!("{} restrict", inner(x)),
        Type::TypeTag(x) => inner(x),
        // `char[16]`: the element type, then the length (a message's rendering, not a
        // declarator).
        Type::Array(x) => format!("{}[{}]", inner(x), x.len()),
        Type::FuncProto(_) => "function".into(),
        other => other.name().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::testbtf::BtfWriter;

    fn btf(defs: &[&[(&str, u32)]]) -> Btf {
        let mut b = BtfWriter::new(0, 0);
        let u32_ = b.int("unsigned int", 4);
        for members in defs {
            let m: Vec<(&str, u32, u32)> = members.iter().map(|(n, o)| (*n, u32_, *o)).collect();
            b.structure("s", 16, &m);
        }
        Btf::from_bytes(&b.bytes()).unwrap()
    }

    #[test]
    fn duplicates_with_anonymous_members_agree_in_order() {
        let d: &[(&str, u32)] = &[("", 0), ("", 4), ("x", 8)];
        let s = struct_def(&btf(&[d, d]), "s").unwrap();
        assert_eq!(s.offset_of("x").unwrap(), 8);
        let other: &[(&str, u32)] = &[("", 0), ("", 8), ("x", 8)];
        let e = format!("{:#}", struct_def(&btf(&[d, other]), "s").unwrap_err());
        assert!(e.contains("2 definitions of struct s disagree: "), "{e}");
    }
}
