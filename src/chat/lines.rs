//! Lines that held only directives, and the lead-ins before them, taken out of what a chat
//! shows. Pure.
//!
//! A model often puts a side effect on a line of its own (`%{scripts/say.sh "gato"}` between two
//! sentences). Removing the directive leaves its newline, so the screen showed an empty line, and
//! in Markdown a paragraph break, where the model wrote none. The chat shows such a line not at
//! all; the history keeps the model's text as written, and `filter` (whose output is the input
//! minus the directives, byte for byte) does not use this.
//!
//! With coaching on, the worked examples open a bare directive with its skill's name (`Using calc: !{…}`, see
//! [`crate::chat::result::lead_in`]), and models copy that. Left on screen it claimed a skill was
//! used where the directive was then refused and, where it ran, only repeated the status line.
//! So (with the `lead-ins` piece) a lead-in that opens a line
//! and is followed by a directive goes with the directive; followed by anything else, it is the
//! model's words and is shown.

/// Whether bytes are (the start of) a lead-in: `Using NAME:` and spaces, NAME one word.
#[derive(Debug, PartialEq, Eq)]
enum Lead {
    /// Not one.
    No,
    /// Could still become one.
    Partial,
    /// One, up to its colon (spaces after it may follow).
    Complete,
}

fn lead(bytes: &[u8]) -> Lead {
    const USING: &[u8] = b"Using ";
    if bytes.len() <= USING.len() {
        return match USING.starts_with(bytes) {
            true => Lead::Partial,
            false => Lead::No,
        };
    }
    let Some(rest) = bytes.strip_prefix(USING) else {
        return Lead::No;
    };
    let name = rest
        .iter()
        .take_while(|b| !b.is_ascii_whitespace() && **b != b':');
    let name_len = name.count();
    match rest.get(name_len..) {
        _ if name_len == 0 => Lead::No,
        Some([]) => Lead::Partial,
        Some([b':', spaces @ ..]) if spaces.iter().all(|b| matches!(b, b' ' | b'\t')) => {
            Lead::Complete
        }
        _ => Lead::No,
    }
}

/// Tracks the line being shown: whitespace at its start is held back until the line shows
/// something (then it is written out) or ends (then it goes, with the newline, if a directive
/// was all the line held); so is a lead-in at its start, until what follows it is known.
#[derive(Debug, Default)]
pub(crate) struct DirectiveLines {
    /// Spaces and tabs at the start of the current line, not yet shown.
    pending: Vec<u8>,
    /// After them, what may be a lead-in (`Using calc: `), not yet shown.
    lead: Vec<u8>,
    /// The current line has shown something other than spaces and tabs.
    shown: bool,
    /// A directive stood on the current line before anything was shown.
    directive: bool,
    /// Lead-ins are looked for (the coach's worked examples taught them).
    leads: bool,
}

impl DirectiveLines {
    /// Lines of one answer; `leads`: a lead-in before a directive goes with it.
    pub(crate) fn new(leads: bool) -> DirectiveLines {
        DirectiveLines {
            leads,
            ..DirectiveLines::default()
        }
    }

    /// Text to show: appends to `out` what may be shown now.
    pub(crate) fn text(&mut self, text: &[u8], out: &mut Vec<u8>) {
        for &b in text {
            if !self.shown && self.leads && (!self.lead.is_empty() || b == b'U') {
                self.lead.push(b);
                if lead(&self.lead) == Lead::No {
                    // The model's own words: shown as they came, with what was held before.
                    let words = std::mem::take(&mut self.lead);
                    self.plain(&words, out);
                }
                continue;
            }
            self.plain(&[b], out);
        }
    }

    /// Text that is not (or is no longer) a lead-in.
    fn plain(&mut self, text: &[u8], out: &mut Vec<u8>) {
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

    /// A directive was taken out of the text here: a complete lead-in before it goes with it,
    /// the start of one is shown (appended to `out`).
    pub(crate) fn directive(&mut self, out: &mut Vec<u8>) {
        let held = std::mem::take(&mut self.lead);
        if lead(&held) != Lead::Complete {
            self.plain(&held, out);
        }
        if !self.shown {
            self.directive = true;
        }
    }

    /// The answer is over: what is still held back, unless a directive was all its line held.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        let held = std::mem::take(&mut self.lead);
        self.plain(&held, out);
        if !self.directive {
            out.append(&mut self.pending);
        }
        *self = DirectiveLines::new(self.leads);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `parts` (text, or `None` for a directive) through, coached, one byte at a time as
    /// well.
    fn shown(parts: &[Option<&str>]) -> String {
        shown_with(true, parts)
    }

    fn shown_with(leads: bool, parts: &[Option<&str>]) -> String {
        let run = |bytewise: bool| {
            let (mut l, mut out) = (DirectiveLines::new(leads), Vec::new());
            for p in parts {
                match p {
                    Some(t) if bytewise => t.bytes().for_each(|b| l.text(&[b], &mut out)),
                    Some(t) => l.text(t.as_bytes(), &mut out),
                    None => l.directive(&mut out),
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

    #[test]
    fn a_lead_in_goes_with_the_directive_it_opens() {
        let d = None;
        // Before a capture: the answer after the result starts clean.
        assert_eq!(
            shown(&[Some("Using calc: "), d, Some("It is 82.")]),
            "It is 82."
        );
        // Indented, no space after the colon, on a later line, before a side effect.
        assert_eq!(shown(&[Some("  Using say:"), d, Some("\nok")]), "ok");
        assert_eq!(
            shown(&[Some("First.\nUsing notify:  "), d, Some(" Sent.\n")]),
            "First.\n Sent.\n"
        );
        // Two on one line, each before its directive.
        assert_eq!(shown(&[Some("Using a: "), d, Some(" Using b: "), d]), "");
        // Uncoached, nothing taught the model lead-ins: its words stay.
        assert_eq!(
            shown_with(false, &[Some("Using calc: "), d, Some("It is 82.")]),
            "Using calc: It is 82."
        );
    }

    #[test]
    fn words_that_only_look_like_a_lead_in_are_shown() {
        let d = None;
        // Followed by text, not a directive: the model's words.
        assert_eq!(
            shown(&[Some("Using calc: 17 * 23 = 391.")]),
            "Using calc: 17 * 23 = 391."
        );
        assert_eq!(shown(&[Some("Using false:")]), "Using false:");
        assert_eq!(shown(&[Some("Using calc:\n"), d]), "Using calc:\n");
        // Not at a line's start, two words, no name, no colon before the directive.
        assert_eq!(shown(&[Some("I am Using calc: "), d]), "I am Using calc: ");
        assert_eq!(shown(&[Some("Using the calc: "), d]), "Using the calc: ");
        assert_eq!(shown(&[Some("Using : "), d]), "Using : ");
        assert_eq!(shown(&[Some("Using calc "), d, Some("x")]), "Using calc x");
        assert_eq!(shown(&[Some("Usual"), d]), "Usual");
        assert_eq!(shown(&[Some("U"), d]), "U");
    }
}
