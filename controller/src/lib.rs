//! `rdna1ctl` as a library: the binary (`main.rs`) parses the command line and hands it to
//! [`commands::run`]. Data flows one way: a command reads the system through the domain
//! modules below and prints through [`output`]; no command imports another
//! (docs/ARCHITECTURE.md).

// Domain: what the system is and what the module does. They never import `commands`.
pub mod btf;
pub mod config;
pub mod exit;
pub mod gpus;
pub mod module;
pub mod output;
pub mod sysroot;
pub mod trace;

// The command line and one module per command.
pub mod cli;
pub mod commands;

use crate::sysroot::SysRoot;

/// What every command gets: where to read the system from and how to print.
pub struct Ctx {
    pub root: SysRoot,
    pub json: bool,
}
