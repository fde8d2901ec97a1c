//! Which MIOpen solver was running when the process died, from MIOpen's log on its standard
//! error (`MIOPEN_LOG_LEVEL=6`, kernels serialized by `AMD_SERIALIZE_KERNEL=3`, so a kernel's
//! fault surfaces before MIOpen logs anything after it). MIOpen's logger writes
//! `[host] [tid] MIOpen(HIP)[ elapsed][ (date)]: <Level> [<function>] <message>` (src/logger.cpp,
//! `LoggingPrefix`); docs/CLI.md, search, cites each line read here:
//!
//! - `Evaluating Solver: <algorithm>:<solver>` (Find, rocm-libraries' MIOpen), `solver_id =
//!   <solver>` (immediate mode), `Starting search: <solver>, enforce:` (tuning): the solver
//!   whose kernels run next;
//! - before rocm-libraries, Find names no solver before running it: each algorithm's
//!   candidates are `[SearchForAllSolutions] <solver>: Success.` lines (after `[Find] Starting
//!   find for <algorithm>`), evaluated algorithm by algorithm in the order of their names,
//!   each done when `[EvaluateInvokers] <solver>: <kernel>: <time> < <best>` is logged; the one
//!   running is the first candidate not done;
//! - a run after Find: `[SetAsFound1_0] Solver <solver> registered as find 1.0 best for
//!   <algorithm>` then `[Convolution{Forward,BackwardData,BackwardWeights}] algo = <n>`.

use std::collections::{BTreeMap, BTreeSet};

use super::solvers;

/// What ROCr prints when a kernel faults, before it aborts the process.
const FAULT: &str = "Memory access fault by GPU";

