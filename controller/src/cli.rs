//! The command line (clap derive). Completions and the man page are generated from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rdna1_mtype_shared::policy::{Classes, Mode, Scope, VmScope};

/// Where the options every subcommand takes are listed in its help, apart from its own.
const GLOBAL: &str = "Global options";

/// Control the rdna1_mtype kernel module, which forces MTYPE_NC in the GPU page tables of
/// RDNA1 (gfx1010/1011/1012) VM mappings, and check what it did.
///
/// Forcing NC is a hypothesis for MIOpen's HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on
/// RDNA1, not a known fix: `rdna1ctl verify` shows, per live mapping, what was written, so you
/// can test it. Typical session:
///
///   sudo rdna1ctl enable          # enforce on every RDNA1 GPU
///   rdna1ctl status               # what is armed, per GPU
///   sudo rdna1ctl verify --duration 60   # run your PyTorch job meanwhile
///
/// Exit codes: 0 ok, 1 error, 2 usage (or a --root without sys/), 3 problems found
/// (verify, doctor, check-kernel, status --check), 4 needs root, 5 module not loaded.
/// Each command has a page of its own (`rdna1ctl man COMMAND`) and --help; the full reference
/// is CLI.md in /usr/share/doc/rdna1-mtype/.
#[derive(Parser, Debug)]
#[command(
    name = "rdna1ctl",
    version,
    propagate_version = true,
    // A global option given twice (an alias adding --json, a wrapper adding --root): the last
    // one wins, as in most tools, instead of a usage error.
    args_override_self = true,
    verbatim_doc_comment
)]
pub struct Cli {
    /// Read /sys, /proc, /dev and /etc below DIR instead of / (tests, offline diagnosis).
    /// Default: $RDNA1CTL_ROOT if set and not empty, else /. DIR must hold sys/.
    // The variable is read by `crate::run`, not clap: clap refuses an empty one ("a value is
    // required for --root"), which a user who never typed --root cannot make sense of.
    #[arg(long, global = true, value_name = "DIR", help_heading = GLOBAL)]
    pub root: Option<PathBuf>,

    /// Print one JSON document (its fields: CLI.md in /usr/share/doc/rdna1-mtype/) instead of
    /// text.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,

