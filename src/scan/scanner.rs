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
//! - A closed candidate that is not a directive (blank, placeholder or non-UTF-8 body) is literal
//!   as a whole.
//! - Literal candidate bytes are fed to the Markdown tracker (without looking for directives) so
//!   that a fence or code span inside them is still followed. A directive's own bytes are opaque
//!   to Markdown: a backtick inside `!{…}` opens no code span.
//!
//! Escapes: a backslash right before sigil + bracket (in prose) makes the candidate that follows
//! literal text whatever its fate, so nothing inside `\%{BODY}` runs. The backslash is dropped when
//! that candidate is a directive (the escape did its work) and kept when it is not (`\%{}`,
//! `\%{open` never closed: LaTeX and the like come through whole). Any other backslash is text.

use memchr::{memchr, memchr2};

use super::grammar::{self, closing};
use super::markdown::{CodeTracker, byte_set};
use super::{Directive, Event, ScanOptions};

/// Bytes that can change the framer state of an open candidate outside quotes, per bracket kind.
const BRACE_BODY_STOP: [bool; 256] = byte_set(b"\\'\"\n{}");
const ANGLE_BODY_STOP: [bool; 256] = byte_set(b"\\'\"\n<>");

fn is_open(b: u8) -> bool {
    b == b'{' || b == b'<'
}

