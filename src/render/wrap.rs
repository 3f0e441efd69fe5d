//! Word wrapping of styled text to a width, with a prefix on every line (list indent, quote bar).
//! Text arrives in pieces as it streams; the open line stays open between pieces.

use super::Options;
use super::style::Style;
use unicode_width::UnicodeWidthStr;

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

impl Span {
    pub fn new(text: impl Into<String>, style: Style) -> Span {
        Span {
            text: text.into(),
            style,
        }
    }
}

/// The prefixes of a wrapped block: the first line's and the following lines'.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefix {
    pub first: Vec<Span>,
    pub rest: Vec<Span>,
}

impl Prefix {
    pub fn same(spans: Vec<Span>) -> Prefix {
        Prefix {
            first: spans.clone(),
            rest: spans,
        }
    }
}

pub fn width_of(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.text.width()).sum()
}

/// One wrapped block in progress (a paragraph, list item, quote or heading).
#[derive(Debug, Default)]
pub struct Flow {
    prefix: Prefix,
    /// Something of this block is on the current line (its prefix at least).
    open: bool,
    /// Display column of the cursor.
    col: usize,
    /// Column where the text of the current line starts (after its prefix).
    start: usize,
    /// Lines of this block begun so far (the first gets the first prefix).
    lines: usize,
    /// A space is owed before the next word (it is dropped at a line break).
    space: bool,
    /// The word being collected (it may arrive split between pieces).
    word: Vec<Span>,
    /// Characters of `word` already on screen (shown before the word was complete), and their
    /// width.
    shown: usize,
    shown_width: usize,
    /// The last line break this block wrote was a wrap (the row was full), not the end of a
    /// source line: a status line waiting for the answer's line to end keeps waiting.
    soft: bool,
}

impl Flow {
    pub fn new(prefix: Prefix) -> Flow {
        Flow {
            prefix,
            ..Flow::default()
        }
    }

    /// `spans` as one whole block after `prefix`, wrapped to `width`; every line ends with `\n`.
    pub fn block(spans: &[Span], prefix: Prefix, width: usize, color: Options) -> String {
        let (mut flow, mut out) = (Flow::new(prefix), String::new());
        flow.push(spans, width, color, &mut out);
        flow.close(width, color, &mut out);
        out
    }

    /// Adds text; complete words go out, wrapped to `width`. A word still open at the end stays
    /// held until a space, [`Flow::end_word`] or [`Flow::close`].
    pub fn push(&mut self, spans: &[Span], width: usize, color: Options, out: &mut String) {
        for span in spans {
            for (i, part) in span.text.split(' ').enumerate() {
                if i > 0 {
                    self.end_word(width, color, out);
                    self.space = true;
                }
                if !part.is_empty() {
                    match self.word.last_mut() {
                        Some(last) if last.style == span.style => last.text.push_str(part),
                        _ => self.word.push(Span::new(part, span.style)),
                    }
                }
            }
        }
    }

    /// Writes the word being collected (at the end of a piece of text that ends a word).
    pub fn end_word(&mut self, width: usize, color: Options, out: &mut String) {
        if self.word.is_empty() {
            return;
        }
        if self.shown > 0 {
            return self.finish_shown_word(width, color, out);
        }
        let word = std::mem::take(&mut self.word);
        let w = width_of(&word);
        if !self.open {
            self.start_line(color, out);
        } else {
            let need = w + usize::from(self.space);
            if self.col + need > width && self.col > self.start {
                out.push('\n');
                self.soft = true;
                self.start_line(color, out);
            } else if self.space && self.col > self.start {
                out.push(' ');
                self.col += 1;
            }
        }
        self.space = false;
        self.write_word(word, width, color, out);
    }

    /// Shows the word being collected before it is complete, as far as it fits on the line, so a
    /// stream that pauses mid-word shows every character that came.
    ///
    /// Never into the last column: after writing there the cursor stays on it with the wrap
    /// pending (xterm) or moves past it (tmux), so the backspaces that may rub the word out
    /// would land differently; short of it, they land the same everywhere. The last column
    /// gets the word once it is complete.
    pub fn show_partial(&mut self, width: usize, color: Options, out: &mut String) {
        if self.word.is_empty() {
            return;
        }
        let w = width_of(&self.word);
        if self.shown == 0 {
            let (col, space) = if self.open {
                (self.col, self.space && self.col > self.start)
            } else {
                (width_of(self.next_prefix()), false)
            };
            if col + usize::from(space) + w >= width {
                return;
            }
            if !self.open {
                self.start_line(color, out);
            } else if space {
                out.push(' ');
                self.col += 1;
            }
            self.space = false;
        } else if self.col + (w - self.shown_width) >= width {
            return;
        }
        let rest = self.unshown();
        self.shown += rest.iter().map(|s| s.text.chars().count()).sum::<usize>();
        self.shown_width = w;
        for s in rest {
            s.style.paint(&s.text, color, out);
            self.col += width_of(std::slice::from_ref(&s));
        }
    }

    /// The part of `word` not yet on screen.
    fn unshown(&self) -> Vec<Span> {
        let mut skip = self.shown;
        let rest = self.word.iter().map(|s| {
            let text: String = s.text.chars().skip(skip).collect();
            skip = skip.saturating_sub(s.text.chars().count());
            Span::new(text, s.style)
        });
        rest.filter(|s| !s.text.is_empty()).collect()
    }

