//! Markdown code awareness: which text bytes are inside code, where directives are literal.
//!
//! A byte-at-a-time state machine (with fast skips), so every chunking sees the same states and
//! nothing is ever held back: markers are text whatever they turn out to mean, only the meaning of
//! later bytes depends on them.
//!
//! Rules (CommonMark where it is cheap to follow while streaming):
//! - A fence opens at a line with at most 3 spaces of indent and a run of at least 3 backticks or
//!   tildes. The rest of that line (info string) is code. A backtick fence whose info string contains
//!   a backtick is not a fence: the run is then an inline code-span delimiter, which makes the same
//!   bytes code, so nothing released earlier changes meaning.
//! - A fence closes at a line with at most 3 spaces of indent, a run of the same character at least
//!   as long as the opener, and only whitespace after it. An unclosed fence lasts to end of stream.
//! - A run of N backticks in prose opens an inline code span; a run of exactly N closes it.
//!   Streaming cannot look ahead for the closer, so an unclosed span ends at the next blank line
//!   (code spans cannot cross paragraphs) or at a fence opener line (fences interrupt paragraphs).
//!   Until then its bytes are code: a stray backtick disables directives only to the end of its
//!   paragraph, and fails closed meanwhile.
//! - An indented code block, as the terminal renderer shows one: a line of at least 4 leading
//!   spaces that starts a block (at the start of the stream, after a blank line, a fence, a
//!   heading, a thematic break, or another such line) outside a list (since a line starting with a list marker, until a line at the
//!   margin after a blank line) is code from its 4th space to its end.
//! - Not handled: fences inside block quotes or list items are only recognised when indented at
//!   most 3 spaces. Backslash-escaped backticks still count as
//!   delimiters (fail closed). Inside code, backslashes are never escape characters.
//! - Known approximation: a line-start backtick run inside a code span of the same length, followed
//!   on its line by another backtick, closes the span, but the bytes between were already released
//!   as code (fail closed).

use memchr::{memchr, memchr2, memchr3};

/// Bytes that need a closer look in prose (outside code) when the line has started.
const PROSE_STOP: [bool; 256] = byte_set(b"%!\\`\n");

/// A 256-entry membership table, for scanning loops the compiler can keep tight.
pub(super) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

/// The first byte of `bytes` in [`PROSE_STOP`]. Prose is almost all the input, so this loop is
/// the scanner's speed: 16 bytes at a time with SSE2 (part of every x86-64 CPU).
#[cfg(target_arch = "x86_64")]
fn find_prose_stop(bytes: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut i = 0;
    // SAFETY: SSE2 is part of the x86-64 baseline, and every load reads 16 bytes that lie inside
    // `bytes` (`i + 16 <= bytes.len()`).
    unsafe {
        let [a, b, c, d, e] = [b'%', b'!', b'\\', b'`', b'\n'].map(|s| _mm_set1_epi8(s as i8));
        while i + 16 <= bytes.len() {
            let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
            let hits = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, a), _mm_cmpeq_epi8(v, b)),
                _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(v, c), _mm_cmpeq_epi8(v, d)),
                    _mm_cmpeq_epi8(v, e),
                ),
            );
            let mask = _mm_movemask_epi8(hits);
            if mask != 0 {
                return Some(i + mask.trailing_zeros() as usize);
            }
            i += 16;
        }
    }
    bytes[i..]
        .iter()
        .position(|&b| PROSE_STOP[b as usize])
        .map(|k| i + k)
}

#[cfg(not(target_arch = "x86_64"))]
fn find_prose_stop(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| PROSE_STOP[b as usize])
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Prose: directives are recognised.
    Normal,
    /// Inside an inline code span opened by this many backticks.
    Span(usize),
    /// The rest of a fence opener line (`prev_span`: the span it interrupted, if any).
    FenceInfo {
        ch: u8,
        len: usize,
        prev_span: Option<usize>,
    },
    /// Inside a fenced block; `line` tracks whether the current line may close it.
    Fence { ch: u8, len: usize, line: FenceLine },
    /// The rest of a line of an indented code block.
    Indented,
}

