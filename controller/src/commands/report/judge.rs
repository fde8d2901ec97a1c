//! What the three runs show, from each run's exit status, the GPU faults in the kernel log
//! and, under enforce, whether verify saw every PTE written NC.
//!
//! Audit writes the same PTEs as off (it only counts), so a workload that behaves differently
//! under off and audit is intermittent: no conclusion about MTYPE is drawn from it.

use schemars::JsonSchema;
use serde::Serialize;

use crate::output::JsonNames;
pub use crate::runner::workload::Failure;

/// A run's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0 and no GPU fault.
    Pass,
    Fail(Failure),
    /// The run did not happen (the experiment stopped before it).
    NotRun,
}

impl Outcome {
    /// From what the run recorded: a fault fails even a command that exits 0.
    pub fn of(f: Failure) -> Outcome {
        if f.exit_code == Some(0) && f.faults == 0 && !f.timed_out && f.signal.is_none() {
            Outcome::Pass
        } else {
            Outcome::Fail(f)
        }
    }

    /// `pass`, `fail`, `not_run` (the JSON's `outcome`).
    pub fn name(&self) -> &'static str {
        self.json_name()
    }
}

/// A run's `outcome` in JSON: the schema's `enum` is every value's name.
impl JsonNames for Outcome {
    fn every() -> Vec<Self> {
        vec![
            Outcome::Pass,
            Outcome::Fail(Failure::default()),
            Outcome::NotRun,
        ]
    }
    fn json_name(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::NotRun => "not_run",
        }
    }
}

/// The report's `verdict`: the one list of codes [`judge`] gives and the schema names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    SupportsHypothesis,
    NotMtype,
    NotReproduced,
    EnforceBreaks,
    Intermittent,
    Inconclusive,
    Incomplete,
}

impl JsonNames for Verdict {
    fn every() -> Vec<Self> {
        use Verdict::*;
        vec![
            SupportsHypothesis,
            NotMtype,
            NotReproduced,
            EnforceBreaks,
            Intermittent,
            Inconclusive,
            Incomplete,
        ]
    }
    fn json_name(&self) -> &'static str {
        match self {
            Verdict::SupportsHypothesis => "supports_hypothesis",
            Verdict::NotMtype => "not_mtype",
            Verdict::NotReproduced => "not_reproduced",
            Verdict::EnforceBreaks => "enforce_breaks",
            Verdict::Intermittent => "intermittent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Incomplete => "incomplete",
        }
    }
}

/// What verify said about the enforce run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verified {
    /// Every PTE written under enforce was as the policy wants (NC).
    Ok,
    /// Some were not.
    Violations,
    /// verify did not run or gave no result.
    Unknown,
}

/// The conclusion: a stable code and the sentence for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Judgement {
    /// What the runs show, as a stable code (docs/CLI.md, `rdna1ctl report`).
    #[schemars(schema_with = "crate::schema::one_of::<Verdict>")]
    pub verdict: &'static str,
    /// The conclusion in one sentence, for people.
    pub summary: String,
    /// What qualifies it (verify under enforce, a run that disagrees).
    pub notes: Vec<String>,
}

const VERIFY_NOT_NC: &str =
    "verify saw PTEs under enforce that were not NC (see the enforce run's verify)";
