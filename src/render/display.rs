//! How an answer reaches stdout: rendered Markdown on a terminal, sanitized text on a terminal
//! with `--raw`, the exact bytes anywhere else (a pipe or file gets what the model wrote).

use super::{Options, Renderer};
use crate::term::Sanitizer;

pub enum Display {
    Rendered(Box<Renderer>),
    Sanitized(Sanitizer),
    Exact,
}

impl Display {
    pub fn new(stdout_tty: bool, raw: bool, opts: Options) -> Display {
        match (stdout_tty, raw) {
            (true, false) => {
                if opts.color {
                    super::code::warm_up();
                }
                Display::Rendered(Box::new(Renderer::new(opts)))
            }
            (true, true) => Display::Sanitized(Sanitizer::default()),
            (false, _) => Display::Exact,
        }
    }

    /// What to write for `bytes` of the answer; `width` is the window's.
    pub fn push(&mut self, bytes: &[u8], width: usize) -> Vec<u8> {
        match self {
            Display::Rendered(r) => r.push(bytes, width).into_bytes(),
            Display::Sanitized(s) => {
                let mut out = Vec::with_capacity(bytes.len());
                s.push(bytes, &mut out);
                out
            }
            Display::Exact => bytes.to_vec(),
        }
    }

    /// A line break the display still owes (see [`Renderer::end_open_line`]), to write before
    /// anything else that goes to the terminal mid-answer.
    pub fn end_open_line(&mut self) -> Vec<u8> {
        match self {
            Display::Rendered(r) => r.end_open_line().into_bytes(),
            _ => Vec::new(),
        }
    }

    /// The line still arriving, shown as it stands (see [`Renderer::release`]): before a
    /// confirmation prompt is drawn under it.
    pub fn release(&mut self, width: usize) -> Vec<u8> {
        match self {
            Display::Rendered(r) => r.release(width).into_bytes(),
            _ => Vec::new(),
        }
    }

    /// The last line break shown was a wrap (rendered only: text as written has none).
    pub fn last_break_soft(&self) -> bool {
        matches!(self, Display::Rendered(r) if r.last_break_soft())
    }

    /// Inside a fenced code block (rendered only: elsewhere the text is as written).
    pub fn in_code_block(&self) -> bool {
        matches!(self, Display::Rendered(r) if r.in_code_block())
    }

    /// The screen ended the row the answer was on (see [`Renderer::row_ended_elsewhere`]);
    /// `false` where the display does not lay out rows (the text is as written).
    pub fn row_ended_elsewhere(&mut self) -> bool {
        match self {
            Display::Rendered(r) => {
                r.row_ended_elsewhere();
                true
            }
            _ => false,
        }
    }

    /// Whether the newline ending the last line written is held back.
    pub fn owes_newline(&self) -> bool {
        matches!(self, Display::Rendered(r) if r.owes_newline())
    }

    /// What is still held at the end of the answer.
    pub fn finish(&mut self, width: usize) -> Vec<u8> {
        match self {
            Display::Rendered(r) => r.finish(width).into_bytes(),
            Display::Sanitized(s) => {
                let mut out = Vec::new();
                s.finish(&mut out);
                out
            }
            Display::Exact => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_on_a_pipe_sanitized_raw_on_a_terminal_rendered_otherwise() {
        let text = b"# T\n\x1b[2J**b**\n";
        let mut d = Display::new(false, false, Options::default());
        assert_eq!(d.push(text, 80), text);
        let mut d = Display::new(true, true, Options::default());
        assert_eq!(
            String::from_utf8(d.push(text, 80)).unwrap(),
            "# T\n\u{241b}[2J**b**\n"
        );
        let mut d = Display::new(true, false, Options::default());
        let mut out = d.push(text, 80);
        out.extend(d.finish(80));
        assert_eq!(String::from_utf8(out).unwrap(), "# T\n\u{241b}[2J**b**\n");
    }
}
