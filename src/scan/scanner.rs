//! The streaming scanner: text in arbitrary chunks, events out.
//!
//! Work is linear in the input whatever it holds. Each byte is examined once by the framer of an
//! open directive candidate and at most once more by the Markdown tracker; nothing is rescanned for
//! directives:
//! - A candidate that gets too long (raw length would pass `max_directive_bytes`) is abandoned: the
//!   bytes held so far become literal text and scanning resumes, in prose, at the byte that did
//!   not fit. So `%{%{%{…` without a close costs one pass, and a sigil inside abandoned bytes never
//!   starts a directive.
//! - An unquoted newline inside a candidate abandons it the same way; the newline itself is then
//!   read as prose (it may end a line that starts a code fence).
//! - A closed candidate that is not a directive (blank or non-UTF-8 body) is literal as a whole.
//! - Literal candidate bytes are fed to the Markdown tracker (without looking for directives) so
//!   that a fence or code span inside them is still followed. A directive's own bytes are opaque
//!   to Markdown: a backtick inside `!{…}` opens no code span.
//!
//! Escapes: a backslash right before sigil + bracket (in prose) is dropped and the candidate that
//! follows is parsed as usual but comes out as literal text whatever its fate, so nothing inside
//! `\%{…}` runs. Any other backslash is text.

use memchr::{memchr, memchr2};

use super::grammar::{self, closing};
use super::markdown::{CodeTracker, byte_set};
use super::{Event, ScanOptions};

/// Bytes that can change the framer state of an open candidate outside quotes, per bracket kind.
const BRACE_BODY_STOP: [bool; 256] = byte_set(b"\\'\"\n{}");
const ANGLE_BODY_STOP: [bool; 256] = byte_set(b"\\'\"\n<>");

fn is_open(b: u8) -> bool {
    b == b'{' || b == b'<'
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Framing state of an open candidate.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    open: u8,
    close: u8,
    depth: usize,
    quote: Quote,
    /// The previous byte was an escaping backslash.
    esc: bool,
    /// Preceded by a dropped `\`: comes out as literal text.
    escaped: bool,
}

/// What is held back between chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    Nothing,
    /// A prose `%` or `!` that may be followed by a bracket.
    Sigil(u8),
    /// A prose `\` that may be followed by sigil + bracket.
    Backslash,
    /// `\` + sigil, waiting for a bracket.
    BackslashSigil(u8),
    /// An open candidate; its bytes are in `Scanner::raw`.
    Candidate,
}

enum Outcome {
    /// Needs more input.
    Open,
    /// The closing bracket was consumed.
    Closed,
    /// Not a directive; the byte that triggered it was not consumed.
    Abandoned,
}

/// Incremental directive scanner (DESIGN §1). Feed chunks, then call [`Scanner::finish`].
#[derive(Debug, Clone)]
pub struct Scanner {
    opts: ScanOptions,
    code: CodeTracker,
    held: Held,
    cand: Candidate,
    /// Raw bytes of the open candidate (at most `max_directive_bytes`).
    raw: Vec<u8>,
    /// Text decided during the current call, emitted as one event before a directive or at return.
    text: Vec<u8>,
}

impl Scanner {
    pub fn new(opts: ScanOptions) -> Scanner {
        Scanner {
            opts,
            code: CodeTracker::new(!opts.exec_in_code),
            held: Held::Nothing,
            cand: Candidate {
                open: b'{',
                close: b'}',
                depth: 0,
                quote: Quote::None,
                esc: false,
                escaped: false,
            },
            raw: Vec::new(),
            text: Vec::new(),
        }
    }

    /// Bytes held back because they may still become (or belong to) a directive.
    /// Never more than `max(max_directive_bytes, 2)`.
    pub fn held_back(&self) -> usize {
        match self.held {
            Held::Nothing => 0,
            Held::Sigil(_) | Held::Backslash => 1,
            Held::BackslashSigil(_) => 2,
            Held::Candidate => self.raw.len(),
        }
    }

