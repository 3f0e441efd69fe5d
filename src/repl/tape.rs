//! What the REPL has put on the terminal, kept in the form it came in (the model's text, a
//! report's words, a line of chrome) so it can be laid out again at another width.
//!
//! A resize cannot move what is already drawn: the renderer broke its lines at the old width,
//! and a terminal that re-wraps (tmux, VTE, kitty) splits or joins rows in ways that tear them.
//! So when the width has changed (at the prompt, or before the next piece of an answer), the
//! REPL replays this tape through the same UI code into a buffer at the new width and draws the
//! last screenful of it over the screen ([`screenful`]): the screen then shows what it would
//! show had the window always been that wide. Rows that scrolled off stay in the terminal's
//! scrollback as they were drawn.

use super::ink::{Tone, advance_column};

/// One thing the REPL showed, in the order it showed them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The prompt (as styled) and the line the user entered.
    Typed { prompt: String, line: String },
    /// An answer begins: a fresh renderer (`raw`: `--raw`).
    AnswerStart { raw: bool },
    /// Pieces of the answer's text as the model sent them (consecutive pieces joined).
    Text(Vec<u8>),
    /// The UI's flush (the renderer shows what it held for more).
    Flush,
    /// A line the answer left open ended on screen (a request is sent).
    EndOpenLine,
    /// The answer's row ended where its text stopped (a capture or tool is about to run).
    EndRow,
    /// The renderer shows what it still holds (the answer's end).
    EndRender,
    /// The answer's last line closed and waiting status lines shown.
    EndAnswer,
    /// A report or notice, as [`super::ui`] words it before wrapping.
    Status { text: String, fine: bool },
    /// A side effect's output, shown under the report that follows it.
    SideOutput(String),
    /// A line of chrome on stderr (info, warning, error) before wrapping.
    Line { text: String, tone: Tone },
    /// A command's output (or a resumed user's turn, in bold), wrapped at words where it is
    /// shown.
    Print { text: String, tone: Tone },
    /// A command's output already laid out (kept as it is).
    PrintStyled(String),
    /// A confirmation prompt and the answer, as drawn.
    Asked(String),
}

impl Entry {
    fn size(&self) -> usize {
        match self {
            Entry::Typed { prompt, line } => prompt.len() + line.len(),
            Entry::Text(b) => b.len(),
            Entry::Status { text, .. }
            | Entry::SideOutput(text)
            | Entry::Line { text, .. }
            | Entry::Print { text, .. }
            | Entry::PrintStyled(text)
            | Entry::Asked(text) => text.len(),
            _ => 0,
        }
    }
}

/// Most bytes the tape keeps. Past it, the oldest exchanges (up to a later [`Entry::Typed`])
/// are dropped: a redraw shows one screenful, and a long session's start is long off screen.
pub const MAX_TAPE_BYTES: usize = 4 << 20;

/// The entries, with their total size.
#[derive(Debug, Default)]
pub struct Tape {
    entries: Vec<Entry>,
    bytes: usize,
}

impl Tape {
    /// Appends `entry`, joining text to text.
    pub fn push(&mut self, entry: Entry) {
        self.bytes += entry.size();
        match (self.entries.last_mut(), entry) {
            (Some(Entry::Text(held)), Entry::Text(more)) => held.extend_from_slice(&more),
            (_, entry) => self.entries.push(entry),
        }
        if self.bytes > MAX_TAPE_BYTES {
            self.trim();
        }
    }

