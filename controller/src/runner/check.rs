//! The in-process check's records (dist/field-kit/python/rdna1_check.py), read back after a run:
//! which Python processes loaded it, the torch they imported, every distinct convolution and
//! batch norm with its device, backend and errors against float64, and what a run's verdict
//! takes from them: wrong numbers, a network that ran on the CPU, a MIOpen bypass that was
//! not in effect, or a Python without a ROCm PyTorch.
//!
//! The records are the command's (its user writes them): they are read without following
//! links, regular files only, each and in all bounded; a line that is not a record is skipped.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// At most this many bytes of each process's file, this many files, and this many bytes in all
/// (root reads what the user's processes wrote, while the module's mode is the run's).
const FILE_MAX: u64 = 4 << 20;
const FILES_MAX: usize = 256;
const TOTAL_MAX: u64 = 16 << 20;
/// Layers kept in a run's document (the verdict counts them all).
const LAYERS_KEPT: usize = 200;

/// One direction of one layer checked against float64.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DirectionJson {
    /// `forward`, `input gradient`, `weight gradient` or `bias gradient`.
    pub direction: String,
    /// The arithmetic the tolerance is for: float32, tf32, float16 or bfloat16.
    pub math: String,
    /// RMS of the difference over the largest magnitude (MIOpen's rms_range); null: not finite.
    pub rms_rel: Option<f64>,
    /// Largest difference over the largest reference magnitude; null: not finite.
    pub max_rel: Option<f64>,
    pub tolerance_rms: f64,
    pub tolerance_max: f64,
    pub ok: bool,
    /// Where the checked value came from when not the program's own call (a re-run on a
    /// slice), or which part of it (a batch norm's channels).
    pub note: Option<String>,
}

/// One distinct convolution or batch-norm call.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LayerJson {
    /// The layer in words: `Conv2d 3x3 stride 2`, `BatchNorm2d training`.
    pub kind: String,
    /// torch.nn.functional's name: conv2d, conv_transpose2d, batch_norm, ...
    pub op: String,
    pub input: Vec<u64>,
    pub dtype: String,
    /// Autocast's type when it was on, e.g. float16.
    pub autocast: Option<String>,
    /// contiguous, channels_last or strided.
    pub layout: String,
    /// `cuda:0` (ROCm too), `cpu`.
    pub device: String,
    pub device_name: String,
    /// MIOpen, cuDNN, PyTorch (its own GPU kernels) or PyTorch (CPU); null if unknown.
    pub backend: Option<String>,
    /// PyTorch's own name for it (ConvBackend, or the batch norm's autograd node).
    pub backend_detail: Option<String>,
    /// Whether its numbers were checked (on the GPU, with the numerics on).
    pub checked: bool,
    pub results: Vec<DirectionJson>,
    /// Whether the call had an autograd node: its gradients were to be checked at backward.
    pub backward: bool,
    /// Why a direction was not judged (an overflow in the type, a loss scaler's step).
    pub skipped: Vec<String>,
    /// The check's own failure on this layer, if it failed.
    pub error: Option<String>,
    /// The process that made the call.
    pub pid: u32,
    /// Whether its call returned (its backend was recorded after it); not in the JSON.
    #[serde(skip)]
    #[schemars(skip)]
    pub returned: bool,
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
    /// Distinct calls seen (all of them; `layers` keeps 200, those with a wrong result first).
    pub layer_count: u32,
    pub layers: Vec<LayerJson>,
    /// Every layer, which the verdict and `failure` read.
    #[serde(skip)]
    #[schemars(skip)]
    all: Vec<LayerJson>,
    /// A layer whose checks never came: where a process stopped (died) in it.
    pub unfinished: Option<String>,
    /// The check's own failures (it never stops the program).
    pub errors: Vec<String>,
    /// In one sentence.
    pub verdict: String,
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