    /// Feed the next chunk; push produced events onto `out`. All text that cannot be part of a
    /// directive is in `out` on return.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        let mut i = 0;
        // Start of the text in `chunk` not yet copied to `self.text`.
        let mut start = 0;
        while i < chunk.len() {
            match self.held {
                Held::Nothing => match self.code.scan(&chunk[i..], true) {
                    None => i = chunk.len(),
                    Some(k) => {
                        let at = i + k;
                        self.text.extend_from_slice(&chunk[start..at]);
                        self.held = match chunk[at] {
                            b'\\' => Held::Backslash,
                            s => Held::Sigil(s),
                        };
                        i = at + 1;
                        start = i;
                    }
                },
                Held::Sigil(s) => {
                    if is_open(chunk[i]) {
                        self.open(s, chunk[i], false);
                        i += 1;
                        start = i;
                    } else {
                        self.text.push(s);
                        self.held = Held::Nothing;
                    }
                }
                Held::Backslash => {
                    if matches!(chunk[i], b'%' | b'!') {
                        self.held = Held::BackslashSigil(chunk[i]);
                        i += 1;
                        start = i;
                    } else {
                        self.text.push(b'\\');
                        self.held = Held::Nothing;
                    }
                }
                Held::BackslashSigil(s) => {
                    if is_open(chunk[i]) {
                        self.open(s, chunk[i], true);
                        i += 1;
                        start = i;
                    } else {
                        self.text.extend_from_slice(&[b'\\', s]);
                        self.held = Held::Nothing;
                    }
                }
                Held::Candidate => {
                    let (used, outcome) = self.advance(&chunk[i..]);
                    i += used;
                    start = i;
                    match outcome {
                        Outcome::Open => {}
                        Outcome::Closed => self.close(out),
                        Outcome::Abandoned => self.literal(),
                    }
                }
            }
        }
        self.text.extend_from_slice(&chunk[start..]);
        self.flush_text(out);
    }

    /// End of stream: whatever is held back comes out as literal text. The scanner is then ready
    /// for a new stream.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        match self.held {
            Held::Nothing => {}
            Held::Sigil(s) => self.text.push(s),
            Held::Backslash => self.text.push(b'\\'),
            Held::BackslashSigil(s) => self.text.extend_from_slice(&[b'\\', s]),
            Held::Candidate => self.text.extend_from_slice(&self.raw),
        }
        self.flush_text(out);
        self.held = Held::Nothing;
        self.raw.clear();
        self.code = CodeTracker::new(!self.opts.exec_in_code);
    }

    fn flush_text(&mut self, out: &mut Vec<Event>) {
        if !self.text.is_empty() {
            out.push(Event::Text(std::mem::take(&mut self.text)));
        }
    }

    fn open(&mut self, sigil: u8, bracket: u8, escaped: bool) {
        self.raw.clear();
        self.raw.extend_from_slice(&[sigil, bracket]);
        self.cand = Candidate {
            open: bracket,
            close: closing(bracket),
            depth: 0,
            quote: Quote::None,
            esc: false,
            escaped,
        };
        self.held = Held::Candidate;
    }

    /// Frames the open candidate over `bytes`: how many bytes it took and why it stopped.
    fn advance(&mut self, bytes: &[u8]) -> (usize, Outcome) {
        let max = self.opts.max_directive_bytes;
        let base = self.raw.len();
        let c = &mut self.cand;
        let mut i = 0;
        let outcome = loop {
            if i == bytes.len() {
                break Outcome::Open;
            }
            if base + i >= max {
                break Outcome::Abandoned;
            }
            if c.esc {
                c.esc = false;
                if bytes[i] == b'\n' && c.quote == Quote::None {
                    break Outcome::Abandoned;
                }
                i += 1;
                continue;
            }
            // Skip bytes that cannot change the state, without passing the length limit.
            let window = &bytes[i..bytes.len().min(i + (max - base - i))];
            let k = match c.quote {
                Quote::Single => memchr(b'\'', window),
                Quote::Double => memchr2(b'"', b'\\', window),
                Quote::None => {
                    let stop = if c.open == b'<' {
                        &ANGLE_BODY_STOP
                    } else {
                        &BRACE_BODY_STOP
                    };
                    window.iter().position(|&b| stop[b as usize])
                }
            };
            let Some(k) = k else {
                i += window.len();
                continue;
            };
            i += k;
            let b = bytes[i];
            match c.quote {
                Quote::Single => c.quote = Quote::None,
                Quote::Double if b == b'\\' => c.esc = true,
                Quote::Double => c.quote = Quote::None,
                Quote::None => match b {
                    b'\\' => c.esc = true,
                    b'\'' => c.quote = Quote::Single,
                    b'"' => c.quote = Quote::Double,
                    b'\n' => break Outcome::Abandoned,
                    _ if b == c.close && c.depth == 0 => {
                        i += 1;
                        break Outcome::Closed;
                    }
                    _ if b == c.close => c.depth -= 1,
                    _ => c.depth += 1,
                },
            }
            i += 1;
        };
        self.raw.extend_from_slice(&bytes[..i]);
        (i, outcome)
    }

    /// The candidate's closing bracket was read: a directive, or literal text.
    fn close(&mut self, out: &mut Vec<Event>) {
        debug_assert!(
            matches!(grammar::directive(&self.raw), Ok((rest, _)) if rest.is_empty()),
            "framer and grammar disagree on {:?}",
            String::from_utf8_lossy(&self.raw)
        );
        if !self.cand.escaped
            && let Some(d) = grammar::parse_directive(&self.raw)
        {
            self.held = Held::Nothing;
            self.raw.clear();
            self.flush_text(out);
            out.push(Event::Directive(d));
            return;
        }
        self.literal();
    }

    /// The held candidate is not a directive: its bytes become text (and Markdown sees them).
    fn literal(&mut self) {
        self.held = Held::Nothing;
        self.code.scan(&self.raw, false);
        self.text.extend_from_slice(&self.raw);
        self.raw.clear();
    }
}

/// Scans a whole input in one go; adjacent texts are merged.
pub fn scan_all(input: &[u8], opts: ScanOptions) -> Vec<Event> {
    let mut scanner = Scanner::new(opts);
    let mut out = Vec::new();
    scanner.feed(input, &mut out);
    scanner.finish(&mut out);
    coalesce(out)
}

/// Merges adjacent `Text` events and drops empty ones, so event lists from different chunkings
/// of the same input compare equal.
pub fn coalesce(events: Vec<Event>) -> Vec<Event> {
    let mut merged: Vec<Event> = Vec::with_capacity(events.len());
    for ev in events {
        match (merged.last_mut(), ev) {
            (_, Event::Text(t)) if t.is_empty() => {}
            (Some(Event::Text(prev)), Event::Text(t)) => prev.extend_from_slice(&t),
            (_, ev) => merged.push(ev),
        }
    }
    merged
}
