//! What the search runs next, from what the runs so far showed: the plan in the order the
//! evidence gives (docs/CLI.md, search, cites each source), then, for the configuration that
//! passed, what is kept.
//!
//! 1. The baseline: the owner's environment as it is. A pass ends the search: nothing to keep.
//! 2. Prerequisites, kept for every later step (and dropped at the end if not needed): only
//!    the RDNA1 GPU visible on a host with several; the override fix (a foreign ISA removed,
//!    or gfx1010 code on a gfx1011/gfx1012).
//! 3. Where the in-process check named them (or saw them run when a failure named nothing),
//!    the families beyond MIOpen, in the order the evidence gives: compiled code (Triton's
//!    buffer ops off with caches of its own, unsloth #11614; then torch.compile off, a
//!    diagnostic), attention (each SDPA kernel off in turn, the math kernel last), GEMMs
//!    (rocBLAS rather than hipBLASLt), bfloat16 (answered with float16, then float32: gfx10
//!    has no bfloat16 arithmetic, unsloth #7682). A program whose baseline ran no convolution or
//!    batch norm on the GPU skips MIOpen's steps (3 to 6 below): MIOpen computes nothing of it.
//! 3. MIOpen's find mode FAST: no candidates executed in find.
//! 4. Elimination: the failing configuration run with MIOpen's log; the solver running at the
//!    fault switched off by its own variable (its family where it has none), cumulatively,
//!    until it passes or the log names nothing (then pairs of families).
//! 5. MIOpen's build filters: its GCN assembly kernels, then its OpenCL convolutions off.
//! 6. MIOpen bypassed for the failing layer kinds only (BatchNorm training on gfx101x, or what
//!    the check named), then for everything.
//! 7. MTYPE_NC enforced by rdna1_mtype.
//!
//! A configuration that passes is kept only if it holds: two more passes, and the baseline
//! failing again (else the fault is intermittent and nothing is kept); then each of its
//! switches is dropped where the pass does not need it, and what is left passes twice more.

use std::collections::VecDeque;

use rdna1_mtype_shared::policy::Mode;

use super::arms::{self, Arm, FAMILIES};
use super::miopen_log;
use super::solvers;
use crate::runner::changes::Changes;
use crate::runner::check_facts::{CheckFacts, COMPILED};

/// Elimination runs at most (each switches one more solver off).
pub const ELIMINATION_STEPS: u32 = 8;
/// Passes a configuration needs besides the one that found it.
pub const CONFIRMATIONS: u32 = 2;

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
    /// `ROCR_VISIBLE_DEVICES` that leaves only the RDNA1 GPU visible, on a host where ROCm
    /// sees several GPUs (None: one GPU, or none found).
    pub only_rdna1: Option<String>,
}

/// What a run showed that the plan reads.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub passed: bool,
    /// Ended by a GPU fault of its own or a signal (a crash, not a wrong answer).
    pub crashed: bool,
    /// The MIOpen log lines of its standard error.
    pub miopen_log: String,
    /// The layer kinds that failed or that it died in, in the check's words ("BatchNorm2d
    /// training", "Conv2d 1x1").
    pub failing_kinds: Vec<String>,
    /// Its measured speed (the battery's median steps/s), if any.
    pub speed: Option<f64>,
    /// What the in-process check saw of the program (None: no Python process of it ran the
    /// check with torch).
    pub facts: Option<CheckFacts>,
    /// The command ran to its end (exit 0), whatever its numbers: the check saw all of it.
    pub completed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Baseline,
    Prerequisites,
    Override,
    Compiled,
    Attention,
    Gemm,
    Bf16,
    FindFast,
    Eliminate,
    Filters,
    Selective,
    Bypass,
    Mtype,
    /// Every search step done (`--all`: the best pass is settled now).
    Searched,
    Confirm,
    BaselineAgain,
    Minimize,
    ConfirmMinimal,
    Done,
}

/// A switch of a configuration, as minimization drops it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Switch {
    Set(String, String),
    Unset(String),
    Mode(&'static str),
    Bypass,
    BypassKinds,
}

impl Switch {
    fn name(&self) -> String {
        match self {
            Switch::Set(k, _) | Switch::Unset(k) => k.clone(),
            Switch::Mode(m) => format!("mtype-{m}"),
            Switch::Bypass => "miopen-bypassed".into(),
            Switch::BypassKinds => "miopen-bypassed-for".into(),
        }
    }

    fn words(&self) -> String {
        match self {
            Switch::Set(k, v) => format!("{k}={v}"),
            Switch::Unset(k) => format!("{k} unset"),
            Switch::Mode(m) => format!("rdna1_mtype in mode {m}"),
            Switch::Bypass => "MIOpen bypassed".into(),
            Switch::BypassKinds => "MIOpen bypassed for some layer kinds".into(),
        }
    }
}

/// A configuration's switches, in the order they were added.
fn switches(c: &Changes, mode_base: Option<&'static str>) -> Vec<Switch> {
    let mut v: Vec<Switch> = c
        .set
        .iter()
        .map(|(k, val)| Switch::Set(k.clone(), val.clone()))
        .collect();
    v.extend(c.unset.iter().map(|k| Switch::Unset(k.clone())));
    if let Some(m) = c.mtype.filter(|m| Some(*m) != mode_base) {
        v.push(Switch::Mode(m));
    }
    if c.miopen_bypassed {
        v.push(Switch::Bypass);
    }
    if !c.bypass_kinds.is_empty() {
        v.push(Switch::BypassKinds);
    }
    v
}

/// How many changes a configuration makes besides the mode every arm has (`mode_base`).
pub fn switch_count(c: &Changes, mode_base: Option<&'static str>) -> usize {
    switches(c, mode_base).len()
}

/// `c` without switch `s`.
fn without(c: &Changes, s: &Switch, mode_base: Option<&'static str>) -> Changes {
    let mut c = c.clone();
    match s {
        Switch::Set(k, _) => c.set.retain(|(n, _)| n != k),
        Switch::Unset(k) => c.unset.retain(|n| n != k),
        Switch::Mode(_) => c.mtype = mode_base,
        Switch::Bypass => c.miopen_bypassed = false,
        Switch::BypassKinds => c.bypass_kinds.clear(),
    }
    c.fresh_miopen = c.set.iter().any(|(k, _)| k.starts_with("MIOPEN_"));
    c.fresh_triton = c.set.iter().any(|(k, _)| k == "AMDGCN_USE_BUFFER_OPS");
    c
}