/// Whether the current line starts with a list marker (`-`, `*`, `+`, or 1 to 9 digits and `.`
/// or `)`, then a space or the end of the line), read as its first bytes arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Marker {
    /// Only spaces so far.
    Start,
    /// A bullet: a space (or the line's end) makes it a marker.
    Bullet,
    /// This many digits.
    Digits(u8),
    /// Digits and `.` or `)`: a space (or the line's end) makes it a marker.
    Delim,
    /// Decided: it starts with a marker.
    Yes,
    /// Decided: it does not.
    No,
}

/// Whether the current line is a heading (`#` first) or a thematic break (three or more of
/// one of `-`, `*`, `_`, spaces between), after which a block may start, as after a blank line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Only spaces so far.
    Start,
    /// A `#` first: a heading (the renderer takes `#x` for text, which only fails closed).
    Heading,
    /// This many of `ch` (and spaces) so far: a break once there are three.
    Rule { ch: u8, n: u8 },
    /// Decided: neither.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FenceLine {
    Indent(u8),
    Run(usize),
    Trailing,
    Content,
}

/// A run of backticks (or line-start tildes) whose length is not known yet.
#[derive(Clone, Copy, Debug)]
struct Run {
    ch: u8,
    len: usize,
    line_start: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct CodeTracker {
    enabled: bool,
    mode: Mode,
    /// `Some(k)`: the current line so far is `k` (at most 3) spaces, so a fence may still start.
    indent: Option<u8>,
    /// The current line so far is whitespace only (kept up to date inside code spans).
    blank: bool,
    run: Option<Run>,
    /// Leading spaces of the current line so far, up to 4 (`None` once another byte came).
    lead: Option<u8>,
    /// The leading spaces of the current line, once counted (for the list rule).
    lead_seen: u8,
    /// A line here may start an indented code block: the stream's start, after a blank line or
    /// after a line of such a block.
    block_start: bool,
    /// Inside a list, where a line indented by four is an item's text, not code.
    in_list: bool,
    /// Whether the current line starts with a list marker.
    marker: Marker,
    /// Whether the current line is a heading or a break.
    shape: Shape,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

impl CodeTracker {
    /// `enabled: false` treats everything as prose (`exec_in_code`).
    pub(crate) fn new(enabled: bool) -> Self {
        CodeTracker {
            enabled,
            mode: Mode::Normal,
            indent: Some(0),
            blank: true,
            run: None,
            lead: Some(0),
            lead_seen: 0,
            block_start: true,
            in_list: false,
            marker: Marker::Start,
            shape: Shape::Start,
        }
    }

    /// A line of prose ended: what it was decides whether the next may start indented code.
    fn prose_line_end(&mut self) {
        let blank = self.marker == Marker::Start;
        let closed = matches!(self.shape, Shape::Heading | Shape::Rule { n: 3.., .. });
        if blank {
            self.block_start = true;
        } else if closed {
            // A heading or a break is a block of one line: the next may start another, and
            // it ends a list.
            self.block_start = true;
            self.in_list = false;
        } else {
            let item = matches!(self.marker, Marker::Yes | Marker::Bullet | Marker::Delim);
            if item {
                self.in_list = true;
            } else if self.lead_seen < 2 && self.block_start {
                // A line at the margin after a blank line ends the list.
                self.in_list = false;
            }
            self.block_start = false;
        }
        self.new_line();
    }

    /// Line-start state for the next line.
    fn new_line(&mut self) {
        self.indent = Some(0);
        self.lead = Some(0);
        self.lead_seen = 0;
        self.marker = Marker::Start;
        self.shape = Shape::Start;
    }

    /// A byte of a prose line's start: counts leading spaces, reads a list marker, and turns
    /// the line into indented code at its 4th space where one may start. True when it did.
    fn line_start_byte(&mut self, b: u8) -> bool {
        if let Some(k) = self.lead {
            if b == b' ' {
                let k = k + 1;
                if k >= 4 && self.block_start && !self.in_list {
                    self.mode = Mode::Indented;
                    self.lead = None;
                    self.lead_seen = k;
                    return true;
                }
                self.lead = Some(k.min(4));
                return false;
            }
            self.lead = None;
            self.lead_seen = k;
        }
        self.shape = match (self.shape, b) {
            (Shape::Start, b' ' | b'\t' | b'\r') => Shape::Start,
            (Shape::Start, b'#') => Shape::Heading,
            (Shape::Start, b'-' | b'*' | b'_') => Shape::Rule { ch: b, n: 1 },
            (Shape::Rule { ch, n }, c) if c == ch => Shape::Rule {
                ch,
                n: n.saturating_add(1),
            },
            (r @ Shape::Rule { .. }, b' ' | b'\t' | b'\r') => r,
            (Shape::Heading, _) => Shape::Heading,
            _ => Shape::Other,
        };
        self.marker = match (self.marker, b) {
            (Marker::Start, b'\t' | b'\r') => Marker::Start,
            (Marker::Start, b'-' | b'*' | b'+') => Marker::Bullet,
            (Marker::Start, b'0'..=b'9') => Marker::Digits(1),
            (Marker::Digits(n), b'0'..=b'9') if n < 9 => Marker::Digits(n + 1),
            (Marker::Digits(_), b'.' | b')') => Marker::Delim,
            (Marker::Bullet | Marker::Delim, b' ') => Marker::Yes,
            (m @ (Marker::Yes | Marker::No), _) => m,
            _ => Marker::No,
        };
        false
    }

    /// The line-start reading is still going on (bytes must be stepped one by one).
    fn reading_line_start(&self) -> bool {
        self.lead.is_some()
            || !matches!(self.marker, Marker::Yes | Marker::No)
            || matches!(self.shape, Shape::Start | Shape::Rule { .. })
    }

    /// Advances over text bytes. With `stop_at_sigils`, stops at the first `%`, `!` or `\` that is
    /// in prose and returns its index; that byte counts as an ordinary prose character for the
    /// tracker, the caller decides whether it starts a directive. `None`: all bytes consumed.
    pub(crate) fn scan(&mut self, bytes: &[u8], stop_at_sigils: bool) -> Option<usize> {
        if !self.enabled {
            return if stop_at_sigils {
                memchr3(b'%', b'!', b'\\', bytes)
            } else {
                None
            };
        }
        let mut i = 0;
        while i < bytes.len() {
            i += self.skip(&bytes[i..], stop_at_sigils);
            if i == bytes.len() {
                break;
            }
            if self.step(bytes[i], stop_at_sigils) {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// How many leading bytes cannot change any state (besides extending a run), nor are a
    /// sigil to stop at.
    fn skip(&mut self, bytes: &[u8], stop_at_sigils: bool) -> usize {
        if let Some(run) = &mut self.run {
            let k = bytes
                .iter()
                .position(|&b| b != run.ch)
                .unwrap_or(bytes.len());
            run.len += k;
            return k;
        }
        let found = match self.mode {
            Mode::Normal if self.indent.is_none() && !self.reading_line_start() => {
                if stop_at_sigils {
                    find_prose_stop(bytes)
                } else {
                    memchr2(b'`', b'\n', bytes)
                }
            }
            Mode::Span(_) if self.indent.is_none() && !self.blank => memchr2(b'`', b'\n', bytes),
            Mode::FenceInfo { ch: b'`', .. } => memchr2(b'`', b'\n', bytes),
            Mode::FenceInfo { .. } | Mode::Indented => memchr(b'\n', bytes),
            Mode::Fence {
                line: FenceLine::Content,
                ..
            } => memchr(b'\n', bytes),
            _ => Some(0),
        };
        found.unwrap_or(bytes.len())
    }

    fn indent_space(&mut self) {
        self.indent = self.indent.and_then(|k| (k < 3).then_some(k + 1));
    }

    fn start_run(&mut self, ch: u8) {
        self.run = Some(Run {
            ch,
            len: 1,
            line_start: self.indent.is_some(),
        });
        self.indent = None;
    }

    /// A run is complete: decide what it opened or closed.
    fn end_run(&mut self, run: Run) {
        let fence = run.line_start && run.len >= 3;
        self.mode = match (self.mode, run.ch) {
            (Mode::Normal | Mode::Span(_), _) if fence => Mode::FenceInfo {
                ch: run.ch,
                len: run.len,
                prev_span: match self.mode {
                    Mode::Span(n) => Some(n),
                    _ => None,
                },
            },
            (Mode::Normal, b'`') => {
                self.blank = false;
                Mode::Span(run.len)
            }
            (Mode::Span(n), b'`') if run.len == n => Mode::Normal,
            (mode, _) => mode,
        };
    }

    /// One byte; returns true for a prose sigil when `stop` is set.
    fn step(&mut self, b: u8, stop: bool) -> bool {
        if let Some(run) = self.run {
            if b == run.ch {
                if let Some(r) = &mut self.run {
                    r.len += 1;
                }
                return false;
            }
            self.run = None;
            self.end_run(run);
        }
        if self.mode == Mode::Normal
            && b != b'\n'
            && self.reading_line_start()
            && self.line_start_byte(b)
        {
            // The 4th leading space: the rest of the line is code.
            self.indent = None;
            return false;
        }
        match self.mode {
            Mode::Indented => {
                if b == b'\n' {
                    self.mode = Mode::Normal;
                    self.block_start = true;
                    self.new_line();
                }
            }
            Mode::Normal => match b {
                b'\n' => self.prose_line_end(),
                b' ' => self.indent_space(),
                b'`' => self.start_run(b),
                b'~' if self.indent.is_some() => self.start_run(b),
                b'%' | b'!' | b'\\' if stop => {
                    self.indent = None;
                    return true;
                }
                _ => self.indent = None,
            },
            Mode::Span(_) => match b {
                b'\n' => {
                    if self.blank {
                        self.mode = Mode::Normal;
                    }
                    // A blank line ends the paragraph (and the span): a block may start after
                    // it. Otherwise the span goes on, and the line's start is not read.
                    self.block_start = self.blank;
                    self.new_line();
                    if !self.blank {
                        self.lead = None;
                        self.marker = Marker::No;
                        self.shape = Shape::Other;
                    }
                    self.blank = true;
                }
                b' ' => self.indent_space(),
                b'\t' | b'\r' => self.indent = None,
                b'`' => {
                    self.blank = false;
                    self.start_run(b);
                }
                b'~' if self.indent.is_some() => {
                    self.blank = false;
                    self.start_run(b);
                }
                _ => {
                    self.indent = None;
                    self.blank = false;
                }
            },
            Mode::FenceInfo { ch, len, prev_span } => {
                if b == b'\n' {
                    self.mode = Mode::Fence {
                        ch,
                        len,
                        line: FenceLine::Indent(0),
                    };
                } else if ch == b'`' && b == b'`' {
                    // Not a fence after all: the opener run was an inline delimiter.
                    self.mode = match prev_span {
                        None => Mode::Span(len),
                        Some(n) if n == len => Mode::Normal,
                        Some(n) => Mode::Span(n),
                    };
                    self.indent = None;
                    self.blank = false;
                    self.start_run(b);
                }
            }
            Mode::Fence { ch, len, line } => {
                let line = if b == b'\n' {
                    let closes = match line {
                        FenceLine::Run(k) => k >= len,
                        FenceLine::Trailing => true,
                        _ => false,
                    };
                    if closes {
                        self.mode = Mode::Normal;
                        self.block_start = true;
                        self.new_line();
                        return false;
                    }
                    FenceLine::Indent(0)
                } else {
                    match line {
                        FenceLine::Indent(k) if b == b' ' && k < 3 => FenceLine::Indent(k + 1),
                        FenceLine::Indent(_) if b == ch => FenceLine::Run(1),
                        FenceLine::Run(k) if b == ch => FenceLine::Run(k + 1),
                        FenceLine::Run(k) if k >= len && is_ws(b) => FenceLine::Trailing,
                        FenceLine::Trailing if is_ws(b) => FenceLine::Trailing,
                        _ => FenceLine::Content,
                    }
                };
                self.mode = Mode::Fence { ch, len, line };
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which bytes of `input` the tracker reports as prose sigils (one byte at a time and whole).
    fn prose_sigils(input: &str) -> String {
        let bytes = input.as_bytes();
        let mut t = CodeTracker::new(true);
        let mut marks = String::new();
        let mut i = 0;
        while let Some(k) = t.scan(&bytes[i..], true) {
            marks.push(bytes[i + k] as char);
            i += k + 1;
        }
        let mut t = CodeTracker::new(true);
        let mut byte_wise = String::new();
        for b in bytes {
            if t.scan(std::slice::from_ref(b), true).is_some() {
                byte_wise.push(*b as char);
            }
        }
        assert_eq!(
            marks, byte_wise,
            "chunking changed the result for {input:?}"
        );
        marks
    }

    #[test]
    fn code_regions() {
        let cases = [
            ("a % b ! c \\", "%!\\"),
            ("`%` !", "!"),
            ("`` ` % `` !", "!"),
            ("``` % ``` !", "!"),
            ("`a\nb % c` !", "!"),
            ("`a\n\nb %", "%"),
            ("`a\n  \t\nb %", "%"),
            ("```\n%\n```\n!", "!"),
            ("```sh\n%\n```\n!", "!"),
            ("   ```\n%\n   ```\n!", "!"),
            ("    ```\n\n%\n", "%"),
            ("~~~\n%\n```\n%\n~~~\n!", "!"),
            ("````\n%\n```\n%\n````\n!", "!"),
            ("```\n%\n``` x\n%\n```  \n!", "!"),
            ("```\n%\n    ```\n%", ""),
            ("```\n\n%\n\n", ""),
            ("x ```\n%", ""),
            ("```a`b %` !", ""),
            ("~~~a`b\n%", ""),
            ("`a\n```\n\n%\n```\n!", "!"),
            ("`a\n~~~\n\n%\n~~~\n!", "!"),
            ("~~ %", "%"),
            ("```\r\n%\r\n```\r\n!", "!"),
            // Indented code: at the start, after a blank line, or after another such line.
            ("    % !", ""),
            ("x\n\n    % !\n\n    !\n%", "%"),
            ("x\n\n    %\n    !\n!", "!"),
            // A paragraph's indented line is its text (no blank line before it).
            ("x\n    % !", "%!"),
            // Three spaces, or a tab, are no indented code (as the renderer shows them).
            ("\n   % !", "%!"),
            ("\n\t% !", "%!"),
            // In a list, a line indented by four is the item's text; after a line at the
            // margin (following a blank line) the list is over.
            ("- a\n\n    % !", "%!"),
            ("1. a\n\n    % !", "%!"),
            ("- a\n\nb\n\n    % !\n", ""),
            ("-a\n\n    % !", ""),
            // After a heading or a break (a block of one line each).
            ("# Title\n    % !", ""),
            ("x\n\n---\n    % !", ""),
            ("- a\n* * *\n    % !", ""),
            ("#x\n    % !", ""),
            ("--x\n    % !", "%!"),
            // After a fence, and after a code span that ended at a blank line.
            ("```\nx\n```\n    % !", ""),
            ("`a\n\n    % !", ""),
            // A span's later lines are not line starts: its closing is followed by prose.
            ("x `a\n    b` % !", "%!"),
        ];
        for (input, want) in cases {
            assert_eq!(prose_sigils(input), want, "input {input:?}");
        }
    }

    #[test]
    fn prose_stop_search_matches_the_table() {
        let table = |v: &[u8]| v.iter().position(|&b| PROSE_STOP[b as usize]);
        for len in 0..40 {
            for at in 0..=len {
                for &stop in b"%!\\`\n" {
                    let mut v = vec![b'a'; len];
                    if at < len {
                        v[at] = stop;
                    }
                    assert_eq!(find_prose_stop(&v), table(&v), "len {len} at {at}");
                }
            }
        }
        let all: Vec<u8> = (0..=255u8).rev().collect();
        for from in 0..all.len() {
            assert_eq!(find_prose_stop(&all[from..]), table(&all[from..]));
        }
    }

    #[test]
    fn disabled_tracker_sees_everything() {
        let mut t = CodeTracker::new(false);
        assert_eq!(t.scan(b"`x %", true), Some(3));
        assert_eq!(t.scan(b"`x %", false), None);
    }
}