    /// More diagnostics on stderr: -v info, -vv debug, -vvv trace.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// Options of `doctor`.
#[derive(clap::Args, Debug, Default)]
pub struct DoctorArgs {
    /// The Python interpreter that runs the training (its torch is checked). Default:
    /// $VIRTUAL_ENV/bin/python if a venv is active, else python3 on PATH. With --root, the
    /// path as that tree's machine names it (/home/you/venv/bin/python); a path already below
    /// --root is taken back inside it.
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show the module (loaded, version, ABI, policy, layout, hook) and every AMD GPU: PCI
    /// address, name, gfx target, RDNA1 or not, in scope or not, and the module's counters.
    ///
    /// With --check, exits 0 only when at least one RDNA1 GPU is in the module's scope and
    /// every one that is, is protected; 3 otherwise (for scripts: `rdna1ctl status --check &&
    /// python train.py`).
    ///
    /// Example: `rdna1ctl status`
    Status {
        /// Exit 3 unless every in-scope RDNA1 GPU is protected (and there is one).
        #[arg(long)]
        check: bool,
    },
    /// Enforce MTYPE_NC (root only): mode enforce, with the scope, VM scope and classes given
    /// (others keep their value). Prints the policy as the module reads it back.
    ///
    /// Example: `sudo rdna1ctl enable --scope rdna1`
    Enable(PolicyArgs),
    /// Stop changing mappings (root only): mode off. Mappings made meanwhile keep their MTYPE.
    ///
    /// Example: `sudo rdna1ctl disable`
    Disable,
    /// Change the policy (root only), in one atomic step, and print it as the module reads it
    /// back. Options not given keep their value.
    ///
    /// Example: `sudo rdna1ctl set --mode audit --scope rdna1`
    Set {
        /// off (pass through), audit (count what enforce would change) or enforce (write NC).
        #[arg(long, value_parser = Offering::new(parse_mode, mode_words))]
        mode: Option<Mode>,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Set the policy from a config file (root only): what rdna1-mtype.service runs at boot.
    ///
    /// Unknown keys and bad values are rejected, naming the key, before anything is changed.
    ///
    /// Example: `sudo rdna1ctl apply --config /etc/rdna1-mtype/config.toml`
    Apply {
        /// The config file (its keys: CLI.md in /usr/share/doc/rdna1-mtype/): an absolute PATH below --root, a relative
        /// one from the current directory.
        #[arg(
            long,
            value_name = "PATH",
            default_value = "/etc/rdna1-mtype/config.toml"
        )]
        config: PathBuf,
        /// Check the file and print the policy it would set, without setting it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Show `struct amdgpu_bo`'s layout from this kernel's module BTF (/sys/kernel/btf/amdgpu)
    /// next to the module's, and with --apply give it to the module (root only).
    ///
    /// The module classifies buffer objects (coherent, uncached, doorbell, ...) only with a
    /// valid layout; without one it leaves every BO alone. Without module BTF
    /// (CONFIG_DEBUG_INFO_BTF_MODULES) it shows the module's own layout and warns that it
    /// cannot be checked against the running kernel (exit 0); --apply then refuses (exit 1).
    ///
    /// Example: `sudo rdna1ctl layout --apply`
    Layout {
        /// Write the layout to the module (root only).
        #[arg(long)]
        apply: bool,
    },
    /// Show the module's decision log: who mapped what on which device in which kind of VM
    /// (compute, graphics, unknown), the MTYPE requested, computed and written, the BO class and
    /// what was done, with the count of lost events.
    ///
    /// Calls that were already NC, made in mode off, for a device out of scope, in a VM outside
    /// the VM scope, or that map no valid page are counted in the stats, not logged.
    ///
    /// Example: `sudo rdna1ctl events --follow`
    Events {
        /// Keep printing new events until interrupted (with --json: one JSON object per line).
        #[arg(long)]
        follow: bool,
    },
    /// Check the policy against live GPU page-table updates (root only).
    ///
    /// Traces amdgpu:amdgpu_vm_update_ptes in a tracefs instance of its own (other tracing is
    /// not disturbed), decodes the MTYPE of every PTE written, and reports per device and pid
    /// the PTEs by MTYPE and every update that breaks the policy in force, beside the module's
    /// counters. Exits 3 if it saw a violation. The tracepoint does not say which kind of VM
    /// an update is in: under VM scope compute, only processes the module logged a decision for
    /// in a compute VM are judged; the others' updates are counted as outside the VM scope.
    ///
    /// Example: `sudo rdna1ctl verify --duration 60` while a PyTorch job runs.
    Verify(VerifyArgs),
    /// Check everything the module and ROCm on RDNA1 depend on: kernel config, Secure Boot,
    /// DKMS, toolchain, amdgpu and its parameters (noretry), PCIe atomics, access to /dev/kfd
    /// and the render node, *_VISIBLE_DEVICES, ROCm, HSA_OVERRIDE_GFX_VERSION, the PyTorch in
    /// use and the gfx targets of the code objects it loads, the last GPU faults in the kernel
    /// log. Each check: ok, warn or fail, with a one-line fix. Exits 3 if a check failed.
    /// Run it as the user who trains, in the shell that trains (venv active).
    ///
    /// Examples: `rdna1ctl doctor`, `rdna1ctl doctor --python ~/rocm-venv/bin/python`
    Doctor(DoctorArgs),
    /// Run the experiment an RDNA1 owner can report (root only): doctor and status, then the
    /// owner's command under mode off, audit and enforce, each with verify, the module's events,
    /// the GPU faults of its processes in the kernel log, KFD's proof that it used the GPU and
    /// the in-process check of its numbers around it; one JSON file and a summary of what the
    /// runs show.
    ///
    /// The command never runs as root: as the user who ran sudo (SUDO_UID/SUDO_GID) or pkexec
    /// (PKEXEC_UID), with that user's groups (render, video: /dev/kfd), HOME, USER and LOGNAME;
    /// as real root, give --user. It keeps this process's environment otherwise: use `sudo -E`
    /// (an active venv's python3 is then used even where sudo reset PATH), `--python
    /// /path/to/venv/bin/python3` or a full path. The default command is the layer battery
    /// shipped with rdna1ctl (/usr/share/rdna1-mtype/battery.py): a network's kinds of layers,
    /// each forward and backward against float64. A Python that cannot run it (no torch, a
    /// CUDA or CPU build, no GPU) ends the report after the run under off: incomplete. The
    /// policy in force before is put back afterwards, also on an error, Ctrl-C or SIGTERM.
    /// Exits 0 when the three runs were recorded (whatever they show), 5 without the module
    /// (the file then holds doctor and status).
    ///
    /// Example: `sudo -E rdna1ctl report`, `sudo rdna1ctl report -- ./venv/bin/python train.py`
    Report(ReportArgs),
    /// Find what makes your network train on the GPU, correctly: runs the command (default: the
    /// shipped layer battery, which checks every kind of layer against float64) under one
    /// configuration after another until one passes: exit 0, no GPU fault of its processes,
    /// GPU work seen in KFD, and the numbers right where checked (a Python command's GPU ops
    /// and compiled graphs are checked in its own process).
    ///
    /// The plan, in the order the public evidence gives (docs/CLI.md cites it): your
    /// environment as it is (a pass: nothing to change); only the RDNA1 GPU visible on a host
    /// with several; HSA_OVERRIDE_GFX_VERSION removed, or 10.1.0 on a gfx1011/gfx1012 (never
    /// 10.3.0), kept for the steps after it; where the check named them failing: compiled code
    /// (Triton's buffer ops off, AMDGCN_USE_BUFFER_OPS=0, with caches of its own; then
    /// torch.compile off, a diagnostic), attention (each SDPA kernel off in turn, the math
    /// kernel last), GEMMs (rocBLAS), bfloat16 (answered with float16, then float32: gfx10 has
    /// none); MIOpen's steps, unless no convolution or batch norm ran on the GPU:
    /// MIOPEN_FIND_MODE=FAST; then the elimination: the
    /// failing run again with MIOpen's log, the solver running at the fault switched off by its
    /// own variable (its family's, as GEMM's), one more each run, until it passes (where the
    /// log names none: the direct, GEMM and Winograd families two at a time); MIOpen's GCN
    /// assembly, then OpenCL, kernels off; MIOpen bypassed for the failing layer kinds only
    /// (BatchNorm training, which MIOpen cannot compile for gfx101x), then for everything
    /// (PyTorch's own GPU kernels); rdna1_mtype in enforce (root only).
    ///
    /// What passed is kept only if it holds: it passes twice more and the baseline fails
    /// again (else the fault is intermittent and nothing is kept); then each switch it does not
    /// need is dropped, and what is left passes twice more. When nothing passes, the next steps
    /// say what to try (stacks known to work) and what to send. Nothing persistent is changed:
    /// the policy is put back and the private directories removed, also on Ctrl-C; --keep FILE
    /// writes what was kept for `rdna1ctl run`. As root (sudo -E) the command runs as you, as
    /// with report. A Python that cannot run the workload ends the search after the baseline,
    /// incomplete, with doctor's fixes. Exits 0 when something was kept (or the baseline
    /// passed), 3 when nothing held, 1 on an error, a broken environment or Ctrl-C.
    ///
    /// Example: `sudo -E rdna1ctl search --keep ~/.config/rdna1-gpu.env`,
    /// `rdna1ctl search --all -- ./venv/bin/python train.py --steps 10`
    Search(SearchArgs),
    /// Run a command with a configuration `search --keep` wrote: its variables set (and
    /// RDNA1_UNSET's removed), MIOpen bypassed if it says so, and, with RDNA1_MTYPE_MODE, the
    /// module in that mode for the command's run (root only; put back afterwards). As root the
    /// command runs as the user who ran sudo. Exits with the command's exit code.
    ///
    /// Example: `sudo -E rdna1ctl run --env ~/.config/rdna1-gpu.env -- python3 train.py`
    Run(RunArgs),
    /// Check whether a kernel can be hooked, from that kernel's own amdgpu BTF: the prototype
    /// of gmc_v10_0_get_vm_pte (Linux 6.18 and later) and every amdgpu member the module
    /// reads. Prints the offsets found, or each difference. Exits 0 if hookable, 3 if not, 1 if
    /// its files cannot be read (no verdict).
    ///
    /// For the running kernel it reads /sys/kernel/btf (the loaded amdgpu, if any); for
    /// another, the files as installed: the amdgpu.ko modprobe would load (updates/ and
    /// extra/ first) and the base BTF in /boot/vmlinuz-KVER or /usr/lib/modules/KVER/vmlinuz.
    /// Run it before rebooting into a new kernel.
    ///
    /// Examples: `rdna1ctl check-kernel`, `rdna1ctl check-kernel 7.3.4+deb13-amd64`,
    /// `rdna1ctl --root /mnt check-kernel 7.0.0-15-generic --json`
    CheckKernel {
        /// Kernel release (as `uname -r` prints it); default: the running kernel.
        #[arg(value_name = "KVER", value_parser = parse_kver)]
        kver: Option<String>,
    },
    /// Print a shell completion script.
    ///
    /// Example: `rdna1ctl completions bash > /etc/bash_completion.d/rdna1ctl`
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) for rdna1ctl(8), or with COMMAND for rdna1ctl-COMMAND(8).
    /// Each has EXIT STATUS, ENVIRONMENT and FILES.
    ///
    /// Example: `rdna1ctl man | man -l -`, `rdna1ctl man status | man -l -`
    Man {
        /// A subcommand (status, verify, ...): its own page.
        #[arg(value_name = "COMMAND", value_parser = Offering::new(parse_any, command_words))]
        command: Option<String>,
    },
}

