//! The REPL's [`Ui`]: answer text on stdout, status lines, notices and token counts dim on
//! stderr, a spinner while waiting; all through the shared [`Screen`].

use super::screen::{Looks, Screen, Tone, paint};
use crate::chat::{TurnReport, Ui};
use crate::confirm::{Answer, Prompt};
use crate::term::{Sanitizer, sanitize};
use std::sync::{Arc, Mutex};

pub struct TermUi {
    screen: Arc<Screen>,
    /// Model text is foreign: it reaches the terminal only through this (DESIGN §8).
    sanitizer: Mutex<Sanitizer>,
}

impl TermUi {
    pub fn new(screen: Arc<Screen>) -> TermUi {
        TermUi {
            screen,
            sanitizer: Mutex::default(),
        }
    }

    fn looks(&self) -> Looks {
        self.screen.looks()
    }

    /// A dim line of REPL chrome on stderr (welcome, command feedback).
    pub fn info(&self, line: &str) {
        self.screen
            .line_err(&paint(&sanitize(line), Tone::Dim, self.looks().color_err));
    }

    /// A warning the user should notice, on stderr.
    pub fn warn(&self, line: &str) {
        self.screen.line_err(&paint(
            &format!("skillpipe: {}", sanitize(line)),
            Tone::Warn,
            self.looks().color_err,
        ));
    }

    pub fn error(&self, line: &str) {
        self.screen.line_err(&paint(
            &format!("skillpipe: error: {}", sanitize(line)),
            Tone::Error,
            self.looks().color_err,
        ));
    }

    /// Plain output of a command (/help, /skills, …) on stdout.
    pub fn print(&self, text: &str) {
        self.screen.end_answer();
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.screen.text(text.as_bytes());
    }

    /// Text in bold on stdout when colour is on (headings, the user's turns on resume).
    pub fn print_bold(&self, text: &str) {
        self.print(&paint(text, Tone::Bold, self.looks().color_out));
    }

    /// After an answer: close its last line, flush waiting status lines, show token counts.
    pub fn finish_answer(&self, report: Option<&TurnReport>) {
        let mut tail = Vec::new();
        self.sanitizer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .finish(&mut tail);
        self.screen.text(&tail);
        self.screen.end_answer();
        if let Some(line) = report.and_then(token_line) {
            self.info(&line);
        }
    }

    /// The confirmation prompt, with the screen held so the spinner and text stay out of it.
    pub fn asker(
        screen: Arc<Screen>,
    ) -> impl Fn(&Prompt<'_>) -> Result<Answer, String> + Send + Sync + 'static {
        move |p| screen.exclusive(|| crate::confirm::ask_tty(p))
    }
}

/// "↳ 120 prompt + 45 completion tokens", when the provider reported any.
pub fn token_line(r: &TurnReport) -> Option<String> {
    (r.prompt_tokens + r.completion_tokens > 0).then(|| {
        format!(
            "↳ {} prompt + {} completion tokens",
            r.prompt_tokens, r.completion_tokens
        )
    })
}

/// A directive's status line, dim: `· ran …`; problems (blocked, failed, stopped) also in the
/// warning colour so they stand out.
pub fn status_line(line: &str, color: bool) -> String {
    let fine = line.starts_with("ran ");
    let text = format!("· {line}");
    if fine {
        paint(&text, Tone::Dim, color)
    } else {
        paint(&text, Tone::DimWarn, color)
    }
}

impl Ui for TermUi {
    fn text(&mut self, bytes: &[u8]) {
        let mut shown = Vec::with_capacity(bytes.len());
        self.sanitizer
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .push(bytes, &mut shown);
        self.screen.text(&shown);
    }

    /// Status lines quote tool names, directive bodies and reasons: sanitized before painting.
    fn status(&mut self, line: &str) {
        self.screen
            .status(status_line(&sanitize(line), self.looks().color_err));
    }

    fn busy(&mut self, what: Option<&str>) {
        self.screen.set_busy(what.map(sanitize).as_deref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_line_only_when_reported() {
        let mut r = TurnReport::default();
        assert_eq!(token_line(&r), None);
        r.prompt_tokens = 120;
        r.completion_tokens = 45;
        assert_eq!(
            token_line(&r).unwrap(),
            "↳ 120 prompt + 45 completion tokens"
        );
    }

    #[test]
    fn status_lines_are_marked_and_plain_without_colour() {
        assert_eq!(status_line("ran %{say hi}", false), "· ran %{say hi}");
        assert!(status_line("blocked: x: y", true).contains("\x1b["));
    }
}
