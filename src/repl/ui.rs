//! The REPL's [`Ui`]: answer text on stdout, status lines (reports and notices) and token
//! counts dim on stderr, a spinner while waiting; all through the shared [`Screen`].

use super::screen::{Looks, Screen, Tone, paint};
use crate::chat::{Busy, Notice, TurnReport, Ui};
use crate::confirm::{Answer, Prompt};
use crate::pipeline::{Report, ReportKind};
use crate::render::{Display, Options as RenderOptions};
use crate::term::sanitize;
use std::sync::Arc;

pub struct TermUi {
    screen: Arc<Screen>,
    /// How answer text reaches stdout (rendered, sanitized with `--raw`, exact off a terminal).
    display: Display,
    /// The screen ended the answer's line: the newline the display writes for it is dropped.
    skip_newline: bool,
}

impl TermUi {
    pub fn new(screen: Arc<Screen>) -> TermUi {
        TermUi {
            screen,
            display: Display::Exact,
            skip_newline: false,
        }
    }

    /// The UI of one answer: rendered Markdown on a terminal unless `raw`.
    pub fn answer(screen: Arc<Screen>, raw: bool) -> TermUi {
        let looks = screen.looks();
        let opts = RenderOptions::detect(looks.color_out, looks.unicode);
        TermUi {
            display: Display::new(looks.stdout_tty, raw, opts),
            screen,
            skip_newline: false,
        }
    }

    /// Ends a line the renderer left open (see [`Display::end_open_line`]), so that a status
    /// line shows now rather than waiting for the answer's next line.
    fn end_open_line(&mut self) {
        let owed = self.display.end_open_line();
        self.show(owed);
    }

    /// Writes rendered text, without the newline of a line the screen already ended.
    fn show(&mut self, out: Vec<u8>) {
        self.settle_paid();
        let mut out = out.as_slice();
        if self.skip_newline && !out.is_empty() {
            self.skip_newline = false;
            out = out.strip_prefix(b"\n").unwrap_or(out);
        }
        self.screen.answer_text(out, self.display.owes_newline());
    }

    /// Shows what the display still holds (the answer's last line, a table).
    pub fn end_render(&mut self) {
        self.settle_paid();
        let out = self.display.finish(stdout_width());
        self.show(out);
    }

    /// Takes note of a line the screen ended, before the display renders more: a held-back
    /// newline is dropped (that line can no longer be redrawn as a heading), any other newline
    /// the display writes next is skipped.
    fn settle_paid(&mut self) {
        if self.screen.take_paid() {
            if self.display.owes_newline() {
                let _ = self.display.end_open_line();
            } else {
                self.skip_newline = true;
            }
        }
    }

    /// The status lines of a report or a notice.
    fn status_lines(&mut self, text: &str, fine: bool) {
        self.end_open_line();
        for line in status_lines(text, fine, self.looks().color_err) {
            self.screen.status(line);
        }
    }

    /// A whole Markdown text (a resumed answer), rendered like a streamed one.
    pub fn print_markdown(&self, text: &str, raw: bool) {
        let mut ui = TermUi::answer(self.screen.clone(), raw);
        ui.text(text.as_bytes());
        ui.end_render();
        self.screen.end_answer();
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
        self.screen.end_answer();
        if let Some(line) = report.and_then(token_line) {
            self.info(&line);
        }
    }

