//! The in-process check's records (dist/field-kit/python/rdna1_check/), read back after a run:
//! which Python processes loaded it, the torch they imported, every distinct op of the
//! dispatcher with its family, device, backend and errors against float64 (or why it was not
//! checked), the compiled graphs checked at their first call, and what a run's verdict takes
//! from them: wrong numbers, ops not checked, a program that ran on the CPU, a MIOpen bypass
//! that was not in effect, or a Python without a ROCm PyTorch.
//!
//! The records are the command's (its user writes them): they are read without following
//! links, regular files only, each and in all bounded; a line that is not a record is skipped.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::check_facts::{CheckFacts, COMPILED};

/// At most this many bytes of each process's file, this many files, and this many bytes in all
/// (root reads what the user's processes wrote, while the module's mode is the run's).
const FILE_MAX: u64 = 4 << 20;
const FILES_MAX: usize = 256;
const TOTAL_MAX: u64 = 16 << 20;
/// Ops kept in a run's document (the verdict counts them all).
const OPS_KEPT: usize = 200;

/// One result of one op checked against float64.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ResultJson {
    /// `forward`, `input gradient`, `weight gradient`, `bias gradient`, `updated exp avg 0`,
    /// ...: which result of the op.
    pub direction: String,
    /// The arithmetic it was judged for: float32, tf32, float16, bfloat16, exact.
    pub math: String,
    /// RMS of the difference over the largest magnitude (MIOpen's rms_range); null: not finite.
    pub rms_rel: Option<f64>,
    /// Largest difference over the largest magnitude; null: not finite.
    pub max_rel: Option<f64>,
    /// The same measures of the same op on the CPU in the GPU's own types (the rounding an
    /// honest implementation makes with these inputs); null where the CPU has no kernel for
    /// those types.
    pub lowp_rms_rel: Option<f64>,
    pub lowp_max_rel: Option<f64>,
    /// The bounds applied: ten times the CPU's own error, at least a floor per arithmetic.
    pub tolerance_rms: f64,
    pub tolerance_max: f64,
    pub ok: bool,
    /// Where the checked value came from when not the whole of the program's own call (a
    /// slice, a re-run on a slice).
    pub note: Option<String>,
}

/// One distinct op of the program (op, shapes, types, layout, device: each once).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct OpJson {
    /// The op in words: `Conv2d 3x3 stride 2`, `BatchNorm2d training`, `mm 2048x512, 512x512`.
    pub kind: String,
    /// The dispatcher's name: convolution, convolution_backward, cudnn_batch_norm, mm, ...
    pub op: String,
    /// convolution, batch/instance norm, layer norm, group norm, GEMM, attention, softmax,
    /// embedding, loss, reduction, elementwise, optimizer update, data movement, random, view,
    /// allocation, custom op, other.
    pub family: String,
    /// The shapes of its first tensors.
    pub inputs: Vec<Vec<u64>>,
    pub dtype: String,
    /// contiguous, channels_last or strided.
    pub layout: String,
    /// `cuda:0` (ROCm too), `cpu`.
    pub device: String,
    pub device_name: String,
    /// MIOpen, cuDNN, PyTorch (its own GPU kernels), PyTorch (CPU), rocBLAS, hipBLASLt, ...;
    /// null where not told apart.
    pub backend: Option<String>,
    /// PyTorch's own name for it (ConvBackend, the batch norm's op, the attention kernel).
    pub backend_detail: Option<String>,
    /// Whether its numbers were to be checked (a computing op on the GPU, the numerics on).
    pub checked: bool,
    pub results: Vec<ResultJson>,
    /// Why its numbers were not checked (no CPU reference, ran on the CPU, the check's time
    /// spent, too large): it is never counted as right.
    pub unchecked: Option<String>,
    /// Random numbers (dropout's mask aside): nothing to compare them with.
    pub random: bool,
    /// Why a call could not be judged and the next one was checked instead.
    pub skipped: Vec<String>,
    /// The check's own failure on this op, if it failed.
    pub error: Option<String>,
    /// The exception the program's own call raised (MIOpen's error for a kernel that does not
    /// compile, an out-of-memory), if it raised.
    pub raised: Option<String>,
    /// The process that made the call.
    pub pid: u32,
    /// Whether it computes anything (views and allocations do not); not in the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub computes: bool,
    /// Whether its call returned; not in the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub returned: bool,
}

/// The ops of one family on the GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FamilyJson {
    pub family: String,
    /// Distinct ops of it that ran on the GPU.
    pub ops: u32,
    /// Of those, checked and right against float64.
    pub right: u32,
    pub wrong: u32,
    /// Not checked (no CPU reference, the check's time spent, ...).
    pub unchecked: u32,
    /// The backends that ran them.
    pub backends: Vec<String>,
}

/// When the check stepped aside (after the first steps: the program then ran without it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SteppedAsideJson {
    /// Optimizer steps it looked at.
    pub steps: u32,
    /// Distinct ops it had seen.
    pub ops: u32,
    /// Seconds its CPU references took.
    pub reference_seconds: f64,
}

/// What the check saw in one run (a run's `check`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CheckJson {
    /// Python processes of the command that loaded the check (its sitecustomize ran there).
    pub processes: u32,
    /// torch as the command imported it: `__version__`, `version.hip`, `version.cuda`.
    pub torch: Option<String>,
    pub hip: Option<String>,
    pub cuda: Option<String>,
    /// The interpreter of a process that imported torch and found none.
    pub torch_missing: Option<String>,
    /// Whether the processes were asked to check numbers and to bypass MIOpen.
    pub numerics: bool,
    pub bypass: bool,
    /// Whether a process that imported torch used the GPU at all (as it exited); null: no
    /// process said (it did not exit normally).
    pub gpu_used: Option<bool>,
    /// A test's run in which the CPU stood for the GPU (RDNA1_CHECK_SELF_TEST_CPU=1).
    pub self_test: bool,
    /// Distinct ops seen (all of them; `ops` keeps 200: wrong first, then unchecked).
    pub op_count: u32,
    pub ops: Vec<OpJson>,
    /// The GPU's ops by family, in the order first seen.
    pub families: Vec<FamilyJson>,
    /// Compiled graphs (torch.compile) checked at their first call.
    pub graphs: Vec<GraphJson>,
    /// When the check stepped aside in each process that did.
    pub stepped_aside: Vec<SteppedAsideJson>,
    /// Every op and graph in all processes, which the verdict and `failure` read.
    #[serde(skip)]
    #[schemars(skip)]
    all: Vec<OpJson>,
    /// An op whose check never came: where a process stopped (died) in it.
    pub unfinished: Option<String>,
    /// The check's own failures (it never stops the program).
    pub errors: Vec<String>,
    /// A process saw more distinct ops than the check records (3,000): the rest were neither
    /// recorded nor checked.
    pub overflow: bool,
    /// The kernel choices made inside the program (switches.py), as its processes recorded
    /// them: `flash attention off`, `bfloat16 as float16`.
    pub switched: Vec<String>,
    /// In one sentence.
    pub verdict: String,
}