/// The policy options `enable` and `set` share.
#[derive(Args, Debug, Clone, Default)]
pub struct PolicyArgs {
    /// rdna1, gfx10, or a comma-separated list of 1 to 8 PCI addresses (0000:03:00.0, or
    /// lspci's 03:00.0; duplicates are dropped).
    #[arg(long, value_parser = Offering::new(parse_scope, scope_words), hide_possible_values = true)]
    pub scope: Option<Scope>,
    /// Which VMs: compute (VMs KFD acquired: ROCm/HIP; graphics clients are never changed) or
    /// all (graphics clients too).
    #[arg(long, value_parser = Offering::new(parse_vm_scope, vm_scope_words))]
    pub vm_scope: Option<VmScope>,
    /// Optional classes, comma-separated, or none: coherent (memory created COHERENT, forced
    /// UC), uncached (BOs created UNCACHED), uc_request (memory whose mapping asks for UC).
    #[arg(long, value_parser = Offering::new(parse_classes, class_words), hide_possible_values = true)]
    pub classes: Option<Classes>,
}

/// Options of `rdna1ctl verify`.
#[derive(Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Trace for S seconds (default 10; from 0.001 to 604800: a week).
    #[arg(long, value_name = "S", conflicts_with = "until_interrupt", value_parser = parse_duration, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Trace until Ctrl-C (SIGINT) or SIGTERM.
    #[arg(long)]
    pub until_interrupt: bool,
    /// Only updates of process P's GPU VMs (amdgpu records the VM owner's pid).
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub pid: Option<u32>,
}

