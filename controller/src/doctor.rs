//! `rdna1ctl doctor` (being written).

use std::io::Write;

use anyhow::Result;

use crate::exit::Code;
use crate::Ctx;

pub fn run(_ctx: &Ctx, _out: &mut impl Write) -> Result<Code> {
    anyhow::bail!("doctor is not implemented yet")
}
