//! The filter's stdout: about one write per input chunk, and no copy for long text.

use std::io::{self, Write};

/// Text at least this long is written straight from where it lies (the read buffer, mostly);
/// shorter pieces are gathered so that sigil-heavy input still costs about one write per chunk.
const DIRECT: usize = 4096;

/// Keeps the first write error and drops everything after it.
pub(super) struct Output<W> {
    w: W,
    /// Set when the output is shown on a terminal: every byte passes it (DESIGN §8).
    sanitizer: Option<crate::term::Sanitizer>,
    shown: Vec<u8>,
    buf: Vec<u8>,
    /// Gathered bytes are written once there are this many.
    limit: usize,
    error: Option<io::Error>,
}

impl<W: Write> Output<W> {
    pub(super) fn new(w: W, limit: usize, sanitize: bool) -> Self {
        Output {
            w,
            sanitizer: sanitize.then(crate::term::Sanitizer::default),
            shown: Vec::new(),
            buf: Vec::new(),
            limit,
            error: None,
        }
    }

    /// Text in output order; it is out at the latest on the next [`Output::flush`].
    pub(super) fn text(&mut self, t: &[u8]) {
        if t.len() >= DIRECT {
            self.flush();
            self.write(t);
        } else {
            self.buf.extend_from_slice(t);
            if self.buf.len() >= self.limit {
                self.flush();
            }
        }
    }

    pub(super) fn flush(&mut self) {
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            self.write(&buf);
            self.buf = buf;
            self.buf.clear();
        }
    }

    pub(super) fn failed(&self) -> bool {
        self.error.is_some()
    }

    pub(super) fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// Writes what a sanitizer held back at the end of the stream.
    pub(super) fn finish(&mut self) {
        self.flush();
        if let Some(mut s) = self.sanitizer.take() {
            let mut tail = Vec::new();
            s.finish(&mut tail);
            self.write(&tail);
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        // Text scanned while a confirmation prompt is up waits for its answer (DESIGN §2a).
        let _terminal = crate::term::gate::hold();
        let result = match &mut self.sanitizer {
            Some(s) => {
                self.shown.clear();
                s.push(bytes, &mut self.shown);
                self.w.write_all(&self.shown)
            }
            None => self.w.write_all(bytes),
        };
        if let Err(e) = result {
            self.error = Some(e);
        }
    }
}