/// One compiled graph checked at its first call against the same graph run eagerly on the CPU.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GraphJson {
    /// `forward` or `backward` graph, and its number in the process.
    pub graph: String,
    /// The kernels it runs (Triton's, or the extern ones it calls), as Inductor names them.
    pub kernels: Vec<String>,
    /// The ops the graph is made of (aten), each once.
    pub ops: Vec<String>,
    pub results: Vec<ResultJson>,
    /// Why it was not checked, where it was not.
    pub unchecked: Option<String>,
    pub pid: u32,
}

/// What a run asked of MIOpen's bypass, which its records must then show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bypass {
    None,
    /// MIOpen bypassed for everything.
    All,
    /// Only for layers whose kind starts with one of these.
    Kinds(Vec<String>),
}

impl Bypass {
    pub fn of(c: &super::changes::Changes) -> Bypass {
        if c.miopen_bypassed {
            Bypass::All
        } else if c.bypass_kinds.is_empty() {
            Bypass::None
        } else {
            Bypass::Kinds(c.bypass_kinds.clone())
        }
    }
}

/// Reads every process's records in `dir` (none if it cannot be read).
pub fn read_dir(dir: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("check-") && n.ends_with(".jsonl"))
        })
        .collect();
    names.sort();
    names.truncate(FILES_MAX);
    let mut out = Vec::new();
    let mut left = TOTAL_MAX;
    for p in names {
        if left == 0 {
            break;
        }
        let Ok(f) = std::fs::File::options()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(&p)
        else {
            continue;
        };
        if !f.metadata().is_ok_and(|m| m.is_file()) {
            continue;
        }
        let mut bytes = Vec::new();
        if f.take(FILE_MAX.min(left)).read_to_end(&mut bytes).is_err() {
            continue;
        }
        left -= bytes.len() as u64;
        // A line that is not UTF-8 or not JSON is skipped; the others still count.
        let text = String::from_utf8_lossy(&bytes);
        out.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(Value::is_object),
        );
    }
    out
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_owned)
}

fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

fn result_of(r: &Value) -> ResultJson {
    ResultJson {
        direction: s(r, "direction").unwrap_or_default(),
        math: s(r, "math").unwrap_or_default(),
        rms_rel: f(r, "rms_rel"),
        max_rel: f(r, "max_rel"),
        lowp_rms_rel: f(r, "lowp_rms_rel"),
        lowp_max_rel: f(r, "lowp_max_rel"),
        tolerance_rms: f(r, "tolerance_rms").unwrap_or(0.0),
        tolerance_max: f(r, "tolerance_max").unwrap_or(0.0),
        ok: r.get("ok").and_then(Value::as_bool) == Some(true),
        note: s(r, "note"),
    }
}

fn op_of(r: &Value, pid: u64) -> OpJson {
    let inputs = r
        .get("inputs")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_array)
                .map(|d| d.iter().filter_map(Value::as_u64).collect())
                .collect()
        })
        .unwrap_or_default();
    let device = s(r, "device").unwrap_or_default();
    OpJson {
        kind: s(r, "kind").unwrap_or_else(|| "?".into()),
        op: s(r, "op").unwrap_or_default(),
        family: s(r, "family").unwrap_or_else(|| "other".into()),
        inputs,
        dtype: s(r, "dtype").unwrap_or_default(),
        layout: s(r, "layout").unwrap_or_default(),
        device_name: s(r, "device_name").unwrap_or_default(),
        backend: s(r, "backend_family"),
        backend_detail: s(r, "backend"),
        checked: r.get("checked").and_then(Value::as_bool) == Some(true),
        results: Vec::new(),
        unchecked: s(r, "why"),
        random: r.get("random").and_then(Value::as_bool) == Some(true),
        skipped: Vec::new(),
        error: None,
        raised: None,
        pid: pid as u32,
        computes: r.get("computes").and_then(Value::as_bool) != Some(false),
        returned: false,
        device,
    }
}