/// What became of the configuration that passed.
#[derive(Clone, Debug, Default)]
pub struct Settled {
    /// The configuration kept: it passed every time it ran, the baseline failed again, and
    /// it has no switch its pass does not need.
    pub kept: Option<Arm>,
    /// Switches dropped because the pass did not need them.
    pub dropped: Vec<String>,
    /// Configurations that passed once and then failed: not kept (`id: passed N of M`).
    pub intermittent: Vec<String>,
    /// The baseline passed when run again: the failure is intermittent, nothing is kept.
    pub baseline_intermittent: bool,
    /// A configuration that passed but whose confirmation the search did not reach.
    pub unconfirmed: Option<String>,
}

pub struct Planner {
    s: Situation,
    all: bool,
    step: Step,
    queue: VecDeque<Arm>,
    /// The owner's baseline and the prerequisites kept so far.
    base: Changes,
    /// The mode every arm has unless it sets one (off, or what is in force without the module).
    mode_base: Option<&'static str>,
    /// Elimination's switches, in order, with the solver that made each.
    eliminated: Vec<(String, String)>,
    elimination_runs: u32,
    /// The family pairs are the elimination's last resort (the log named no solver).
    pairs_queued: bool,
    /// A failure so far was a crash (a GPU fault or a signal): elimination has one to trace.
    crashed: bool,
    /// The same, before the run being learned from.
    crashed_before: bool,
    /// Layer kinds that failed anywhere, in the check's words.
    failing_kinds: Vec<String>,
    /// What the check saw in every run so far (None: it saw nothing of the program).
    facts: Option<CheckFacts>,
    /// What it saw in the baseline, and whether the baseline ran to its end (else its facts
    /// may be only the start of the program).
    baseline_facts: Option<(CheckFacts, bool)>,
    /// The arms of a step left when a pass was found: run if the pass does not hold.
    stashed: VecDeque<Arm>,
    /// Passing configurations, with their speeds (`--all`), in the order found.
    passes: Vec<(Arm, Option<f64>)>,
    /// The configuration being settled: passed, then confirmed, then reduced.
    candidate: Option<Arm>,
    /// Its passes and runs so far.
    tally: (u32, u32),
    /// Minimization: the reduced configuration so far, and the switches left to try.
    reduced: Option<Changes>,
    to_drop: Vec<Switch>,
    pub settled: Settled,
}

impl Planner {
    pub fn new(s: Situation, all: bool) -> Planner {
        let mode_base = if s.no_module.is_some() {
            s.mode_now
        } else {
            arms::mode(Mode::Off)
        };
        Planner {
            s,
            all,
            step: Step::Baseline,
            queue: VecDeque::new(),
            base: Changes {
                mtype: mode_base,
                ..Changes::default()
            },
            mode_base,
            eliminated: Vec::new(),
            elimination_runs: 0,
            pairs_queued: false,
            crashed: false,
            crashed_before: false,
            failing_kinds: Vec::new(),
            facts: None,
            baseline_facts: None,
            passes: Vec::new(),
            stashed: VecDeque::new(),
            candidate: None,
            tally: (0, 0),
            reduced: None,
            to_drop: Vec::new(),
            settled: Settled::default(),
        }
    }

    /// The next arm to run or to list as skipped; None when the plan is done.
    pub fn next(&mut self) -> Option<Arm> {
        loop {
            if let Some(a) = self.queue.pop_front() {
                return Some(a);
            }
            if self.step == Step::Done {
                return None;
            }
            self.advance();
        }
    }

    /// The steps not reached, in words (the search ended early: a bound or Ctrl-C).
    pub fn untried(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .queue
            .iter()
            .filter(|a| a.skipped.is_none())
            .map(|a| format!("{}: {}", a.id, a.what))
            .collect();
        let later: &[(Step, &str)] = &[
            (
                Step::Prerequisites,
                "the prerequisites (the override fix, one GPU visible)",
            ),
            (
                Step::Compiled,
                "Triton's buffer ops off, then torch.compile off (where compiled code failed)",
            ),
            (
                Step::Attention,
                "attention's kernels off one by one (where attention failed)",
            ),
            (Step::Gemm, "rocBLAS for GEMMs (where a GEMM failed)"),
            (
                Step::Bf16,
                "bfloat16 answered with float16 or float32 (where bfloat16 ran)",
            ),
            (Step::FindFast, "MIOpen's find mode FAST"),
            (
                Step::Eliminate,
                "switching off the MIOpen solvers that fault, one by one",
            ),
            (
                Step::Filters,
                "MIOpen's build filters (GCN assembly, OpenCL convolutions off)",
            ),
            (
                Step::Selective,
                "MIOpen bypassed for the failing layer kinds",
            ),
            (Step::Bypass, "MIOpen bypassed"),
            (Step::Mtype, "MTYPE_NC enforced"),
        ];
        if self.step <= Step::Mtype {
            v.extend(
                later
                    .iter()
                    .filter(|(s, _)| *s >= self.step)
                    .map(|(_, w)| (*w).to_owned()),
            );
        } else if self.step < Step::Done && self.candidate.is_some() {
            v.push(format!(
                "confirming and reducing {}, which passed",
                self.candidate.as_ref().map_or("", |c| c.id.as_str())
            ));
        }
        v
    }

    fn push(&mut self, mut a: Arm, skipped: Option<String>) {
        a.skipped = skipped;
        if a.skipped.is_none() && (a.changes.mtype != self.mode_base || a.step == "mtype") {
            a.skipped = self
                .s
                .no_module
                .as_ref()
                .map(|w| format!("needs rdna1_mtype: {w}"));
        }
        if a.skipped.is_none() && a.changes.in_process() {
            a.skipped = self.s.no_bypass.clone();
        }
        self.queue.push_back(a);
    }

    fn with_switches(&self) -> Changes {
        let mut c = self.base.clone();
        for (var, _) in &self.eliminated {
            c = Arm::set(&c, var, "0");
        }
        c
    }

