//! The configurations the search can try, each built on the changes the plan has kept so far
//! (`base`): what each changes and why it is tried. The order they are tried in, and what is
//! kept, is the plan's (plan.rs). Names and meanings of MIOpen's variables are MIOpen's
//! (docs/CLI.md, search, cites the source).

use rdna1_mtype_shared::policy::Mode;
use serde::Serialize;

use crate::runner::changes::Changes;

/// One configuration the search tries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Arm {
    /// Stable name: `baseline`, `override-10.1.0`, `miopen-find-fast`, `eliminate-2`,
    /// `confirm-1`, `without-MIOPEN_DEBUG_CONV_GEMM`, ...
    pub id: String,
    /// The plan's step it belongs to: `baseline`, `visible`, `override`, `compiled`,
    /// `attention`, `gemm`, `bf16`, `find-fast`,
    /// `eliminate`, `filters`, `bypass-selective`, `bypass`, `mtype`, `confirm`,
    /// `baseline-again`, `minimize`.
    pub step: &'static str,
    /// What it changes, in words.
    pub what: String,
    /// What the configuration is (what would be kept).
    #[serde(flatten)]
    pub changes: Changes,
    /// Variables this run gets that are not part of the configuration: MIOpen's log and
    /// serialized kernels, to see which solver was running at a fault.
    pub diagnostics: Vec<(String, String)>,
    /// Why it is not run, when it is not.
    pub skipped: Option<String>,
}

/// MIOpen's log and kernel serialization for an elimination run: level 6 (Info2) shows which
/// solver runs (MIOpen before rocm-libraries names Find's candidates only at this level), the
/// command lines name the problem, and with `AMD_SERIALIZE_KERNEL=3` a kernel's fault surfaces
/// before the next line is logged.
pub const DIAGNOSTICS: [(&str, &str); 3] = [
    ("MIOPEN_LOG_LEVEL", "6"),
    ("MIOPEN_ENABLE_LOGGING_CMD", "1"),
    ("AMD_SERIALIZE_KERNEL", "3"),
];

/// MIOpen's solver families that can apply on gfx101x, each switched off by
/// `MIOPEN_DEBUG_CONV_<VAR>=0`: (id, VAR, name).
pub const FAMILIES: [(&str, &str, &str); 3] = [
    ("direct", "DIRECT", "direct"),
    ("gemm", "GEMM", "GEMM"),
    ("winograd", "WINOGRAD", "Winograd"),
];

/// The families that cannot apply on gfx101x, and why (docs/CLI.md cites MIOpen's
/// `IsApplicable`): switching them off changes nothing there.
pub const NOT_ON_GFX101X: [(&str, &str, &str); 2] = [
    (
        "implicit-gemm",
        "IMPLICIT_GEMM",
        "no implicit-GEMM solver of MIOpen applies on gfx1010/1011/1012: the xdlops ones need \
         gfx908, gfx90a or gfx94x, the others gfx900/906 or gfx103x (IsXdlopsSupport, \
         IsComposableKernelSupportedHardware)",
    ),
    (
        "fft",
        "FFT",
        "MIOpen's FFT solver applies only to float32 5x5 convolutions, pad 2, stride 1, on \
         28, 27, 14 or 7 pixel inputs, never to weight gradients (fft.cpp, IsApplicable): not \
         tried on its own; a fault in it is named by the log like any other",
    ),
];

impl Arm {
    /// An arm that changes `changes` (the module's mode: as given).
    pub fn new(
        id: impl Into<String>,
        step: &'static str,
        what: impl Into<String>,
        changes: Changes,
    ) -> Arm {
        Arm {
            id: id.into(),
            step,
            what: what.into(),
            changes,
            diagnostics: Vec::new(),
            skipped: None,
        }
    }

    /// The changes of `base` with `name=value` set (replacing a value of `name` there).
    pub fn set(base: &Changes, name: &str, value: &str) -> Changes {
        let mut c = base.clone();
        c.set.retain(|(k, _)| k != name);
        c.unset.retain(|k| k != name);
        c.set.push((name.into(), value.into()));
        if name == "AMDGCN_USE_BUFFER_OPS" {
            // Triton's kernels cached under other settings would come back: caches of its own.
            c.fresh_triton = true;
        }
        if name.starts_with("MIOPEN_") {
            // MIOpen's docs: solver filters and find modes leave incomplete find-db entries;
            // a private, empty database keeps them from the owner's.
            c.fresh_miopen = true;
        }
        c
    }

    /// The changes of `base` with `name` removed from the environment.
    pub fn unset(base: &Changes, name: &str) -> Changes {
        let mut c = base.clone();
        c.set.retain(|(k, _)| k != name);
        if !c.unset.iter().any(|k| k == name) {
            c.unset.push(name.into());
        }
        c
    }
}

/// `MIOPEN_DEBUG_CONV_GEMM`: the variable that switches family `var` off.
pub fn family_variable(var: &str) -> String {
    format!("MIOPEN_DEBUG_CONV_{var}")
}

/// The baseline: the owner's environment as it is, the module's mode off (or left as it is).
pub fn baseline(what: String, mode: Option<&'static str>) -> Arm {
    Arm::new(
        "baseline",
        "baseline",
        what,
        Changes {
            mtype: mode,
            ..Changes::default()
        },
    )
}

/// The arms a gfx101x cannot need, listed so the owner sees they were left out and why.
pub fn not_applicable(base: &Changes) -> Vec<Arm> {
    NOT_ON_GFX101X
        .iter()
        .map(|(id, var, why)| {
            let v = family_variable(var);
            let mut a = Arm::new(
                format!("miopen-no-{id}"),
                "eliminate",
                format!("{v}=0"),
                Arm::set(base, &v, "0"),
            );
            a.skipped = Some((*why).to_owned());
            a
        })
        .collect()
}

/// The module's mode as a `Changes` value.
pub fn mode(m: Mode) -> Option<&'static str> {
    Some(m.name())
}