/// Whether the prose sigil or backslash at `bytes[i]` may begin a directive or an escape: it
/// may unless the next byte, if already here, says otherwise.
fn may_start(bytes: &[u8], i: usize) -> bool {
    match bytes.get(i + 1) {
        None => true,
        Some(&next) if bytes[i] == b'\\' => matches!(next, b'%' | b'!'),
        Some(&next) => is_open(next),
    }
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
///
/// A chunk may end anywhere, even between `%` and `{`; the events are the same for every split.
///
/// ```
/// use skillpipe::{Event, Kind, ScanOptions, Scanner};
///
/// let mut scanner = Scanner::new(ScanOptions::default());
/// let mut events = Vec::new();
/// for chunk in ["Say %", "{say hi} then !{da", "te}. `%{not this}`"] {
///     scanner.feed(chunk.as_bytes(), &mut events);
/// }
/// scanner.finish(&mut events);
///
/// let directives: Vec<_> = events
///     .iter()
///     .filter_map(|e| match e {
///         Event::Directive(d) => Some((d.kind, d.body.as_str())),
///         Event::Text(_) => None,
///     })
///     .collect();
/// // Directives inside Markdown code are text.
/// assert_eq!(directives, [(Kind::SideEffect, "say hi"), (Kind::Capture, "date")]);
/// ```
#[derive(Debug, Clone)]
pub struct Scanner {
    opts: ScanOptions,
    code: CodeTracker,
    held: Held,
    cand: Candidate,
    /// Raw bytes of the open candidate (at most `max_directive_bytes`).
    raw: Vec<u8>,
}

/// Scanner output as handed to the sink of [`Scanner::feed_with`]: text is borrowed, mostly
/// straight from the fed chunk, and only valid during the call.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Bytes to pass through, borrowed from the chunk or the scanner's buffer.
    Text(&'a [u8]),
    /// A complete directive, to run.
    Directive(Directive),
}

impl Scanner {
    /// A scanner at the start of a stream.
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
        }
    }

    /// Bytes held back because they may still become (or belong to) a directive.
    /// Never more than `max(max_directive_bytes, 2)`, plus one for the backslash of an escaped
    /// candidate (`\%{…`, given back when it proves no directive).
    pub fn held_back(&self) -> usize {
        match self.held {
            Held::Nothing => 0,
            Held::Sigil(_) | Held::Backslash => 1,
            Held::BackslashSigil(_) => 2,
            Held::Candidate => self.raw.len() + usize::from(self.cand.escaped),
        }
    }

    /// Feed the next chunk; push produced events onto `out`. All text that cannot be part of a
    /// directive is in `out` on return, as one `Text` event per run between directives.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        let mut text = Vec::new();
        self.feed_with(chunk, |piece| push_piece(piece, &mut text, out));
        if !text.is_empty() {
            out.push(Event::Text(text));
        }
    }

    /// Like [`Scanner::feed`], but hands each piece to `sink` as soon as it is decided, without
    /// copying: text that lies in `chunk` comes as slices of it (one slice per run between
    /// candidates), so a caller can write it out directly. All text that cannot be part of a
    /// directive has been passed to `sink` on return.
    pub fn feed_with(&mut self, chunk: &[u8], mut sink: impl FnMut(Piece<'_>)) {
        let mut i = 0;
        // Text in `chunk[start..i]` is decided but not yet passed on, except for the held-back
        // sigil or backslash bytes at its end. Held bytes that came with an earlier chunk are
        // passed on separately once they turn out to be text.
        let mut start = 0;
        while i < chunk.len() {
            match self.held {
                Held::Nothing => match self.code.scan(&chunk[i..], true) {
                    None => i = chunk.len(),
                    Some(k) => {
                        let at = i + k;
                        // Most sigils in prose are punctuation: pass over those that visibly
                        // start nothing without a trip through the held states.
                        if !may_start(chunk, at) {
                            i = at + 1;
                            continue;
                        }
                        self.held = match chunk[at] {
                            b'\\' => Held::Backslash,
                            s => Held::Sigil(s),
                        };
                        i = at + 1;
                    }
                },
                Held::Sigil(s) => {
                    if is_open(chunk[i]) {
                        // The sigil is `chunk[i - 1]` unless it came with an earlier chunk.
                        emit(&mut sink, &chunk[start..i.saturating_sub(1).max(start)]);
                        self.open(s, chunk[i], false);
                        i += 1;
                        start = i;
                    } else {
                        if i == 0 {
                            emit(&mut sink, &[s]);
                        }
                        self.held = Held::Nothing;
                    }
                }
                Held::Backslash => {
                    if matches!(chunk[i], b'%' | b'!') {
                        self.held = Held::BackslashSigil(chunk[i]);
                        i += 1;
                    } else {
                        if i == 0 {
                            emit(&mut sink, b"\\");
                        }
                        self.held = Held::Nothing;
                    }
                }
                Held::BackslashSigil(s) => {
                    if is_open(chunk[i]) {
                        // The dropped backslash is `chunk[i - 2]` unless it came earlier.
                        emit(&mut sink, &chunk[start..i.saturating_sub(2).max(start)]);
                        self.open(s, chunk[i], true);
                        i += 1;
                        start = i;
                    } else {
                        // Held bytes from earlier chunks come before the rest of the text.
                        match i {
                            0 => emit(&mut sink, &[b'\\', s]),
                            1 => emit(&mut sink, b"\\"),
                            _ => {}
                        }
                        self.held = Held::Nothing;
                    }
                }
                Held::Candidate => {
                    let (used, outcome) = self.advance(&chunk[i..]);
                    i += used;
                    start = i;
                    match outcome {
                        Outcome::Open => {}
                        Outcome::Closed => self.close(&mut sink),
                        Outcome::Abandoned => self.literal(&mut sink),
                    }
                }
            }
        }
        // Held sigil or backslash bytes at the end of the chunk stay back.
        let held_here = match self.held {
            Held::Sigil(_) | Held::Backslash => 1,
            Held::BackslashSigil(_) => 2,
            Held::Nothing | Held::Candidate => 0,
        }
        .min(chunk.len() - start);
        emit(&mut sink, &chunk[start..chunk.len() - held_here]);
    }

    /// End of stream: whatever is held back comes out as literal text. The scanner is then ready
    /// for a new stream.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        self.finish_with(|piece| {
            if let Piece::Text(t) = piece {
                out.push(Event::Text(t.to_vec()));
            }
        });
    }

    /// [`Scanner::finish`] with a sink, as for [`Scanner::feed_with`].
    pub fn finish_with(&mut self, mut sink: impl FnMut(Piece<'_>)) {
        match self.held {
            Held::Nothing => {}
            Held::Sigil(s) => sink(Piece::Text(&[s])),
            Held::Backslash => sink(Piece::Text(b"\\")),
            Held::BackslashSigil(s) => sink(Piece::Text(&[b'\\', s])),
            Held::Candidate => {
                if self.cand.escaped {
                    sink(Piece::Text(b"\\"));
                }
                sink(Piece::Text(&self.raw))
            }
        }
        self.held = Held::Nothing;
        self.raw.clear();
        self.code = CodeTracker::new(!self.opts.exec_in_code);
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
                    // Nested brackets only change the depth: follow them here rather than
                    // once per trip round the outer loop (`%{%{%{…` is all brackets).
                    let mut k = 0;
                    loop {
                        let Some(&b) = window.get(k) else { break None };
                        if stop[b as usize] {
                            if b == c.open {
                                c.depth += 1;
                            } else if b == c.close && c.depth > 0 {
                                c.depth -= 1;
                            } else {
                                break Some(k);
                            }
                        }
                        k += 1;
                    }
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
                    // Other brackets were followed above: this closes the candidate.
                    _ => {
                        debug_assert!(b == c.close && c.depth == 0);
                        i += 1;
                        break Outcome::Closed;
                    }
                },
            }
            i += 1;
        };
        self.raw.extend_from_slice(&bytes[..i]);
        (i, outcome)
    }

    /// The candidate's closing bracket was read: a directive, or literal text.
    fn close(&mut self, sink: &mut impl FnMut(Piece<'_>)) {
        debug_assert!(
            matches!(grammar::directive(&self.raw), Ok((rest, _)) if rest.is_empty()),
            "framer and grammar disagree on {:?}",
            String::from_utf8_lossy(&self.raw)
        );
        if let Some(d) = grammar::parse_directive(&self.raw) {
            if !self.cand.escaped {
                self.held = Held::Nothing;
                self.raw.clear();
                sink(Piece::Directive(d));
                return;
            }
            // Its backslash escaped a directive: that is what it was for, so it goes.
            self.cand.escaped = false;
        }
        self.literal(sink);
    }

    /// The held candidate is not a directive: its bytes become text (and Markdown sees them).
    /// A backslash before it escaped nothing (`\%{}`, `\%{open` never closed), so it stays.
    fn literal(&mut self, sink: &mut impl FnMut(Piece<'_>)) {
        self.held = Held::Nothing;
        self.code.scan(&self.raw, false);
        if self.cand.escaped {
            sink(Piece::Text(b"\\"));
        }
        sink(Piece::Text(&self.raw));
        self.raw.clear();
    }
}

/// Passes non-empty text on.
#[inline]
fn emit(sink: &mut impl FnMut(Piece<'_>), text: &[u8]) {
    if !text.is_empty() {
        sink(Piece::Text(text));
    }
}

/// Collects pieces as events: text accumulates in `text` until a directive (or the caller) ends it.
fn push_piece(piece: Piece<'_>, text: &mut Vec<u8>, out: &mut Vec<Event>) {
    match piece {
        Piece::Text(t) => text.extend_from_slice(t),
        Piece::Directive(d) => {
            if !text.is_empty() {
                out.push(Event::Text(std::mem::take(text)));
            }
            out.push(Event::Directive(d));
        }
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