/// The check's records of one run, summed up.
pub fn summarize(records: &[Value]) -> CheckJson {
    let mut c = CheckJson::default();
    // Ops by (pid, id): each process numbers its own.
    let mut ops: BTreeMap<(u64, u64), OpJson> = BTreeMap::new();
    let mut order: Vec<(u64, u64)> = Vec::new();
    let mut graphs: BTreeMap<(u64, u64), GraphJson> = BTreeMap::new();
    for r in records {
        let pid = r.get("pid").and_then(Value::as_u64).unwrap_or(0);
        let id = r.get("id").and_then(Value::as_u64).unwrap_or(0);
        match r.get("event").and_then(Value::as_str).unwrap_or("") {
            "start" => c.processes += 1,
            "torch" => {
                if c.torch.is_none() {
                    c.torch = s(r, "torch");
                    c.hip = s(r, "hip");
                    c.cuda = s(r, "cuda");
                }
                c.numerics |= r.get("numerics").and_then(Value::as_bool) == Some(true);
                c.self_test |= r.get("self_test").and_then(Value::as_bool) == Some(true);
                c.bypass |= r.get("bypass").and_then(Value::as_bool) == Some(true)
                    || r.get("bypass_kinds")
                        .and_then(Value::as_array)
                        .is_some_and(|k| !k.is_empty());
            }
            "switches" => {
                let mut said: Vec<String> = r
                    .get("sdpa_off")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|k| format!("{k} attention off"))
                    .collect();
                said.extend(s(r, "bf16_as").map(|t| format!("bfloat16 as {t}")));
                for w in said {
                    if !c.switched.contains(&w) {
                        c.switched.push(w);
                    }
                }
            }
            "torch_missing" => {
                c.torch_missing = c.torch_missing.take().or_else(|| s(r, "python"));
            }
            "exit" => {
                if let Some(used) = r.get("gpu_used").and_then(Value::as_bool) {
                    c.gpu_used = Some(c.gpu_used.unwrap_or(false) || used);
                }
            }
            "stepped_aside" if c.stepped_aside.len() < 64 => {
                c.stepped_aside.push(SteppedAsideJson {
                    steps: r.get("steps").and_then(Value::as_u64).unwrap_or(0) as u32,
                    ops: r.get("ops").and_then(Value::as_u64).unwrap_or(0) as u32,
                    reference_seconds: f(r, "reference_seconds").unwrap_or(0.0),
                });
            }
            "op" => {
                let mut o = op_of(r, pid);
                // Checked again (it could not be judged the first time): this record stands
                // for the op.
                if let Some(old) = r.get("again_for").and_then(Value::as_u64)
                    && let Some(prev) = ops.remove(&(pid, old))
                {
                    order.retain(|k| *k != (pid, old));
                    o.skipped = prev.skipped;
                }
                if ops.insert((pid, id), o).is_none() {
                    order.push((pid, id));
                }
            }
            "returned" => {
                if let Some(o) = ops.get_mut(&(pid, id)) {
                    o.returned = true;
                }
            }
            "raised" => {
                if let Some(o) = ops.get_mut(&(pid, id)) {
                    o.raised = s(r, "error");
                }
            }
            "overflow" => c.overflow = true,
            "skipped" => {
                if let Some(o) = ops.get_mut(&(pid, id))
                    && let Some(why) = s(r, "why")
                    && o.skipped.len() < 4
                {
                    o.skipped.push(why);
                }
            }
            "unchecked" => {
                if let Some(o) = ops.get_mut(&(pid, id))
                    && o.unchecked.is_none()
                {
                    o.unchecked = s(r, "why");
                }
            }
            "result" => {
                // Every wrong result is kept (up to 256 an op), the right ones up to 64.
                let ok = r.get("ok").and_then(Value::as_bool) == Some(true);
                if let Some(o) = ops.get_mut(&(pid, id))
                    && ((ok && o.results.len() < 64) || (!ok && o.results.len() < 256))
                {
                    o.results.push(result_of(r));
                }
            }
            "graph" => {
                let list = |k: &str| -> Vec<String> {
                    r.get(k)
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .take(32)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                if graphs.len() < 256 {
                    graphs.insert(
                        (pid, id),
                        GraphJson {
                            graph: s(r, "graph").unwrap_or_default(),
                            kernels: list("kernels"),
                            ops: list("ops"),
                            results: Vec::new(),
                            unchecked: None,
                            pid: pid as u32,
                        },
                    );
                }
            }
            "graph_result" => {
                let ok = r.get("ok").and_then(Value::as_bool) == Some(true);
                if let Some(g) = graphs.get_mut(&(pid, id))
                    && ((ok && g.results.len() < 64) || (!ok && g.results.len() < 256))
                {
                    g.results.push(result_of(r));
                }
            }
            "graph_unchecked" => {
                if let Some(g) = graphs.get_mut(&(pid, id)) {
                    g.unchecked = g.unchecked.take().or_else(|| s(r, "why"));
                }
            }
            "check_error" => {
                if let Some(o) = ops.get_mut(&(pid, id))
                    && o.error.is_none()
                {
                    o.error = s(r, "error");
                }
                if c.errors.len() < 20
                    && let Some(e) = s(r, "error")
                {
                    c.errors.push(e);
                }
            }
            _ => {}
        }
    }
    // The last op a process announced that never finished: its call never returned, or its
    // check never came (the GPU's work surfaces there: the check waits for it). The process
    // stopped in it.
    c.unfinished = order
        .iter()
        .rev()
        .filter_map(|k| ops.get(k))
        .find(|o| {
            let judged = !o.checked
                || !o.results.is_empty()
                || o.unchecked.is_some()
                || o.error.is_some()
                || !o.skipped.is_empty();
            !(o.returned && judged)
        })
        .map(describe);
    c.op_count = order.len() as u32;
    c.all = order.into_iter().filter_map(|k| ops.remove(&k)).collect();
    c.graphs = graphs.into_values().collect();
    c.families = families(&c.all, c.self_test);
    // The document keeps the ops with a wrong result first, then the unchecked ones.
    let mut kept: Vec<&OpJson> = c.all.iter().filter(|o| o.computes).collect();
    kept.sort_by_key(|o| (is_right(o) as u8, o.unchecked.is_none() as u8));
    c.ops = kept.into_iter().take(OPS_KEPT).cloned().collect();
    c.verdict = c.sentence();
    c
}

fn is_wrong(o: &OpJson) -> bool {
    o.results.iter().any(|r| !r.ok)
}

fn is_right(o: &OpJson) -> bool {
    !is_wrong(o)
}

/// Checked and right: results came, none wrong, and the check neither failed nor gave up on
/// it.
fn is_checked_right(o: &OpJson) -> bool {
    o.checked
        && !o.results.is_empty()
        && !is_wrong(o)
        && o.unchecked.is_none()
        && o.error.is_none()
        && o.raised.is_none()
}

/// Whether `o` ran on the GPU (in a self-test, the CPU stands for it).
fn on_gpu(o: &OpJson, self_test: bool) -> bool {
    self_test || o.device.split(':').next() != Some("cpu")
}

/// Whether an op counts: it computes, and its numbers are not random.
fn counts(o: &OpJson) -> bool {
    o.computes && !o.random
}

/// The GPU's computing ops by family, in the order first seen.
fn families(all: &[OpJson], self_test: bool) -> Vec<FamilyJson> {
    let mut out: Vec<FamilyJson> = Vec::new();
    for o in all.iter().filter(|o| on_gpu(o, self_test) && counts(o)) {
        let i = match out.iter().position(|f| f.family == o.family) {
            Some(i) => i,
            None => {
                out.push(FamilyJson {
                    family: o.family.clone(),
                    ..Default::default()
                });
                out.len() - 1
            }
        };
        let f = &mut out[i];
        f.ops += 1;
        if is_wrong(o) {
            f.wrong += 1;
        } else if is_checked_right(o) {
            f.right += 1;
        } else {
            f.unchecked += 1;
        }
        if let Some(b) = &o.backend
            && !f.backends.contains(b)
        {
            f.backends.push(b.clone());
        }
    }
    out
}