    /// Moves to the next step and queues its arms.
    fn advance(&mut self) {
        use Step::*;
        self.step = match self.step {
            Baseline => {
                let what = match (&self.s.no_module, self.s.mode_now) {
                    (None, _) => "nothing: your environment as it is, MTYPE off".to_owned(),
                    (Some(_), Some(m)) => {
                        format!("nothing: your environment as it is, rdna1_mtype left in mode {m}")
                    }
                    (Some(_), None) => {
                        "nothing: your environment as it is (no rdna1_mtype)".to_owned()
                    }
                };
                self.push(arms::baseline(what, self.mode_base), None);
                // Run, then learn() moves on (or ends on a pass).
                Prerequisites
            }
            Prerequisites => {
                self.queue_visible();
                Override
            }
            Override => {
                // After `visible` was learned: built on what it left in the base.
                self.queue_override();
                Compiled
            }
            Compiled if self.facts.is_none() => {
                // Nothing the check saw points anywhere: one line for the four steps.
                let mut a = Arm::new(
                    "beyond-miopen",
                    "compiled",
                    "compiled code, attention, GEMMs, bfloat16",
                    self.base.clone(),
                );
                a.skipped = self.not_pointed_at(COMPILED, "");
                self.queue.push_back(a);
                FindFast
            }
            Compiled => {
                self.queue_compiled();
                Attention
            }
            Attention => {
                self.queue_attention();
                Gemm
            }
            Gemm => {
                let why = self.not_pointed_at("GEMM", "GEMM");
                self.push(
                    Arm::new(
                        "blas-rocblas",
                        "gemm",
                        "rocBLAS for every GEMM (TORCH_BLAS_PREFER_HIPBLASLT=0): PyTorch \
                         prefers hipBLASLt where its build has it for this GPU (TheRock builds \
                         none for gfx101X: there this changes nothing)",
                        Arm::set(&self.base, "TORCH_BLAS_PREFER_HIPBLASLT", "0"),
                    ),
                    why,
                );
                Bf16
            }
            Bf16 => {
                self.queue_bf16();
                FindFast
            }
            FindFast if self.no_miopen().is_some() => {
                // Listed once, with why; MIOpen's later steps are passed over with it.
                let mut a = Arm::new(
                    "miopen",
                    "find-fast",
                    "MIOpen's steps: find mode, solvers, build filters, bypass",
                    self.base.clone(),
                );
                a.skipped = self.no_miopen();
                self.queue.push_back(a);
                Mtype
            }
            FindFast => {
                let c = Arm::set(&self.base, "MIOPEN_FIND_MODE", "FAST");
                self.push(
                    Arm::new(
                        "miopen-find-fast",
                        "find-fast",
                        "MIOPEN_FIND_MODE=FAST: MIOpen picks a solver without executing the \
                         candidates (its find executes every one, so one faulty candidate kills \
                         the run)",
                        c,
                    ),
                    None,
                );
                Eliminate
            }
            Eliminate => {
                for a in arms::not_applicable(&self.base) {
                    let why = a.skipped.clone();
                    self.push(a, why);
                }
                if self.crashed {
                    self.queue_elimination();
                } else {
                    let a = Arm::new(
                        "eliminate-1",
                        "eliminate",
                        "MIOpen's solvers switched off where one faulted",
                        self.base.clone(),
                    );
                    self.push(
                        a,
                        Some(
                            "no GPU fault or crash to trace: solvers are switched off only \
                             where MIOpen's log names the one running at a fault"
                                .into(),
                        ),
                    );
                }
                Filters
            }
            Filters => {
                let c = self.with_switches();
                for (var, what) in [
                    (
                        "MIOPEN_DEBUG_GCN_ASM_KERNELS",
                        "MIOpen's GCN assembly kernels off (MIOPEN_DEBUG_GCN_ASM_KERNELS=0)",
                    ),
                    (
                        "MIOPEN_DEBUG_OPENCL_CONVOLUTIONS",
                        "MIOpen's OpenCL convolution kernels off \
                         (MIOPEN_DEBUG_OPENCL_CONVOLUTIONS=0)",
                    ),
                ] {
                    let id = format!(
                        "miopen-no-{}",
                        if var.contains("GCN") { "asm" } else { "opencl" }
                    );
                    self.push(
                        Arm::new(
                            id,
                            "filters",
                            self.plus_switches(what),
                            Arm::set(&c, var, "0"),
                        ),
                        None,
                    );
                }
                Selective
            }
            Selective => {
                let kinds = if self.failing_kinds.is_empty() {
                    vec!["BatchNorm".to_owned()]
                } else {
                    self.failing_kinds.clone()
                };
                let mut c = self.with_switches();
                c.bypass_kinds = kinds.clone();
                self.push(
                    Arm::new(
                        "miopen-bypassed-for",
                        "bypass-selective",
                        self.plus_switches(&format!(
                            "MIOpen bypassed for {} only: PyTorch's own GPU kernels there, \
                             MIOpen for the rest (Python commands only)",
                            kinds.join(", ")
                        )),
                        c,
                    ),
                    None,
                );
                Bypass
            }
            Bypass => {
                let mut c = self.base.clone();
                c.miopen_bypassed = true;
                self.push(
                    Arm::new(
                        "miopen-bypassed",
                        "bypass",
                        "MIOpen bypassed: PyTorch's own GPU convolution and batch norm \
                         (torch.backends.cudnn.enabled = False; Python commands only)",
                        c,
                    ),
                    None,
                );
                Mtype
            }
            Mtype => {
                let mut c = self.base.clone();
                c.mtype = arms::mode(Mode::Enforce);
                self.push(
                    Arm::new(
                        "mtype-enforce",
                        "mtype",
                        "rdna1_mtype in mode enforce (MTYPE_NC written)",
                        c,
                    ),
                    None,
                );
                Searched
            }
            Searched => {
                // --all: the fastest pass within noise of the best (fewest switches among
                // those) is settled now.
                match self.best_pass() {
                    Some(a) => self.settle(a),
                    None => Done,
                }
            }
            Confirm => {
                if self.tally.1 > self.tally.0 {
                    // Failed once: not kept; the search goes on where it was.
                    Done
                } else {
                    BaselineAgain
                }
            }
            BaselineAgain | Minimize | ConfirmMinimal | Done => Done,
        };
    }

    /// Why MIOpen's steps are not run: the baseline ran to its end (exit 0: what failed was
    /// its numbers) with the check, and no convolution or batch norm of it (nor of any run
    /// since) ran on the GPU.
    fn no_miopen(&self) -> Option<String> {
        let (f, completed) = self.baseline_facts.as_ref()?;
        let all = self.facts.as_ref()?;
        let miopen = |f: &CheckFacts| f.ran("convolution") || f.ran("batch/instance norm");
        (*completed && !f.families.is_empty() && !miopen(f) && !miopen(all)).then(|| {
            "the check saw no convolution or batch norm of the program on the GPU: MIOpen \
             computes nothing of it"
                .to_owned()
        })
    }