/// The last thing the log said was about to run.
#[derive(Debug, PartialEq)]
enum Last {
    Nothing,
    /// A solver named as it starts.
    Solver(String),
    /// Find's evaluation of the candidates (before rocm-libraries).
    Evaluating,
    /// A run after Find with algorithm `n` of a direction.
    Run(&'static str, u32),
    /// A kernel of something else than a convolution (a batch norm's, say).
    Other,
}

/// Whether a kernel MIOpen launches is a convolution's: its other primitives' kernels are
/// named after them (MIOpenBatchNorm*, MIOpenPooling*, MIOpenLRN*, MIOpenSoftmax*, ...).
fn is_convolution_kernel(kernel: &str) -> bool {
    const OTHERS: [&str; 8] = [
        "BatchNorm",
        "Pooling",
        "LRN",
        "Lrn",
        "Softmax",
        "Activ",
        "Dropout",
        "RNN",
    ];
    !OTHERS.iter().any(|o| kernel.contains(o))
}

/// The solver MIOpen's log shows running when the process died, if it names one.
pub fn running_solver(log: &str) -> Option<String> {
    let end = log.find(FAULT).unwrap_or(log.len());
    let mut last = Last::Nothing;
    // Find's candidates, by algorithm in the order found; those evaluated.
    let mut algorithm = String::new();
    let mut candidates: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    // The solver registered as best per algorithm name.
    let mut best: BTreeMap<String, String> = BTreeMap::new();
    // Something ran since the last Find's setup (a candidate evaluated, a run, a solver
    // chosen): the next `Starting find for` begins a new Find. Other lines of the setup
    // (FindSolutionImpl, perf-db lookups) leave the candidates found so far in place.
    let mut ran_since_setup = true;
    for line in log[..end].lines() {
        let Some((function, message)) = parse(line) else {
            continue;
        };
        if let Some(kernel) = message
            .strip_prefix("kernel_name = ")
            .or_else(|| message.strip_prefix("Preparing kernel: "))
        {
            // A kernel of no convolution (batch norm, pooling, ...): no solver of ours runs.
            let kernel = kernel.split(',').next().unwrap_or(kernel);
            if !is_convolution_kernel(kernel) {
                last = Last::Other;
            }
            continue;
        }
        if let Some(rest) = message.strip_prefix("Evaluating Solver: ") {
            let solver = rest.rsplit(':').next().unwrap_or(rest).trim();
            last = Last::Solver(solver.to_owned());
        } else if let Some(rest) = message.strip_prefix("solver_id = ") {
            let solver = rest.split([',', ' ']).next().unwrap_or(rest);
            ran_since_setup = true;
            last = Last::Solver(solver.to_owned());
        } else if let Some(rest) = message.strip_prefix("Starting search: ") {
            let solver = rest.split(',').next().unwrap_or(rest);
            last = Last::Solver(solver.to_owned());
        } else if let Some(rest) = message.strip_prefix("Starting find for ") {
            if ran_since_setup {
                candidates.clear();
                done.clear();
                ran_since_setup = false;
            }
            algorithm = rest.trim().to_owned();
            // What runs from here is Find's candidates.
            last = Last::Evaluating;
        } else if function == "SearchForAllSolutions"
            && let Some(solver) = message.strip_suffix(": Success.")
        {
            candidates
                .entry(algorithm.clone())
                .or_default()
                .push(solver.to_owned());
        } else if function == "EvaluateInvokers"
            || message.starts_with("[EvaluateInvokers] Solver ")
        {
            // A candidate done (or skipped for its workspace: `Warning [IsEnoughWorkspace]
            // [EvaluateInvokers] Solver <S>, workspace required`, or before 3.0 `Warning:
            // skipping solver <S>`): the next one runs.
            ran_since_setup = true;
            let named = message
                .trim_start_matches("[EvaluateInvokers] Solver ")
                .trim_start_matches("solution(current vs best):")
                .trim_start_matches("Warning: skipping solver ");
            if let Some(solver) = named.split([':', ' ', ',']).next()
                && solvers::is_solver(solver)
            {
                done.insert(solver.to_owned());
            }
            last = Last::Evaluating;
        } else if let Some(rest) = message.strip_prefix("Solver ")
            && let Some((solver, tail)) = rest.split_once(" registered as find 1.0 best for ")
        {
            let algo = tail.split(' ').next().unwrap_or(tail);
            best.insert(algo.to_owned(), solver.to_owned());
            // Registered after Find's evaluation: Find is over.
            ran_since_setup = true;
            last = Last::Nothing;
        } else if let Some(dir) = direction(function)
            && let Some(n) = message
                .strip_prefix("algo = ")
                .and_then(|r| r.split(',').next())
                .and_then(|n| n.trim().parse().ok())
        {
            ran_since_setup = true;
            last = Last::Run(dir, n);
        } else if message.contains(" Chosen Algorithm: ") {
            // Find is over; the run names its algorithm next.
            ran_since_setup = true;
            last = Last::Nothing;
        } else if function.contains("Immediate") || function == "CompileSolution" {
            ran_since_setup = true;
            last = Last::Nothing;
        }
    }
    match last {
        Last::Solver(s) => Some(s),
        Last::Evaluating => candidates
            .values()
            .flatten()
            .find(|s| !done.contains(*s))
            .cloned(),
        Last::Run(dir, n) => algorithm_name(dir, n).and_then(|a| best.get(&a).cloned()),
        Last::Nothing | Last::Other => None,
    }
}

/// A log line's function and message (None: not a line of MIOpen's logger with a level).
fn parse(line: &str) -> Option<(&str, &str)> {
    let at = line.find("MIOpen(")?;
    // The prefix ends at the first `: ` after `MIOpen(HIP)` (an elapsed time or a date may
    // come between them).
    let close = at + line[at..].find(')')?;
    let colon = close + line[close..].find(": ")?;
    let rest = &line[colon + 2..];
    let rest = rest.trim_start();
    let (level, rest) = rest.split_once(" [")?;
    if !matches!(
        level.rsplit(' ').next(),
        Some("Info" | "Info2" | "Trace" | "Warning" | "Error")
    ) {
        return None;
    }
    let (function, message) = rest.split_once("] ")?;
    Some((function, message.trim_end()))
}

/// The direction of a run function's name.
fn direction(function: &str) -> Option<&'static str> {
    match function {
        "ConvolutionForward" => Some("Fwd"),
        "ConvolutionBackwardData" => Some("BwdData"),
        "ConvolutionBackwardWeights" => Some("BwdWeights"),
        _ => None,
    }
}