/// Whether layer kind `kind` is of kind `of`: the same, or `of` followed by more words, or a
/// name followed by its dimensions ("Conv2d 1x1 stride 2" is a "Conv2d 1x1", "BatchNorm2d
/// training" a "BatchNorm"; "Conv2d 1x11" is no "Conv2d 1x1").
pub fn kind_is(kind: &str, of: &str) -> bool {
    kind.strip_prefix(of).is_some_and(|rest| {
        rest.is_empty()
            || rest.starts_with(' ')
            || (of.ends_with(|c: char| c.is_ascii_alphabetic())
                && rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// `Conv2d 1x1 (float16, channels_last, cuda:0)`.
fn describe(o: &OpJson) -> String {
    let mut t = vec![o.dtype.clone()];
    if o.layout != "contiguous" && !o.layout.is_empty() {
        t.push(o.layout.clone());
    }
    let op = if o.kind.starts_with(&o.op) {
        String::new()
    } else {
        format!(" [{}]", o.op)
    };
    format!("{}{op} ({})", o.kind, t.join(", "))
}

fn number(x: Option<f64>) -> String {
    x.map_or_else(|| "a non-finite amount".into(), |v| format!("{v:.1e}"))
}

fn plural(k: usize, one: &str, many: &str) -> String {
    format!("{k} {}", if k == 1 { one } else { many })
}

/// "22 convolution (MIOpen), 30 GEMM (rocBLAS), 8 elementwise".
fn family_counts(fams: &[FamilyJson]) -> String {
    fams.iter()
        .map(|f| {
            if f.backends.is_empty() {
                format!("{} {}", f.ops, f.family)
            } else {
                format!("{} {} ({})", f.ops, f.family, f.backends.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl CheckJson {
    /// Every wrong result, of ops and of compiled graphs: `Conv2d 1x1 [convolution_backward]
    /// (float32): weight gradient off by 1.0e-2 of its largest value (RMS 3.0e-3; allowed
    /// 1.0e-4 and 1.0e-5 RMS)`.
    fn wrong(&self) -> Vec<String> {
        let line = |what: String, r: &ResultJson| {
            format!(
                "{what}: {} off by {} of its largest value (RMS {}; allowed {:.0e} and {:.0e} RMS){}",
                r.direction,
                number(r.max_rel),
                number(r.rms_rel),
                r.tolerance_max,
                r.tolerance_rms,
                r.note.as_ref().map(|n| format!(", {n}")).unwrap_or_default()
            )
        };
        let ops = self.all.iter().flat_map(|o| {
            o.results
                .iter()
                .filter(|r| !r.ok)
                .map(move |r| line(describe(o), r))
        });
        let graphs = self.graphs.iter().flat_map(|g| {
            g.results.iter().filter(|r| !r.ok).map(move |r| {
                let kernels = if g.kernels.is_empty() {
                    String::new()
                } else {
                    format!(", kernels {}", g.kernels.join(", "))
                };
                line(format!("compiled {} graph{kernels}", g.graph), r)
            })
        });
        ops.chain(graphs).collect()
    }

    /// The GPU's computing ops whose numbers were not checked, each named once with why:
    /// `_scaled_mm (no CPU kernel ...)`.
    pub fn unchecked(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for o in self
            .all
            .iter()
            .filter(|o| on_gpu(o, self.self_test) && counts(o))
        {
            if is_wrong(o) || is_checked_right(o) {
                continue;
            }
            let why = o.unchecked.as_deref().unwrap_or(if o.error.is_some() {
                "the check failed on it"
            } else if o.raised.is_some() {
                "its call raised"
            } else if !o.returned {
                "its call never returned"
            } else if let Some(s) = o.skipped.first() {
                s
            } else {
                "no result came"
            });
            let line = format!("{} ({why})", o.op);
            if !v.iter().any(|l| l.starts_with(&format!("{} (", o.op))) {
                v.push(line);
            }
        }
        if self.overflow {
            v.push(
                "more distinct ops than the check records in a process (3,000): the rest were \
                 not checked"
                    .to_owned(),
            );
        }
        if self.numerics
            && self.gpu_used == Some(true)
            && !self
                .all
                .iter()
                .any(|o| on_gpu(o, self.self_test) && counts(o))
        {
            v.push(
                "the program used the GPU, but the check saw none of its ops (its work ran in a \
                 thread other than the main one, or the check never started)"
                    .to_owned(),
            );
        }
        for g in &self.graphs {
            if let Some(why) = &g.unchecked {
                v.push(format!("compiled {} graph ({why})", g.graph));
            } else if g.results.is_empty() {
                v.push(format!(
                    "compiled {} graph (its first call was not seen)",
                    g.graph
                ));
            }
        }
        v
    }

    /// The kinds of the convolutions and batch norms on the GPU that were wrong, whose call
    /// raised, or that a process died in (its last op that never returned), each once: what
    /// the search's selective bypass routes.
    pub fn failing_kinds(&self) -> Vec<String> {
        let failed = self.failed();
        let mut v: Vec<String> = Vec::new();
        for (o, _) in self.all.iter().zip(&failed).filter(|(_, f)| **f) {
            if on_gpu(o, self.self_test)
                && matches!(o.family.as_str(), "convolution" | "batch/instance norm")
                && !v.contains(&o.kind)
            {
                v.push(o.kind.clone());
            }
        }
        v
    }

    /// Per op of `all`: whether it was wrong, its call raised, or a process died in it (its
    /// last op, which never returned).
    fn failed(&self) -> Vec<bool> {
        let mut last: BTreeMap<u32, usize> = BTreeMap::new();
        for (i, o) in self.all.iter().enumerate() {
            last.insert(o.pid, i);
        }
        self.all
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let died_in = last.get(&o.pid) == Some(&i) && !o.returned && o.raised.is_none();
                is_wrong(o) || o.raised.is_some() || died_in
            })
            .collect()
    }

    /// What the search plans by: the GPU's families, those that failed (as `failing_kinds`
    /// judges an op, any family; `compiled` for a wrong graph), compiled graphs, attention
    /// kernels, bfloat16.
    pub fn facts(&self) -> CheckFacts {
        let mut f = CheckFacts::default();
        for (o, failed) in self.all.iter().zip(self.failed()) {
            if !on_gpu(o, self.self_test) || !counts(o) {
                continue;
            }
            f.add_family(&o.family);
            if failed {
                f.add_failing(&o.family);
            }
            if o.family == "attention"
                && let Some(k) = ["flash", "efficient", "cudnn", "math"]
                    .into_iter()
                    .find(|k| o.op.contains(k))
            {
                f.add_attention_kernel(k);
            }
            f.bf16 |= o.dtype == "bfloat16";
        }
        f.compiled = !self.graphs.is_empty();
        if self.graphs.iter().any(|g| g.results.iter().any(|r| !r.ok)) {
            f.add_failing(COMPILED);
        }
        f
    }

    fn on(&self, gpu: bool) -> Vec<&OpJson> {
        self.all
            .iter()
            .filter(|o| counts(o) && on_gpu(o, self.self_test) == gpu)
            .collect()
    }

    /// "3 convolutions and 2 GEMMs": the CPU's ops by family.
    fn cpu_counts(ops: &[&OpJson]) -> String {
        let mut fams: Vec<(String, usize)> = Vec::new();
        for o in ops {
            match fams.iter_mut().find(|(f, _)| *f == o.family) {
                Some((_, n)) => *n += 1,
                None => fams.push((o.family.clone(), 1)),
            }
        }
        fams.iter()
            .map(|(f, n)| format!("{n} {f}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn sentence(&self) -> String {
        if self.processes == 0 {
            return "not loaded: no Python process of the command ran rdna1ctl's check (not \
                    Python, or an interpreter started with -I, -S or -E)"
                .into();
        }
        if let Some(py) = &self.torch_missing
            && self.torch.is_none()
        {
            return format!("no torch: {py} has no PyTorch module");
        }
        if self.torch.is_none() {
            return "torch was never imported".into();
        }
        let wrong = self.wrong();
        if let Some(first) = wrong.first() {
            let more = match wrong.len() {
                1 => String::new(),
                n => format!(" ({} more)", n - 1),
            };
            return format!("wrong numbers: {first}{more}");
        }
        let gpu = self.on(true);
        let cpu = self.on(false);
        if gpu.is_empty() {
            if !cpu.is_empty() {
                return format!(
                    "your program's {} distinct ops ran on the CPU ({}), none on the GPU",
                    cpu.len(),
                    Self::cpu_counts(&cpu)
                );
            }
            if self.gpu_used == Some(false) {
                return "your program never used the GPU (torch imported, the GPU never \
                        initialised): it ran on the CPU"
                    .into();
            }
            return "no op of the program was seen on the GPU".into();
        }
        let unchecked = self.unchecked();
        let right: u32 = self.families.iter().map(|f| f.right).sum();
        let how = if !self.numerics {
            " (numbers not checked)".to_owned()
        } else if unchecked.is_empty() {
            format!("; all {right} were right against float64")
        } else {
            format!(
                "; {right} were right against float64, {} unchecked: {}",
                unchecked.len(),
                unchecked
                    .iter()
                    .take(6)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        let graphs = self
            .graphs
            .iter()
            .filter(|g| g.unchecked.is_none() && !g.results.is_empty())
            .count();
        let graphs = if graphs == 0 {
            String::new()
        } else {
            format!(
                "; {} right against the same graph run on the CPU",
                plural(graphs, "compiled graph", "compiled graphs")
            )
        };
        let random = self
            .all
            .iter()
            .filter(|o| o.random && on_gpu(o, self.self_test))
            .count();
        let random = if random == 0 {
            String::new()
        } else {
            format!(
                "; {} (not comparable)",
                plural(random, "random-number op", "random-number ops")
            )
        };
        let cpu_too = if cpu.is_empty() {
            String::new()
        } else {
            format!("; {} ran on the CPU", Self::cpu_counts(&cpu))
        };
        let test = if self.self_test {
            " (a self-test: the CPU stood for the GPU)"
        } else {
            ""
        };
        let switched = if self.switched.is_empty() {
            String::new()
        } else {
            format!("; in the program: {}", self.switched.join(", "))
        };
        format!(
            "your program's {} distinct GPU ops ({}){how}{graphs}{random}{cpu_too}{switched}{}{test}",
            gpu.len(),
            family_counts(&self.families),
            self.bf16_note()
        )
    }

    /// Said where bfloat16 ran on a ROCm GPU: RDNA1 has no bfloat16 arithmetic.
    fn bf16_note(&self) -> &'static str {
        let bf16 = self
            .all
            .iter()
            .any(|o| o.dtype == "bfloat16" && on_gpu(o, self.self_test));
        if bf16 && self.hip.is_some() {
            "; bfloat16 ran: on RDNA1 (gfx101x) it is emulated, no bfloat16 arithmetic there \
             (PyTorch reports it all the same; Triton's bfloat16 dot fails, unsloth #7682): \
             float16 autocast or float32 (`rdna1ctl search` tries RDNA1_BF16_AS=float16, then \
             float32)"
        } else {
            ""
        }
    }

    /// Why a run with these records is no pass, or None. `bypass`: the run was to have MIOpen
    /// bypassed (all of it, or for some layer kinds), which it must prove.
    pub fn failure(&self, bypass: &Bypass) -> Option<String> {
        if let Some(w) = self.wrong().first() {
            return Some(format!("wrong numbers: {w}"));
        }
        // A network on the CPU is said first: under the bypass too, that is its trouble.
        let gpu = self.on(true);
        if gpu.is_empty() && self.torch.is_some() {
            let cpu = self.on(false);
            if !cpu.is_empty() {
                return Some(format!(
                    "ran on the CPU: your program's {}, none on the GPU",
                    Self::cpu_counts(&cpu)
                ));
            }
            if self.gpu_used == Some(false) {
                return Some(
                    "ran on the CPU: your program never used the GPU (torch imported, the GPU \
                     never initialised)"
                        .into(),
                );
            }
        }
        let kinds = match bypass {
            Bypass::None => return None,
            Bypass::All => None,
            Bypass::Kinds(k) => Some(k.as_slice()),
        };
        if self.processes == 0 {
            return Some(
                "MIOpen bypass not in effect: no Python process of the command loaded \
                 rdna1ctl's sitecustomize (an isolated interpreter: -I, -S or -E, or not \
                 Python)"
                    .into(),
            );
        }
        if self.torch.is_none() || !self.bypass {
            return Some(
                "MIOpen bypass not shown: no Python process of the command imported torch \
                 with rdna1ctl's check loaded"
                    .into(),
            );
        }
        let routed = |o: &&&OpJson| {
            matches!(o.family.as_str(), "convolution" | "batch/instance norm")
                && kinds.is_none_or(|k| k.iter().any(|k| kind_is(&o.kind, k)))
        };
        let layers: Vec<&&OpJson> = gpu.iter().filter(routed).collect();
        if let Some(o) = layers
            .iter()
            .find(|o| matches!(o.backend.as_deref(), Some("MIOpen" | "cuDNN")))
        {
            return Some(format!(
                "MIOpen bypass not in effect: {} ran on {} (torch.backends.cudnn.enabled was \
                 set back to True, or the layer was called where the bypass does not reach: \
                 TorchScript)",
                describe(o),
                o.backend.as_deref().unwrap_or("?")
            ));
        }
        if !layers
            .iter()
            .any(|o| o.backend.as_deref() == Some("PyTorch"))
        {
            return Some(match kinds {
                None => "MIOpen bypass not shown: no convolution or batch norm of the command \
                         was seen on the GPU with PyTorch's own kernels"
                    .into(),
                Some(k) => format!(
                    "MIOpen bypass not shown: no layer of the kinds routed to PyTorch ({}) was \
                     seen on the GPU",
                    k.join(", ")
                ),
            });
        }
        None
    }

    /// Why a run that asked for kernel choices inside the program (`asked`: RDNA1_SDPA_OFF or
    /// RDNA1_BF16_AS set) is not credited with them: no process of it made them.
    pub fn switches_failure(&self, asked: bool) -> Option<String> {
        (asked && self.switched.is_empty()).then(|| {
            "the kernel choices asked of the program (RDNA1_SDPA_OFF, RDNA1_BF16_AS) not in \
             effect: no Python process of the command imported torch with rdna1ctl's check \
             loaded (an isolated interpreter: -I, -S or -E, or not Python)"
                .to_owned()
        })
    }

    /// Whether a process of the run used the GPU and the check saw an op of it there (the proof
    /// of GPU work where there is no KFD: stand_in.rs).
    pub fn saw_gpu_work(&self) -> bool {
        self.gpu_used == Some(true) && self.all.iter().any(|o| on_gpu(o, self.self_test))
    }

    /// Why the environment cannot run the workload, as the processes found it.
    pub fn environment_problem(&self) -> Option<String> {
        if self.torch.is_none() {
            return self
                .torch_missing
                .as_ref()
                .map(|py| format!("{py} has no PyTorch (import torch fails)"));
        }
        if !super::stand_in::is_rocm(self.hip.as_deref(), self.cuda.as_deref()) {
            return Some(super::interpreter::not_rocm(
                "the command's Python",
                self.torch.as_deref().unwrap_or("?"),
                self.cuda.as_deref(),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(id: u64, kind: &str, op: &str, family: &str, device: &str) -> Value {
        json!({"event": "op", "pid": 7, "id": id, "kind": kind, "op": op, "family": family,
               "dtype": "float32", "layout": "contiguous", "device": device,
               "device_name": "AMD Radeon RX 5700 XT (gfx1010)", "checked": device != "cpu",
               "inputs": [[8, 64, 56, 56]]})
    }

    fn conv(id: u64, kind: &str, device: &str, backend: &str) -> Value {
        let mut r = op(id, kind, "convolution", "convolution", device);
        r["backend"] = json!("Miopen");
        r["backend_family"] = json!(backend);
        r
    }

    fn returned(id: u64) -> Value {
        json!({"event": "returned", "pid": 7, "id": id})
    }

    fn result(id: u64, direction: &str, max_rel: f64, ok: bool) -> Value {
        json!({"event": "result", "pid": 7, "id": id, "direction": direction, "math": "float32",
               "rms_rel": max_rel / 10.0, "max_rel": max_rel, "tolerance_rms": 1e-5,
               "tolerance_max": 1e-4, "ok": ok})
    }

    fn base() -> Vec<Value> {
        vec![
            json!({"event": "start", "pid": 7}),
            json!({"event": "torch", "pid": 7, "torch": "2.11.0+rocm7.15", "hip": "7.15.1",
                   "cuda": null, "bypass": false, "numerics": true}),
        ]
    }

    #[test]
    fn right_numbers_on_the_gpu_are_counted_by_family() {
        let mut r = base();
        r.extend([
            conv(1, "Conv2d 3x3", "cuda:0", "MIOpen"),
            returned(1),
            result(1, "forward", 1e-7, true),
            op(2, "mm 512x2048, 2048x512", "mm", "GEMM", "cuda:0"),
            returned(2),
            result(2, "forward", 1e-7, true),
            op(3, "view 8x64", "view", "view", "cuda:0"),
            returned(3),
        ]);
        r[8]["computes"] = json!(false);
        r[8]["checked"] = json!(false);
        let c = summarize(&r);
        assert_eq!(c.failure(&Bypass::None), None);
        assert_eq!(
            c.verdict,
            "your program's 2 distinct GPU ops (1 convolution (MIOpen), 1 GEMM); all 2 were \
             right against float64"
        );
        assert_eq!(c.environment_problem(), None);
        assert_eq!(c.ops.len(), 2, "views are not kept: {:?}", c.ops);
    }

    #[test]
    fn a_wrong_op_is_named_with_its_direction() {
        let mut r = base();
        let mut back = op(
            1,
            "Conv2d 1x1",
            "convolution_backward",
            "convolution",
            "cuda:0",
        );
        back["backend_family"] = json!("MIOpen");
        r.extend([
            back,
            returned(1),
            result(1, "input gradient", 1e-7, true),
            result(1, "weight gradient", 1e-2, false),
        ]);
        let c = summarize(&r);
        let f = c.failure(&Bypass::None).unwrap();
        assert!(
            f.starts_with(
                "wrong numbers: Conv2d 1x1 [convolution_backward] (float32): weight gradient \
                 off by 1.0e-2"
            ),
            "{f}"
        );
        assert!(c.verdict.contains("weight gradient"), "{}", c.verdict);
        assert_eq!(c.failing_kinds(), vec!["Conv2d 1x1".to_owned()]);
    }

    #[test]
    fn an_op_without_a_reference_is_unchecked_by_name_never_right() {
        let mut r = base();
        r.extend([
            op(1, "mm 64x64, 64x64", "mm", "GEMM", "cuda:0"),
            returned(1),
            result(1, "forward", 1e-7, true),
            op(2, "_scaled_mm 64x64, 64x64", "_scaled_mm", "GEMM", "cuda:0"),
            returned(2),
            json!({"event": "unchecked", "pid": 7, "id": 2,
                   "why": "no CPU kernel (Could not run '_scaled_mm' with CPU)"}),
        ]);
        let c = summarize(&r);
        assert_eq!(
            c.unchecked(),
            vec!["_scaled_mm (no CPU kernel (Could not run '_scaled_mm' with CPU))".to_owned()]
        );
        assert!(
            c.verdict
                .contains("1 were right against float64, 1 unchecked: _scaled_mm"),
            "{}",
            c.verdict
        );
        assert!(!c.verdict.contains("all 2"), "{}", c.verdict);
        assert_eq!(c.families[0].unchecked, 1);
        assert_eq!(c.families[0].right, 1);
        // Not a failure by itself (run --check-exit unchecked makes it one).
        assert_eq!(c.failure(&Bypass::None), None);
    }

    #[test]
    fn a_wrong_compiled_graph_is_named_with_its_kernels() {
        let mut r = base();
        r.extend([
            json!({"event": "graph", "pid": 7, "id": 1, "graph": "forward 1",
                   "kernels": ["triton_poi_fused_mul_0"], "ops": ["mul"]}),
            json!({"event": "graph_result", "pid": 7, "id": 1, "direction": "output 0",
                   "math": "float32", "rms_rel": 0.5, "max_rel": 1.0, "tolerance_rms": 1e-5,
                   "tolerance_max": 1e-4, "ok": false}),
        ]);
        let c = summarize(&r);
        let f = c.failure(&Bypass::None).unwrap();
        assert!(
            f.starts_with(
                "wrong numbers: compiled forward 1 graph, kernels triton_poi_fused_mul_0: output \
                 0 off by 1.0e0"
            ),
            "{f}"
        );
    }

    #[test]
    fn a_program_on_the_cpu_fails() {
        let mut r = base();
        r.extend([conv(1, "Conv2d 3x3", "cpu", "PyTorch (CPU)"), returned(1)]);
        let c = summarize(&r);
        assert!(
            c.failure(&Bypass::None)
                .unwrap()
                .starts_with("ran on the CPU"),
            "{c:?}"
        );
        assert!(c.verdict.contains("ran on the CPU"), "{}", c.verdict);
        // Under the bypass as well: the CPU is the trouble, not the bypass.
        assert!(
            c.failure(&Bypass::All)
                .unwrap()
                .starts_with("ran on the CPU"),
            "{c:?}"
        );
        // A GPU build that never initialised the GPU.
        let mut r = base();
        r.push(json!({"event": "exit", "pid": 7, "gpu_used": false}));
        let c = summarize(&r);
        assert!(
            c.failure(&Bypass::None)
                .unwrap()
                .contains("never used the GPU"),
            "{c:?}"
        );
    }

    #[test]
    fn layer_kinds_match_by_whole_words_or_a_name_and_its_dimensions() {
        assert!(kind_is("Conv2d 1x1 stride 2", "Conv2d 1x1"));
        assert!(kind_is("Conv2d 1x1", "Conv2d 1x1"));
        assert!(!kind_is("Conv2d 1x11", "Conv2d 1x1"));
        assert!(kind_is("BatchNorm2d training", "BatchNorm"));
        assert!(kind_is("BatchNorm2d training", "BatchNorm2d training"));
        assert!(!kind_is("BatchNorm2d eval", "BatchNorm2d training"));
    }

    #[test]
    fn a_bypass_must_prove_itself() {
        // Not loaded at all (python -I): not credited.
        let c = summarize(&[]);
        assert!(c
            .failure(&Bypass::All)
            .unwrap()
            .contains("isolated interpreter"));
        assert_eq!(c.failure(&Bypass::None), None);
        // Loaded, but a convolution ran on MIOpen (cudnn turned back on).
        let mut r = base();
        r[1]["bypass"] = json!(true);
        r.extend([conv(1, "Conv2d 3x3", "cuda:0", "MIOpen"), returned(1)]);
        let c = summarize(&r);
        assert!(
            c.failure(&Bypass::All).unwrap().contains("ran on MIOpen"),
            "{c:?}"
        );
        // Loaded, PyTorch's own kernels: bypassed.
        let mut r = base();
        r[1]["bypass"] = json!(true);
        r.extend([conv(1, "Conv2d 3x3", "cuda:0", "PyTorch"), returned(1)]);
        assert_eq!(summarize(&r).failure(&Bypass::All), None);
        // Only batch norms routed: a convolution on MIOpen is no failure, a batch norm is.
        let mut r = base();
        r[1]["bypass_kinds"] = json!(["BatchNorm"]);
        let mut bn = op(
            2,
            "BatchNorm2d training",
            "miopen_batch_norm",
            "batch/instance norm",
            "cuda:0",
        );
        bn["backend_family"] = json!("MIOpen");
        r.extend([
            conv(1, "Conv2d 3x3", "cuda:0", "MIOpen"),
            returned(1),
            bn,
            returned(2),
        ]);
        let kinds = Bypass::Kinds(vec!["BatchNorm".into()]);
        assert!(
            summarize(&r)
                .failure(&kinds)
                .unwrap()
                .contains("BatchNorm2d training [miopen_batch_norm] (float32) ran on MIOpen"),
            "{:?}",
            summarize(&r).failure(&kinds)
        );
        // Loaded in a Python that never imported torch: nothing shows the bypass.
        let c = summarize(&[json!({"event": "start", "pid": 7})]);
        assert!(
            c.failure(&Bypass::All).unwrap().contains("not shown"),
            "{c:?}"
        );
    }

    #[test]
    fn a_python_without_a_rocm_torch_is_an_environment_problem() {
        let c = summarize(&[
            json!({"event": "start", "pid": 7}),
            json!({"event": "torch_missing", "pid": 7, "python": "/usr/bin/python3"}),
        ]);
        assert_eq!(
            c.environment_problem().unwrap(),
            "/usr/bin/python3 has no PyTorch (import torch fails)"
        );
        let c = summarize(&[
            json!({"event": "start", "pid": 7}),
            json!({"event": "torch", "pid": 7, "torch": "2.11.0+cu130", "hip": null, "cuda": "13.0"}),
        ]);
        assert!(c.environment_problem().unwrap().contains("CUDA build"));
    }

    #[test]
    fn the_op_a_process_died_in_is_named() {
        let mut r = base();
        r.extend([
            conv(1, "Conv2d 3x3", "cuda:0", "MIOpen"),
            returned(1),
            result(1, "forward", 1e-7, true),
            conv(2, "Conv2d 1x1", "cuda:0", "MIOpen"),
        ]);
        assert_eq!(
            summarize(&r).unfinished.as_deref(),
            Some("Conv2d 1x1 [convolution] (float32)")
        );
        assert_eq!(summarize(&r).failing_kinds(), vec!["Conv2d 1x1".to_owned()]);
    }

    #[test]
    fn a_raise_the_program_caught_is_a_failing_kind_and_a_later_open_op_is_not() {
        let mut r = base();
        let mut bn = op(
            1,
            "BatchNorm2d training",
            "miopen_batch_norm",
            "batch/instance norm",
            "cuda:0",
        );
        bn["backend_family"] = json!("MIOpen");
        r.extend([
            bn,
            json!({"event": "raised", "pid": 7, "id": 1,
                   "error": "RuntimeError: miopenStatusUnknownError"}),
            conv(2, "Conv2d 3x3", "cuda:0", "MIOpen"),
            conv(3, "Conv2d 1x1", "cuda:0", "MIOpen"),
            returned(3),
            result(3, "forward", 1e-7, true),
        ]);
        let c = summarize(&r);
        // The batch norm raised; the 3x3 never returned but is not where the process ended.
        assert_eq!(c.failing_kinds(), vec!["BatchNorm2d training".to_owned()]);
        assert!(
            c.unchecked()
                .iter()
                .any(|u| u.starts_with("miopen_batch_norm (its call raised")),
            "{:?}",
            c.unchecked()
        );
    }

    #[test]
    fn what_the_check_could_not_see_is_never_counted_right() {
        // A wrong result after 64 right ones is kept; an op the check failed on is unchecked.
        let mut r = base();
        r.extend([
            op(
                1,
                "_fused_adam_ 64 tensors",
                "_fused_adam_",
                "optimizer update",
                "cuda:0",
            ),
            returned(1),
        ]);
        for _ in 0..70 {
            r.push(result(1, "updated self", 1e-8, true));
        }
        r.push(result(1, "updated exp avg 3", 0.5, false));
        r.extend([
            op(2, "mm 4x4, 4x4", "mm", "GEMM", "cuda:0"),
            returned(2),
            result(2, "forward", 1e-8, true),
            json!({"event": "check_error", "pid": 7, "id": 2, "error": "ValueError: x"}),
            json!({"event": "overflow", "pid": 7, "max_ops": 3000}),
        ]);
        let c = summarize(&r);
        assert!(
            c.failure(&Bypass::None)
                .unwrap()
                .contains("updated exp avg 3"),
            "{c:?}"
        );
        let u = c.unchecked();
        assert!(
            u.iter().any(|l| l.starts_with("mm (the check failed")),
            "{u:?}"
        );
        assert!(u.iter().any(|l| l.contains("3,000")), "{u:?}");
        // GPU used, no op seen (the work ran in a thread the check does not watch).
        let mut r = base();
        r.push(json!({"event": "exit", "pid": 7, "gpu_used": true}));
        let c = summarize(&r);
        assert!(
            c.unchecked()
                .iter()
                .any(|l| l.contains("saw none of its ops")),
            "{:?}",
            c.unchecked()
        );
    }

    #[test]
    fn an_op_checked_again_stands_for_the_first() {
        let mut r = base();
        r.extend([
            conv(1, "Conv2d 3x3", "cuda:0", "MIOpen"),
            returned(1),
            json!({"event": "skipped", "pid": 7, "id": 1, "why": "an input is not finite"}),
        ]);
        let mut again = conv(2, "Conv2d 3x3", "cuda:0", "MIOpen");
        again["again_for"] = json!(1);
        r.extend([again, returned(2), result(2, "forward", 1e-7, true)]);
        let c = summarize(&r);
        assert_eq!(c.op_count, 1);
        assert_eq!(c.all[0].skipped, vec!["an input is not finite".to_owned()]);
        assert!(c.verdict.contains("all 1 were right"), "{}", c.verdict);
    }

    #[test]
    fn records_are_read_without_following_links() {
        let d = std::env::temp_dir().join(format!("rdna1ctl-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("check-1.jsonl"), "{\"event\":\"start\"}\nnot json\n").unwrap();
        std::fs::write(d.join("secret"), "{\"event\":\"start\"}\n").unwrap();
        std::os::unix::fs::symlink(d.join("secret"), d.join("check-2.jsonl")).unwrap();
        let r = read_dir(&d);
        assert_eq!(r.len(), 1, "{r:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn facts_name_the_families_that_failed_and_the_verdict_says_bf16_and_the_switches() {
        let mut r = base();
        let mut attn = op(
            1,
            "sdpa",
            "_scaled_dot_product_flash_attention",
            "attention",
            "cuda:0",
        );
        attn["dtype"] = json!("bfloat16");
        let mm = op(2, "mm", "mm", "GEMM", "cuda:0");
        r.extend([attn, result(1, "forward", 1e-6, true), returned(1)]);
        r.extend([mm, result(2, "forward", 1e-2, false), returned(2)]);
        r.push(
            json!({"event": "graph", "pid": 7, "id": 3, "graph": "forward 0",
                      "kernels": ["triton_poi_fused_0"], "ops": ["add"]}),
        );
        let mut g = result(3, "forward", 1.0, false);
        g["event"] = json!("graph_result");
        r.push(g);
        r.push(json!({"event": "switches", "pid": 7, "sdpa_off": ["flash"], "bf16_as": null}));
        let c = summarize(&r);
        let f = c.facts();
        assert_eq!(f.families, ["attention", "GEMM"]);
        assert_eq!(f.failing, ["GEMM", "compiled"]);
        assert_eq!(f.attention_kernels, ["flash"]);
        assert!(f.compiled && f.bf16);
        assert_eq!(c.switched, ["flash attention off"]);
        assert_eq!(c.switches_failure(true), None);
        assert!(summarize(&base()).switches_failure(true).is_some());
        // The wrong GEMM leads the verdict; the full sentence (all right) says the rest.
        let mut ok = base();
        let mut attn = op(
            1,
            "sdpa",
            "_scaled_dot_product_flash_attention",
            "attention",
            "cuda:0",
        );
        attn["dtype"] = json!("bfloat16");
        ok.extend([attn, result(1, "forward", 1e-6, true), returned(1)]);
        ok.push(json!({"event": "switches", "pid": 7, "sdpa_off": [], "bf16_as": "float16"}));
        let v = summarize(&ok).verdict;
        assert!(
            v.contains("bfloat16 ran: on RDNA1 (gfx101x) it is emulated"),
            "{v}"
        );
        assert!(v.contains("in the program: bfloat16 as float16"), "{v}");
    }
}
