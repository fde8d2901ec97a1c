//! `rdna1ctl`: reads and sets the policy of the `rdna1_mtype` kernel module and checks it.

mod bo_layout;
mod device;
mod events_cmd;
mod gpus;
mod layout_cmd;
mod module_state;
mod set_cmd;
mod status;
mod sysroot;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rdna1_mtype_shared::policy::{Classes, Mode, Scope};

use crate::sysroot::SysRoot;

/// Control the rdna1_mtype kernel module, which forces MTYPE_NC in the GPU page tables of
/// RDNA1 (gfx1010/1011/1012) VM mappings.
///
/// Forcing NC is a hypothesis for the MIOpen HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION on
/// RDNA1, not a known fix: rdna1ctl shows exactly what the module did so you can test it.
#[derive(Parser, Debug)]
#[command(name = "rdna1ctl", version, propagate_version = true)]
struct Cli {
    /// Read /sys, /proc and /dev below DIR instead of / (for tests and offline diagnosis).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        env = "RDNA1CTL_ROOT",
        default_value = "/"
    )]
    root: PathBuf,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show whether the module is loaded and armed, its mode, and the AMD GPUs of this machine.
    ///
    /// Example: `rdna1ctl status`
    Status,
    /// Show `struct amdgpu_bo`'s layout from this kernel's module BTF (/sys/kernel/btf/amdgpu)
    /// next to the module's, and with --apply give it to the module.
    ///
    /// The module classifies buffer objects (coherent, uncached, doorbell, ...) only once it
    /// knows this layout; until then it leaves every BO alone.
    ///
    /// Example: `sudo rdna1ctl layout --apply`
    Layout {
        /// Write the layout to the module (root only).
        #[arg(long)]
        apply: bool,
    },
    /// Change the policy (root only), in one atomic step, and print it as the module reads it
    /// back. Options not given keep their value.
    ///
    /// Example: `sudo rdna1ctl set --mode audit --scope rdna1`
    Set {
        /// off (pass through), audit (count what enforce would change) or enforce (write NC).
        #[arg(long, value_parser = set_cmd::parse_mode)]
        mode: Option<Mode>,
        /// rdna1, gfx10, or a comma-separated list of 1 to 8 PCI addresses (0000:03:00.0).
        #[arg(long, value_parser = set_cmd::parse_scope)]
        scope: Option<Scope>,
        /// BO classes whose forced UC is rewritten: coherent, uncached, coherent,uncached, none.
        #[arg(long, value_parser = set_cmd::parse_classes)]
        classes: Option<Classes>,
    },
    /// Show the module's decision log: who mapped what on which device, the MTYPE requested,
    /// computed and written, the BO class and what was done, with the count of lost events.
    ///
    /// Calls that were already NC, made in mode off, or for a device out of scope are counted in
    /// the stats, not logged.
    ///
    /// Example: `sudo rdna1ctl events --follow`
    Events {
        /// Keep printing new events until interrupted.
        #[arg(long)]
        follow: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = SysRoot::new(cli.root);
    let result = match cli.command {
        Command::Status => status::run(&root, &mut std::io::stdout().lock()),
        Command::Layout { apply } => layout_cmd::run(&root, apply, &mut std::io::stdout().lock()),
        Command::Set {
            mode,
            scope,
            classes,
        } => set_cmd::run(&root, mode, scope, classes, &mut std::io::stdout().lock()),
        Command::Events { follow } => events_cmd::run(&root, follow, &mut std::io::stdout().lock()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdna1ctl: {e:#}");
            ExitCode::FAILURE
        }
    }
}
