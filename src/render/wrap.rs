//! Word wrapping of styled text to a width, with a prefix on every line (list indent, quote bar).
//! Text arrives in pieces as it streams; the open line stays open between pieces.

use super::style::{Color24, Style};
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
}

impl Flow {
    pub fn new(prefix: Prefix) -> Flow {
        Flow {
            prefix,
            ..Flow::default()
        }
    }

    /// Adds text; complete words go out, wrapped to `width`. A word still open at the end stays
    /// held until a space, [`Flow::end_word`] or [`Flow::close`].
    pub fn push(&mut self, spans: &[Span], width: usize, color: Color24, out: &mut String) {
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
    pub fn end_word(&mut self, width: usize, color: Color24, out: &mut String) {
        if self.word.is_empty() {
            return;
        }
        let word = std::mem::take(&mut self.word);
        let w = width_of(&word);
        if !self.open {
            self.start_line(color, out);
        } else {
            let need = w + usize::from(self.space);
            if self.col + need > width && self.col > self.start {
                out.push('\n');
                self.start_line(color, out);
            } else if self.space && self.col > self.start {
                out.push(' ');
                self.col += 1;
            }
        }
        self.space = false;
        self.write_word(word, width, color, out);
    }

    fn start_line(&mut self, color: Color24, out: &mut String) {
        let prefix = if self.lines == 0 {
            &self.prefix.first
        } else {
            &self.prefix.rest
        };
        for s in prefix {
            s.style.paint(&s.text, color, out);
        }
        self.col = width_of(prefix);
        self.start = self.col;
        self.open = true;
        self.lines += 1;
    }

    /// Writes a word, cutting it where it is wider than a whole line.
    fn write_word(&mut self, word: Vec<Span>, width: usize, color: Color24, out: &mut String) {
        for span in word {
            let mut piece = String::new();
            for ch in span.text.chars() {
                let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
                if self.col + cw > width && self.col > self.start {
                    span.style.paint(&piece, color, out);
                    piece.clear();
                    out.push('\n');
                    self.start_line(color, out);
                }
                piece.push(ch);
                self.col += cw;
            }
            span.style.paint(&piece, color, out);
        }
    }

    /// Ends the line where the source line ended; the block goes on (a following line gets the
    /// continuation prefix).
    pub fn break_line(&mut self, width: usize, color: Color24, out: &mut String) {
        self.end_word(width, color, out);
        if self.open {
            out.push('\n');
        }
        self.open = false;
        self.space = false;
        self.col = 0;
    }

    /// Ends the block: the last word goes out and the line is ended.
    pub fn close(&mut self, width: usize, color: Color24, out: &mut String) {
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

    fn wrap(text: &str, width: usize, prefix: Prefix) -> String {
        let mut f = Flow::new(prefix);
        let mut out = String::new();
        f.push(&plain(text), width, Color24::default(), &mut out);
        f.close(width, Color24::default(), &mut out);
        out
    }

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(
            wrap("the quick brown fox jumps", 10, Prefix::default()),
            "the quick\nbrown fox\njumps\n"
        );
    }

    #[test]
    fn continuation_lines_get_the_hanging_prefix() {
        let p = Prefix {
            first: plain("- "),
            rest: plain("  "),
        };
        assert_eq!(wrap("aaa bbb ccc", 8, p), "- aaa\n  bbb\n  ccc\n");
    }

    #[test]
    fn over_long_words_are_cut() {
        assert_eq!(wrap("abcdefghij", 4, Prefix::default()), "abcd\nefgh\nij\n");
    }

    #[test]
    fn a_word_split_between_pieces_stays_whole() {
        let mut f = Flow::new(Prefix::default());
        let mut out = String::new();
        let c = Color24::default();
        f.push(&plain("hello wo"), 8, c, &mut out);
        assert_eq!(out, "hello");
        f.push(&plain("rld"), 8, c, &mut out);
        f.close(8, c, &mut out);
        assert_eq!(out, "hello\nworld\n");
    }
}
