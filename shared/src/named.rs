//! [`named_enum!`]: the one definition of the enums whose values and names cross the kernel ↔
//! user boundary (after nova-core's `define_chipset!`). Each variant is listed once, with its
//! numeric value and its name; the enum, `ALL`, `COUNT`, `name`, `from_u32`, `parse` and
//! `Display` are generated from that list, so a value and its name can never drift apart.
//!
//! The kernel module compiles this file too: the generated code uses `core` only and cannot
//! panic.

/// Defines a named enum.
///
/// A closed enum (every value it can hold is listed) has a `#[repr]` and gets:
/// `ALL` (every variant, in the order listed: numeric order), `COUNT`, `name()` (its stable
/// name), `from_u32()` (the variant for a numeric value), `parse()` (the variant for a name,
/// one trailing newline allowed, as `echo` writes to sysfs) and `Display` (the name).
///
/// ```text
/// named_enum! {
///     /// What the hook does.
///     pub enum Mode: u32 {
///         /// Pass through.
///         Off = 0 => "off",
///         /// Rewrite.
///         Enforce = 2 => "enforce",
///     }
/// }
/// ```
///
/// An open enum ends with `other VARIANT => "NAME";` after the list: that variant carries
/// any other raw value (of the `repr` type). It gets the same items, except that `from_u32`
/// is replaced by the total `from_raw()` and its inverse `raw()`; `ALL` and `parse()` cover
/// the listed variants only.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $repr:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $value:literal => $text:literal,
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr($repr)]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant = $value,
            )+
        }

        impl $name {
            /// The variant with numeric value `v` (the ABI's), if any.
            pub const fn from_u32(v: u32) -> Option<$name> {
                match v {
                    $($value => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        $crate::named::named_enum!(@common $name { $($variant => $text,)+ });
    };

    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $repr:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $value:literal => $text:literal,
            )+
        }
        $(#[$ometa:meta])*
        other $other:ident => $otext:literal;
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
            $(#[$ometa])*
            $other($repr),
        }

        impl $name {
            /// The variant for a raw value: a listed one, or the catch-all.
            pub const fn from_raw(v: $repr) -> $name {
                match v {
                    $($value => $name::$variant,)+
                    n => $name::$other(n),
                }
            }

            /// The raw value of this variant.
            pub const fn raw(self) -> $repr {
                match self {
                    $($name::$variant => $value,)+
                    $name::$other(n) => n,
                }
            }

            /// The stable name of this variant (the catch-all included).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                    $name::$other(_) => $otext,
                }
            }
        }

        $crate::named::named_enum!(@listed $name { $($variant => $text,)+ });
    };

    // `ALL`, `COUNT`, `parse` and `Display`, over the listed variants.
    (@listed $name:ident { $($variant:ident => $text:literal,)+ }) => {
        impl $name {
            /// Every listed variant, in numeric order.
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];
            /// Number of listed variants.
            pub const COUNT: usize = $name::ALL.len();

            /// The listed variant named `input`: the exact name, one trailing newline allowed
            /// (what `echo` adds), nothing else.
            pub fn parse(input: &[u8]) -> Option<$name> {
                let name = match input.split_last() {
                    Some((b'\n', rest)) => rest,
                    _ => input,
                };
                $name::ALL.into_iter().find(|v| v.name().as_bytes() == name)
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.name())
            }
        }
    };

    // A closed enum: `name` over every variant, then what every named enum has.
    (@common $name:ident { $($variant:ident => $text:literal,)+ }) => {
        impl $name {
            /// The stable name of this variant (sysfs, module parameters, logs, JSON).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        $crate::named::named_enum!(@listed $name { $($variant => $text,)+ });
    };
}

pub(crate) use named_enum;

#[cfg(test)]
#[allow(dead_code)]
mod tests {
    named_enum! {
        /// A closed test enum.
        enum Closed: u32 {
            /// One.
            One = 1 => "one",
            /// Three.
            Three = 3 => "three",
        }
    }

    named_enum! {
        /// An open test enum.
        enum Open: u8 {
            /// Zero.
            Zero = 0 => "ZERO",
            /// Two.
            Two = 2 => "TWO",
        }
        /// Anything else.
        other Else => "ELSE";
    }

    #[test]
    fn closed_enum_items_agree() {
        assert_eq!(Closed::ALL, [Closed::One, Closed::Three]);
        assert_eq!(Closed::COUNT, 2);
        for v in Closed::ALL {
            assert_eq!(Closed::from_u32(v as u32), Some(v));
            assert_eq!(Closed::parse(v.name().as_bytes()), Some(v));
            assert_eq!(std::format!("{v}"), v.name());
        }
        assert_eq!(Closed::from_u32(2), None);
        assert_eq!(Closed::parse(b"three\n"), Some(Closed::Three));
        for bad in [
            &b""[..],
            b"\n",
            b"Three",
            b"three\n\n",
            b" one",
            b"on",
            b"onex",
        ] {
            assert_eq!(Closed::parse(bad), None, "{bad:?}");
        }
    }

    /// The names and values of every named enum, as the module and rdna1ctl printed them
    /// before the macro: sysfs, dmesg, JSON and the ABI depend on them (the layout words:
    /// bo.rs).
    #[test]
    fn the_shared_enums_keep_their_names_and_values() {
        use crate::bo::BoClass;
        use crate::policy::{Mode, Skip};
        use crate::pte::{Mtype, VmMtype};
        let mode = Mode::ALL.map(|v| (v as u32, v.name()));
        assert_eq!(mode, [(0, "off"), (1, "audit"), (2, "enforce")]);
        let skip: std::vec::Vec<_> = Skip::ALL.iter().map(|&v| (v as u32, v.name())).collect();
        let names = [
            "mode_off",
            "device_unknown",
            "out_of_scope",
            "not_a_valid_page",
            "already_nc",
            "layout_unknown",
            "never_class",
            "class_not_enabled",
            "not_requested",
            "graphics_vm",
            "vm_unknown",
            "coherent_sg",
        ];
        let want: std::vec::Vec<_> = (0..).zip(names).collect();
        assert_eq!(skip, want);
        let class = BoClass::ALL.map(|v| (v as u32, v.name()));
        let names = [
            "none",
            "memory",
            "coherent",
            "uncached",
            "never",
            "unknown",
            "kernel",
            "coherent_sg",
        ];
        assert_eq!(
            class,
            [0, 1, 2, 3, 4, 5, 6, 7].map(|i| (i, names[i as usize]))
        );
        let mtype = Mtype::ALL.map(|v| (v as u8, v.name()));
        assert_eq!(
            mtype,
            [(0, "NC"), (1, "WC"), (2, "CC"), (3, "UC"), (7, "RSVD")]
        );
        let vm = VmMtype::ALL.map(|v| (v.raw(), v.name()));
        let names = ["DEFAULT", "NC", "WC", "CC", "UC", "RW"];
        assert_eq!(vm, [0, 1, 2, 3, 4, 5].map(|i| (i, names[i as usize])));
        assert_eq!(VmMtype::Other(9).name(), "OTHER");
    }

    #[test]
    fn open_enum_items_agree() {
        assert_eq!(Open::ALL, [Open::Zero, Open::Two]);
        for n in 0..=u8::MAX {
            assert_eq!(Open::from_raw(n).raw(), n);
        }
        assert_eq!(Open::from_raw(2), Open::Two);
        assert_eq!(Open::from_raw(1), Open::Else(1));
        assert_eq!(Open::Else(9).name(), "ELSE");
        assert_eq!(Open::parse(b"ELSE"), None);
        assert_eq!(std::format!("{}", Open::Two), "TWO");
    }
}