    /// Drops whole exchanges from the start until the tape fits (never the last one).
    fn trim(&mut self) {
        while self.bytes > MAX_TAPE_BYTES {
            let next = self
                .entries
                .iter()
                .skip(1)
                .position(|e| matches!(e, Entry::Typed { .. }));
            let Some(at) = next.map(|i| i + 1) else {
                return;
            };
            let dropped: usize = self.entries.drain(..at).map(|e| e.size()).sum();
            self.bytes -= dropped;
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
}

/// What to write to show the end of `shown` (everything the tape laid out at `width`) on a
/// screen `height` rows high: the cursor goes to the top left, each row is written over the
/// old one and cleared after its text, the screen is cleared below, and the cursor ends where
/// `shown` ends (so output continues from there). Lines wider than `width` (laid out earlier
/// for a wider window) take the rows the terminal wraps them into; a line that does not fit
/// whole is left out. Nothing is cleared as a whole screen, which some terminals would push
/// into the scrollback on every resize; a full row is not cleared after its text, since there
/// the cursor still sits on its last column and some terminals would erase that character.
/// Pure.
pub fn screenful(shown: &[u8], width: usize, height: usize) -> Vec<u8> {
    let width = width.max(1);
    let height = height.max(1);
    let lines: Vec<&[u8]> = shown.split(|&b| b == b'\n').collect();
    let cols_of = |line: &[u8]| advance_column(0, &mut Vec::new(), line);
    let rows_of = |line: &[u8]| cols_of(line).div_ceil(width).max(1);
    // The last line is the open one (empty after a final newline): the cursor's row.
    let mut used = 0;
    let mut first = lines.len();
    for (i, line) in lines.iter().enumerate().rev() {
        let rows = rows_of(line);
        if used + rows > height && first < lines.len() {
            break;
        }
        used += rows;
        first = i;
    }
    let mut out = b"\x1b[H".to_vec();
    let (open, done) = lines[first..].split_last().expect("split yields a line");
    for line in done {
        out.extend_from_slice(line);
        if !cols_of(line).is_multiple_of(width) || line.is_empty() {
            out.extend_from_slice(b"\x1b[K");
        }
        out.extend_from_slice(b"\r\n");
    }
    // The open line's row and every row below are cleared first: the cursor ends after it.
    out.extend_from_slice(b"\x1b[J");
    out.extend_from_slice(open);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_pieces_join_and_other_entries_keep_their_order() {
        let mut t = Tape::default();
        t.push(Entry::AnswerStart { raw: false });
        t.push(Entry::Text(b"Hel".to_vec()));
        t.push(Entry::Text(b"lo".to_vec()));
        t.push(Entry::Flush);
        t.push(Entry::Text(b"!".to_vec()));
        assert_eq!(
            t.entries(),
            [
                Entry::AnswerStart { raw: false },
                Entry::Text(b"Hello".to_vec()),
                Entry::Flush,
                Entry::Text(b"!".to_vec()),
            ]
        );
    }

    #[test]
    fn a_long_tape_drops_whole_exchanges_from_its_start() {
        let mut t = Tape::default();
        let typed = |line: &str| Entry::Typed {
            prompt: "> ".into(),
            line: line.into(),
        };
        let big = vec![b'x'; MAX_TAPE_BYTES / 2 + 1];
        for line in ["one", "two", "three"] {
            t.push(typed(line));
            t.push(Entry::AnswerStart { raw: false });
            t.push(Entry::Text(big.clone()));
        }
        // Two answers fit no longer: the first exchange went, whole.
        assert_eq!(t.entries()[0], typed("three"));
        assert!(t.bytes <= MAX_TAPE_BYTES, "{}", t.bytes);
        // A single exchange over the limit is kept: nothing later to start from.
        let mut one = Tape::default();
        one.push(typed("one"));
        one.push(Entry::Text(vec![b'x'; MAX_TAPE_BYTES + 1]));
        assert_eq!(one.entries().len(), 2);
    }

    #[test]
    fn a_screenful_is_the_last_rows_drawn_over_the_old_ones() {
        let shown = b"one\ntwo\nthree\nfour\nopen";
        let out = screenful(shown, 20, 3);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\x1b[Hthree\x1b[K\r\nfour\x1b[K\r\n\x1b[Jopen"
        );
        // After a final newline the cursor's row is the empty one below the last line.
        let out = screenful(b"a\nb\nc\n", 20, 3);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\x1b[Hb\x1b[K\r\nc\x1b[K\r\n\x1b[J"
        );
        // Less than a screenful: all of it, from the top.
        let out = screenful(b"a\n", 20, 10);
        assert_eq!(String::from_utf8(out).unwrap(), "\x1b[Ha\x1b[K\r\n\x1b[J");
    }

    #[test]
    fn rows_count_display_columns_and_wrapped_lines() {
        // "wide" is 10 columns on a 4-column screen: 3 rows, so with the open line 4 rows;
        // on 3 rows it no longer fits and is left out.
        let shown = "0123456789\nab".as_bytes();
        assert_eq!(
            screenful(shown, 4, 4),
            b"\x1b[H0123456789\x1b[K\r\n\x1b[Jab"
        );
        assert_eq!(screenful(shown, 4, 3), b"\x1b[H\x1b[Jab");
        // Styles take no column; wide characters take two.
        let styled = "\x1b[1mabcd\x1b[0m\n中文\nx".as_bytes();
        let shown = "\x1b[H\x1b[1mabcd\x1b[0m\r\n中文\r\n\x1b[Jx";
        assert_eq!(screenful(styled, 4, 3), shown.as_bytes());
        // An open line longer than the screen is still shown (its end is where the cursor is).
        assert_eq!(screenful(b"abcdefgh", 2, 2), b"\x1b[H\x1b[Jabcdefgh");
    }
}