    /// Why the arms for `family` (`words` in the owner's words) are not run, or None when the
    /// runs so far point at it: it failed, or it ran and a failure named no family.
    fn not_pointed_at(&self, family: &str, words: &str) -> Option<String> {
        let Some(f) = &self.facts else {
            return Some(
                "the check saw none of the program's ops (not a Python command, or an \
                 interpreter that does not load it): nothing points at these"
                    .into(),
            );
        };
        if f.failed(family) {
            return None;
        }
        if !f.ran(family) {
            return Some(format!("the check saw no {words} run on the GPU"));
        }
        if f.failing.is_empty() {
            return None;
        }
        Some(format!(
            "the {words} the check saw were right; what failed: {}",
            f.failing.join(", ")
        ))
    }

    /// One arm for a step none of whose arms runs, saying why (`what`: the step in words).
    fn skip_step(&mut self, id: &str, step: &'static str, what: &str, why: String) {
        let mut a = Arm::new(id, step, what, self.base.clone());
        a.skipped = Some(why);
        self.queue.push_back(a);
    }

    fn queue_compiled(&mut self) {
        let why = self.not_pointed_at(COMPILED, "compiled graphs (torch.compile)");
        if let Some(w) = why {
            return self.skip_step(
                "compiled",
                "compiled",
                "Triton's buffer ops off, then torch.compile off",
                w,
            );
        }
        let c = Arm::set(&self.base, "AMDGCN_USE_BUFFER_OPS", "0");
        self.push(
            Arm::new(
                "triton-no-buffer-ops",
                "compiled",
                "Triton's AMD buffer ops off (AMDGCN_USE_BUFFER_OPS=0), with Triton and \
                 Inductor caches of its own: on gfx1010 they write zeros with no error \
                 (unsloth #11614), and a cache made before brings the broken kernels back",
                c,
            ),
            why.clone(),
        );
        self.push(
            Arm::new(
                "compile-off",
                "compiled",
                "torch.compile off (TORCHDYNAMO_DISABLE=1), a diagnostic: if only this passes, \
                 the compiled kernels are what is wrong; the program runs eager, slower",
                Arm::set(&self.base, "TORCHDYNAMO_DISABLE", "1"),
            ),
            why,
        );
    }

    fn queue_attention(&mut self) {
        let why = self.not_pointed_at("attention", "attention");
        if let Some(w) = why {
            return self.skip_step(
                "attention",
                "attention",
                "attention's kernels off one by one",
                w,
            );
        }
        let mut kernels: Vec<String> = self
            .facts
            .as_ref()
            .map(|f| f.attention_kernels.clone())
            .unwrap_or_default();
        kernels.retain(|k| k != "math");
        if kernels.is_empty() {
            kernels = ["flash", "efficient", "cudnn"].map(String::from).to_vec();
        }
        for k in &kernels {
            self.push(
                Arm::new(
                    format!("sdpa-no-{k}"),
                    "attention",
                    format!(
                        "{k} attention off (RDNA1_SDPA_OFF={k}): PyTorch picks another \
                         attention kernel (Python commands only)"
                    ),
                    Arm::set(&self.base, "RDNA1_SDPA_OFF", k),
                ),
                why.clone(),
            );
        }
        self.push(
            Arm::new(
                "sdpa-math",
                "attention",
                "attention on the math kernel only (RDNA1_SDPA_OFF=flash|efficient|cudnn): \
                 GEMMs and a softmax, slower, no fused kernel (Python commands only)",
                Arm::set(&self.base, "RDNA1_SDPA_OFF", "flash|efficient|cudnn"),
            ),
            why,
        );
    }

    fn queue_bf16(&mut self) {
        let why = match &self.facts {
            None => self.not_pointed_at("", ""),
            Some(f) if !f.bf16 => Some("the check saw no bfloat16 op run on the GPU".into()),
            Some(_) => None,
        };
        if let Some(w) = why {
            return self.skip_step(
                "bf16",
                "bf16",
                "bfloat16 answered with float16 or float32",
                w,
            );
        }
        for (t, what) in [
            (
                "float16",
                "bfloat16 answered with float16 (RDNA1_BF16_AS=float16): gfx10 has no \
                 bfloat16 arithmetic, PyTorch emulates it (unsloth #7682); \
                 torch.cuda.is_bf16_supported() then says False and a bfloat16 autocast \
                 becomes a float16 one (Python commands only)",
            ),
            (
                "float32",
                "bfloat16 answered with float32 (RDNA1_BF16_AS=float32): a bfloat16 autocast \
                 is left off, the program computes in float32 (Python commands only)",
            ),
        ] {
            self.push(
                Arm::new(
                    format!("bf16-as-{t}"),
                    "bf16",
                    what,
                    Arm::set(&self.base, "RDNA1_BF16_AS", t),
                ),
                why.clone(),
            );
        }
    }

    /// The winner's `what`, and the elimination's switches when it carries them.
    fn plus_switches(&self, what: &str) -> String {
        if self.eliminated.is_empty() {
            what.to_owned()
        } else {
            let v: Vec<String> = self
                .eliminated
                .iter()
                .map(|(k, _)| format!("{k}=0"))
                .collect();
            format!("{what}, with {}", v.join(", "))
        }
    }

    fn queue_visible(&mut self) {
        if let Some(v) = self.s.only_rdna1.clone() {
            let c = Arm::set(&self.base, "ROCR_VISIBLE_DEVICES", &v);
            self.push(
                Arm::new(
                    "only-rdna1-visible",
                    "visible",
                    format!(
                        "ROCR_VISIBLE_DEVICES={v}: only the RDNA1 GPU visible to ROCm (this \
                         host has several)"
                    ),
                    c,
                ),
                None,
            );
        }
    }

