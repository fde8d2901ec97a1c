//! Whether the module protects a GPU (forces NC in its mappings), and if not, every reason why.
//!
//! Scope membership is the shared crate's `Scope::contains`, the same test `decide()` makes on
//! every hooked call, so status cannot disagree with the module about which devices it touches.

use rdna1_mtype_shared::bo::LayoutStatus;
use rdna1_mtype_shared::devices::PCI_VENDOR_AMD;
use rdna1_mtype_shared::pci::DeviceId;
use rdna1_mtype_shared::policy::{Mode, Scope, VmScope};

use crate::gpus::Gpu;
use crate::module::params::{LoadedModule, ModuleState};

/// One reason the module leaves a GPU's mappings as amdgpu computed them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    ModuleNotLoaded,
    /// The hook is not registered; `amdgpu_bound` says whether some GPU is on amdgpu (then
    /// amdgpu is loaded and arming failed, rather than not happened yet).
    NotArmed {
        amdgpu_bound: bool,
    },
    ModeOff,
    ModeAudit,
    OutOfScope {
        rdna1: bool,
        scope: Scope,
    },
    NotOnAmdgpu {
        driver: Option<String>,
    },
    LayoutUnset,
}

/// `reason_codes`' values: [`Reason::code`] of one reason of each kind.
impl crate::output::JsonNames for Reason {
    fn every() -> Vec<Self> {
        // One of each variant; the test `every_reason_kind_has_a_code_in_the_schema` fails when a
        // variant is missing here.
        vec![
            Reason::ModuleNotLoaded,
            Reason::NotArmed {
                amdgpu_bound: false,
            },
            Reason::ModeOff,
            Reason::ModeAudit,
            Reason::OutOfScope {
                rdna1: true,
                scope: Scope::Rdna1,
            },
            Reason::NotOnAmdgpu { driver: None },
            Reason::LayoutUnset,
        ]
    }
    fn json_name(&self) -> &'static str {
        self.code()
    }
}

impl Reason {
    /// Stable identifier for scripts (`--json` `reason_codes`).
    pub fn code(&self) -> &'static str {
        match self {
            Reason::ModuleNotLoaded => "module_not_loaded",
            Reason::NotArmed { .. } => "not_armed",
            Reason::ModeOff => "mode_off",
            Reason::ModeAudit => "mode_audit",
            Reason::OutOfScope { .. } => "out_of_scope",
            Reason::NotOnAmdgpu { .. } => "not_on_amdgpu",
            Reason::LayoutUnset => "layout_unset",
        }
    }

    /// What is wrong, in words.
    pub fn what(&self) -> String {
        match self {
            Reason::ModuleNotLoaded => "rdna1_mtype is not loaded".into(),
            Reason::NotArmed {
                amdgpu_bound: false,
            } => "the hook is not armed: amdgpu is not loaded, waiting for amdgpu to arm".into(),
            Reason::NotArmed { amdgpu_bound: true } => {
                "the hook is not armed although amdgpu is loaded".into()
            }
            Reason::ModeOff => "mode is off".into(),
            Reason::ModeAudit => {
                "mode is audit: it counts what enforce would change and changes nothing".into()
            }
            Reason::OutOfScope { rdna1: true, scope } => format!("out of scope {scope}"),
            Reason::OutOfScope {
                rdna1: false,
                scope,
            } => format!("not RDNA1 and out of scope {scope}: rdna1_mtype never modifies it"),
            Reason::NotOnAmdgpu { driver: Some(d) } => {
                format!("bound to {d}, not amdgpu: the hook only sees amdgpu's mappings")
            }
            Reason::NotOnAmdgpu { driver: None } => {
                "no driver bound: the hook only sees amdgpu's mappings".into()
            }
            Reason::LayoutUnset => {
                "amdgpu_bo layout unset: no BO mapping is changed, only SVM ranges".into()
            }
        }
    }

    /// The one fix for it, where there is something to do: status and doctor both print this.
    pub fn fix(&self) -> Option<&'static str> {
        match self {
            Reason::ModuleNotLoaded => Some("sudo modprobe rdna1_mtype mode=enforce"),
            Reason::NotArmed {
                amdgpu_bound: false,
            } => Some("sudo modprobe amdgpu"),
            Reason::NotArmed { amdgpu_bound: true } => Some(
                "see dmesg (`dmesg | grep rdna1_mtype`, or arm_error in `rdna1ctl status`); \
                 reload: sudo modprobe -r rdna1_mtype && sudo modprobe rdna1_mtype",
            ),
            Reason::ModeOff => Some("sudo rdna1ctl set --mode enforce"),
            Reason::OutOfScope { rdna1: true, .. } => {
                Some("sudo rdna1ctl set --scope rdna1, or add its address")
            }
            Reason::LayoutUnset => Some(
                "sudo rdna1ctl apply (config layout = \"auto\"), or sudo rdna1ctl layout --apply",
            ),
            Reason::ModeAudit
            | Reason::OutOfScope { rdna1: false, .. }
            | Reason::NotOnAmdgpu { .. } => None,
        }
    }

    /// The reason in words, with what to do in brackets where there is something to do.
    pub fn text(&self) -> String {
        match self.fix() {
            Some(fix) => format!("{} ({fix})", self.what()),
            None => self.what(),
        }
    }
}