/// The owner's command and whom it runs as: what `report` and `search` share.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Stop each run after S seconds (its whole process group is killed).
    #[arg(long, value_name = "S", default_value = "600", value_parser = parse_timeout, allow_negative_numbers = true)]
    pub timeout: f64,
    /// Run the command as NAME (or a numeric uid): needed as real root, where no SUDO_UID or
    /// PKEXEC_UID says who invoked rdna1ctl. Never root.
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// The Python that runs the default layer battery (default: python3 from the active venv,
    /// else on PATH).
    #[arg(long, value_name = "PATH", conflicts_with = "command")]
    pub python: Option<PathBuf>,
    /// A battery script to run instead of the shipped one.
    #[arg(long, value_name = "PATH", conflicts_with = "command")]
    pub script: Option<PathBuf>,
    /// The command to run instead of the battery, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

/// Options of `rdna1ctl report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Write the report here (default: rdna1-report-DATE.json in the current directory; a
    /// directory: that name in it).
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
}

/// Options of `rdna1ctl search`.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// Run every configuration and rank those that pass (fastest first), instead of stopping
    /// at the first.
    #[arg(long)]
    pub all: bool,
    /// Start no run after S seconds in all.
    #[arg(long, value_name = "S", default_value = "7200", value_parser = parse_timeout, allow_negative_numbers = true)]
    pub budget: f64,
    /// Start at most N runs in all, confirmations included (the plan needs about 10 to 25;
    /// what was not tried is then listed).
    #[arg(long, value_name = "N", default_value = "40", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_runs: u32,
    /// Write the winning configuration to FILE (an environment file for `rdna1ctl run --env`).
    #[arg(long, value_name = "FILE")]
    pub keep: Option<PathBuf>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
}

/// When `run --check-exit` makes the check's verdict the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckExit {
    /// Wrong numbers, a program on the CPU, a bypass not in effect.
    Wrong,
    /// Those, and any op or compiled graph the check could not check.
    Unchecked,
}

/// Options of `rdna1ctl run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The configuration `search --keep` wrote.
    #[arg(long, value_name = "FILE")]
    pub env: PathBuf,
    /// Run the command as NAME (or a numeric uid), as root without SUDO_UID. Never root.
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// Check, inside the command's Python processes, every distinct GPU op (each once, in the
    /// first steps: seconds at each new op; then the program runs without the check) and each
    /// graph torch.compile made, against float64 on the CPU, and say afterwards whether they
    /// ran on the GPU and were right, and which could not be checked.
    #[arg(long)]
    pub check: bool,
    /// With --check, exit 3 (after a command that exited 0) when the check found `wrong`
    /// numbers (or a program on the CPU, or a bypass not in effect), or also when an op or
    /// graph could not be checked (`unchecked`): for scripts. Implies --check.
    #[arg(long, value_name = "WHEN", value_enum)]
    pub check_exit: Option<CheckExit>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