    fn queue_override(&mut self) {
        let now = self.s.override_now.clone();
        let advised = self.s.override_advised.clone();
        if let Some(v) = &advised
            && now.as_deref() != Some(v.as_str())
        {
            let c = Arm::set(&self.base, "HSA_OVERRIDE_GFX_VERSION", v);
            self.push(
                Arm::new(
                    format!("override-{v}"),
                    "override",
                    format!(
                        "HSA_OVERRIDE_GFX_VERSION={v}: gfx1010 code, a subset of this \
                         gfx1011/gfx1012's ISA (doctor's fix when the libraries have gfx1010 \
                         code and none of the GPU's own)"
                    ),
                    c,
                ),
                None,
            );
        } else if let Some(n) = &now
            && advised.is_none()
        {
            let c = Arm::unset(&self.base, "HSA_OVERRIDE_GFX_VERSION");
            self.push(
                Arm::new(
                    "override-unset",
                    "override",
                    format!(
                        "HSA_OVERRIDE_GFX_VERSION={n} removed: ROCm runs code for the GPU's own \
                         target"
                    ),
                    c,
                ),
                None,
            );
        }
    }

    /// Queues the next elimination run: the failing configuration with every switch so far,
    /// with MIOpen's log.
    fn queue_elimination(&mut self) {
        self.elimination_runs += 1;
        let n = self.elimination_runs;
        let c = self.with_switches();
        let what = if self.eliminated.is_empty() {
            "the failing configuration again, with MIOpen's log and serialized kernels: which \
             solver runs at the fault"
                .to_owned()
        } else {
            let v: Vec<String> = self
                .eliminated
                .iter()
                .map(|(k, s)| format!("{k}=0 ({s})"))
                .collect();
            format!("MIOpen's solvers that faulted off: {}", v.join(", "))
        };
        let mut a = Arm::new(format!("eliminate-{n}"), "eliminate", what, c);
        a.diagnostics = arms::DIAGNOSTICS
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.push(a, None);
    }

    /// Where the log names no solver: the families that can apply, two at a time.
    fn queue_pairs(&mut self) {
        self.pairs_queued = true;
        let c = self.with_switches();
        for (i, (ida, va, na)) in FAMILIES.iter().enumerate() {
            for (idb, vb, nb) in &FAMILIES[i + 1..] {
                let (fa, fb) = (arms::family_variable(va), arms::family_variable(vb));
                let changes = Arm::set(&Arm::set(&c, &fa, "0"), &fb, "0");
                self.push(
                    Arm::new(
                        format!("miopen-no-{ida}+{idb}"),
                        "eliminate",
                        self.plus_switches(&format!(
                            "MIOpen's {na} and {nb} solvers off ({fa}=0, {fb}=0): the log named \
                             no solver"
                        )),
                        changes,
                    ),
                    None,
                );
            }
        }
    }

    /// What the run of `arm` showed.
    pub fn learn(&mut self, arm: &Arm, seen: &Seen) {
        self.crashed_before = self.crashed;
        self.crashed |= !seen.passed && seen.crashed;
        if let Some(f) = &seen.facts {
            self.facts.get_or_insert_with(CheckFacts::default).merge(f);
            if arm.step == "baseline" {
                self.baseline_facts = Some((f.clone(), seen.completed));
            }
        }
        for k in &seen.failing_kinds {
            if !self.failing_kinds.contains(k) {
                self.failing_kinds.push(k.clone());
            }
        }
        match arm.step {
            "confirm" | "baseline-again" | "minimize" => return self.learn_settling(arm, seen),
            _ => {}
        }
        if seen.passed {
            let mut found = arm.clone();
            found.diagnostics.clear();
            if arm.step == "baseline" {
                // Nothing to change, nothing to keep.
                self.queue.clear();
                self.step = Step::Done;
                return;
            }
            if arm.step == "eliminate" && found.changes == self.base {
                // The failing configuration passed with MIOpen's log and serialized kernels
                // alone: no switch to keep; timing is the trouble, not a solver. Said, not kept.
                self.settled.intermittent.push(format!(
                    "{}: passed with AMD_SERIALIZE_KERNEL=3 and MIOpen's log alone (a race \
                     the serialization hides), nothing to keep",
                    arm.id
                ));
                return;
            }
            // A run with serialized kernels is no measure of speed.
            let speed = seen.speed.filter(|_| arm.diagnostics.is_empty());
            self.passes.push((found.clone(), speed));
            if !self.all {
                // The rest of this step waits: it runs if the pass does not hold.
                self.stashed = std::mem::take(&mut self.queue);
                self.step = self.settle(found);
            }
            return;
        }
        match arm.step {
            // Prerequisites are kept for the steps after them (and dropped at the end where
            // the pass does not need them), unless one made a run that reached the GPU and
            // faulted there fail before it could (code for no ISA here, say).
            "visible" | "override" if !self.crashed_before || seen.crashed => {
                self.base = arm.changes.clone();
            }
            "eliminate" if arm.id.starts_with("eliminate-") => self.eliminate(seen),
            _ => {}
        }
    }

    /// One elimination run failed: switch off the solver its log names (its own variables,
    /// else its family's; the family's too when its own were set and it ran all the same), or
    /// fall back to pairs of families when the log names none.
    fn eliminate(&mut self, seen: &Seen) {
        // A failure that is no crash (an error, wrong numbers) has no fault to trace: the
        // solver the log named last did not cause it.
        if !seen.crashed {
            return;
        }
        let solver = miopen_log::running_solver(&seen.miopen_log);
        let set = |v: &String| self.eliminated.iter().any(|(k, _)| k == v);
        let next: Option<(Vec<String>, String)> = solver.as_ref().and_then(|name| {
            let own = solvers::variables_for(name);
            let family = solvers::family_for(name);
            let vars = if !own.is_empty() && !own.iter().all(set) {
                own
            } else {
                family.into_iter().filter(|v| !set(v)).collect()
            };
            (!vars.is_empty()).then(|| (vars, name.clone()))
        });
        match next {
            Some((vars, name)) if self.elimination_runs < ELIMINATION_STEPS => {
                let new: Vec<String> = vars.into_iter().filter(|v| !set(v)).collect();
                for v in new {
                    self.eliminated.push((v, name.clone()));
                }
                self.queue_elimination();
            }
            Some(_) => {}
            // No solver named, one this table cannot place, or one that ran with its
            // switches set: the families two at a time.
            None if !self.pairs_queued => self.queue_pairs(),
            None => {}
        }
    }