    /// The confirmation prompt, with the screen held so the spinner and text stay out of it.
    pub fn asker(
        screen: Arc<Screen>,
    ) -> impl Fn(&Prompt<'_>) -> Result<Answer, crate::confirm::AskError> + Send + Sync + 'static
    {
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

/// A status line, dim: `· ran …`; problems (blocked, failed, stopped) also in the warning
/// colour so they stand out.
pub fn status_line(line: &str, fine: bool, color: bool) -> String {
    let text = format!("· {line}");
    if fine {
        paint(&text, Tone::Dim, color)
    } else {
        paint(&text, Tone::DimWarn, color)
    }
}

/// `text` (a report or a notice, which quote model text) sanitized, one [`status_line`] per
/// line.
fn status_lines(text: &str, fine: bool, color: bool) -> Vec<String> {
    sanitize(text)
        .lines()
        .map(|line| status_line(line.trim_start(), fine, color))
        .collect()
}

/// Whether a notice reads as routine (dim) rather than as a problem (dim in the warning
/// colour). Each says the turn did not go as asked (a retry, a capture not run, a turn cut
/// short, tools dropped), so each stands out.
fn notice_is_fine(notice: &Notice) -> bool {
    match notice {
        Notice::Retrying { .. }
        | Notice::NotRunAgain { .. }
        | Notice::StoppedRepeating { .. }
        | Notice::StoppedToolCalls { .. }
        | Notice::ToolsIgnored
        | Notice::CutAtTokenLimit
        | Notice::NoFinishReason => false,
    }
}

/// Columns of the terminal on stdout, read for every piece so a resize applies at once; 80 if
/// unknown.
pub(crate) fn stdout_width() -> usize {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ fills the winsize it is given; fd 1 stays open for the process's life.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        usize::from(ws.ws_col)
    } else {
        80
    }
}

impl Ui for TermUi {
    fn text(&mut self, bytes: &[u8]) {
        self.settle_paid();
        let out = self.display.push(bytes, stdout_width());
        self.show(out);
    }

    /// Reports quote directive bodies and reasons: sanitized before painting.
    fn report(&mut self, report: &Report) {
        let fine = report.kind == ReportKind::Ran;
        self.status_lines(&report.to_string(), fine);
    }

    /// Notices quote directives and a server's reasons: sanitized before painting.
    fn notice(&mut self, notice: &Notice) {
        self.status_lines(&crate::app::wording::notice(notice), notice_is_fine(notice));
    }

    fn side_output(&mut self, text: &str) {
        self.end_open_line();
        let color = self.looks().color_err;
        for line in text.lines() {
            self.screen
                .status(paint(&format!("│ {}", sanitize(line)), Tone::Dim, color));
        }
    }

    fn flush(&mut self) {
        let out = self.display.release(stdout_width());
        self.show(out);
    }

    fn busy(&mut self, what: Option<Busy<'_>>) {
        if what.is_some() {
            // A capture or tool is about to run (and may ask): the line that ended in the
            // answer ends on screen too, so a prompt does not add a blank line after it.
            self.end_open_line();
        }
        let label = what.map(|b| sanitize(&b.to_string()).into_owned());
        self.screen.set_busy(label.as_deref());
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
        assert_eq!(status_line("ran %{say hi}", true, false), "· ran %{say hi}");
        let fine = status_line("ran %{say hi}", true, true);
        let bad = status_line("blocked: x: y", false, true);
        assert!(bad.contains("\x1b[") && fine.contains("\x1b["));
        assert_ne!(bad.split("·").next(), fine.split("·").next());
    }

    #[test]
    fn notices_are_shown_inert_in_the_warning_tone() {
        // A provider's reason is not escaped by the notice: the REPL makes it inert.
        let retry = Notice::Retrying {
            reason: "overloaded \x1b]2;pwned\x07\nsecond".into(),
            delay: std::time::Duration::from_secs(1),
            attempt: 1,
            max_attempts: 3,
        };
        let lines = status_lines(&retry.to_string(), notice_is_fine(&retry), false);
        assert_eq!(
            lines,
            [
                "· overloaded ␛]2;pwned␇",
                "· second; retrying in 1.0 s (1/3)"
            ]
        );
        let stopped = Notice::stopped_repeating(b"!{echo \x1b[2J}");
        let lines = status_lines(&stopped.to_string(), notice_is_fine(&stopped), true);
        assert_eq!(lines.len(), 1);
        // Only the paint's own escapes: the model's is shown as text.
        assert!(lines[0].contains("!{echo ␛[2J}"), "{lines:?}");
        assert!(!lines[0].contains("\x1b[2J"), "{lines:?}");
        assert_eq!(lines[0], status_line(&stopped.to_string(), false, true));
    }
}
