//! Text fitted to the terminal. On a terminal, a line wider than it is wrapped at spaces, its
//! continuation lines aligned under its last column (the text after its last run of two or
//! more spaces, e.g. doctor's MESSAGE / FIX column or status's values), as `systemctl` fits
//! its output to the terminal. Pipes and files get whole lines, for grep and scripts; JSON,
//! completions and man pages are never wrapped (`crate::run` decides).

use std::io::{self, Write};

/// Wraps each line written through it to `width` columns (see the module doc).
pub struct Wrap<W: Write> {
    inner: W,
    width: usize,
    /// The line written so far, up to its newline.
    line: Vec<u8>,
}

impl<W: Write> Wrap<W> {
    pub fn new(inner: W, width: usize) -> Self {
        Self {
            inner,
            width,
            line: Vec::new(),
        }
    }

    fn emit_line(&mut self) -> io::Result<()> {
        let text = String::from_utf8_lossy(&self.line);
        let body = text.strip_suffix('\n').unwrap_or(&text);
        let mut wrapped = fit(body, self.width);
        if text.ends_with('\n') {
            wrapped.push('\n');
        }
        self.line.clear();
        self.inner.write_all(wrapped.as_bytes())
    }
}

impl<W: Write> Write for Wrap<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for chunk in buf.split_inclusive(|b| *b == b'\n') {
            self.line.extend_from_slice(chunk);
            if chunk.ends_with(b"\n") {
                self.emit_line()?;
            }
        }
        Ok(buf.len())
    }

    /// A flush passes a partial line on as it is (a prompt, a line still being printed).
    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            self.emit_line()?;
        }
        self.inner.flush()
    }
}

/// The column the continuation lines of `line` start at: after its last run of two or more
/// spaces in the left half of `width` (a table's last column), else 0.
fn continuation(line: &str, width: usize) -> usize {
    let mut at = 0;
    let mut spaces = 0;
    for (col, c) in line.chars().enumerate() {
        if col >= width / 2 {
            break;
        }
        if c == ' ' {
            spaces += 1;
        } else {
            if spaces >= 2 {
                at = col;
            }
            spaces = 0;
        }
    }
    at
}

/// `line` in lines of at most `width` columns where it has spaces to break at; a word wider
/// than the room (a long path) is kept whole on a line of its own.
pub fn fit(line: &str, width: usize) -> String {
    if textwrap::core::display_width(line) <= width {
        return line.to_owned();
    }
    let indent = continuation(line, width);
    let (head, rest) = line.split_at(line.char_indices().nth(indent).map_or(0, |(i, _)| i));
    let pad = " ".repeat(indent);
    let options = textwrap::Options::new(width - indent)
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        // Never at a hyphen: paths, releases and options (6.12.48+deb13-amd64, check-kernel)
        // must stay whole, to be copied.
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut out = String::from(head);
    for (i, part) in textwrap::wrap(rest, options).iter().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&pad);
        }
        out.push_str(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line fits `width`, unless it is one word too wide for any line.
    fn assert_fits(text: &str, width: usize) {
        for l in text.lines() {
            let w = textwrap::core::display_width(l);
            assert!(w <= width || !l.trim().contains(' '), "{w} columns: {l:?}");
        }
    }

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn a_table_row_continues_under_its_last_column() {
        let row = "kconfig.btf           warn    CONFIG_DEBUG_INFO_BTF_MODULES is not set: no \
                   /sys/kernel/btf/amdgpu, so amdgpu_bo's layout cannot be cross-checked";
        let out = fit(row, 80);
        assert_fits(&out, 80);
        assert_eq!(words(&out), words(row), "no word lost or split");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 1, "{out}");
        assert!(
            lines[0].starts_with("kconfig.btf           warn    CONFIG_DEBUG"),
            "{out}"
        );
        for l in &lines[1..] {
            assert!(
                l.starts_with(&" ".repeat(30)) && !l[30..].starts_with(' '),
                "{l:?}"
            );
        }
        // A line that fits is left as it is, double spaces included.
        assert_eq!(fit("a  b", 80), "a  b");
    }

    #[test]
    fn a_word_too_wide_stays_whole() {
        assert_eq!(
            fit("a-b  check-kernel 6.12.48+deb13-amd64", 16),
            "a-b  check-kernel\n     6.12.48+deb13-amd64",
            "never broken at a hyphen"
        );
        let path = format!("/{}", "x".repeat(100));
        let out = fit(&format!("fix:  run {path} now"), 40);
        assert!(out.lines().any(|l| l.trim() == path), "{out}");
        assert_fits(&out, 40);
    }

    #[test]
    fn lines_are_wrapped_as_they_are_written_and_a_flush_passes_the_rest() {
        let mut out = Vec::new();
        {
            let mut w = Wrap::new(&mut out, 20);
            write!(w, "short\nname  one two three ").unwrap();
            write!(w, "four five six\nnext").unwrap();
            w.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "short\nname  one two three\n      four five six\nnext"
        );
    }
}
