//! `rdna1ctl verify` (being written).

use std::io::Write;

use anyhow::Result;

use crate::cli::VerifyArgs;
use crate::exit::Code;
use crate::Ctx;

pub fn run(_ctx: &Ctx, _args: &VerifyArgs, _out: &mut impl Write) -> Result<Code> {
    anyhow::bail!("verify is not implemented yet")
}
