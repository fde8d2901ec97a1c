//! Environment files read as systemd's `EnvironmentFile=` reads them (man systemd.exec), so a
//! file means the same to `rdna1ctl run --env` as to a unit: no variable expansion at all;
//! `#` and `;` comment lines and empty lines skipped; `'...'` literal; `"..."` with the shell's
//! escapes (`\"`, `\\`, `` \` ``, `\$`; another `\c` stays as written); an unquoted value with
//! its leading and trailing whitespace stripped and `\c` standing for `c`; a backslash at the
//! end of a line continues the value on the next one; quoted values may span lines.
//!
//! Stricter than systemd where systemd silently drops or mangles something (a line that is not
//! `NAME=value`, an invalid name, a quote never closed, a NUL, a `\r`, a byte order mark,
//! invalid UTF-8): those are errors naming the line, so what is read is what systemd would set.
//! No crate reads this format (docs/DEPENDENCIES.md says which were looked at).

use std::fmt;

/// One `NAME=value` of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The line the name is on (from 1).
    pub line: usize,
    pub name: String,
    pub value: String,
}

/// What is wrong with the file, and where: `what` says what to do too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub line: usize,
    pub what: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

impl std::error::Error for Error {}

fn error(line: usize, what: impl Into<String>) -> Error {
    Error {
        line,
        what: what.into(),
    }
}

