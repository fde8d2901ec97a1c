//! The search as text: one line per arm, then the verdicts and what to keep.

use std::io::Write;

use anyhow::Result;

use super::json::SearchJson;

pub fn human(doc: &SearchJson, out: &mut impl Write) -> Result<()> {
    // A skip's reason is said once.
    let mut reasons: Vec<&str> = Vec::new();
    for a in &doc.arms {
        let detail = match a.outcome {
            "skipped" => {
                let why = a.arm.skipped.as_deref().unwrap_or_default();
                if !reasons.contains(&why) {
                    reasons.push(why);
                }
                "skipped (below)".into()
            }
            "not_run" => "not run".into(),
            _ => {
                let mut d = a.failure.clone().unwrap_or_default();
                if let Some(r) = &a.record {
                    d = if d.is_empty() {
                        format!("{:.1} s", r.duration_s)
                    } else {
                        format!("{d}, {:.1} s", r.duration_s)
                    };
                }
                if let Some(s) = super::rank::Speed::of(a.battery.as_ref()) {
                    d.push_str(&format!(", {}", s.describe()));
                }
                if let Some(s) = &a.solver_at_fault {
                    d.push_str(&format!("; MIOpen was running {s}"));
                }
                d
            }
        };
        writeln!(out, "{:<8} {:<36} {detail}", a.outcome, a.arm.id)?;
    }
    for r in reasons {
        writeln!(out, "skipped: {r}")?;
    }
    if let Some(e) = doc.arms.iter().find_map(|a| a.kmsg_error.as_deref()) {
        writeln!(out, "note: {e}")?;
    }
    writeln!(out)?;
    writeln!(out, "{}", doc.verdict)?;
    for f in &doc.fixes {
        writeln!(out, "  doctor: {f}")?;
    }
    if !doc.next_steps.is_empty() {
        writeln!(out, "next steps:")?;
        for (i, n) in doc.next_steps.iter().enumerate() {
            writeln!(out, "  {}. {n}", i + 1)?;
        }
    }
    writeln!(out, "{}", doc.mtype_verdict)?;
    writeln!(out, "search ended: {}", doc.ended)?;
    for c in &doc.speed_cost {
        writeln!(out, "speed: {c}")?;
    }
    if doc.ranking.len() > 1 {
        writeln!(out, "passed, fastest first: {}", doc.ranking.join(", "))?;
        for n in &doc.ranking_noise {
            writeln!(out, "  {n}")?;
        }
    }
    if !doc.keep_lines.is_empty() {
        writeln!(out)?;
        match &doc.kept_to {
            Some(p) => writeln!(out, "kept in {p}:")?,
            None => writeln!(
                out,
                "to keep it, run again with --keep FILE (nothing was written), or save these lines:"
            )?,
        }
        for l in &doc.keep_lines {
            writeln!(out, "  {l}")?;
        }
        let file = doc.kept_to.as_deref().unwrap_or("FILE");
        let sudo = if doc
            .keep_lines
            .iter()
            .any(|l| l.starts_with("RDNA1_MTYPE_MODE="))
        {
            "sudo -E "
        } else {
            ""
        };
        writeln!(
            out,
            "then: {sudo}rdna1ctl run --env {file} -- python3 train.py"
        )?;
    }
    if let Some(e) = &doc.error {
        writeln!(out, "error: {e}")?;
    }
    Ok(())
}
