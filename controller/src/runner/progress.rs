//! What a command (report, search) is doing, on stderr: on a terminal one line kept up to date
//! while a run goes on, cut to the terminal's width (a wrapped line could not be replaced);
//! otherwise (a file, a pipe, a CI log) plain lines, one per step and result, never cut.

use std::io::Write;

pub struct Progress {
    out: Box<dyn Write>,
    /// `rdna1ctl report`, `rdna1ctl search`: each line's prefix.
    who: &'static str,
    tty: bool,
    /// A live line is on the terminal (to be cleared before the next line).
    live: bool,
    columns: Columns,
}

/// How wide the terminal is, for the live line.
enum Columns {
    Unknown,
    /// Asked at each tick: the terminal may be resized while a run goes on.
    Stderr,
    #[cfg(test)]
    Fixed(usize),
}

impl Progress {
    pub fn new(out: Box<dyn Write>, tty: bool) -> Progress {
        Progress {
            out,
            who: "rdna1ctl report",
            tty,
            live: false,
            columns: Columns::Unknown,
        }
    }

    /// A terminal `n` columns wide.
    #[cfg(test)]
    fn with_columns(mut self, n: usize) -> Progress {
        self.columns = Columns::Fixed(n);
        self
    }

    /// The terminal's width; None when unknown (0 is what some report then).
    fn columns(&self) -> Option<usize> {
        let n = match self.columns {
            Columns::Unknown => None,
            Columns::Stderr => terminal_size::terminal_size_of(std::io::stderr())
                .map(|(terminal_size::Width(w), _)| usize::from(w)),
            #[cfg(test)]
            Columns::Fixed(n) => Some(n),
        };
        n.filter(|&n| n > 0)
    }

    /// stderr, live only on a terminal (and without NO_COLOR's cousin: a dumb terminal).
    pub fn stderr() -> Progress {
        use std::io::IsTerminal;
        let tty = std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb");
        let mut p = Progress::new(Box::new(std::io::stderr()), tty);
        p.columns = Columns::Stderr;
        p
    }

    /// The same, its lines prefixed with `who` (`rdna1ctl search`).
    pub fn named(mut self, who: &'static str) -> Progress {
        self.who = who;
        self
    }

    fn clear(&mut self) {
        if self.live {
            let _ = write!(self.out, "\r\x1b[K");
            self.live = false;
        }
    }

    /// A line that stays: a step begun or a result.
    pub fn line(&mut self, text: &str) {
        self.clear();
        // Progress is a courtesy: a closed stderr does not stop the report.
        let _ = writeln!(self.out, "{}: {text}", self.who);
        let _ = self.out.flush();
    }

    /// A line that is replaced by the next one (a terminal only).
    pub fn tick(&mut self, text: &str) {
        if !self.tty {
            return;
        }
        let line = format!("{}: {text}", self.who);
        let line = match self.columns() {
            Some(n) => fit(&line, n),
            None => line,
        };
        let _ = write!(self.out, "\r\x1b[K{line}");
        let _ = self.out.flush();
        self.live = true;
    }
}

/// `line` cut to fit a terminal `columns` wide, with an ellipsis where it was cut. Its last
/// column stays free: some terminals wrap on writing it, and a wrapped live line is not
/// cleared by the next one's `\r\x1b[K`. Measured in columns, not bytes (a CJK character takes
/// two), and never cut inside a character.
fn fit(line: &str, columns: usize) -> String {
    let room = columns.saturating_sub(1);
    if textwrap::core::display_width(line) <= room {
        return line.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut buf = [0; 4];
    for c in line.chars() {
        let w = textwrap::core::display_width(c.encode_utf8(&mut buf));
        // One column for the ellipsis.
        if used + w + 1 > room {
            break;
        }
        used += w;
        out.push(c);
    }
    if room > 0 {
        out.push('\u{2026}');
    }
    out
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(b: &Buf) -> String {
        String::from_utf8(b.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn plain_lines_off_a_terminal() {
        let b = Buf::default();
        let mut p = Progress::new(Box::new(b.clone()), false);
        p.line("run off");
        p.tick("off: running for 1 s");
        p.line("off: pass");
        drop(p);
        assert_eq!(
            text(&b),
            "rdna1ctl report: run off\nrdna1ctl report: off: pass\n"
        );
    }

    #[test]
    fn a_live_line_on_a_terminal_cleared_before_the_next() {
        let b = Buf::default();
        let mut p = Progress::new(Box::new(b.clone()), true);
        p.tick("off: running for 1 s");
        p.line("off: pass");
        drop(p);
        let t = text(&b);
        assert!(
            t.starts_with("\r\x1b[Krdna1ctl report: off: running for 1 s\r\x1b[K"),
            "{t:?}"
        );
        assert!(t.ends_with("off: pass\n"), "{t:?}");
    }

    /// The live line as written: after its `\r\x1b[K`.
    fn live_line(b: &Buf) -> String {
        let t = text(b);
        t.rsplit("\x1b[K").next().unwrap().to_owned()
    }

    fn width(s: &str) -> usize {
        textwrap::core::display_width(s)
    }

    #[test]
    fn a_live_line_is_cut_to_the_terminal_so_it_does_not_wrap() {
        let b = Buf::default();
        let mut p = Progress::new(Box::new(b.clone()), true).with_columns(30);
        p.tick("off: running for 120 s (the layer battery, 40 layers)");
        let l = live_line(&b);
        // The last column is left free: some terminals wrap on writing it.
        assert_eq!(l, "rdna1ctl report: off: runnin\u{2026}");
        assert_eq!(width(&l), 29);
        // A line that fits is left whole.
        p.tick("off: 1 s");
        assert_eq!(live_line(&b), "rdna1ctl report: off: 1 s");
        // Exactly as wide as the room: whole; one more column: cut.
        p.tick("off: running");
        assert_eq!(live_line(&b), "rdna1ctl report: off: running");
        p.tick("off: running!");
        assert_eq!(live_line(&b), "rdna1ctl report: off: runnin\u{2026}");
    }

    #[test]
    fn the_cut_counts_characters_and_their_columns_not_bytes() {
        let b = Buf::default();
        let mut p = Progress::new(Box::new(b.clone()), true).with_columns(26);
        // 2 bytes each, 1 column each.
        p.tick("\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}");
        let l = live_line(&b);
        assert_eq!(
            l,
            "rdna1ctl report: \u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{2026}"
        );
        assert_eq!(width(&l), 25);
        // 3 bytes each, 2 columns each: never half a character.
        p.tick("\u{65e5}\u{672c}\u{8a9e}\u{65e5}\u{672c}\u{8a9e}");
        let l = live_line(&b);
        assert_eq!(l, "rdna1ctl report: \u{65e5}\u{672c}\u{8a9e}\u{2026}");
        assert!(width(&l) <= 25, "{l}");
    }

    #[test]
    fn lines_that_stay_and_an_unknown_width_are_never_cut() {
        let long = "off: pass: ".to_owned() + &"x".repeat(100);
        let b = Buf::default();
        let mut p = Progress::new(Box::new(b.clone()), true).with_columns(30);
        p.line(&long);
        drop(p);
        assert!(text(&b).contains(&format!("rdna1ctl report: {long}\n")));
        let b = Buf::default();
        let mut p = Progress::new(Box::new(b.clone()), true);
        p.tick(&long);
        assert_eq!(live_line(&b), format!("rdna1ctl report: {long}"));
    }
}