/// `miopenConvolutionFwdAlgoDirect` for algorithm 1 forward (miopen.h's enums).
fn algorithm_name(dir: &str, n: u32) -> Option<String> {
    let name = match (dir, n) {
        (_, 0) => "GEMM",
        (_, 1) => "Direct",
        ("Fwd" | "BwdData", 2) => "FFT",
        (_, 3) => "Winograd",
        ("BwdData", 4) => return Some("miopenTransposeBwdDataAlgoGEMM".into()),
        (_, 5) => "ImplicitGEMM",
        _ => return None,
    };
    Some(format!("miopenConvolution{dir}Algo{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocm_libraries_names_the_solver_before_it_runs() {
        let log = "\
MIOpen(HIP): Info [EvaluateInvokers] Evaluating Solver: miopenConvolutionBwdWeightsAlgoDirect:ConvOclBwdWrW2<1>
MIOpen(HIP): Info [EvaluateInvokers] solution(current vs best):ConvOclBwdWrW2<1>: MIOpenCvBwdWrW: 1.2 < 3.40282e+38
MIOpen(HIP): Info [EvaluateInvokers] Evaluating Solver: miopenConvolutionBwdWeightsAlgoDirect:ConvOclBwdWrW53
Memory access fault by GPU node-1 (Agent handle: 0x1) on address 0x2. Reason: Page not present.
";
        assert_eq!(running_solver(log).as_deref(), Some("ConvOclBwdWrW53"));
    }

    #[test]
    fn before_rocm_libraries_the_first_candidate_not_done_was_running() {
        // Level 6, as MIOpen 3.3 writes it: candidates found, compiled, then evaluated in the
        // order of their algorithms' names; the first result is logged after its run.
        let log = "\
MIOpen(HIP): Command [LogCmdFindConvolution] ./bin/MIOpenDriver conv -n 8 -c 64 -F 4 -t 1
MIOpen(HIP): Info2 [Find] Starting find for miopenConvolutionBwdWeightsAlgoGEMM
MIOpen(HIP): Info2 [SearchForAllSolutions] GemmWrwUniversal: Success.
MIOpen(HIP): Info2 [Find] Starting find for miopenConvolutionBwdWeightsAlgoDirect
MIOpen(HIP): Info2 [SearchForAllSolutions] ConvOclBwdWrW2<1>: Success.
MIOpen(HIP): Info2 [SearchForAllSolutions] ConvOclBwdWrW53: Success.
MIOpen(HIP): Info2 [PrepareInvoker] Preparing kernel: MIOpenCvBwdWrW
MIOpen(HIP): Info2 [run] kernel_name = MIOpenCvBwdWrW, global_work_dim = { 4096, 256, 1 }, local_work_dim = { 256, 1, 1 }
MIOpen(HIP): Info [EvaluateInvokers] ConvOclBwdWrW2<1>: MIOpenCvBwdWrW: 1.23 < 3.40282e+38
MIOpen(HIP): Info2 [PrepareInvoker] Preparing kernel: MIOpenCvBwdWrW
MIOpen(HIP): Info2 [run] kernel_name = MIOpenCvBwdWrW, global_work_dim = { 4096, 256, 1 }, local_work_dim = { 256, 1, 1 }
Memory access fault by GPU node-1 (Agent handle: 0x55d3c1a2b3c0) on address 0x7f1c2e400000. Reason: Page not present or supervisor privilege.
";
        // Direct before GEMM (string order); ConvOclBwdWrW2<1> done: ConvOclBwdWrW53 ran.
        assert_eq!(running_solver(log).as_deref(), Some("ConvOclBwdWrW53"));
        // A Find after the run of another direction: its first candidate, not that run's.
        let after_run = "\
MIOpen(HIP): Info2 [SetAsFound1_0] Solver ConvOclDirectFwd registered as find 1.0 best for miopenConvolutionBwdDataAlgoDirect in x
MIOpen(HIP): Info [ConvolutionBackwardData] algo = 1, workspace = 0
MIOpen(HIP): Info2 [Find] Starting find for miopenConvolutionBwdWeightsAlgoDirect
MIOpen(HIP): Info2 [SearchForAllSolutions] ConvOclBwdWrW2<1>: Success.
MIOpen(HIP): Info2 [PrepareInvoker] Preparing kernel: MIOpenCvBwdWrW
Memory access fault by GPU node-1
";
        assert_eq!(
            running_solver(after_run).as_deref(),
            Some("ConvOclBwdWrW2<1>")
        );
        // Before any result: the first candidate.
        let first: String = log.lines().take(7).map(|l| format!("{l}\n")).collect();
        assert_eq!(running_solver(&first).as_deref(), Some("ConvOclBwdWrW2<1>"));
    }

    #[test]
    fn the_setup_lines_between_finders_keep_the_candidates() {
        // FindSolutionImpl and perf-db lines come between the finders' Success lines (MIOpen
        // 3.3, find_solution.hpp); the Direct candidates, evaluated first, must stay.
        let log = "\
MIOpen(HIP): Info2 [Find] Starting find for miopenConvolutionBwdWeightsAlgoDirect
MIOpen(HIP): Info [FindSolutionImpl] ConvOclBwdWrW2<1> (not searchable)
MIOpen(HIP): Info2 [SearchForAllSolutions] ConvOclBwdWrW2<1>: Success.
MIOpen(HIP): Info2 [Find] Starting find for miopenConvolutionBwdWeightsAlgoGEMM
MIOpen(HIP): Info [FindSolutionImpl] GemmWrwUniversal (not searchable)
MIOpen(HIP): Info2 [SearchForAllSolutions] GemmWrwUniversal: Success.
MIOpen(HIP): Warning [IsEnoughWorkspace] [EvaluateInvokers] Solver ConvOclBwdWrW2<1>, workspace required: 4096, provided ptr: 0 size: 0
MIOpen(HIP): Info2 [CallGemm] rocBLAS
Memory access fault by GPU node-1
";
        // ConvOclBwdWrW2<1> skipped for its workspace: GemmWrwUniversal ran.
        assert_eq!(running_solver(log).as_deref(), Some("GemmWrwUniversal"));
        let no_skip = log.replace("MIOpen(HIP): Warning [IsEnoughWorkspace]", "x");
        assert_eq!(
            running_solver(&no_skip).as_deref(),
            Some("ConvOclBwdWrW2<1>")
        );
    }

    #[test]
    fn a_batch_norm_kernel_after_a_convolution_blames_no_solver() {
        let log = "\
MIOpen(HIP): Info2 [SetAsFound1_0] Solver GemmBwdRest registered as find 1.0 best for miopenConvolutionBwdDataAlgoGEMM in x
MIOpen(HIP): Info [ConvolutionBackwardData] algo = 0, workspace = 0
MIOpen(HIP): Info2 [run] kernel_name = MIOpenBatchNormBwdSpatial, global_work_dim = { 1, 1, 1 }, local_work_dim = { 1, 1, 1 }
Memory access fault by GPU node-1
";
        assert_eq!(running_solver(log), None);
        // An elapsed time in the prefix and `): ` inside the message.
        let log = "MIOpen(HIP)   0.123: Info [ConvolutionWrwImmediate] solver_id = GemmWrwUniversal, workspace = 0 (a): b\n";
        assert_eq!(running_solver(log).as_deref(), Some("GemmWrwUniversal"));
    }

    #[test]
    fn immediate_mode_and_a_run_after_find_name_theirs() {
        let log = "MIOpen(HIP): Info [ConvolutionWrwImmediate] solver_id = ConvOclBwdWrW2<2>, workspace = 0\n";
        assert_eq!(running_solver(log).as_deref(), Some("ConvOclBwdWrW2<2>"));
        let log = "\
12345 MIOpen(HIP): Info2 [SetAsFound1_0] Solver GemmBwdRest registered as find 1.0 best for miopenConvolutionBwdDataAlgoGEMM in 64-56-56-3x3
12345 MIOpen(HIP): Info [FillFindReturnParameters] BWD Chosen Algorithm: GemmBwdRest , 0, 0.5
12345 MIOpen(HIP): Info [ConvolutionBackwardData] algo = 0, workspace = 4096
";
        assert_eq!(running_solver(log).as_deref(), Some("GemmBwdRest"));
        // A prefix with an elapsed time and a date (MIOPEN_ENABLE_LOGGING_ELAPSED_TIME, _DATE_TIME).
        let log = "MIOpen(HIP)   0.123 (2026-01-02T03:04:05.678Z): Info [ConvolutionForwardImmediate] solver_id = GemmFwdRest, workspace = 0\n";
        assert_eq!(running_solver(log).as_deref(), Some("GemmFwdRest"));
        // No MIOpen line naming a solver: nothing.
        assert_eq!(running_solver("Segmentation fault\n"), None);
        assert_eq!(
            running_solver("MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv\n"),
            None
        );
    }
}
