//! Streaming directive scanner (DESIGN §1). Pure: no I/O.
//!
//! - `scanner`: [`Scanner`] (feed chunks, get [`Event`]s), framing of candidates, escapes, limits.
//! - `markdown`: which bytes are inside Markdown code (directives there are literal).
//! - `grammar`: the nom grammar of one complete directive.
//!
//! Every input byte ends up either in a `Text` event or in a directive's `raw`, except the backslash
//! of an escaped directive (`\%{BODY}`), which is dropped. The events are the same for every way of
//! splitting the input into chunks (compare with [`coalesce`]).

mod grammar;
mod markdown;
mod scanner;
#[cfg(feature = "stream")]
pub mod stream;

pub use grammar::parse_directive;
pub use scanner::{Piece, Scanner, coalesce, scan_all};

#[cfg(test)]
mod tests;

/// Which sigil opened a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `%{…}` / `%<…>`: run for its effect, strip from the output.
    SideEffect,
    /// `!{…}` / `!<…>`: run and replace with (or return to the model) its stdout.
    Capture,
}

impl Kind {
    /// The sigil that opens this kind of directive.
    pub fn sigil(self) -> char {
        match self {
            Kind::SideEffect => '%',
            Kind::Capture => '!',
        }
    }
}

/// A recognised directive.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Directive {
    /// Which sigil opened it.
    pub kind: Kind,
    /// Trimmed command line between the brackets.
    pub body: String,
    /// Every input byte of the directive, sigil to closing bracket.
    pub raw: Vec<u8>,
}

/// What the scanner produces. Adjacent `Text` events may be split differently for different
/// chunkings; after merging adjacent texts the event list is the same for every split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Bytes to pass through (may split a UTF-8 character).
    Text(Vec<u8>),
    /// A complete directive, to run.
    Directive(Directive),
}

/// Limits of the scanner.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ScanOptions {
    /// A directive longer than this (raw bytes, sigil to closing bracket) is literal text. The scanner
    /// never holds back more than `max(max_directive_bytes, 2)` bytes; see `scanner` for how it
    /// resumes after giving up on a long candidate.
    pub max_directive_bytes: usize,
    /// Recognise directives inside Markdown code too.
    pub exec_in_code: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            max_directive_bytes: 8192,
            exec_in_code: false,
        }
    }
}
