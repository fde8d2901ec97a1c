//! The human table: ID, STATUS and message on one line, the fix on the next, then a summary.

use std::io::{self, Write};

use super::{Check, Status};

pub fn table(checks: &[Check], out: &mut impl Write) -> io::Result<()> {
    let width = checks.iter().map(|c| c.id.len()).max().unwrap_or(2).max(2);
    writeln!(out, "{:width$}  {:6}  MESSAGE / FIX", "ID", "STATUS")?;
    for c in checks {
        writeln!(out, "{:width$}  {:6}  {}", c.id, c.status.name(), c.message)?;
        if let Some(fix) = &c.fix {
            writeln!(out, "{:width$}  {:6}  fix: {fix}", "", "")?;
        }
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (ok, warn, fail) = (count(Status::Ok), count(Status::Warn), count(Status::Fail));
    let verdict = if fail > 0 {
        "problems found"
    } else if warn > 0 {
        "no failures, see the warnings"
    } else {
        "all checks passed"
    };
    writeln!(out, "{ok} ok, {warn} warn, {fail} fail: {verdict}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_fix_lines_and_summary() {
        let checks = [
            Check::ok("kernel.release", "Linux 7.2.13"),
            Check::fail("kconfig.rust", "CONFIG_RUST not set", "boot a Rust kernel"),
            Check::warn("kconfig.btf", "no BTF", "boot a BTF kernel"),
        ];
        let mut v = Vec::new();
        table(&checks, &mut v).unwrap();
        let t = String::from_utf8(v).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("ID "), "{t}");
        assert_eq!(lines[1], "kernel.release  ok      Linux 7.2.13");
        assert_eq!(lines[2], "kconfig.rust    fail    CONFIG_RUST not set");
        assert_eq!(lines[3], "                        fix: boot a Rust kernel");
        assert_eq!(
            lines.last().unwrap(),
            &"1 ok, 1 warn, 1 fail: problems found"
        );
    }

    #[test]
    fn summary_without_failures() {
        let mut v = Vec::new();
        table(&[Check::ok("a", "x")], &mut v).unwrap();
        assert!(String::from_utf8(v)
            .unwrap()
            .ends_with("1 ok, 0 warn, 0 fail: all checks passed\n"));
    }
}
