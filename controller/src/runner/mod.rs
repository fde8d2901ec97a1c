//! Running the owner's command as the user who invoked rdna1ctl, and judging the run: who that
//! user is (`user`; a static build's user database: `user_db`), dropping root to exec the
//! command (`exec_as`), the run itself with its timeout and output tails (`workload`), one run
//! under a configuration with everything it is judged by (`execute`) and the verdict
//! (`verdict`): the kernel log's GPU faults (`kmsg`), the proof that it used the GPU
//! (`gpu_work`), the in-process check's records (`check`) and what the search plans by in them
//! (`check_facts`); the Python it runs and whether that
//! Python can run the workload at all (`interpreter`), doctor's fixes when it cannot
//! (`doctor_fix`); the policy put back (`policy`), progress on stderr (`progress`), what
//! rdna1ctl ships for the runs (`script`), the signals that end a run cleanly, the
//! configuration a run is made under (`changes`) and its kept form (`keep`, an environment file
//! read as systemd reads one: `env_file`), and the documents' shared parts (`document`).
//! `report`, `search` and `run` share it.

pub mod changes;
pub mod check;
pub mod check_facts;
pub mod doctor_fix;
pub mod document;
pub mod env_file;
pub mod exec_as;
pub mod execute;
pub mod gpu_work;
pub mod interpreter;
pub mod keep;
pub mod kmsg;
pub mod policy;
pub mod progress;
pub mod script;
pub mod stand_in;
pub mod user;
pub mod user_db;
pub mod verdict;
pub mod workload;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Result;
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT only raise a flag: the run in progress is ended, the policy put
/// back and the report written. (Every further one too: the policy must be put back.)
pub struct Signals {
    pub flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    pub fn install() -> Result<Signals> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            ids.push(signal_hook::flag::register(sig, Arc::clone(&flag))?);
        }
        Ok(Signals { flag, ids })
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
