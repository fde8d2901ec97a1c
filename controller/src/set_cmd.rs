//! `rdna1ctl set`: change the policy in one atomic step, and show it as the module reads it.

use std::io::Write;

use anyhow::{bail, Result};
use rdna1_mtype_shared::policy::{Classes, Mode, Policy, Scope};

use crate::device;
use crate::output;
use crate::Ctx;

pub fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s.as_bytes())
        .ok_or_else(|| format!("{s:?} is not a mode: use off, audit or enforce"))
}

pub fn parse_scope(s: &str) -> Result<Scope, String> {
    Scope::parse(s.as_bytes()).ok_or_else(|| {
        format!("{s:?} is not a scope: use rdna1, gfx10, or 1 to 8 PCI addresses like 0000:03:00.0,0000:04:00.0")
    })
}

pub fn parse_classes(s: &str) -> Result<Classes, String> {
    Classes::parse(s.as_bytes()).ok_or_else(|| {
        format!("{s:?} is not a class list: use coherent, uncached, coherent,uncached or none")
    })
}

pub fn print_policy(p: &Policy, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "mode:    {}", p.mode.name())?;
    writeln!(out, "scope:   {}", p.scope)?;
    writeln!(out, "classes: {}", p.classes)
}

pub fn run(
    ctx: &Ctx,
    mode: Option<Mode>,
    scope: Option<Scope>,
    classes: Option<Classes>,
    out: &mut impl Write,
) -> Result<()> {
    if mode.is_none() && scope.is_none() && classes.is_none() {
        bail!("nothing to set: give --mode, --scope and/or --classes");
    }
    let dev = device::open(&ctx.root)?;
    let mut p = dev.policy()?;
    p.mode = mode.unwrap_or(p.mode);
    p.scope = scope.unwrap_or(p.scope);
    p.classes = classes.unwrap_or(p.classes);
    dev.set_policy(&p)?;
    let now = dev.policy()?;
    if ctx.json {
        output::json("policy", &output::PolicyJson::from(&now), out)?;
    } else {
        print_policy(&now, out)?;
    }
    if now != p {
        bail!("the module reads back a different policy than was set (another writer?)");
    }
    Ok(())
}