/// The reasons that come from the module alone, the same for every GPU, in the order `judge`
/// gives them: not loaded; or not armed, mode, layout. `amdgpu_loaded` as
/// `gpus::amdgpu_loaded` answers it.
pub fn module_reasons(module: &ModuleState, amdgpu_loaded: bool) -> Vec<Reason> {
    let ModuleState::Loaded(m) = module else {
        return vec![Reason::ModuleNotLoaded];
    };
    [
        armed_reason(m, amdgpu_loaded),
        mode_reason(m.mode),
        layout_reason(m),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What status concludes about one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the module's scope covers the GPU; `None` when the module is not loaded.
    pub in_scope: Option<bool>,
    /// Empty if and only if the GPU is protected.
    pub reasons: Vec<Reason>,
    /// Which VMs the protection covers (the module's VM scope); `None` when not loaded.
    pub vm_scope: Option<VmScope>,
}

impl Verdict {
    pub fn protected(&self) -> bool {
        self.reasons.is_empty()
    }

    /// Which VMs are protected, if the GPU is: `compute` (ROCm/HIP; graphics clients are
    /// left as amdgpu maps them) or `all`.
    pub fn protected_vms(&self) -> Option<VmScope> {
        self.vm_scope.filter(|_| self.protected())
    }

    /// `protected (compute VMs)`, `protected (all VMs: ...)` or `NOT protected: <reasons>`.
    pub fn line(&self) -> String {
        match self.protected_vms() {
            Some(VmScope::Compute) => return "protected (compute VMs)".into(),
            Some(VmScope::All) => {
                return "protected (all VMs: graphics clients are changed too)".into();
            }
            None => {}
        }
        // A GPU the module leaves alone by design (not RDNA1, outside the scope): the other
        // reasons (mode, hook) do not concern it, and "NOT protected" would read as a fault.
        if let Some(r) = self
            .reasons
            .iter()
            .find(|r| matches!(r, Reason::OutOfScope { rdna1: false, .. }))
        {
            return format!("left alone: {}", r.text());
        }
        let why: Vec<String> = self.reasons.iter().map(Reason::text).collect();
        format!("NOT protected: {}", why.join("; "))
    }
}

/// Judges `gpu` under the module's state; `amdgpu_bound` says whether any GPU is bound to
/// amdgpu (so amdgpu is loaded).
pub fn judge(module: &ModuleState, gpu: &Gpu, amdgpu_bound: bool) -> Verdict {
    let on_amdgpu = gpu.driver.as_deref() == Some("amdgpu");
    let driver = (!on_amdgpu).then(|| Reason::NotOnAmdgpu {
        driver: gpu.driver.clone(),
    });
    let ModuleState::Loaded(m) = module else {
        return Verdict {
            in_scope: None,
            reasons: [Some(Reason::ModuleNotLoaded), driver]
                .into_iter()
                .flatten()
                .collect(),
            vm_scope: None,
        };
    };
    let in_scope = m.scope.contains(&DeviceId {
        addr: gpu.pci_addr,
        vendor: PCI_VENDOR_AMD,
        device: gpu.device_id,
    });
    let reasons = [
        armed_reason(m, amdgpu_bound),
        mode_reason(m.mode),
        (!in_scope).then_some(Reason::OutOfScope {
            rdna1: gpu.rdna1.is_some(),
            scope: m.scope,
        }),
        driver,
        layout_reason(m),
    ];
    Verdict {
        in_scope: Some(in_scope),
        reasons: reasons.into_iter().flatten().collect(),
        vm_scope: Some(m.vm_scope),
    }
}

fn armed_reason(m: &LoadedModule, amdgpu_loaded: bool) -> Option<Reason> {
    (!m.armed).then_some(Reason::NotArmed {
        amdgpu_bound: amdgpu_loaded,
    })
}

fn mode_reason(mode: Mode) -> Option<Reason> {
    match mode {
        Mode::Off => Some(Reason::ModeOff),
        Mode::Audit => Some(Reason::ModeAudit),
        Mode::Enforce => None,
    }
}

/// The module classifies BOs only with a layout (`ok` and a value); without one it leaves
/// every BO alone. (A BO whose fields break an invariant is unknown for that call only.)
fn layout_reason(m: &LoadedModule) -> Option<Reason> {
    match (m.bo_layout_status, m.bo_layout) {
        (LayoutStatus::Ok, Some(_)) => None,
        _ => Some(Reason::LayoutUnset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpus::tests::gpu;
    use rdna1_mtype_shared::devices::Rdna1Chip;

    fn enforcing(scope: &str) -> LoadedModule {
        LoadedModule::armed_for_tests(Mode::Enforce, scope)
    }

    fn codes(v: &Verdict) -> Vec<&'static str> {
        v.reasons.iter().map(Reason::code).collect()
    }

    #[test]
    fn every_reason_kind_has_a_code_in_the_schema() {
        use crate::output::JsonNames;
        // A new variant fails to compile here: give it the next number, raise KINDS, and add
        // one of it to `Reason::every`.
        fn kind(r: &Reason) -> usize {
            match r {
                Reason::ModuleNotLoaded => 0,
                Reason::NotArmed { .. } => 1,
                Reason::ModeOff => 2,
                Reason::ModeAudit => 3,
                Reason::OutOfScope { .. } => 4,
                Reason::NotOnAmdgpu { .. } => 5,
                Reason::LayoutUnset => 6,
            }
        }
        const KINDS: usize = 7;
        let every = Reason::every();
        let kinds: std::collections::BTreeSet<usize> = every.iter().map(kind).collect();
        assert_eq!(kinds, (0..KINDS).collect(), "Reason::every lacks a kind");
        let codes: std::collections::BTreeSet<&str> = every.iter().map(Reason::code).collect();
        assert_eq!(codes.len(), KINDS, "one code per kind");
    }

    const RX5700XT: u16 = 0x731f;
    const RX6900XT: u16 = 0x73bf;

    #[test]
    fn rdna1_on_amdgpu_under_full_enforce_is_protected() {
        let g = gpu(3, RX5700XT, Some("amdgpu"));
        assert_eq!(g.rdna1, Some(Rdna1Chip::Navi10));
        let v = judge(&ModuleState::Loaded(enforcing("rdna1")), &g, true);
        assert_eq!(v.in_scope, Some(true));
        assert!(v.protected(), "{v:?}");
        assert_eq!(v.line(), "protected (compute VMs)");
        assert_eq!(v.protected_vms(), Some(VmScope::Compute));
    }

    #[test]
    fn vm_scope_all_says_graphics_clients_are_changed_too() {
        let g = gpu(3, RX5700XT, Some("amdgpu"));
        let mut m = enforcing("rdna1");
        m.vm_scope = VmScope::All;
        let v = judge(&ModuleState::Loaded(m), &g, true);
        assert_eq!(
            v.line(),
            "protected (all VMs: graphics clients are changed too)"
        );
        let mut m = enforcing("rdna1");
        m.mode = Mode::Off;
        let v = judge(&ModuleState::Loaded(m), &g, true);
        assert_eq!(v.protected_vms(), None, "not protected: no VMs");
    }

    #[test]
    fn not_loaded_says_so_and_keeps_device_level_reasons() {
        let v = judge(
            &ModuleState::NotLoaded,
            &gpu(3, RX5700XT, Some("amdgpu")),
            true,
        );
        assert_eq!((v.in_scope, codes(&v)), (None, vec!["module_not_loaded"]));
        let v = judge(&ModuleState::NotLoaded, &gpu(3, RX5700XT, None), false);
        assert_eq!(codes(&v), ["module_not_loaded", "not_on_amdgpu"]);
        assert!(v.line().contains("no driver bound"), "{}", v.line());
    }

    #[test]
    fn each_module_setting_is_a_reason() {
        let g = gpu(3, RX5700XT, Some("amdgpu"));
        let judge_with = |f: &dyn Fn(&mut LoadedModule)| {
            let mut m = enforcing("rdna1");
            f(&mut m);
            codes(&judge(&ModuleState::Loaded(m), &g, true))
        };
        assert_eq!(judge_with(&|m| m.armed = false), ["not_armed"]);
        assert_eq!(judge_with(&|m| m.mode = Mode::Off), ["mode_off"]);
        assert_eq!(judge_with(&|m| m.mode = Mode::Audit), ["mode_audit"]);
        assert_eq!(
            judge_with(&|m| {
                m.bo_layout = None;
                m.bo_layout_status = LayoutStatus::Unset;
            }),
            ["layout_unset"]
        );
        assert_eq!(
            judge_with(&|m| m.scope = Scope::parse(b"0000:04:00.0").unwrap()),
            ["out_of_scope"]
        );
    }

    #[test]
    fn scope_decides_as_the_module_does() {
        let rdna2 = gpu(0x0c, RX6900XT, Some("amdgpu"));
        let m = ModuleState::Loaded(enforcing("rdna1"));
        let v = judge(&m, &rdna2, true);
        assert_eq!(v.in_scope, Some(false));
        assert!(
            v.line().contains("not RDNA1 and out of scope rdna1"),
            "{}",
            v.line()
        );
        let v = judge(&ModuleState::Loaded(enforcing("gfx10")), &rdna2, true);
        assert_eq!(v.in_scope, Some(true), "gfx10 covers RDNA2");
        let listed = ModuleState::Loaded(enforcing("0000:0c:00.0"));
        assert_eq!(judge(&listed, &rdna2, true).in_scope, Some(true));
        assert_eq!(
            judge(&listed, &gpu(3, RX5700XT, Some("amdgpu")), true).in_scope,
            Some(false),
            "an RDNA1 GPU not in an explicit list is out of scope"
        );
    }

    #[test]
    fn reasons_accumulate_in_a_fixed_order() {
        let mut m = enforcing("0000:04:00.0");
        m.mode = Mode::Audit;
        m.armed = false;
        m.bo_layout = None;
        m.bo_layout_status = LayoutStatus::Unset;
        let v = judge(
            &ModuleState::Loaded(m),
            &gpu(3, RX5700XT, Some("vfio-pci")),
            false,
        );
        assert_eq!(
            codes(&v),
            [
                "not_armed",
                "mode_audit",
                "out_of_scope",
                "not_on_amdgpu",
                "layout_unset"
            ]
        );
        let line = v.line();
        assert!(
            line.starts_with("NOT protected: the hook is not armed: amdgpu is not loaded"),
            "{line}"
        );
        assert!(line.contains("; bound to vfio-pci, not amdgpu"), "{line}");
    }

    #[test]
    fn not_armed_while_amdgpu_drives_a_gpu_points_at_dmesg() {
        let mut m = enforcing("rdna1");
        m.armed = false;
        let v = judge(
            &ModuleState::Loaded(m),
            &gpu(3, RX5700XT, Some("amdgpu")),
            true,
        );
        assert!(v.line().contains("see dmesg"), "{}", v.line());
    }
}
