//! The report for people: where the file is, one line per run, and what the runs show.

use std::io::Write;

use serde_json::Value;

use super::json::ReportJson;
use super::sub::SubDoc;

/// `exit 3 (12 ok, 2 warn, 1 fail)` for doctor, from its checks.
fn doctor_line(d: &SubDoc) -> String {
    let code = d
        .exit_code
        .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
    let checks = d
        .document
        .as_ref()
        .and_then(|v| v.get("checks")?.as_array().cloned())
        .unwrap_or_default();
    if checks.is_empty() {
        return code;
    }
    let count = |s: &str| {
        checks
            .iter()
            .filter(|c| c.get("status").and_then(Value::as_str) == Some(s))
            .count()
    };
    format!(
        "{code} ({} ok, {} warn, {} fail)",
        count("ok"),
        count("warn"),
        count("fail")
    )
}

fn verify_text(v: &SubDoc) -> String {
    match (v.str_field("result"), &v.error) {
        (Some(r), _) => {
            let n = v
                .document
                .as_ref()
                .and_then(|d| d.get("violations")?.as_u64())
                .unwrap_or(0);
            match r {
                "ok" => "verify ok".to_owned(),
                _ => format!("verify {r} ({n})"),
            }
        }
        (None, Some(e)) => format!("verify failed: {e}"),
        (None, None) => "verify gave no result".to_owned(),
    }
}

pub fn human(doc: &ReportJson, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "report:  {}", doc.output)?;
    writeln!(out, "doctor:  {}", doctor_line(&doc.doctor))?;
    let status = doc
        .status
        .exit_code
        .map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
    writeln!(out, "status:  {status}")?;
    if let Some(u) = &doc.run_as {
        writeln!(out, "run as:  {}", u.describe())?;
    }
    writeln!(out, "command: {}", doc.workload.argv.join(" "))?;
    for r in &doc.runs {
        let how = match (&r.record.spawn_error, r.record.timed_out, r.record.signal) {
            (Some(e), _, _) => e.clone(),
            (None, true, _) => "timed out".to_owned(),
            (None, false, Some(s)) => format!("signal {s}"),
            (None, false, None) => {
                format!("exit {}", r.record.exit_code.map_or(-1, i64::from))
            }
        };
        writeln!(
            out,
            "{:<8} {:<4}  {how}, {} GPU faults, {:.1} s, {}",
            r.mode,
            r.outcome,
            r.faults.len(),
            r.record.duration_s,
            verify_text(&r.verify)
        )?;
        if let Some(why) = r
            .failure
            .as_ref()
            .and_then(|_| r.judged.as_ref().and_then(|f| f.reason.clone()))
        {
            writeln!(out, "         {why}")?;
        }
        if let Some(c) = r.check.as_ref().filter(|c| c.processes > 0) {
            writeln!(out, "         check: {}", c.verdict)?;
        }
    }
    match (doc.policy_restored, &doc.policy_before) {
        (Some(true), Some(p)) => writeln!(out, "policy:  put back (mode {})", p.mode)?,
        (Some(false), Some(p)) => writeln!(
            out,
            "policy:  NOT put back: run `sudo rdna1ctl set --mode {}`",
            p.mode
        )?,
        _ => writeln!(out, "policy:  not changed")?,
    }
    if let Some(e) = &doc.error {
        writeln!(out, "stopped: {e}")?;
    }
    writeln!(out, "summary: {}", doc.judgement.summary)?;
    for f in &doc.fixes {
        writeln!(out, "doctor:  {f}")?;
    }
    for n in &doc.judgement.notes {
        writeln!(out, "note:    {n}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctor_counts_its_checks() {
        let d = SubDoc {
            exit_code: Some(3),
            document: Some(serde_json::json!({"checks": [
                {"status": "ok"}, {"status": "fail"}, {"status": "warn"}, {"status": "ok"}
            ]})),
            error: None,
        };
        assert_eq!(doctor_line(&d), "exit 3 (2 ok, 1 warn, 1 fail)");
        let v = SubDoc {
            exit_code: Some(3),
            document: Some(serde_json::json!({"result": "violations", "violations": 2})),
            error: None,
        };
        assert_eq!(verify_text(&v), "verify violations (2)");
    }
}
