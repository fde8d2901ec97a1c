//! One module per command. Each imports only the domain modules (`module`, `gpus`, `btf`,
//! `config`, `trace`, `output`, ...), never another command.

pub mod apply;
pub mod check_kernel;
pub mod doctor;
pub mod events;
pub mod layout;
pub mod man;
pub mod report;
pub mod run_env;
pub mod search;
pub mod set;
pub mod status;
pub mod verify;

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;
use rdna1_mtype_shared::policy::Mode;

use crate::cli::{Cli, Command, PolicyArgs};
use crate::exit::Code;
use crate::Ctx;

/// Every JSON document rdna1ctl prints, by its `command` value, with its JSON Schema: what
/// docs/schema/NAME.json holds (controller/tests/schema.rs regenerates and compares them, and
/// validates real output against them). A new document is one line here: its body type
/// derives `serde::Serialize` and `schemars::JsonSchema`. Not behind `cfg(test)`: the
/// integration test links the library as built for the binary; the binary never calls it, so
/// the linker drops it (docs/DEPENDENCIES.md, schemars).
pub fn schemas() -> Vec<(&'static str, serde_json::Value)> {
    use crate::schema::document as doc;
    vec![
        doc::<crate::output::PolicyJson>("policy"),
        doc::<apply::ApplyJson>("apply"),
        doc::<check_kernel::CheckKernelJson<'static>>("check-kernel"),
        doc::<doctor::Body<'static>>("doctor"),
        doc::<events::EventsJson>("events"),
        doc::<events::EventJson>("event"),
        doc::<events::EventsLostJson>("events-lost"),
        doc::<layout::LayoutJson>("layout"),
        doc::<report::json::ReportJson>("report"),
        doc::<search::Document>("search"),
        doc::<status::StatusJson>("status"),
        doc::<verify::VerifyJson>("verify"),
        doc::<crate::output::ErrorJson<'static>>("error"),
    ]
}

/// Runs `command`; its exit code, or the error `main` prints.
pub fn run(ctx: &Ctx, command: Command, out: &mut impl Write) -> Result<Code> {
    match command {
        Command::Status { check } => status::run(ctx, check, out),
        Command::Enable(p) => set::run(ctx, Some(Mode::Enforce), &p, out).map(|()| Code::Ok),
        Command::Disable => {
            set::run(ctx, Some(Mode::Off), &PolicyArgs::default(), out).map(|()| Code::Ok)
        }
        Command::Set { mode, policy } => set::run(ctx, mode, &policy, out).map(|()| Code::Ok),
        Command::Apply { config, dry_run } => apply::run(ctx, &config, dry_run, out),
        Command::Layout { apply } => layout::run(ctx, apply, out).map(|()| Code::Ok),
        Command::Events { follow } => events::run(ctx, follow, out).map(|()| Code::Ok),
        Command::Verify(args) => verify::run(ctx, &args, out),
        Command::Doctor(args) => doctor::run(ctx, &args, out),
        Command::Report(args) => report::run(ctx, &args, out),
        Command::Search(args) => search::run(ctx, &args, out),
        Command::Run(args) => run_env::run(ctx, &args, out),
        Command::CheckKernel { kver } => check_kernel::run(ctx, kver.as_deref(), out),
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics when its writer fails (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "rdna1ctl", &mut script);
            out.write_all(&script)?;
            Ok(Code::Ok)
        }
        Command::Man { command } => man::run(command.as_deref(), out).map(|()| Code::Ok),
    }
}
