//! Where the line stands after what skillpipe wrote to stderr, so that a status line there
//! starts at the beginning of a line: a script's stderr passed through, or an answer or a side
//! effect's output on a shared terminal, that ends mid-line must not get "skillpipe: …" glued to
//! it. Everything skillpipe writes to stdout or stderr outside the REPL (which keeps its own
//! screen) passes [`note`], a [`Noted`] writer or [`status`]. Stdout counts only where it
//! shows together with stderr: both terminals, or one file or pipe (`2>&1`). Each of these
//! writes holds the terminal ([`super::gate`]): none lands while a confirmation prompt is up.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// One of this process's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// The last byte skillpipe wrote where stderr shows was not a newline.
static MID_LINE: AtomicBool = AtomicBool::new(false);

fn is_terminal(stream: Stream) -> bool {
    static TTY: OnceLock<(bool, bool)> = OnceLock::new();
    let (out, err) = *TTY.get_or_init(|| {
        (
            std::io::stdout().is_terminal(),
            std::io::stderr().is_terminal(),
        )
    });
    match stream {
        Stream::Stdout => out,
        Stream::Stderr => err,
    }
}

/// Whether bytes written to `stream` land where stderr's lines do: stderr itself; stdout when
/// both are terminals or both are the same open file or pipe.
fn shares_stderr(stream: Stream) -> bool {
    static SAME: OnceLock<bool> = OnceLock::new();
    match stream {
        Stream::Stderr => true,
        Stream::Stdout => *SAME.get_or_init(|| {
            let id = |m: std::io::Result<std::fs::Metadata>| {
                use std::os::unix::fs::MetadataExt;
                m.ok().map(|m| (m.dev(), m.ino()))
            };
            let file =
                |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().map(std::fs::File::from);
            let out = id(file(std::io::stdout().as_fd()).and_then(|f| f.metadata()));
            let err = id(file(std::io::stderr().as_fd()).and_then(|f| f.metadata()));
            (is_terminal(Stream::Stdout) && is_terminal(Stream::Stderr))
                || (out.is_some() && out == err)
        }),
    }
}

/// Whether the cursor is mid-line after `bytes`, if it was (`mid_line`) before them. Pure.
fn mid_line_after(mid_line: bool, bytes: &[u8]) -> bool {
    bytes.last().map_or(mid_line, |b| *b != b'\n')
}

/// What a status line needs in front: a newline when the cursor is mid-line, else nothing (no
/// blank line at column 0). Pure.
fn lead(mid_line: bool) -> &'static str {
    if mid_line { "\n" } else { "" }
}

/// Records `bytes` as written to `stream`.
pub(crate) fn note(stream: Stream, bytes: &[u8]) {
    if shares_stderr(stream) {
        let was = MID_LINE.load(Ordering::SeqCst);
        MID_LINE.store(mid_line_after(was, bytes), Ordering::SeqCst);
    }
}

/// Something else ended the terminal's line (the confirmation prompt writes its answer and a
/// line end to `/dev/tty` itself).
pub(crate) fn at_line_start() {
    MID_LINE.store(false, Ordering::SeqCst);
}

/// Ctrl-C was pressed: a terminal that echoes control keys (`ECHOCTL`, the default) wrote `^C`
/// where the cursor stood, so it is mid-line whatever skillpipe wrote last.
pub(crate) fn interrupt_key_echoed() {
    if !is_terminal(Stream::Stderr) {
        return;
    }
    // SAFETY: termios is plain data; tcgetattr fills it for an open terminal.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(libc::STDERR_FILENO, &mut t) } != 0 {
        return;
    }
    let echo = libc::ISIG | libc::ECHO | libc::ECHOCTL;
    if t.c_lflag & echo == echo {
        MID_LINE.store(true, Ordering::SeqCst);
    }
}

/// Writes `bytes` to stderr as they are (a side effect's output), recorded; after any prompt
/// that is up has its answer.
pub(crate) fn stderr_raw(bytes: &[u8]) {
    let _terminal = super::gate::hold();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes);
    let _ = err.flush();
    note(Stream::Stderr, bytes);
}

/// Writes `line` (a newline is added) to stderr, starting on a line of its own.
pub(crate) fn status(line: &str) {
    let lead = lead(MID_LINE.load(Ordering::SeqCst));
    let text = format!("{lead}{line}\n");
    stderr_raw(text.as_bytes());
}

/// A writer whose bytes are recorded as written to `stream`, each write made after any prompt
/// that is up has its answer.
pub(crate) struct Noted<W> {
    inner: W,
    stream: Stream,
}

impl<W: Write> Noted<W> {
    pub fn new(inner: W, stream: Stream) -> Noted<W> {
        Noted { inner, stream }
    }
}

impl<W: Write> Write for Noted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _terminal = super::gate::hold();
        let n = self.inner.write(buf)?;
        note(self.stream, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _terminal = super::gate::hold();
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_starts_a_line_only_when_the_cursor_is_mid_line() {
        assert!(mid_line_after(false, b"red"));
        assert!(!mid_line_after(true, b"red\n"));
        assert!(mid_line_after(true, b""), "nothing written: unchanged");
        assert!(!mid_line_after(false, b""));
        assert!(mid_line_after(false, b"a\nb"));
        assert_eq!(lead(true), "\n");
        assert_eq!(lead(false), "", "no blank line at column 0");
    }
}