/// The longest `verify --duration`: a week. Longer windows are `--until-interrupt`'s; the bound
/// keeps the value far from what `Duration` can hold.
pub const MAX_DURATION_S: f64 = 7.0 * 24.0 * 3600.0;
/// The shortest: a millisecond (a shorter window, or timeout, is no time at all; 1e-10 s
/// rounded to a zero `Duration` past this check).
pub const MIN_DURATION_S: f64 = 0.001;

/// Seconds from [`MIN_DURATION_S`] to [`MAX_DURATION_S`], or None.
fn seconds(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| (MIN_DURATION_S..=MAX_DURATION_S).contains(v))
}

pub fn parse_duration(s: &str) -> Result<f64, String> {
    seconds(s).ok_or_else(|| {
        format!(
            "{s:?} is not a duration: give seconds, from {MIN_DURATION_S} to {MAX_DURATION_S} \
             (a week); for longer, --until-interrupt"
        )
    })
}

pub fn parse_timeout(s: &str) -> Result<f64, String> {
    seconds(s).ok_or_else(|| {
        format!("{s:?} is not a timeout: give seconds, from {MIN_DURATION_S} to {MAX_DURATION_S} (a week)")
    })
}

/// A kernel release names a directory under /lib/modules: one path component, as `uname -r`
/// prints it (at most 64 bytes, the kernel's own limit).
pub fn parse_kver(s: &str) -> Result<String, String> {
    if s.is_empty() || s == "." || s == ".." || s.contains('/') || s.len() > 64 {
        return Err(format!(
            "{s:?} is not a kernel release: give one as `uname -r` prints it, e.g. \
             7.2.13+deb14-amd64 (the installed ones: ls /lib/modules)"
        ));
    }
    Ok(s.to_owned())
}

/// A value parser that also names the words a shell should offer: `parse` decides (its own
/// checks and messages), `words` feeds completions (a parser function alone leaves the shells
/// completing file names) and, unless the option hides them, the help's possible values.
#[derive(Clone)]
pub struct Offering<P> {
    parse: P,
    words: fn() -> Vec<String>,
}

impl<P> Offering<P> {
    pub fn new(parse: P, words: fn() -> Vec<String>) -> Self {
        Self { parse, words }
    }
}

impl<P: clap::builder::TypedValueParser> clap::builder::TypedValueParser for Offering<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.words)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

fn mode_words() -> Vec<String> {
    Mode::ALL.iter().map(|m| m.name().to_owned()).collect()
}

fn vm_scope_words() -> Vec<String> {
    VmScope::ALL.iter().map(|v| v.name().to_owned()).collect()
}

/// The named scopes; a PCI address list is typed.
fn scope_words() -> Vec<String> {
    [Scope::Rdna1, Scope::Gfx10]
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn class_words() -> Vec<String> {
    let mut words: Vec<String> = Classes::NAMES.iter().map(|n| (*n).to_owned()).collect();
    words.push(Classes::NONE.to_string());
    words
}

/// The subcommands, for `man COMMAND`.
fn command_words() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .filter(|n| n != "help")
        .collect()
}

fn parse_any(s: &str) -> Result<String, String> {
    Ok(s.to_owned())
}

pub fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s.as_bytes())
        .ok_or_else(|| format!("{s:?} is not a mode: use off, audit or enforce"))
}

pub fn parse_scope(s: &str) -> Result<Scope, String> {
    crate::config::parse_scope(s).ok_or_else(|| {
        format!(
            "{s:?} is not a scope: use rdna1, gfx10, or 1 to 8 PCI addresses like \
             0000:03:00.0,04:00.0 (lspci's form)"
        )
    })
}

pub fn parse_vm_scope(s: &str) -> Result<VmScope, String> {
    VmScope::parse(s.as_bytes())
        .ok_or_else(|| format!("{s:?} is not a VM scope: use compute or all"))
}

pub fn parse_classes(s: &str) -> Result<Classes, String> {
    Classes::parse(s.as_bytes()).ok_or_else(|| {
        format!(
            "{s:?} is not a class list: use coherent, uncached and uc_request, comma-separated, \
             each at most once, or none"
        )
    })
}
