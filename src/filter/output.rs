//! The filter's stdout: about one write per input chunk, and no copy for long text.

use std::io::{self, Write};

/// Text at least this long is written straight from where it lies (the read buffer, mostly);
/// shorter pieces are gathered so that sigil-heavy input still costs about one write per chunk.
const DIRECT: usize = 4096;

/// Keeps the first write error and drops everything after it.
pub(super) struct Output<W> {
    w: W,
    buf: Vec<u8>,
    /// Gathered bytes are written once there are this many.
    limit: usize,
    error: Option<io::Error>,
}

impl<W: Write> Output<W> {
    pub(super) fn new(w: W, limit: usize) -> Self {
        Output {
            w,
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

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.w.write_all(bytes)
        {
            self.error = Some(e);
        }
    }
}
