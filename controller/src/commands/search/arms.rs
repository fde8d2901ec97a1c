//! The configurations the search tries, in order. Each arm changes one thing from the owner's
//! baseline (their environment as it is, MTYPE off) and says what; combinations come only
//! after every single change failed. Names and meanings of MIOpen's variables are MIOpen's
//! (docs/CLI.md, search, cites the source).

use rdna1_mtype_shared::policy::Mode;
use serde::Serialize;

use crate::runner::changes::Changes;

/// One configuration the search tries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Arm {
    /// Stable name: `baseline`, `mtype-enforce`, `miopen-no-winograd`, `override-10.1.0`, ...
    pub id: String,
    /// What it changes, in words.
    pub what: String,
    #[serde(flatten)]
    pub changes: Changes,
    /// Why it is not run, when it is not.
    pub skipped: Option<String>,
}

/// MIOpen's solver families, each switched off by `MIOPEN_DEBUG_CONV_<NAME>=0`.
pub const FAMILIES: [(&str, &str, &str); 5] = [
    ("direct", "DIRECT", "direct"),
    ("implicit-gemm", "IMPLICIT_GEMM", "implicit GEMM"),
    ("gemm", "GEMM", "GEMM"),
    ("winograd", "WINOGRAD", "Winograd"),
    ("fft", "FFT", "FFT"),
];

/// What the plan is made from.
#[derive(Clone, Debug, Default)]
pub struct Situation {
    /// Why the module's arms cannot run (not loaded, not root, ...), or None if they can.
    pub no_module: Option<String>,
    /// The module's mode, left as it is, when the search cannot set it (None: no module).
    pub mode_now: Option<&'static str>,
    /// HSA_OVERRIDE_GFX_VERSION in the owner's environment.
    pub override_now: Option<String>,
    /// The override worth trying (never a foreign ISA): `Some("10.1.0")` on a gfx1011/gfx1012.
    pub override_advised: Option<String>,
    /// Why MIOpen cannot be bypassed (rdna1ctl's in-process check is not installed), or None.
    pub no_bypass: Option<String>,
}

impl Arm {
    fn new(id: impl Into<String>, what: impl Into<String>) -> Arm {
        Arm {
            id: id.into(),
            what: what.into(),
            changes: Changes {
                mtype: Some(Mode::Off.name()),
                ..Changes::default()
            },
            skipped: None,
        }
    }

    /// The arm with `other`'s changes added (a combination).
    fn and(&self, other: &Arm) -> Arm {
        let mut a = self.clone();
        a.id = format!("{}+{}", self.id, other.id);
        a.what = format!("{}, and {}", self.what, other.what);
        a.changes.set.extend(other.changes.set.iter().cloned());
        a.changes.unset.extend(other.changes.unset.iter().cloned());
        if other.changes.mtype != Some(Mode::Off.name()) {
            a.changes.mtype = other.changes.mtype;
        }
        a.changes.fresh_miopen |= other.changes.fresh_miopen;
        a.changes.miopen_bypassed |= other.changes.miopen_bypassed;
        a
    }
}

