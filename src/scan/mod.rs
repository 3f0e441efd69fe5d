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

/// Which directives a stream acts on: the ones its writer was told about (DESIGN §7). Any
/// other directive-shaped text is text, kept as written: nothing is run, refused or reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Announced {
    /// None: the stream is not scanned at all (a chat that can run nothing and has no skill).
    Nothing,
    /// Only the built-in read of a skill, `!{skill NAME [FILE]}` (skills loaded, nothing may run).
    SkillReads,
    /// Every directive (scripts or commands may run; the filter).
    #[default]
    Full,
}

impl Announced {
    /// Whether `d` is one of the directives announced.
    pub fn covers(self, d: &Directive) -> bool {
        match self {
            Announced::Nothing => false,
            Announced::SkillReads => d.kind == Kind::Capture && is_skill_read(&d.body),
            Announced::Full => true,
        }
    }
}

/// What ends every result message the model is given, in the worked examples as in a session:
/// it carries on with its answer.
pub const CONTINUE: &str = "— continue your answer.";

/// The word that opens skillpipe's built-in read of a skill (`!{skill NAME [FILE]}`).
pub const SKILL_READ: &str = "skill";

/// `skill NAME …`: the built-in skill read, which runs no process.
pub fn is_skill_read(body: &str) -> bool {
    body.split_whitespace().next() == Some(SKILL_READ)
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