    /// Starts settling `a`: it must pass again.
    fn settle(&mut self, a: Arm) -> Step {
        self.tally = (1, 1);
        for i in 1..=CONFIRMATIONS {
            let mut c = a.clone();
            c.id = format!("confirm-{i}");
            c.step = "confirm";
            c.what = format!("{} again", a.id);
            self.queue.push_back(c);
        }
        self.candidate = Some(a);
        Step::Confirm
    }

    fn learn_settling(&mut self, arm: &Arm, seen: &Seen) {
        let Some(cand) = self.candidate.clone() else {
            return;
        };
        match (arm.step, self.step) {
            ("confirm", Step::Confirm) => {
                self.tally.1 += 1;
                self.tally.0 += u32::from(seen.passed);
                if !seen.passed {
                    self.settled.intermittent.push(format!(
                        "{}: passed {} of {}",
                        cand.id, self.tally.0, self.tally.1
                    ));
                    self.queue = std::mem::take(&mut self.stashed);
                    self.candidate = None;
                    // Not kept: the search goes on with the rest of the step that found it,
                    // then the next (`--all`: with the next best pass).
                    self.step = if self.all {
                        Step::Searched
                    } else {
                        resume_after(cand.step)
                    };
                    self.passes.retain(|(p, _)| p.id != cand.id);
                } else if self.tally.0 == 1 + CONFIRMATIONS {
                    let mut b = arms::baseline(
                        "the baseline again: does it still fail?".into(),
                        self.mode_base,
                    );
                    b.id = "baseline-again".into();
                    b.step = "baseline-again";
                    self.queue.push_back(b);
                    self.step = Step::BaselineAgain;
                }
            }
            ("baseline-again", _) => {
                if seen.passed {
                    self.settled.baseline_intermittent = true;
                    self.step = Step::Done;
                } else {
                    self.reduced = Some(cand.changes.clone());
                    self.to_drop = switches(&cand.changes, self.mode_base);
                    self.to_drop.reverse();
                    self.step = Step::Minimize;
                    self.queue_drop();
                }
            }
            ("minimize", Step::Minimize) => {
                if seen.passed
                    && let Some(s) = self.to_drop.first().cloned()
                {
                    self.settled.dropped.push(s.words());
                    self.reduced = Some(arm.changes.clone());
                }
                self.to_drop.remove(0);
                self.queue_drop();
            }
            ("confirm", Step::ConfirmMinimal) => {
                if !seen.passed {
                    // The reduced configuration did not hold: keep the one that did.
                    self.settled.dropped.clear();
                    self.settled.kept = Some(cand);
                    self.queue.clear();
                    self.step = Step::Done;
                } else if self.queue.is_empty() {
                    self.finish();
                }
            }
            _ => {}
        }
    }

    /// Queues the run without the next switch, or ends minimization.
    fn queue_drop(&mut self) {
        let (Some(reduced), Some(cand)) = (self.reduced.clone(), self.candidate.clone()) else {
            return;
        };
        if let Some(s) = self.to_drop.first() {
            // A configuration with one switch left is not run without it: that is the
            // baseline, which failed.
            if switches(&reduced, self.mode_base).len() <= 1 {
                self.to_drop.clear();
                return self.queue_drop();
            }
            let mut a = cand.clone();
            a.id = format!("without-{}", s.name());
            a.step = "minimize";
            a.what = format!("{} without {}", cand.id, s.words());
            a.changes = without(&reduced, s, self.mode_base);
            self.queue.push_back(a);
            return;
        }
        if self.settled.dropped.is_empty() {
            return self.finish();
        }
        for i in 1..=CONFIRMATIONS {
            let mut a = cand.clone();
            a.id = format!("confirm-minimal-{i}");
            a.step = "confirm";
            a.what = format!("{} without what it did not need, again", cand.id);
            a.changes = reduced.clone();
            self.queue.push_back(a);
        }
        self.step = Step::ConfirmMinimal;
    }

    fn finish(&mut self) {
        if let (Some(mut c), Some(r)) = (self.candidate.clone(), self.reduced.clone()) {
            if !self.settled.dropped.is_empty() {
                c.what = format!("{} (without {})", c.what, self.settled.dropped.join(", "));
            }
            c.changes = r;
            self.settled.kept = Some(c);
        }
        self.step = Step::Done;
    }

    /// The fastest pass within noise (5%) of the best, fewest switches first among those.
    fn best_pass(&self) -> Option<Arm> {
        let best = self
            .passes
            .iter()
            .filter_map(|(_, s)| *s)
            .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
        let near = |s: Option<f64>| match (best, s) {
            (Some(b), Some(s)) => s >= 0.95 * b,
            (Some(_), None) => false,
            (None, _) => true,
        };
        self.passes
            .iter()
            .filter(|(_, s)| near(*s))
            .min_by_key(|(a, _)| switches(&a.changes, self.mode_base).len())
            .map(|(a, _)| a.clone())
    }

    /// The search was cut short (a bound, Ctrl-C) while settling a pass: one that passed three
    /// times with the baseline failing again is kept whole (not reduced); one not yet
    /// confirmed is said, not kept.
    pub fn cut_short(&mut self) {
        let Some(cand) = self.candidate.clone() else {
            return;
        };
        match self.step {
            Step::Minimize | Step::ConfirmMinimal if self.settled.kept.is_none() => {
                self.settled.dropped.clear();
                self.settled.kept = Some(cand);
            }
            Step::Confirm | Step::BaselineAgain => {
                self.settled.unconfirmed = Some(cand.id);
            }
            _ => {}
        }
    }

    /// The passes found (`--all`), with their speeds.
    pub fn passes(&self) -> &[(Arm, Option<f64>)] {
        &self.passes
    }
}