/// The arms, in the order they run: the baseline, the module's modes, the override, MIOpen's
/// cache, find modes and solver families, MIOpen bypassed; then combinations of the override
/// fix (if any) and of MTYPE enforce with each MIOpen arm.
pub fn plan(s: &Situation) -> Vec<Arm> {
    let mut single = vec![Arm::new(
        "baseline",
        match (&s.no_module, s.mode_now) {
            (None, _) => "nothing: your environment as it is, MTYPE off".to_owned(),
            (Some(_), Some(m)) => {
                format!("nothing: your environment as it is, rdna1_mtype left in mode {m}")
            }
            (Some(_), None) => "nothing: your environment as it is (no rdna1_mtype)".to_owned(),
        },
    )];
    for mode in [Mode::Audit, Mode::Enforce] {
        let mut a = Arm::new(
            format!("mtype-{}", mode.name()),
            match mode {
                Mode::Enforce => "rdna1_mtype in mode enforce (MTYPE_NC written)",
                _ => "rdna1_mtype in mode audit (counts what enforce would change, writes the same PTEs as off)",
            },
        );
        a.changes.mtype = Some(mode.name());
        single.push(a);
    }
    let mut override_fix = None;
    if let Some(now) = &s.override_now
        && s.override_advised.as_deref() != Some(now.as_str())
    {
        let mut a = Arm::new(
            "override-unset",
            format!(
                "HSA_OVERRIDE_GFX_VERSION={now} removed: ROCm runs code for the GPU's own target"
            ),
        );
        a.changes.unset.push("HSA_OVERRIDE_GFX_VERSION".into());
        if s.override_advised.is_none() {
            override_fix = Some(a.clone());
        }
        single.push(a);
    }
    if let Some(v) = &s.override_advised
        && s.override_now.as_deref() != Some(v.as_str())
    {
        let mut a = Arm::new(
            format!("override-{v}"),
            format!("HSA_OVERRIDE_GFX_VERSION={v}: gfx1010 code, a subset of this gfx1011/gfx1012's ISA (doctor's fix when the libraries have gfx1010 code and none of the GPU's own)"),
        );
        a.changes
            .set
            .push(("HSA_OVERRIDE_GFX_VERSION".into(), v.clone()));
        override_fix = Some(a.clone());
        single.push(a);
    }
    let mut miopen = Vec::new();
    let mut fresh = Arm::new(
        "miopen-fresh-cache",
        "a private, empty MIOpen kernel cache and user database (stale kernels cannot be reused)",
    );
    fresh.changes.fresh_miopen = true;
    miopen.push(fresh);
    for (id, value) in [("normal", "NORMAL"), ("fast", "FAST")] {
        let mut a = Arm::new(
            format!("miopen-find-{id}"),
            format!("MIOPEN_FIND_MODE={value} (default DYNAMIC_HYBRID), with a private, empty MIOpen database"),
        );
        a.changes
            .set
            .push(("MIOPEN_FIND_MODE".into(), value.into()));
        a.changes.fresh_miopen = true;
        miopen.push(a);
    }
    for (id, var, name) in FAMILIES {
        let mut a = Arm::new(
            format!("miopen-no-{id}"),
            format!("MIOpen's {name} solvers off (MIOPEN_DEBUG_CONV_{var}=0), with a private, empty MIOpen database (MIOpen's docs: solver filters leave incomplete find-db entries)"),
        );
        a.changes
            .set
            .push((format!("MIOPEN_DEBUG_CONV_{var}"), "0".into()));
        a.changes.fresh_miopen = true;
        miopen.push(a);
    }
    let mut bypass = Arm::new(
        "miopen-bypassed",
        "MIOpen bypassed: PyTorch's own GPU convolution (torch.backends.cudnn.enabled = False; Python commands only)",
    );
    bypass.changes.miopen_bypassed = true;
    miopen.push(bypass);
    single.extend(miopen.iter().cloned());

    let mut combos = Vec::new();
    if let Some(fix) = &override_fix {
        combos.extend(miopen.iter().map(|m| fix.and(m)));
    }
    let enforce = single.iter().find(|a| a.id == "mtype-enforce").cloned();
    if let Some(e) = enforce {
        combos.extend(miopen.iter().map(|m| e.and(m)));
    }
    let mut all: Vec<Arm> = single.into_iter().chain(combos).collect();
    for a in &mut all {
        if a.changes.mtype != Some(Mode::Off.name())
            && let Some(why) = &s.no_module
        {
            a.skipped = Some(format!("needs rdna1_mtype: {why}"));
        }
        if a.changes.miopen_bypassed
            && a.skipped.is_none()
            && let Some(why) = &s.no_bypass
        {
            a.skipped = Some(why.clone());
        }
        if s.no_module.is_some() && a.changes.mtype == Some(Mode::Off.name()) {
            // Nothing sets a mode: the run has whatever is in force.
            a.changes.mtype = s.mode_now;
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(arms: &[Arm]) -> Vec<&str> {
        arms.iter().map(|a| a.id.as_str()).collect()
    }

    #[test]
    fn single_changes_first_then_combinations() {
        let arms = plan(&Situation::default());
        let ids = ids(&arms);
        assert_eq!(
            &ids[..13],
            [
                "baseline",
                "mtype-audit",
                "mtype-enforce",
                "miopen-fresh-cache",
                "miopen-find-normal",
                "miopen-find-fast",
                "miopen-no-direct",
                "miopen-no-implicit-gemm",
                "miopen-no-gemm",
                "miopen-no-winograd",
                "miopen-no-fft",
                "miopen-bypassed",
                "mtype-enforce+miopen-fresh-cache",
            ]
        );
        let w = arms.iter().find(|a| a.id == "miopen-no-winograd").unwrap();
        assert_eq!(
            w.changes.set,
            [("MIOPEN_DEBUG_CONV_WINOGRAD".into(), "0".into())]
        );
        assert!(w.changes.fresh_miopen && w.changes.mtype == Some("off"));
        let c = arms
            .iter()
            .find(|a| a.id == "mtype-enforce+miopen-bypassed")
            .unwrap();
        assert!(c.changes.miopen_bypassed && c.changes.mtype == Some("enforce"));
    }

    #[test]
    fn the_override_arms_follow_doctor_and_never_propose_a_foreign_isa() {
        // 10.3.0 set on a gfx1012 with gfx1010 code: unset it, or set 10.1.0.
        let s = Situation {
            override_now: Some("10.3.0".into()),
            override_advised: Some("10.1.0".into()),
            ..Situation::default()
        };
        let arms = plan(&s);
        let unset = arms.iter().find(|a| a.id == "override-unset").unwrap();
        assert_eq!(unset.changes.unset, ["HSA_OVERRIDE_GFX_VERSION"]);
        let set = arms.iter().find(|a| a.id == "override-10.1.0").unwrap();
        assert_eq!(
            set.changes.set,
            [("HSA_OVERRIDE_GFX_VERSION".into(), "10.1.0".into())]
        );
        assert!(ids(&arms).contains(&"override-10.1.0+miopen-no-winograd"));
        assert!(arms
            .iter()
            .all(|a| a.changes.set.iter().all(|(_, v)| v != "10.3.0")));
        // Already 10.1.0: no override arm.
        let s = Situation {
            override_now: Some("10.1.0".into()),
            override_advised: Some("10.1.0".into()),
            ..Situation::default()
        };
        assert!(!ids(&plan(&s)).iter().any(|i| i.starts_with("override")));
    }

    #[test]
    fn without_the_check_installed_the_bypass_is_skipped_and_says_why() {
        let s = Situation {
            no_bypass: Some("rdna1ctl's python/sitecustomize.py is not installed".into()),
            ..Situation::default()
        };
        for a in plan(&s) {
            assert_eq!(
                a.skipped.is_some(),
                a.changes.miopen_bypassed,
                "{}: {:?}",
                a.id,
                a.skipped
            );
        }
    }

    #[test]
    fn without_the_module_its_arms_are_skipped_and_say_why() {
        let s = Situation {
            no_module: Some("rdna1_mtype is not loaded".into()),
            ..Situation::default()
        };
        let arms = plan(&s);
        for a in &arms {
            if a.id.starts_with("mtype-") {
                assert!(
                    a.skipped.as_deref().unwrap().contains("not loaded"),
                    "{a:?}"
                );
            } else {
                assert!(a.skipped.is_none() && a.changes.mtype.is_none(), "{a:?}");
            }
        }
    }
}
