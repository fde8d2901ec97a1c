//! What a command (report, search) is doing, on stderr: on a terminal one line kept up to date while a run
//! goes on; otherwise (a file, a pipe, a CI log) plain lines, one per step and result.

use std::io::Write;

pub struct Progress {
    out: Box<dyn Write>,
    /// `rdna1ctl report`, `rdna1ctl search`: each line's prefix.
    who: &'static str,
    tty: bool,
    /// A live line is on the terminal (to be cleared before the next line).
    live: bool,
}

impl Progress {
    pub fn new(out: Box<dyn Write>, tty: bool) -> Progress {
        Progress {
            out,
            who: "rdna1ctl report",
            tty,
            live: false,
        }
    }

    /// stderr, live only on a terminal (and without NO_COLOR's cousin: a dumb terminal).
    pub fn stderr() -> Progress {
        use std::io::IsTerminal;
        let tty = std::io::stderr().is_terminal()
            && std::env::var_os("TERM").is_some_and(|t| t != "dumb");
        Progress::new(Box::new(std::io::stderr()), tty)
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
        let _ = write!(self.out, "\r\x1b[K{}: {text}", self.who);
        let _ = self.out.flush();
        self.live = true;
    }
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
}
