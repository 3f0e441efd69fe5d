//! Lines that held only directives, taken out of what a chat shows. Pure.
//!
//! A model often puts a side effect on a line of its own (`%{scripts/say.sh "gato"}` between two
//! sentences). Removing the directive leaves its newline, so the screen showed an empty line, and
//! in Markdown a paragraph break, where the model wrote none. The chat shows such a line not at
//! all; the history keeps the model's text as written, and `filter` (whose output is the input
//! minus the directives, byte for byte) does not use this.

/// Tracks the line being shown: whitespace at its start is held back until the line shows
/// something (then it is written out) or ends (then it goes, with the newline, if a directive
/// was all the line held).
#[derive(Debug, Default)]
pub(crate) struct DirectiveLines {
    /// Spaces and tabs at the start of the current line, not yet shown.
    pending: Vec<u8>,
    /// The current line has shown something other than spaces and tabs.
    shown: bool,
    /// A directive stood on the current line before anything was shown.
    directive: bool,
}

impl DirectiveLines {
    /// Text to show: appends to `out` what may be shown now.
    pub(crate) fn text(&mut self, text: &[u8], out: &mut Vec<u8>) {
        for &b in text {
            if self.shown {
                out.push(b);
                if b == b'\n' {
                    self.shown = false;
                    self.directive = false;
                }
                continue;
            }
            match b {
                b' ' | b'\t' | b'\r' => self.pending.push(b),
                b'\n' => {
                    if !self.directive {
                        out.append(&mut self.pending);
                        out.push(b);
                    }
                    self.pending.clear();
                    self.directive = false;
                }
                _ => {
                    out.append(&mut self.pending);
                    out.push(b);
                    self.shown = true;
                }
            }
        }
    }

    /// A directive was taken out of the text here.
    pub(crate) fn directive(&mut self) {
        if !self.shown {
            self.directive = true;
        }
    }

    /// The answer is over: what is still held back, unless a directive was all its line held.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        if !self.directive {
            out.append(&mut self.pending);
        }
        *self = DirectiveLines::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `parts` (text, or `None` for a directive) through, one byte at a time as well.
    fn shown(parts: &[Option<&str>]) -> String {
        let run = |bytewise: bool| {
            let (mut l, mut out) = (DirectiveLines::default(), Vec::new());
            for p in parts {
                match p {
                    Some(t) if bytewise => t.bytes().for_each(|b| l.text(&[b], &mut out)),
                    Some(t) => l.text(t.as_bytes(), &mut out),
                    None => l.directive(),
                }
            }
            l.finish(&mut out);
            String::from_utf8(out).unwrap()
        };
        let whole = run(false);
        assert_eq!(run(true), whole, "split differently");
        whole
    }

    #[test]
    fn a_line_of_only_directives_is_not_shown() {
        let d = None;
        assert_eq!(
            shown(&[Some("The word is gato.\n"), d, Some("\nIt means cat.\n")]),
            "The word is gato.\nIt means cat.\n"
        );
        // Indented, two of them, with spaces and a CR between: still only directives.
        assert_eq!(
            shown(&[Some("a\n  "), d, Some(" "), d, Some(" \r\nb")]),
            "a\nb"
        );
        // The last line, without a newline.
        assert_eq!(shown(&[Some("a\n"), d]), "a\n");
        assert_eq!(shown(&[Some("a\n "), d, Some("  ")]), "a\n");
    }

    #[test]
    fn every_other_line_is_shown_as_it_came() {
        let d = None;
        // A directive beside text keeps the line, its spaces and its newline.
        assert_eq!(shown(&[Some("Say "), d, Some(" it.\n")]), "Say  it.\n");
        assert_eq!(shown(&[Some("  "), d, Some(" it\n")]), "   it\n");
        // Blank lines and indentation the model wrote stay.
        assert_eq!(
            shown(&[Some("a\n\n    code\n  \nb  ")]),
            "a\n\n    code\n  \nb  "
        );
        // The line after a removed one starts fresh.
        assert_eq!(shown(&[d, Some("\n\nx")]), "\nx");
    }
}