/// Where the search goes on after a pass of `step` turned out intermittent.
fn resume_after(step: &str) -> Step {
    match step {
        "visible" => Step::Override,
        "override" => Step::Compiled,
        "compiled" => Step::Attention,
        "attention" => Step::Gemm,
        "gemm" => Step::Bf16,
        "bf16" => Step::FindFast,
        "find-fast" => Step::Eliminate,
        "eliminate" => Step::Filters,
        "filters" => Step::Selective,
        "bypass-selective" => Step::Bypass,
        "bypass" => Step::Mtype,
        _ => Step::Searched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the planner against `oracle` (what a run of a configuration shows) to its end:
    /// the arms run, in order.
    fn drive(p: &mut Planner, mut oracle: impl FnMut(&Arm) -> Seen) -> Vec<Arm> {
        let mut ran = Vec::new();
        while let Some(a) = p.next() {
            if a.skipped.is_some() {
                continue;
            }
            let seen = oracle(&a);
            p.learn(&a, &seen);
            ran.push(a);
            assert!(ran.len() < 100, "the plan does not end");
        }
        ran
    }

    fn fault() -> Seen {
        Seen {
            crashed: true,
            ..Seen::default()
        }
    }

    fn has(a: &Arm, var: &str) -> bool {
        a.changes.set.iter().any(|(k, _)| k == var) || a.changes.unset.iter().any(|k| k == var)
    }

    #[test]
    fn an_override_that_breaks_what_ran_is_not_carried_forward() {
        // 10.3.0 set: removing it turns a GPU fault into a failure before the GPU (no code for
        // this ISA in the owner's build): the later steps run without that removal.
        let s = Situation {
            override_now: Some("10.3.0".into()),
            ..Situation::default()
        };
        let mut p = Planner::new(s, false);
        let ran = drive(&mut p, |a| {
            if has(a, "HSA_OVERRIDE_GFX_VERSION") {
                Seen::default()
            } else {
                fault()
            }
        });
        let fast = ran.iter().find(|a| a.id == "miopen-find-fast").unwrap();
        assert!(!has(fast, "HSA_OVERRIDE_GFX_VERSION"), "{fast:?}");
        assert!(p.settled.kept.is_none());
    }

    #[test]
    fn a_baseline_that_passes_when_run_again_keeps_nothing() {
        let mut p = Planner::new(Situation::default(), false);
        let mut baselines = 0;
        drive(&mut p, |a| {
            if a.step.starts_with("baseline") {
                baselines += 1;
                return Seen {
                    passed: baselines > 1,
                    crashed: baselines == 1,
                    ..Seen::default()
                };
            }
            // FAST cures it.
            Seen {
                passed: has(a, "MIOPEN_FIND_MODE"),
                crashed: true,
                ..Seen::default()
            }
        });
        assert!(p.settled.baseline_intermittent);
        assert!(p.settled.kept.is_none());
    }

    #[test]
    fn with_all_the_fastest_within_noise_and_with_fewest_switches_is_settled() {
        let mut p = Planner::new(Situation::default(), true);
        drive(&mut p, |a| {
            let filter = has(a, "MIOPEN_DEBUG_GCN_ASM_KERNELS")
                || has(a, "MIOPEN_DEBUG_OPENCL_CONVOLUTIONS");
            Seen {
                passed: filter || a.changes.miopen_bypassed,
                speed: if a.changes.miopen_bypassed {
                    Some(2.0)
                } else if has(a, "MIOPEN_DEBUG_GCN_ASM_KERNELS") {
                    Some(9.0)
                } else {
                    Some(9.2)
                },
                ..Seen::default()
            }
        });
        // 9.0 is within 5% of 9.2, both one switch: the first found, GCN assembly off.
        let kept = p.settled.kept.clone().expect("kept");
        assert_eq!(kept.id, "miopen-no-asm");
        assert_eq!(p.passes().len(), 3);
    }

    #[test]
    fn the_override_is_built_on_the_visible_step_and_both_carry_forward() {
        let s = Situation {
            only_rdna1: Some("1".into()),
            override_advised: Some("10.1.0".into()),
            ..Situation::default()
        };
        let mut p = Planner::new(s, false);
        let ran = drive(&mut p, |_| fault());
        let o = ran.iter().find(|a| a.id == "override-10.1.0").unwrap();
        assert!(has(o, "ROCR_VISIBLE_DEVICES"), "{o:?}");
        let fast = ran.iter().find(|a| a.id == "miopen-find-fast").unwrap();
        assert!(has(fast, "ROCR_VISIBLE_DEVICES") && has(fast, "HSA_OVERRIDE_GFX_VERSION"));
    }

    #[test]
    fn an_intermittent_pass_resumes_with_the_rest_of_its_step() {
        // GCN assembly off passes once, then fails; OpenCL off (the same step) holds.
        let mut p = Planner::new(Situation::default(), false);
        let mut asm_runs = 0;
        let ran = drive(&mut p, |a| {
            if has(a, "MIOPEN_DEBUG_GCN_ASM_KERNELS") {
                asm_runs += 1;
                return Seen {
                    passed: asm_runs == 1,
                    crashed: asm_runs > 1,
                    ..Seen::default()
                };
            }
            Seen {
                passed: has(a, "MIOPEN_DEBUG_OPENCL_CONVOLUTIONS"),
                crashed: true,
                ..Seen::default()
            }
        });
        assert_eq!(p.settled.intermittent, ["miopen-no-asm: passed 1 of 2"]);
        assert!(ran.iter().any(|a| a.id == "miopen-no-opencl"));
        assert_eq!(
            p.settled.kept.map(|k| k.id).as_deref(),
            Some("miopen-no-opencl")
        );
    }

    #[test]
    fn a_bound_while_settling_keeps_what_already_held_and_lists_what_was_left() {
        let mut p = Planner::new(Situation::default(), false);
        let mut n = 0;
        while let Some(a) = p.next() {
            if a.skipped.is_some() {
                continue;
            }
            if a.step == "minimize" {
                break;
            }
            n += 1;
            assert!(n < 50);
            let passed = has(&a, "MIOPEN_FIND_MODE");
            let seen = Seen {
                passed,
                crashed: !passed,
                ..Seen::default()
            };
            p.learn(&a, &seen);
        }
        // Confirmed and the baseline failed again: kept whole, though not reduced.
        p.cut_short();
        assert_eq!(
            p.settled.kept.map(|k| k.id).as_deref(),
            Some("miopen-find-fast")
        );
        // Stopped before elimination: it is said to be untried.
        let mut p = Planner::new(Situation::default(), false);
        let b = p.next().unwrap();
        p.learn(&b, &fault());
        let _fast = p.next().unwrap();
        let left = p.untried();
        assert!(left.iter().any(|l| l.contains("one by one")), "{left:?}");
    }

    fn facts(families: &[&str], failing: &[&str]) -> CheckFacts {
        CheckFacts {
            families: families.iter().map(|f| (*f).to_owned()).collect(),
            failing: failing.iter().map(|f| (*f).to_owned()).collect(),
            ..CheckFacts::default()
        }
    }

    /// Every arm listed (run or skipped), and the kept one, for a program the check sees as
    /// `f` in every run that does not pass; `cure` says which configuration passes.
    fn plan_for(f: CheckFacts, cure: impl Fn(&Arm) -> bool) -> (Vec<Arm>, Vec<Arm>, Planner) {
        let mut p = Planner::new(Situation::default(), false);
        let (mut ran, mut listed) = (Vec::new(), Vec::new());
        while let Some(a) = p.next() {
            listed.push(a.clone());
            if a.skipped.is_some() {
                continue;
            }
            let passed = cure(&a);
            let seen = Seen {
                passed,
                facts: Some(if passed {
                    CheckFacts {
                        failing: Vec::new(),
                        ..f.clone()
                    }
                } else {
                    f.clone()
                }),
                completed: true,
                ..Seen::default()
            };
            p.learn(&a, &seen);
            ran.push(a);
            assert!(ran.len() < 100, "the plan does not end");
        }
        (ran, listed, p)
    }

    #[test]
    fn a_compiled_graph_writing_zeros_is_cured_by_triton_s_switch_and_miopen_is_passed_over() {
        let mut f = facts(&["GEMM", "attention", "elementwise"], &[COMPILED]);
        f.compiled = true;
        let (ran, _, p) = plan_for(f.clone(), |a| has(a, "AMDGCN_USE_BUFFER_OPS"));
        assert_eq!(ran[1].id, "triton-no-buffer-ops", "{ran:#?}");
        let kept = p.settled.kept.expect("kept");
        assert_eq!(kept.id, "triton-no-buffer-ops");
        assert!(kept.changes.fresh_triton, "{kept:?}");
        // Where nothing cures it: torch.compile off next, and no convolution or batch norm ran: MIOpen's steps are listed once, skipped.
        let (ran, listed, _) = plan_for(f, |_| false);
        assert_eq!(ran[2].id, "compile-off", "{ran:#?}");
        let miopen = listed.iter().find(|a| a.id == "miopen").expect("listed");
        assert!(miopen
            .skipped
            .as_deref()
            .unwrap()
            .contains("no convolution or batch norm"));
        assert!(!ran
            .iter()
            .any(|a| a.step == "find-fast" || a.step == "eliminate"));
        // The other families' arms were listed with why not.
        let sdpa = listed.iter().find(|a| a.id == "attention").unwrap();
        assert!(
            sdpa.skipped.as_deref().unwrap().contains("were right"),
            "{sdpa:?}"
        );
    }

    #[test]
    fn attention_s_kernels_go_off_one_at_a_time_the_math_kernel_last() {
        let mut f = facts(&["attention", "GEMM"], &["attention"]);
        f.attention_kernels = vec!["flash".into(), "efficient".into()];
        let (ran, _, p) = plan_for(f, |a| {
            a.changes
                .set
                .iter()
                .any(|(k, v)| k == "RDNA1_SDPA_OFF" && v.contains("efficient"))
                && a.id != "sdpa-no-efficient"
        });
        let ids: Vec<&str> = ran.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            &ids[..4],
            [
                "baseline",
                "sdpa-no-flash",
                "sdpa-no-efficient",
                "sdpa-math"
            ]
        );
        assert_eq!(p.settled.kept.map(|k| k.id).as_deref(), Some("sdpa-math"));
    }

    #[test]
    fn a_wrong_gemm_is_tried_on_rocblas_and_bf16_only_where_it_ran() {
        let f = facts(&["GEMM", "convolution"], &["GEMM"]);
        let (ran, _, p) = plan_for(f.clone(), |a| has(a, "TORCH_BLAS_PREFER_HIPBLASLT"));
        assert_eq!(ran[1].id, "blas-rocblas");
        assert_eq!(
            p.settled.kept.map(|k| k.id).as_deref(),
            Some("blas-rocblas")
        );
        let (_, listed, _) = plan_for(f, |_| false);
        let bf16 = listed.iter().find(|a| a.id == "bf16").unwrap();
        assert!(bf16.skipped.as_deref().unwrap().contains("no bfloat16"));
        // A convolution ran: MIOpen's steps are not passed over.
        assert!(!listed.iter().any(|a| a.id == "miopen"));
    }

    #[test]
    fn bf16_is_answered_with_float16_then_float32() {
        let mut f = facts(&["GEMM", "elementwise"], &["elementwise"]);
        f.bf16 = true;
        let (ran, _, p) = plan_for(f, |a| {
            a.changes
                .set
                .contains(&("RDNA1_BF16_AS".into(), "float32".into()))
        });
        let ids: Vec<&str> = ran.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            &ids[..3],
            ["baseline", "bf16-as-float16", "bf16-as-float32"]
        );
        assert_eq!(
            p.settled.kept.map(|k| k.id).as_deref(),
            Some("bf16-as-float32")
        );
    }

    #[test]
    fn without_the_check_s_facts_no_family_beyond_miopen_is_tried() {
        let mut p = Planner::new(Situation::default(), false);
        let mut listed = Vec::new();
        while let Some(a) = p.next() {
            listed.push(a.clone());
            if a.skipped.is_none() {
                p.learn(&a, &fault());
            }
        }
        // One line for them all, with why.
        let beyond: Vec<&Arm> = listed
            .iter()
            .filter(|a| matches!(a.step, "compiled" | "attention" | "gemm" | "bf16"))
            .collect();
        assert_eq!(beyond.len(), 1, "{beyond:?}");
        let why = beyond[0].skipped.as_deref().unwrap();
        assert!(why.contains("saw none"), "{why}");
        assert!(listed
            .iter()
            .any(|a| a.id == "miopen-find-fast" && a.skipped.is_none()));
    }

    #[test]
    fn a_baseline_that_stopped_early_does_not_pass_over_miopen() {
        // It raised in its first GEMM: the convolutions after it were never seen.
        let mut p = Planner::new(Situation::default(), false);
        let mut listed = Vec::new();
        while let Some(a) = p.next() {
            listed.push(a.clone());
            if a.skipped.is_none() {
                let seen = Seen {
                    facts: Some(facts(&["GEMM"], &["GEMM"])),
                    completed: false,
                    ..Seen::default()
                };
                p.learn(&a, &seen);
            }
        }
        assert!(!listed.iter().any(|a| a.id == "miopen"), "{listed:#?}");
        assert!(listed
            .iter()
            .any(|a| a.id == "miopen-find-fast" && a.skipped.is_none()));
    }
}