/// The line (from 1) that byte `at` of `bytes` is on.
fn line_of(bytes: &[u8], at: usize) -> usize {
    1 + bytes[..at.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// Bytes systemd would take differently from what the file seems to say, found before parsing.
fn check_bytes(bytes: &[u8]) -> Result<&str, Error> {
    if bytes.starts_with(b"\xef\xbb\xbf") {
        return Err(error(
            1,
            "the file starts with a UTF-8 byte order mark, which systemd would read as part of \
             the first name: save it without one (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)",
        ));
    }
    for (i, w) in bytes.windows(2).enumerate() {
        if w == b"\r\n" {
            return Err(error(
                line_of(bytes, i),
                "the line ends in CRLF (Windows line endings), whose \\r systemd reads as a line \
                 break of its own: convert the file (dos2unix FILE, or sed -i 's/\\r$//' FILE)",
            ));
        }
    }
    if let Some(i) = bytes.iter().position(|&b| b == 0) {
        return Err(error(
            line_of(bytes, i),
            "a NUL byte, which no environment variable can hold (UTF-16 or binary?): save the \
             file as UTF-8 text",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        error(
            line_of(bytes, at),
            format!(
                "not UTF-8 (byte 0x{:02X}), which systemd requires: save the file as UTF-8 \
                 (iconv -t UTF-8)",
                bytes.get(at).copied().unwrap_or(0)
            ),
        )
    })?;
    // Unicode noncharacters: systemd refuses an assignment that holds one.
    for (i, c) in text.char_indices() {
        let u = u32::from(c);
        if (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE {
            return Err(error(
                line_of(bytes, i),
                format!(
                    "the character U+{u:04X}, a Unicode noncharacter systemd refuses: remove it"
                ),
            ));
        }
    }
    Ok(text)
}

/// `[A-Za-z_][A-Za-z0-9_]*`, systemd's (and the shell's) variable names.
fn valid_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where the parser is, systemd's states (src/basic/env-file.c) less the comment escape, which
/// since v254 no longer continues a comment line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before a name: whitespace and empty lines skipped.
    Line,
    Comment,
    Name,
    /// After `=` or a closing quote: whitespace skipped; a quote opens here only.
    BeforeValue,
    Unquoted,
    UnquotedEscape,
    Single,
    Double,
    DoubleEscape,
}

/// The assignments of an environment file, in the file's order (a name given twice: the later
/// one wins when applied, as in systemd).
pub fn parse(bytes: &[u8]) -> Result<Vec<Assignment>, Error> {
    let text = check_bytes(bytes)?;
    let mut out = Vec::new();
    let mut state = State::Line;
    let mut line = 1;
    // The assignment being read: its line, name, value, where its trailing whitespace starts
    // (unquoted values) and the line its open quote is on.
    let mut at = 1;
    let mut name = String::new();
    let mut value = String::new();
    let mut trail: Option<usize> = None;
    let mut quote_line = 1;

    let mut push = |at: usize, name: &mut String, value: &mut String, trail: Option<usize>| {
        if let Some(t) = trail {
            value.truncate(t);
        }
        out.push(Assignment {
            line: at,
            name: std::mem::take(name),
            value: std::mem::take(value),
        });
    };

    for c in text.chars() {
        let quoted = matches!(state, State::Single | State::Double | State::DoubleEscape);
        if c == '\r' && !quoted {
            return Err(error(
                line,
                "a carriage return (\\r) inside the line, which systemd reads as a line break: \
                 remove it",
            ));
        }
        state = match (state, c) {
            (State::Line, '\n' | ' ' | '\t') => State::Line,
            (State::Line, '#' | ';') => State::Comment,
            (State::Line, '=') => {
                return Err(error(line, "no name before the =: write NAME=value"));
            }
            (State::Line, c) => {
                at = line;
                name.push(c);
                State::Name
            }
            (State::Comment, '\n') => State::Line,
            (State::Comment, _) => State::Comment,
            (State::Name, '\n') => return Err(not_an_assignment(line, &name)),
            (State::Name, '=') => {
                let n = name.trim_end_matches([' ', '\t']);
                if !valid_name(n) {
                    return Err(invalid_name(line, n));
                }
                name.truncate(n.len());
                trail = None;
                State::BeforeValue
            }
            (State::Name, c) => {
                name.push(c);
                State::Name
            }
            (State::BeforeValue | State::Unquoted, '\n') => {
                push(at, &mut name, &mut value, trail);
                trail = None;
                State::Line
            }
            (State::BeforeValue, ' ' | '\t') => State::BeforeValue,
            (State::BeforeValue, '\'') => {
                quote_line = line;
                State::Single
            }
            (State::BeforeValue, '"') => {
                quote_line = line;
                State::Double
            }
            (State::BeforeValue | State::Unquoted, '\\') => {
                trail = None;
                State::UnquotedEscape
            }
            (State::BeforeValue, c) => {
                value.push(c);
                State::Unquoted
            }
            (State::Unquoted, c) => {
                if c == ' ' || c == '\t' {
                    trail.get_or_insert(value.len());
                } else {
                    trail = None;
                }
                value.push(c);
                State::Unquoted
            }
            // An escaped line break continues the value; any other character stands for itself.
            (State::UnquotedEscape, c) => {
                if c != '\n' {
                    value.push(c);
                }
                State::Unquoted
            }
            (State::Single, '\'') => State::BeforeValue,
            (State::Double, '"') => State::BeforeValue,
            (State::Double, '\\') => State::DoubleEscape,
            (State::Single | State::Double, c) => {
                value.push(c);
                state
            }
            (State::DoubleEscape, c) => {
                match c {
                    '"' | '\\' | '`' | '$' => value.push(c),
                    '\n' => {}
                    // As in the shell: the backslash stays.
                    c => {
                        value.push('\\');
                        value.push(c);
                    }
                }
                State::Double
            }
        };
        if c == '\n' {
            line += 1;
        }
    }
    match state {
        State::Line | State::Comment => {}
        State::Name => return Err(not_an_assignment(line, &name)),
        State::BeforeValue | State::Unquoted | State::UnquotedEscape => {
            push(at, &mut name, &mut value, trail);
        }
        State::Single => {
            return Err(error(
                quote_line,
                "the ' that opens this value is never closed: end the value with ' (a value \
                 holding a ' of its own goes in double quotes)",
            ));
        }
        State::Double | State::DoubleEscape => {
            return Err(error(
                quote_line,
                "the \" that opens this value is never closed: end the value with \" (a \" \
                 inside it is written \\\")",
            ));
        }
    }
    Ok(out)
}

fn not_an_assignment(line: usize, text: &str) -> Error {
    error(
        line,
        format!(
            "`{}` is not NAME=value: write NAME=value, or begin the line with # to make it a \
             comment",
            text.trim_end()
        ),
    )
}

fn invalid_name(line: usize, name: &str) -> Error {
    let hint = if name.starts_with("export ") {
        " (systemd knows no `export`: drop it)"
    } else {
        ""
    };
    error(
        line,
        format!(
            "`{name}` is not a valid variable name: use letters, digits and _, not beginning \
             with a digit{hint}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text.as_bytes())
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
            .into_iter()
            .map(|a| (a.name, a.value))
            .collect()
    }

    fn one(text: &str) -> String {
        match pairs(text).as_slice() {
            [(_, v)] => v.clone(),
            other => panic!("{text:?}: {other:?}"),
        }
    }

    #[test]
    fn values_as_systemd_reads_them() {
        // Unquoted: whitespace around stripped, inside kept, \c is c, quotes after the first
        // character literal.
        assert_eq!(one("A=  a  b \t\n"), "a  b");
        assert_eq!(one("A=a\\ \n"), "a ");
        assert_eq!(one("A=\\ a\n"), " a");
        assert_eq!(one("A=a\\\\b\n"), "a\\b");
        assert_eq!(one("A=a'b c'\n"), "a'b c'");
        assert_eq!(one("A=$HOME${X}`id`\n"), "$HOME${X}`id`");
        // Single quotes: everything literal, across lines too.
        assert_eq!(one("A='a\\b $X \"'\n"), "a\\b $X \"");
        assert_eq!(one("A='a\nb'\n"), "a\nb");
        // Double quotes: the shell's four escapes, a backslash before anything else kept.
        assert_eq!(
            one("A=\"\\\" \\\\ \\` \\$ \\n \\'\"\n"),
            "\" \\ ` $ \\n \\'"
        );
        assert_eq!(one("A=\"a\\\nb\"\n"), "ab");
        assert_eq!(one("A=\"  a  \"\n"), "  a  ");
        // After a closing quote, whitespace is skipped and what follows joins the value.
        assert_eq!(one("A='a' 'b'  c  \n"), "abc");
        // The last line needs no line break; an escape at the very end is dropped.
        assert_eq!(one("A=x"), "x");
        assert_eq!(one("A=x\\"), "x");
        assert_eq!(one("A="), "");
        assert_eq!(one("A=''"), "");
        // Not a comment after a value.
        assert_eq!(one("A=1 # one\n"), "1 # one");
        assert_eq!(one("A=\u{e9}t\u{e9}\n"), "\u{e9}t\u{e9}");
    }

    #[test]
    fn names_lines_and_comments() {
        let text = "\n  # c \\\nA=1\n\t; c\n  B  =  2\n_c9=3\nA=4\n";
        let got = parse(text.as_bytes()).unwrap();
        let seen: Vec<_> = got
            .iter()
            .map(|a| (a.line, a.name.as_str(), a.value.as_str()))
            .collect();
        // A comment's trailing backslash does not continue it (systemd since v254).
        assert_eq!(
            seen,
            [(3, "A", "1"), (5, "B", "2"), (6, "_c9", "3"), (7, "A", "4")]
        );
        // A continued value: the next assignment's line is counted on.
        let got = parse(b"A=a\\\nb\nB='x\ny'\nC=3\n").unwrap();
        assert_eq!(got[2].line, 5);
    }

    #[test]
    fn errors_name_the_line() {
        let cases: [(&[u8], usize, &str); 14] = [
            (b"\xef\xbb\xbfA=1\n", 1, "byte order mark"),
            (b"A=1\nB=2\r\n", 2, "CRLF"),
            (b"A='1\r\n'\n", 1, "CRLF"),
            (b"A=1\rB=2\n", 1, "carriage return"),
            (b"A=1\n\n\0", 3, "NUL"),
            (b"A=\xc3\n", 1, "not UTF-8 (byte 0xC3)"),
            ("A=\u{fdd0}\n".as_bytes(), 1, "U+FDD0"),
            (b"A=1\nB\n", 2, "`B` is not NAME=value"),
            (b"A=1\nB", 2, "`B` is not NAME=value"),
            (b"=1\n", 1, "no name"),
            (b"A B=1\n", 1, "`A B` is not a valid variable name"),
            (b"export A=1\n", 1, "drop it"),
            (
                b"A=1\nB='x\n\ny\n",
                2,
                "' that opens this value is never closed",
            ),
            (
                b"A=\"x\\\"\n",
                1,
                "\" that opens this value is never closed",
            ),
        ];
        for (text, line, what) in cases {
            let e = parse(text).expect_err(what);
            assert_eq!(e.line, line, "{what}: {e}");
            assert!(e.what.contains(what), "{what}: {e}");
        }
    }

    #[test]
    fn valid_names() {
        for n in ["A", "_", "a_1", "HSA_OVERRIDE_GFX_VERSION"] {
            assert!(valid_name(n), "{n}");
        }
        for n in ["", "1A", "A-B", "A.B", "\u{e9}", "A B"] {
            assert!(!valid_name(n), "{n}");
        }
    }
}
