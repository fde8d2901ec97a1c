//! `rdna1ctl apply` (being written).

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use crate::exit::Code;
use crate::Ctx;

pub fn run(_ctx: &Ctx, _config: &Path, _dry_run: bool, _out: &mut impl Write) -> Result<Code> {
    anyhow::bail!("apply is not implemented yet")
}