    /// Completes a word that is partly on screen: the rest follows it if it fits; otherwise the
    /// shown part is rubbed out (backspaces, no escape sequence) and the word goes on the next
    /// line — unless it is wider than a line anyway, then it is cut where the line ends.
    fn finish_shown_word(&mut self, width: usize, color: Options, out: &mut String) {
        let w = width_of(&self.word);
        let rest = self.unshown();
        let fits_here = self.col + (w - self.shown_width) <= width;
        let fits_a_line = width_of(&self.prefix.rest) + w <= width;
        let word = std::mem::take(&mut self.word);
        let shown_width = self.shown_width;
        self.shown = 0;
        self.shown_width = 0;
        self.space = false;
        if fits_here || !fits_a_line {
            return self.write_word(rest, width, color, out);
        }
        let back = "\u{8}".repeat(shown_width);
        out.push_str(&back);
        out.push_str(&" ".repeat(shown_width));
        out.push_str(&back);
        out.push('\n');
        self.soft = true;
        self.start_line(color, out);
        self.write_word(word, width, color, out);
    }

    /// The prefix the next line begins with.
    fn next_prefix(&self) -> &[Span] {
        if self.lines == 0 {
            &self.prefix.first
        } else {
            &self.prefix.rest
        }
    }

    fn start_line(&mut self, color: Options, out: &mut String) {
        for s in self.next_prefix() {
            s.style.paint(&s.text, color, out);
        }
        self.col = width_of(self.next_prefix());
        self.start = self.col;
        self.open = true;
        self.lines += 1;
    }

    /// Writes a word, cutting it where it is wider than a whole line.
    fn write_word(&mut self, word: Vec<Span>, width: usize, color: Options, out: &mut String) {
        for span in word {
            let mut piece = String::new();
            for ch in span.text.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
                if self.col + cw > width && self.col > self.start {
                    span.style.paint(&piece, color, out);
                    piece.clear();
                    out.push('\n');
                    self.soft = true;
                    self.start_line(color, out);
                }
                piece.push(ch);
                self.col += cw;
            }
            span.style.paint(&piece, color, out);
        }
    }

    /// Whether the last line break this block wrote was a wrap rather than a line's end.
    pub fn last_break_soft(&self) -> bool {
        self.soft
    }

    /// Screen rows this block has begun so far.
    pub fn rows(&self) -> usize {
        self.lines
    }

    /// Ends the line where the source line ended; the block goes on (a following line gets the
    /// continuation prefix).
    pub fn break_line(&mut self, width: usize, color: Options, out: &mut String) {
        self.end_word(width, color, out);
        if self.open {
            out.push('\n');
        }
        // A source line ended here, whoever writes its newline.
        self.soft = false;
        self.open = false;
        self.space = false;
        self.col = 0;
    }

    /// The row was ended by someone else (a confirmation prompt drawn under it): the block goes
    /// on at the start of a fresh row, with no space before its next word.
    pub fn row_ended_elsewhere(&mut self) {
        if self.open {
            self.open = false;
            self.space = false;
            self.col = 0;
            self.soft = false;
        }
    }

    /// Ends the block: the last word goes out and the line is ended.
    pub fn close(&mut self, width: usize, color: Options, out: &mut String) {
        self.break_line(width, color, out);
        self.lines = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Vec<Span> {
        vec![Span::new(s, Style::default())]
    }

    #[test]
    fn a_wrap_is_told_from_a_lines_end() {
        let mut f = Flow::new(Prefix::default());
        let mut out = String::new();
        let c = Options::default();
        f.push(&plain("the quick brown fox "), 10, c, &mut out);
        assert!(out.contains('\n') && f.last_break_soft(), "{out:?}");
        f.break_line(10, c, &mut out);
        assert!(!f.last_break_soft(), "{out:?}");
    }

    #[test]
    fn a_word_shown_early_is_moved_down_when_it_outgrows_the_line() {
        let c = Options::default();
        let mut f = Flow::new(Prefix::default());
        let mut out = String::new();
        f.push(&plain("abc de"), 7, c, &mut out);
        f.show_partial(7, c, &mut out);
        assert_eq!(out, "abc de");
        f.push(&plain("fg"), 7, c, &mut out);
        f.show_partial(7, c, &mut out);
        // "defg" no longer fits: it stays as shown until the word ends.
        assert_eq!(out, "abc de");
        f.push(&plain(" h"), 7, c, &mut out);
        f.close(7, c, &mut out);
        assert_eq!(out, "abc de\u{8}\u{8}  \u{8}\u{8}\ndefg h\n");
        // An unfinished word never takes the last column (it may have to be rubbed out): it
        // shows once complete.
        let mut f = Flow::new(Prefix::default());
        let mut out = String::new();
        f.push(&plain("abc de"), 6, c, &mut out);
        f.show_partial(6, c, &mut out);
        assert_eq!(out, "abc");
        f.push(&plain(" "), 6, c, &mut out);
        assert_eq!(out, "abc de");
        // A word that fits is simply continued.
        let mut f = Flow::new(Prefix::default());
        let mut out = String::new();
        f.push(&plain("ab"), 9, c, &mut out);
        f.show_partial(9, c, &mut out);
        f.push(&plain("cd ef"), 9, c, &mut out);
        f.close(9, c, &mut out);
        assert_eq!(out, "abcd ef\n");
    }
}
