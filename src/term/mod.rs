//! What may reach a terminal. Everything skillpipe did not write itself (model text, script output,
//! tool names, directive bodies) passes [`sanitize`] or a [`Sanitizer`] before a terminal sees it,
//! so that foreign bytes can never move the cursor, set the clipboard or the title, hide a link or
//! draw a fake prompt.

pub(crate) mod closed;
pub(crate) mod duration;
pub(crate) mod gate;
pub(crate) mod line;
mod sanitize;

pub use sanitize::{Sanitizer, sanitize, sanitize_bytes};

/// Columns of the terminal on `fd`, None when it is not a terminal (or does not say). A direct
/// ioctl: the spinner asks for every frame and must never fall back to spawning a program.
pub(crate) fn columns(fd: i32) -> Option<usize> {
    size(fd).map(|(cols, _)| cols)
}

/// Rows of the terminal on `fd`, None when it is not a terminal (or does not say).
pub(crate) fn rows(fd: i32) -> Option<usize> {
    size(fd).map(|(_, rows)| rows).filter(|r| *r > 0)
}

/// (columns, rows) of the terminal on `fd`; None when it is not one or reports no width.
fn size(fd: i32) -> Option<(usize, usize)> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ fills the winsize it is given, or fails on a descriptor that is no
    // terminal (or closed).
    let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some((usize::from(ws.ws_col), usize::from(ws.ws_row)))
}

/// `bytes` as they may be shown: sanitized when `terminal`, else unchanged (a pipe or a file gets
/// the exact bytes).
pub(crate) fn for_terminal(bytes: &[u8], terminal: bool) -> std::borrow::Cow<'_, [u8]> {
    match terminal {
        true => std::borrow::Cow::Owned(sanitize_bytes(bytes).into_bytes()),
        false => std::borrow::Cow::Borrowed(bytes),
    }
}

/// A writer for listings that quote foreign text (SKILL.md fields, agent files, tool folders):
/// sanitized on the way through when `terminal`, exact otherwise, as [`for_terminal`] decides.
pub(crate) struct Guarded<W: std::io::Write> {
    inner: W,
    sanitizer: Option<Sanitizer>,
}

impl<W: std::io::Write> Guarded<W> {
    /// `inner`, sanitized when `terminal`.
    pub fn new(inner: W, terminal: bool) -> Self {
        Guarded {
            inner,
            sanitizer: terminal.then(Sanitizer::default),
        }
    }
}

impl Guarded<std::io::StdoutLock<'static>> {
    /// Standard output, sanitized when it is a terminal.
    pub fn stdout() -> Self {
        use std::io::IsTerminal;
        let out = std::io::stdout();
        let terminal = out.is_terminal();
        Guarded::new(out.lock(), terminal)
    }

    /// Standard output for a listing meant to be read (`skills list`, `agents show`,
    /// `doctor`): sanitized always. Piped to `head` or `grep`, it still ends on a terminal;
    /// only what a program reads (`--json`, `filter`, `run`) is exact off one.
    pub fn listing() -> Self {
        Guarded::new(std::io::stdout().lock(), true)
    }
}

impl<W: std::io::Write> std::io::Write for Guarded<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sanitizer {
            Some(s) => {
                let mut out = Vec::with_capacity(buf.len());
                s.push(buf, &mut out);
                self.inner.write_all(&out)?;
            }
            None => self.inner.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for Guarded<W> {
    /// Writes what the sanitizer held back (a lone `\r`, a cut UTF-8 character).
    fn drop(&mut self) {
        if let Some(s) = &mut self.sanitizer {
            let mut out = Vec::new();
            s.finish(&mut out);
            let _ = self.inner.write_all(&out);
        }
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn guarded_output_is_inert_on_a_terminal_and_exact_elsewhere() {
        let text = b"desc \x1b]52;c;cHduZWQ=\x07 end\r";
        let mut shown = Vec::new();
        {
            let mut g = Guarded::new(&mut shown, true);
            g.write_all(&text[..7]).unwrap();
            g.write_all(&text[7..]).unwrap();
        }
        let shown = String::from_utf8(shown).unwrap();
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{shown:?}"
        );
        assert!(shown.contains("␛]52;c;cHduZWQ=␇ end␍"), "{shown:?}");
        // Positive control: off a terminal the bytes pass exactly.
        let mut exact = Vec::new();
        Guarded::new(&mut exact, false).write_all(text).unwrap();
        assert_eq!(exact, text);
    }
}