const VERIFY_UNKNOWN: &str =
    "verify gave no result under enforce: that every PTE was NC is not confirmed";

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The three runs, in the order off, audit, enforce; `environment`: why the owner's Python
/// cannot run the workload at all, when a run showed it (then nothing about MTYPE follows).
pub fn judge(
    off: &Outcome,
    audit: &Outcome,
    enforce: &Outcome,
    verified: Verified,
    environment: Option<&str>,
) -> Judgement {
    use Outcome::*;
    let j = |verdict: Verdict, summary: String, notes: Vec<&str>| Judgement {
        verdict: verdict.json_name(),
        summary,
        notes: notes.into_iter().map(str::to_owned).collect(),
    };
    if let Some(env) = environment {
        return j(
            Verdict::Incomplete,
            format!(
                "incomplete: the environment cannot run the workload ({env}): this says nothing \
                 about MTYPE; fix it (doctor's fixes in the report) and run the report again"
            ),
            vec![],
        );
    }
    let missing: Vec<&str> = [("off", off), ("audit", audit), ("enforce", enforce)]
        .iter()
        .filter(|(_, o)| **o == NotRun)
        .map(|(m, _)| *m)
        .collect();
    if !missing.is_empty() {
        return j(
            Verdict::Incomplete,
            format!(
                "incomplete: no run under {}: nothing can be concluded",
                and_list(&missing)
            ),
            vec![],
        );
    }
    let verify_note = match verified {
        Verified::Ok => None,
        Verified::Violations => Some(VERIFY_NOT_NC),
        Verified::Unknown => Some(VERIFY_UNKNOWN),
    };
    match (off, audit, enforce) {
        (Pass, Pass, Pass) => j(
            Verdict::NotReproduced,
            "passes under off, audit and enforce: the fault did not reproduce here".into(),
            verify_note.into_iter().collect(),
        ),
        (Pass, Fail(a), Pass) => j(
            Verdict::Intermittent,
            format!(
                "passes under off and enforce, fails under audit ({}), which writes the same \
                 PTEs as off: the failure is intermittent; run the report again",
                a.describe()
            ),
            vec![],
        ),
        (Fail(o), Fail(_), Pass) => j(
            Verdict::SupportsHypothesis,
            format!(
                "fails under off ({}) and audit, passes under enforce: supports the MTYPE \
                 hypothesis",
                o.describe()
            ),
            verify_note.into_iter().collect(),
        ),
        (Fail(o), Pass, Pass) => j(
            Verdict::Intermittent,
            format!(
                "fails under off ({}) but passes under audit, which writes the same PTEs as \
                 off: the failure is intermittent, not shown to be MTYPE's; run the report again",
                o.describe()
            ),
            vec![],
        ),
        (Fail(o), a, Fail(e)) => {
            let mut notes: Vec<&str> = Vec::new();
            if *a == Pass {
                notes.push("it passed under audit, which writes the same PTEs as off: the failure is intermittent");
            }
            if verified == Verified::Violations {
                return j(
                    Verdict::Inconclusive,
                    format!(
                        "fails under off ({}) and enforce ({}), but not every PTE was NC under \
                         enforce: MTYPE is not ruled out",
                        o.describe(),
                        e.describe()
                    ),
                    [VERIFY_NOT_NC].into_iter().chain(notes).collect(),
                );
            }
            notes.extend(verify_note);
            let summary = match o.same_as(e) {
                true => format!(
                    "fails identically under off and enforce ({}): MTYPE is not the cause here",
                    o.describe()
                ),
                false => format!(
                    "fails under off ({}) and under enforce ({}): forcing NC does not cure it; \
                     MTYPE is not the cause here",
                    o.describe(),
                    e.describe()
                ),
            };
            j(Verdict::NotMtype, summary, notes)
        }
        (Pass, Pass, Fail(e)) => j(
            Verdict::EnforceBreaks,
            format!(
                "passes under off and audit, fails under enforce ({}): forcing NC breaks this \
                 workload; please report it",
                e.describe()
            ),
            verify_note.into_iter().collect(),
        ),
        (Pass, Fail(a), Fail(e)) => j(
            Verdict::Intermittent,
            format!(
                "passes under off, fails under audit ({}) and enforce ({}): audit writes the same \
                 PTEs as off, so the failure is intermittent; run the report again",
                a.describe(),
                e.describe()
            ),
            vec![],
        ),
        // NotRun was handled above.
        _ => j(
            Verdict::Incomplete,
            "incomplete: nothing can be concluded".into(),
            vec![],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Outcome::*;

    fn fail(code: i32, faults: usize) -> Outcome {
        Outcome::of(Failure {
            exit_code: Some(code),
            faults,
            ..Default::default()
        })
    }

    fn verdict(o: &Outcome, a: &Outcome, e: &Outcome, v: Verified) -> &'static str {
        judge(o, a, e, v, None).verdict
    }

    #[test]
    fn a_fault_fails_a_run_that_exits_0() {
        assert_eq!(fail(0, 0), Pass);
        assert!(matches!(fail(0, 1), Fail(_)));
        let t = Outcome::of(Failure {
            timed_out: true,
            signal: Some(9),
            ..Default::default()
        });
        assert_eq!(t.name(), "fail");
        if let Fail(f) = t {
            assert_eq!(f.describe(), "timed out");
        }
        let f = Failure {
            exit_code: Some(1),
            faults: 2,
            ..Default::default()
        };
        assert_eq!(f.describe(), "exit 1, 2 GPU faults");
        let f = Failure {
            signal: Some(11),
            ..Default::default()
        };
        assert_eq!(f.describe(), "killed by signal 11");
    }

    #[test]
    fn the_named_cases() {
        let v = Verified::Ok;
        let f = fail(1, 1);
        let j = judge(&f, &f, &Pass, v, None);
        assert_eq!(j.verdict, "supports_hypothesis");
        assert!(
            j.summary
                .contains("passes under enforce: supports the MTYPE hypothesis"),
            "{}",
            j.summary
        );
        assert!(j.notes.is_empty());
        let j = judge(&f, &f, &f, v, None);
        assert_eq!(
            j.summary,
            "fails identically under off and enforce (exit 1, 1 GPU fault): MTYPE is not the \
             cause here"
        );
        assert_eq!(j.verdict, "not_mtype");
        let j = judge(&f, &f, &fail(134, 0), v, None);
        assert_eq!(j.verdict, "not_mtype");
        assert!(j.summary.contains("does not cure it"), "{}", j.summary);
        let j = judge(&Pass, &Pass, &Pass, v, None);
        assert_eq!(
            j.summary,
            "passes under off, audit and enforce: the fault did not reproduce here"
        );
        assert_eq!(verdict(&Pass, &Pass, &f, v), "enforce_breaks");
        assert_eq!(verdict(&f, &Pass, &Pass, v), "intermittent");
        assert_eq!(verdict(&Pass, &f, &Pass, v), "intermittent");
        assert_eq!(verdict(&Pass, &f, &f, v), "intermittent");
        // Failing under enforce with PTEs not NC: the hypothesis was not tested.
        let j = judge(&f, &f, &f, Verified::Violations, None);
        assert_eq!(j.verdict, "inconclusive");
        assert!(j.notes[0].contains("not NC"), "{:?}", j.notes);
        // Passing with violations: still a pass, with the caveat.
        let j = judge(&f, &f, &Pass, Verified::Violations, None);
        assert_eq!(j.verdict, "supports_hypothesis");
        assert_eq!(j.notes, [VERIFY_NOT_NC]);
        let j = judge(&f, &f, &Pass, Verified::Unknown, None);
        assert_eq!(j.notes, [VERIFY_UNKNOWN]);
        let j = judge(&f, &NotRun, &NotRun, v, None);
        assert_eq!(j.verdict, "incomplete");
        assert!(j.summary.contains("audit and enforce"), "{}", j.summary);
        let j = judge(&NotRun, &NotRun, &NotRun, v, None);
        assert!(
            j.summary.contains("under off, audit and enforce:"),
            "{}",
            j.summary
        );
    }

    #[test]
    fn every_combination_has_one_line_and_a_known_verdict() {
        let outcomes = [Pass, fail(1, 0), fail(1, 3), fail(2, 0), NotRun];
        let verdicts = [
            "supports_hypothesis",
            "not_mtype",
            "not_reproduced",
            "enforce_breaks",
            "intermittent",
            "inconclusive",
            "incomplete",
        ];
        let mut seen = std::collections::BTreeSet::new();
        for o in &outcomes {
            for a in &outcomes {
                for e in &outcomes {
                    for v in [Verified::Ok, Verified::Violations, Verified::Unknown] {
                        let j = judge(o, a, e, v, None);
                        assert!(verdicts.contains(&j.verdict), "{j:?}");
                        seen.insert(j.verdict);
                        assert!(!j.summary.is_empty() && !j.summary.contains('\n'), "{j:?}");
                        let any_missing = [o, a, e].contains(&&NotRun);
                        assert_eq!(j.verdict == "incomplete", any_missing, "{o:?} {a:?} {e:?}");
                        if any_missing {
                            continue;
                        }
                        // The hypothesis is supported only by a real difference: off and
                        // audit fail, enforce passes.
                        assert_eq!(
                            j.verdict == "supports_hypothesis",
                            *o != Pass && *a != Pass && *e == Pass,
                            "{o:?} {a:?} {e:?}"
                        );
                        // "not the cause" only when enforce failed with every PTE NC as far
                        // as verify knows.
                        if j.verdict == "not_mtype" {
                            assert!(*o != Pass && *e != Pass && v != Verified::Violations);
                        }
                        if j.verdict == "not_reproduced" {
                            assert!(*o == Pass && *a == Pass && *e == Pass);
                        }
                        // Verify's caveat is never lost when enforce decides something.
                        if v != Verified::Ok && *e != Pass && *o != Pass {
                            assert!(!j.notes.is_empty(), "{j:?}");
                        }
                    }
                }
            }
        }
        assert_eq!(seen.len(), verdicts.len(), "{seen:?}");
    }

    #[test]
    fn a_broken_environment_is_incomplete_never_not_mtype() {
        // A Python without torch fails identically under every mode: that is no verdict.
        let f = fail(1, 0);
        for (o, a, e) in [(&f, &f, &f), (&f, &NotRun, &NotRun), (&Pass, &Pass, &Pass)] {
            let j = judge(
                o,
                a,
                e,
                Verified::Ok,
                Some("/usr/bin/python3 cannot import torch"),
            );
            assert_eq!(j.verdict, "incomplete", "{j:?}");
            assert!(j.summary.contains("cannot import torch"), "{}", j.summary);
            assert!(!j.summary.contains("not the cause"), "{}", j.summary);
        }
    }
}
