//! `rdna1ctl set`: change the policy in one atomic step, and show it as the module reads it.

use std::io::Write;

use anyhow::{bail, Result};
use rdna1_mtype_shared::policy::Mode;

use crate::cli::PolicyArgs;
use crate::exit::{coded, Code};
use crate::module::control;
use crate::output;
use crate::Ctx;

pub fn run(ctx: &Ctx, mode: Option<Mode>, args: &PolicyArgs, out: &mut impl Write) -> Result<()> {
    let PolicyArgs {
        scope,
        vm_scope,
        classes,
    } = args;
    if mode.is_none() && scope.is_none() && vm_scope.is_none() && classes.is_none() {
        // A command line that asks for nothing is a usage error (exit 2), like clap's own.
        return Err(coded(
            Code::Usage,
            "nothing to set: give --mode, --scope, --vm-scope and/or --classes",
        ));
    }
    let dev = control::open(&ctx.root)?;
    let mut p = dev.policy()?;
    p.mode = mode.unwrap_or(p.mode);
    p.scope = scope.unwrap_or(p.scope);
    p.vm_scope = vm_scope.unwrap_or(p.vm_scope);
    p.classes = classes.unwrap_or(p.classes);
    dev.set_policy(&p)?;
    if let Some(scope) = scope {
        crate::gpus::warn_off_bus(&ctx.root, scope);
    }
    let now = dev.policy()?;
    if ctx.json {
        output::json("policy", &output::PolicyJson::from(&now), out)?;
    } else {
        output::print_policy(&now, out)?;
    }
    if now != p {
        bail!("the module reads back a different policy than was set (another writer?)");
    }
    Ok(())
}
