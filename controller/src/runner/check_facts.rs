//! What the in-process check saw of a program that the search plans by (commands/search/
//! plan.rs): which op families ran on the GPU and which failed there, whether it compiled
//! graphs, which attention kernels ran, whether it computed in bfloat16. Read from the check's
//! records by `CheckJson::facts` (check.rs).

/// What one run's check saw, or several runs' together (`merge`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckFacts {
    /// The families of the GPU's ops, in the check's words (`convolution`, `GEMM`,
    /// `attention`, `batch/instance norm`, ...).
    pub families: Vec<String>,
    /// The families of GPU ops that were wrong, whose call raised, or that a process died
    /// in; `compiled` for a compiled graph that was wrong.
    pub failing: Vec<String>,
    /// torch.compile's graphs ran.
    pub compiled: bool,
    /// The attention kernels that ran: `flash`, `efficient`, `cudnn`, `math`.
    pub attention_kernels: Vec<String>,
    /// A GPU op computed in bfloat16.
    pub bf16: bool,
}

/// The family name the facts give a compiled graph.
pub const COMPILED: &str = "compiled";

fn add(v: &mut Vec<String>, x: &str) {
    if !v.iter().any(|y| y == x) {
        v.push(x.to_owned());
    }
}

impl CheckFacts {
    pub fn add_family(&mut self, f: &str) {
        add(&mut self.families, f);
    }

    pub fn add_failing(&mut self, f: &str) {
        add(&mut self.failing, f);
    }

    pub fn add_attention_kernel(&mut self, k: &str) {
        add(&mut self.attention_kernels, k);
    }

    /// These facts and `o`'s together.
    pub fn merge(&mut self, o: &CheckFacts) {
        o.families.iter().for_each(|f| self.add_family(f));
        o.failing.iter().for_each(|f| self.add_failing(f));
        o.attention_kernels
            .iter()
            .for_each(|k| self.add_attention_kernel(k));
        self.compiled |= o.compiled;
        self.bf16 |= o.bf16;
    }

    /// Whether family `f` ran on the GPU (`compiled`: graphs ran).
    pub fn ran(&self, f: &str) -> bool {
        if f == COMPILED {
            self.compiled
        } else {
            self.families.iter().any(|x| x == f)
        }
    }

    pub fn failed(&self, f: &str) -> bool {
        self.failing.iter().any(|x| x == f)
    }
}