/// The check's records of one run, summed up.
pub fn summarize(records: &[Value]) -> CheckJson {
    let mut c = CheckJson::default();
    // Layers by (pid, id): each process numbers its own.
    let mut layers: BTreeMap<(u64, u64), LayerJson> = BTreeMap::new();
    let mut order: Vec<(u64, u64)> = Vec::new();
    // Layers whose call returned (their backend was recorded after it).
    let mut returned = std::collections::BTreeSet::new();
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
                c.bypass |= r.get("bypass").and_then(Value::as_bool) == Some(true)
                    || r.get("bypass_kinds")
                        .and_then(Value::as_array)
                        .is_some_and(|k| !k.is_empty());
            }
            "torch_missing" => {
                c.torch_missing = c.torch_missing.take().or_else(|| s(r, "python"));
            }
            "layer" => {
                let input = r
                    .get("input")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default();
                let l = LayerJson {
                    kind: s(r, "kind").unwrap_or_else(|| "?".into()),
                    op: s(r, "op").unwrap_or_default(),
                    input,
                    dtype: s(r, "dtype").unwrap_or_default(),
                    autocast: s(r, "autocast"),
                    layout: s(r, "layout").unwrap_or_default(),
                    device: s(r, "device").unwrap_or_default(),
                    device_name: s(r, "device_name").unwrap_or_default(),
                    backend: None,
                    backend_detail: None,
                    checked: r.get("checked").and_then(Value::as_bool) == Some(true),
                    results: Vec::new(),
                    backward: false,
                    skipped: Vec::new(),
                    error: None,
                    pid: pid as u32,
                    returned: false,
                };
                // Checked again (its backward could not be judged the first time): this
                // record stands for the layer.
                if let Some(old) = r.get("again_for").and_then(Value::as_u64)
                    && let Some(prev) = layers.remove(&(pid, old))
                {
                    order.retain(|k| *k != (pid, old));
                    returned.remove(&(pid, old));
                    let mut l = l;
                    l.skipped = prev.skipped;
                    layers.insert((pid, id), l);
                    order.push((pid, id));
                    continue;
                }
                if layers.insert((pid, id), l).is_none() {
                    order.push((pid, id));
                }
            }
            "backend" => {
                returned.insert((pid, id));
                if let Some(l) = layers.get_mut(&(pid, id)) {
                    l.backend = s(r, "family");
                    l.backend_detail = s(r, "backend");
                    l.backward = r.get("backward").and_then(Value::as_bool) == Some(true);
                }
            }
            "skipped" => {
                if let Some(l) = layers.get_mut(&(pid, id))
                    && let Some(why) = s(r, "why")
                    && l.skipped.len() < 4
                {
                    l.skipped.push(why);
                }
            }
            "result" => {
                if let Some(l) = layers.get_mut(&(pid, id)) {
                    l.results.push(DirectionJson {
                        direction: s(r, "direction").unwrap_or_default(),
                        math: s(r, "math").unwrap_or_default(),
                        rms_rel: f(r, "rms_rel"),
                        max_rel: f(r, "max_rel"),
                        tolerance_rms: f(r, "tolerance_rms").unwrap_or(0.0),
                        tolerance_max: f(r, "tolerance_max").unwrap_or(0.0),
                        ok: r.get("ok").and_then(Value::as_bool) == Some(true),
                        note: s(r, "note"),
                    });
                }
            }
            "check_error" => {
                if let Some(l) = layers.get_mut(&(pid, id))
                    && l.error.is_none()
                {
                    l.error = s(r, "error");
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
    // The last layer a process announced that never finished: its call never returned (no
    // backend), or its forward check never came (the GPU's work surfaces there: the check
    // waits for it). The process stopped in it.
    c.unfinished = order
        .iter()
        .rev()
        .filter_map(|k| layers.get(k).map(|l| (returned.contains(k), l)))
        .find(|(returned, l)| {
            let checked = !l.checked || !l.results.is_empty() || l.error.is_some();
            !(*returned && checked)
        })
        .map(|(_, l)| describe(l));
    c.layer_count = order.len() as u32;
    c.all = order
        .into_iter()
        .filter_map(|k| {
            let mut l = layers.remove(&k)?;
            l.returned = returned.contains(&k);
            Some(l)
        })
        .collect();
    // The document keeps the layers with a wrong result first.
    let mut kept: Vec<&LayerJson> = c.all.iter().collect();
    kept.sort_by_key(|l| l.results.iter().all(|r| r.ok));
    c.layers = kept.into_iter().take(LAYERS_KEPT).cloned().collect();
    c.verdict = c.sentence();
    c
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

/// `Conv2d 1x1 (float16 autocast, channels_last, cuda:0)`.
fn describe(l: &LayerJson) -> String {
    let mut t = vec![match &l.autocast {
        Some(a) => format!("{a} autocast"),
        None => l.dtype.clone(),
    }];
    if l.layout != "contiguous" && !l.layout.is_empty() {
        t.push(l.layout.clone());
    }
    format!("{} ({})", l.kind, t.join(", "))
}

fn number(x: Option<f64>) -> String {
    x.map_or_else(|| "a non-finite amount".into(), |v| format!("{v:.1e}"))
}

fn is_conv(l: &LayerJson) -> bool {
    l.op.starts_with("conv")
}

impl CheckJson {
    /// The first wrong result: `Conv2d 1x1 (float32): weight gradient off by 1.0e-2 of its
    /// largest value (RMS 3.0e-3; tolerances 1.0e-3 and 1.0e-4)`.
    fn wrong(&self) -> Vec<String> {
        self.all
            .iter()
            .flat_map(|l| {
                l.results.iter().filter(|r| !r.ok).map(move |r| {
                    format!(
                        "{}: {} off by {} of its largest value (RMS {}; tolerances {:.0e} and {:.0e} RMS){}",
                        describe(l),
                        r.direction,
                        number(r.max_rel),
                        number(r.rms_rel),
                        r.tolerance_max,
                        r.tolerance_rms,
                        r.note.as_ref().map(|n| format!(", {n}")).unwrap_or_default()
                    )
                })
            })
            .collect()
    }

    /// The kinds of the layers on the GPU that were wrong or whose call never returned (an
    /// error, or the process died in it), in the check's words, each once.
    pub fn failing_kinds(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for l in self.on("cuda") {
            let bad = l.results.iter().any(|r| !r.ok) || !l.returned;
            if bad && !v.contains(&l.kind) {
                v.push(l.kind.clone());
            }
        }
        v
    }

    fn on(&self, device: &str) -> Vec<&LayerJson> {
        self.all
            .iter()
            .filter(|l| l.device.split(':').next() == Some(device))
            .collect()
    }

    fn counts(layers: &[&LayerJson]) -> String {
        let conv = layers.iter().filter(|l| is_conv(l)).count();
        let bn = layers.len() - conv;
        let n =
            |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        match (conv, bn) {
            (c, 0) => n(c, "distinct convolution", "distinct convolutions"),
            (0, b) => n(b, "distinct batch norm", "distinct batch norms"),
            (c, b) => format!(
                "{} and {}",
                n(c, "distinct convolution", "distinct convolutions"),
                n(b, "batch norm", "batch norms")
            ),
        }
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
        if self.all.is_empty() {
            return "no convolution or batch norm was called".into();
        }
        let wrong = self.wrong();
        if let Some(first) = wrong.first() {
            let more = match wrong.len() {
                1 => String::new(),
                n => format!(" ({} more)", n - 1),
            };
            return format!("wrong numbers: {first}{more}");
        }
        let gpu = self.on("cuda");
        let cpu = self.on("cpu");
        if gpu.is_empty() {
            return format!(
                "your network's {} ran on the CPU, none on the GPU",
                Self::counts(&cpu)
            );
        }
        let mut backends: Vec<&str> = gpu.iter().filter_map(|l| l.backend.as_deref()).collect();
        backends.sort_unstable();
        backends.dedup();
        let checked = gpu.iter().filter(|l| l.checked).count();
        // A layer whose call had an autograd node but whose gradients never came (no
        // backward seen) was checked forward only: the sentence says so.
        let forward_only = gpu
            .iter()
            .filter(|l| {
                l.checked && l.backward && !l.results.iter().any(|r| r.direction != "forward")
            })
            .count();
        let how = if checked == 0 {
            " (numbers not checked)".to_owned()
        } else if checked == gpu.len()
            && forward_only == 0
            && gpu.iter().all(|l| !l.results.is_empty())
        {
            " and were right against float64".to_owned()
        } else if forward_only > 0 {
            format!(
                " (those checked were right against float64; {forward_only} forward only: no \
                 backward pass of theirs was seen)"
            )
        } else {
            " (those checked were right against float64)".to_owned()
        };
        let cpu_too = if cpu.is_empty() {
            String::new()
        } else {
            format!("; {} ran on the CPU", Self::counts(&cpu))
        };
        format!(
            "your network's {} ran on the GPU ({}){how}{cpu_too}",
            Self::counts(&gpu),
            if backends.is_empty() {
                "backend unknown".into()
            } else {
                backends.join(", ")
            }
        )
    }

    /// Why a run with these records is no pass, or None. `bypass`: the run was to have MIOpen
    /// bypassed (all of it, or for some layer kinds), which it must prove.
    pub fn failure(&self, bypass: &Bypass) -> Option<String> {
        if let Some(w) = self.wrong().first() {
            return Some(format!("wrong numbers: {w}"));
        }
        // A network on the CPU is said first: under the bypass too, that is its trouble.
        if !self.all.is_empty() && self.on("cuda").is_empty() {
            return Some(format!(
                "ran on the CPU: your network's {}, none on the GPU",
                Self::counts(&self.on("cpu"))
            ));
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
        let routed = |l: &&LayerJson| kinds.is_none_or(|k| k.iter().any(|k| kind_is(&l.kind, k)));
        let gpu: Vec<&LayerJson> = self.on("cuda").into_iter().filter(routed).collect();
        if let Some(l) = gpu
            .iter()
            .find(|l| matches!(l.backend.as_deref(), Some("MIOpen" | "cuDNN")))
        {
            return Some(format!(
                "MIOpen bypass not in effect: {} ran on {} (torch.backends.cudnn.enabled was \
                 set back to True)",
                describe(l),
                l.backend.as_deref().unwrap_or("?")
            ));
        }
        if !gpu.iter().any(|l| l.backend.as_deref() == Some("PyTorch")) {
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

    /// Why the environment cannot run the workload, as the processes found it.
    pub fn environment_problem(&self) -> Option<String> {
        if self.torch.is_none() {
            return self
                .torch_missing
                .as_ref()
                .map(|py| format!("{py} has no PyTorch (import torch fails)"));
        }
        if self.hip.is_none() {
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

    fn layer(id: u64, kind: &str, op: &str, device: &str) -> Value {
        json!({"event": "layer", "pid": 7, "id": id, "kind": kind, "op": op, "dtype": "float32",
               "autocast": null, "layout": "contiguous", "device": device,
               "device_name": "AMD Radeon RX 5700 XT (gfx1010)", "checked": device != "cpu",
               "input": [8, 64, 56, 56]})
    }

    fn backend(id: u64, family: &str) -> Value {
        json!({"event": "backend", "pid": 7, "id": id, "backend": "Miopen", "family": family})
    }

    fn result(id: u64, direction: &str, max_rel: f64, ok: bool) -> Value {
        json!({"event": "result", "pid": 7, "id": id, "direction": direction, "math": "float32",
               "rms_rel": max_rel / 10.0, "max_rel": max_rel, "tolerance_rms": 1e-4,
               "tolerance_max": 1e-3, "ok": ok})
    }

    fn base() -> Vec<Value> {
        vec![
            json!({"event": "start", "pid": 7}),
            json!({"event": "torch", "pid": 7, "torch": "2.9.1+rocm6.4", "hip": "6.4.1",
                   "cuda": null, "bypass": false, "numerics": true}),
        ]
    }

    #[test]
    fn right_numbers_on_the_gpu_are_counted_by_kind() {
        let mut r = base();
        r.extend([
            layer(1, "Conv2d 3x3", "conv2d", "cuda:0"),
            backend(1, "MIOpen"),
            result(1, "forward", 1e-7, true),
            layer(2, "BatchNorm2d training", "batch_norm", "cuda:0"),
            backend(2, "MIOpen"),
            result(2, "forward", 1e-7, true),
        ]);
        let c = summarize(&r);
        assert_eq!(c.failure(&Bypass::None), None);
        assert_eq!(
            c.verdict,
            "your network's 1 distinct convolution and 1 batch norm ran on the GPU (MIOpen) and \
             were right against float64"
        );
        assert_eq!(c.environment_problem(), None);
    }

    #[test]
    fn a_wrong_layer_is_named_with_its_direction() {
        let mut r = base();
        r.extend([
            layer(1, "Conv2d 1x1", "conv2d", "cuda:0"),
            backend(1, "MIOpen"),
            result(1, "forward", 1e-7, true),
            result(1, "weight gradient", 1e-2, false),
        ]);
        let c = summarize(&r);
        let f = c.failure(&Bypass::None).unwrap();
        assert!(
            f.starts_with("wrong numbers: Conv2d 1x1 (float32): weight gradient off by 1.0e-2"),
            "{f}"
        );
        assert!(c.verdict.contains("weight gradient"), "{}", c.verdict);
    }

    #[test]
    fn a_network_on_the_cpu_fails() {
        let mut r = base();
        r.extend([
            layer(1, "Conv2d 3x3", "conv2d", "cpu"),
            backend(1, "PyTorch (CPU)"),
        ]);
        let c = summarize(&r);
        assert!(
            c.failure(&Bypass::None)
                .unwrap()
                .starts_with("ran on the CPU"),
            "{c:?}"
        );
        assert!(c.verdict.contains("ran on the CPU, none on the GPU"));
        // Under the bypass as well: the CPU is the trouble, not the bypass.
        assert!(
            c.failure(&Bypass::All)
                .unwrap()
                .starts_with("ran on the CPU"),
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
        r.extend([
            layer(1, "Conv2d 3x3", "conv2d", "cuda:0"),
            backend(1, "MIOpen"),
        ]);
        let c = summarize(&r);
        assert!(
            c.failure(&Bypass::All).unwrap().contains("ran on MIOpen"),
            "{c:?}"
        );
        // Loaded, PyTorch's own kernels: bypassed.
        let mut r = base();
        r[1]["bypass"] = json!(true);
        r.extend([
            layer(1, "Conv2d 3x3", "conv2d", "cuda:0"),
            backend(1, "PyTorch"),
        ]);
        assert_eq!(summarize(&r).failure(&Bypass::All), None);
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
    fn the_layer_a_process_died_in_is_named() {
        let mut r = base();
        r.extend([
            layer(1, "Conv2d 3x3", "conv2d", "cuda:0"),
            backend(1, "MIOpen"),
            result(1, "forward", 1e-7, true),
            layer(2, "Conv2d 1x1", "conv2d", "cuda:0"),
        ]);
        assert_eq!(
            summarize(&r).unfinished.as_deref(),
            Some("Conv2d 1x1 (float32)")
        );
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
}
