//! The REPL's [`Ui`]: answer text on stdout, status lines (reports and notices) and token
//! counts dim on stderr, a spinner while waiting; all through the shared [`Screen`]. One-shot
//! `chat` answers through it on a plain screen ([`Screen::plain`]): its status lines are
//! `skillpipe: …` notes, uncoloured, and a side effect's output off a terminal is as written.

use super::ink::{Tone, paint};
use super::screen::{Looks, Screen};
use super::tape::Entry;
use crate::chat::{Busy, Notice, TurnReport, Ui};
use crate::pipeline::{Report, ReportKind};
use crate::render::{Display, Options as RenderOptions};
use crate::term::{sanitize, sanitize_bytes};
use std::sync::Arc;

pub struct TermUi {
    screen: Arc<Screen>,
    /// How answer text reaches stdout (rendered, sanitized with `--raw`, exact off a terminal).
    display: Display,
    /// The screen ended the answer's line: the newline the display writes for it is dropped.
    skip_newline: bool,
    /// A side effect's output, shown under the report that follows it.
    side_output: crate::render::HeldOutput,
    /// The UI of an answer under way: a redraw after a resize goes on from the replayed
    /// answer's renderer.
    answering: bool,
}

impl TermUi {
    pub fn new(screen: Arc<Screen>) -> TermUi {
        TermUi {
            screen,
            display: Display::Exact,
            skip_newline: false,
            side_output: Default::default(),
            answering: false,
        }
    }

    /// The UI of one answer: rendered Markdown on a terminal unless `raw`.
    pub fn answer(screen: Arc<Screen>, raw: bool) -> TermUi {
        screen.record(Entry::AnswerStart { raw });
        let looks = screen.looks();
        let opts = RenderOptions::detect(looks.color_out, looks.unicode);
        TermUi {
            display: Display::new(looks.stdout_tty, raw, opts),
            answering: true,
            ..TermUi::new(screen)
        }
    }

    /// Ends a line the renderer left open (see [`Display::end_open_line`]), so that a status
    /// line shows now rather than waiting for the answer's next line.
    fn end_open_line(&mut self) {
        let owed = self.display.end_open_line();
        self.show(owed);
    }

    /// The answer's row ends where the text stopped (a capture or tool runs there): what the
    /// display holds is shown, the row ended, waiting status lines shown; the text goes on
    /// from a fresh row.
    fn end_row(&mut self) {
        self.flush_display();
        self.end_open_line();
        // On a plain screen text shown as written goes on in its row.
        let plain = self.screen.is_plain();
        self.screen
            .end_row(|| !plain || self.display.row_ended_elsewhere());
    }

    /// Writes rendered text, without the newline of a line the screen already ended.
    fn show(&mut self, out: Vec<u8>) {
        self.settle_paid();
        let mut out = out.as_slice();
        if self.skip_newline && !out.is_empty() {
            self.skip_newline = false;
            out = out.strip_prefix(b"\n").unwrap_or(out);
        }
        self.screen.answer_text(
            out,
            self.display.owes_newline(),
            self.display.last_break_soft(),
        );
    }

    /// Shows what the display still holds (the answer's last line, a table).
    pub fn end_render(&mut self) {
        self.screen.record(Entry::EndRender);
        self.settle_paid();
        let out = self.display.finish(self.screen.out_width());
        self.show(out);
    }

    /// Takes note of a line the screen ended, before the display renders more: a held-back
    /// newline is dropped (that line can no longer be redrawn as a heading); a rendered
    /// paragraph goes on from the start of the fresh row; text shown as written skips the next
    /// newline it writes.
    fn settle_paid(&mut self) {
        if self.screen.take_paid() {
            if self.display.owes_newline() {
                let _ = self.display.end_open_line();
            } else if !self.display.row_ended_elsewhere() {
                self.skip_newline = true;
            }
        }
    }

    /// The status lines of a report or a notice, and a side effect's output waiting for it.
    fn status_lines(&mut self, text: &str, fine: bool) {
        self.screen.record(Entry::Status {
            text: text.to_string(),
            fine,
        });
        self.end_open_line();
        let plain = self.screen.is_plain();
        let (color, width) = (self.looks().color_err && !plain, self.screen.err_width());
        let gutter = |g: &str| paint(g, Tone::Output, color);
        let (text, output) = (self.side_output).under(text, width, self.looks().unicode, gutter);
        let lines = match plain {
            true => {
                let note =
                    crate::render::wrap_text(&format!("skillpipe: {}", sanitize(&text)), width);
                vec![note.trim_end_matches('\n').to_string()]
            }
            false => status_lines(&text, fine, color, width),
        };
        for line in lines.into_iter().chain(output) {
            self.screen.status(line);
        }
    }

    /// A whole Markdown text (a resumed answer), rendered like a streamed one where the REPL's
    /// own output goes ([`Screen::chrome`]).
    pub fn print_markdown(&self, text: &str, raw: bool) {
        if self.looks().stdout_tty {
            let mut ui = TermUi::answer(self.screen.clone(), raw);
            ui.text(text.as_bytes());
            ui.end_render();
            self.end_answer();
            return;
        }
        let (tty, color) = self.screen.chrome_looks();
        let opts = RenderOptions::detect(color, self.looks().unicode);
        let mut display = Display::new(tty, raw, opts);
        let width = self.screen.chrome_width().min(1000);
        let mut out = display.push(text.as_bytes(), width);
        out.extend(display.finish(width));
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        self.screen.chrome(&out);
    }

    fn looks(&self) -> Looks {
        self.screen.looks()
    }

    /// A line of REPL chrome on stderr, sanitized, wrapped at words to the terminal, painted.
    fn line_err(&self, line: &str, tone: Tone) {
        self.screen.record(Entry::Line {
            text: line.to_string(),
            tone,
        });
        let rows = painted_rows(
            &sanitize(line),
            self.screen.err_width(),
            tone,
            self.looks().color_err,
        );
        self.screen.line_err(&rows);
    }

    /// A note from below the REPL (`skillpipe: …`), as it is.
    pub fn note(&self, line: &str) {
        self.line_err(line, Tone::Plain);
    }

    /// A dim line of REPL chrome on stderr (welcome, command feedback).
    pub fn info(&self, line: &str) {
        self.line_err(line, Tone::Dim);
    }

    /// A warning the user should notice, on stderr.
    pub fn warn(&self, line: &str) {
        self.line_err(&format!("skillpipe: {line}"), Tone::Warn);
    }

    pub fn error(&self, line: &str) {
        self.line_err(&format!("skillpipe: error: {line}"), Tone::Error);
    }

    /// Plain output of a command (/help, /agent, /info, …; sanitized by the caller where it
    /// quotes foreign text), wrapped at words, where the REPL's own output goes.
    pub fn print(&self, text: &str) {
        self.print_in(text, Tone::Plain);
    }

    /// Text in `tone` when colour is on (the user's turns in bold on resume), wrapped at words.
    pub fn print_in(&self, text: &str, tone: Tone) {
        self.screen.record(Entry::Print {
            text: text.to_string(),
            tone,
        });
        let color = self.screen.chrome_looks().1;
        self.put_styled(&painted_rows(text, self.screen.chrome_width(), tone, color));
    }

    /// Output already laid out for the width and styled (`/skills`).
    pub fn print_styled(&self, text: &str) {
        self.screen.record(Entry::PrintStyled(text.to_string()));
        self.put_styled(text);
    }

    fn put_styled(&self, text: &str) {
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        self.screen.chrome(text.as_bytes());
    }

    /// How wide the REPL's own output may be (see [`Screen::chrome_width`]).
    pub fn width(&self) -> usize {
        self.screen.chrome_width()
    }

    /// Whether the REPL's own output gets colour.
    pub fn color(&self) -> bool {
        self.screen.chrome_looks().1
    }

    /// After an answer: close its last line, flush waiting status lines, show token counts.
    pub fn finish_answer(&self, report: Option<&TurnReport>) {
        self.end_answer();
        if let Some(line) = report.and_then(token_line) {
            self.info(&line);
        }
    }

    fn end_answer(&self) {
        self.screen.record(Entry::EndAnswer);
        self.screen.end_answer();
    }

    /// The prompt and the line the user entered, as the line editor drew them.
    pub fn typed(&self, prompt: &str, line: &str) {
        self.screen.record(Entry::Typed {
            prompt: prompt.to_string(),
            line: line.to_string(),
        });
    }

    /// The REPL's confirmation prompt, with the screen held so the spinner and text stay out
    /// of it.
    pub fn asker(screen: &Arc<Screen>) -> Box<crate::dispatch::AsyncAsker> {
        let screen = screen.clone();
        Box::new(move |p| {
            Box::pin(std::future::ready(screen.exclusive(|| {
                let answer = crate::confirm::ask_tty(p);
                let width = screen.out_width();
                let height = crate::term::rows(libc::STDOUT_FILENO).unwrap_or(24);
                // Recorded while the screen is still held: text that arrived meanwhile comes
                // after it, as it does on screen.
                let shown = crate::confirm::as_shown(p, &answer, width, height);
                screen.record_held(Entry::Asked(shown));
                answer
            })))
        })
    }

    /// Lays the screen out again when the terminal's width changed since it was drawn: before
    /// the next piece of an answer, or when the user has entered a line (a resize the prompt's
    /// own redraw, [`TermUi::prompt_redraw`], did not get to). Everything the REPL has shown
    /// is laid out again (see [`super::tape`]), its last screenful drawn, and the UI goes on
    /// from the state the replay ended in.
    pub fn redraw_if_resized(&mut self) {
        let width = self.screen.out_width();
        let Some(entries) = self.screen.resized(width) else {
            return;
        };
        let (replay, answer) = replay(self.looks(), entries, width);
        self.screen.repaint(&replay);
        if let Some(ui) = answer.filter(|_| self.answering) {
            self.display = ui.display;
            self.skip_newline = ui.skip_newline;
            self.side_output = ui.side_output;
        }
    }

    /// What to draw while the line editor waits, when the width changed since the screen was
    /// laid out: everything shown, laid out again, as a screenful that leaves the last row
    /// for the prompt, which the line editor draws again under it.
    pub fn prompt_redraw(screen: &Screen) -> Option<String> {
        let width = screen.out_width();
        let entries = screen.resized(width)?;
        // The line entered next lays the screen out once more: should the user have pressed
        // Enter just before this is drawn, the editor is no longer there to draw the line.
        screen.forget_width();
        let (replay, _) = replay(screen.looks(), entries, width);
        let mut shown = replay.take_buffer();
        // The editor ends the last line itself before it draws the prompt.
        if shown.last() == Some(&b'\n') {
            shown.pop();
        }
        let height = crate::term::rows(libc::STDOUT_FILENO).unwrap_or(24);
        let bytes = super::tape::screenful(&shown, width, height.saturating_sub(1));
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The answer's text through the display, status lines held past a code block.
    fn put_text(&mut self, bytes: &[u8]) {
        self.settle_paid();
        let was_in_code = self.display.in_code_block();
        let out = self.display.push(bytes, self.screen.out_width());
        // The newlines of a block that was open are its own: status lines wait past it.
        self.screen.in_code_block(was_in_code);
        self.show(out);
        self.screen.in_code_block(self.display.in_code_block());
    }

    fn flush_display(&mut self) {
        let out = self.display.release(self.screen.out_width());
        self.show(out);
    }
}

/// `entries` replayed through the REPL's UI into a buffer `width` columns wide: the screen that
/// holds what was written and where it ended, and the UI of the last answer (whose renderer an
/// answer under way goes on with).
fn replay(looks: Looks, entries: Vec<Entry>, width: usize) -> (Arc<Screen>, Option<TermUi>) {
    let replay = Screen::replay(looks, width);
    let mut chrome = TermUi::new(replay.clone());
    let mut answer: Option<TermUi> = None;
    for entry in entries {
        if let Entry::AnswerStart { raw } = entry {
            answer = Some(TermUi::answer(replay.clone(), raw));
            continue;
        }
        let ui = answer.as_mut().unwrap_or(&mut chrome);
        match entry {
            Entry::AnswerStart { .. } => {}
            Entry::Text(bytes) => ui.put_text(&bytes),
            Entry::Flush => ui.flush_display(),
            Entry::EndOpenLine => ui.end_open_line(),
            Entry::EndRow => ui.end_row(),
            Entry::EndRender => ui.end_render(),
            Entry::Status { text, fine } => ui.status_lines(&text, fine),
            Entry::SideOutput(text) => ui.side_output.hold(&text),
            Entry::EndAnswer => ui.end_answer(),
            Entry::Line { text, tone } => ui.line_err(&text, tone),
            Entry::Print { text, tone } => ui.print_in(&text, tone),
            Entry::PrintStyled(text) => ui.print_styled(&text),
            Entry::Typed { prompt, line } => {
                replay.raw_line(format!("{prompt}{line}\n").as_bytes())
            }
            Entry::Asked(text) => replay.raw_line(text.as_bytes()),
        }
    }
    (replay, answer)
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

/// `text` wrapped at words to `width`, each row painted in `tone`.
fn painted_rows(text: &str, width: usize, tone: Tone, color: bool) -> String {
    let wrapped = crate::render::wrap_text(text, width);
    let rows: Vec<String> = wrapped.lines().map(|r| paint(r, tone, color)).collect();
    rows.join("\n")
}

/// `text` (a report or a notice, which quote model text) sanitized, each line marked `· ` and
/// wrapped at words to `width`, its rows after the first indented under its text; dim, and
/// problems (blocked, failed, stopped) also in the warning colour so they stand out.
fn status_lines(text: &str, fine: bool, color: bool, width: usize) -> Vec<String> {
    let marked: Vec<String> = (sanitize(text).lines())
        .map(|line| format!("· {}", line.trim_start()))
        .collect();
    let tone = if fine { Tone::Dim } else { Tone::DimWarn };
    let rows = painted_rows(&marked.join("\n"), width, tone, color);
    rows.lines().map(str::to_string).collect()
}

impl Ui for TermUi {
    /// After a resize, the screen is laid out again at the new width first (see
    /// [`super::tape`]).
    fn text(&mut self, bytes: &[u8]) {
        self.redraw_if_resized();
        self.screen.record(Entry::Text(bytes.to_vec()));
        self.put_text(bytes);
    }

    /// Reports quote directive bodies and reasons: sanitized before painting.
    fn report(&mut self, report: &Report) {
        let fine = matches!(report.kind, ReportKind::Ran | ReportKind::Wrote);
        self.status_lines(&report.to_string(), fine);
    }

    /// Notices quote directives and a server's reasons: sanitized before painting. Each says
    /// the turn did not go as asked (a retry, a capture not run, a turn cut short), so each
    /// stands out in the warning tone.
    fn notice(&mut self, notice: &Notice) {
        self.status_lines(&crate::advice::cli::notice(notice), false);
    }

    /// Shown inert under the report that follows it (the side effect's status line), which
    /// then says what it is, so it cannot pass for the answer; off a terminal one-shot `chat`
    /// writes it byte for byte, as the filter does.
    fn side_output(&mut self, output: &[u8]) {
        if self.screen.is_plain() && !self.looks().stderr_tty {
            self.end_open_line();
            return self.screen.status_raw(output);
        }
        let text = sanitize_bytes(output);
        self.side_output.hold(&text);
        self.screen.record(Entry::SideOutput(text));
    }

    fn flush(&mut self) {
        self.screen.record(Entry::Flush);
        self.flush_display();
    }

    fn busy(&mut self, what: Option<Busy<'_>>) {
        if matches!(what, Some(Busy::Running(_))) {
            // A capture or tool runs where the text stopped (and may ask): the row ends here,
            // so its status line shows at this point rather than mid-sentence at the end of
            // the row the continuation fills.
            self.screen.record(Entry::EndRow);
            self.end_row();
        } else if what.is_some() && !self.screen.is_plain() {
            // The line that ended in the answer ends on screen too.
            self.screen.record(Entry::EndOpenLine);
            self.end_open_line();
        }
        // One line: a directive's body may hold a newline (in quotes), which would move the
        // cursor and leave the label's tail drawn below the answer.
        let label = what.map(|b| crate::command::escape_controls(&b.to_string()));
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
    fn notices_are_shown_inert_in_the_warning_tone() {
        // A provider's reason is not escaped by the notice: the REPL makes it inert.
        let retry = Notice::Retrying {
            reason: "overloaded \x1b]2;pwned\x07\nsecond".into(),
            delay: std::time::Duration::from_secs(1),
            attempt: 1,
            max_attempts: 3,
        };
        let lines = status_lines(&retry.to_string(), false, false, 80);
        assert_eq!(
            lines,
            [
                "· overloaded ␛]2;pwned␇",
                "· second; retrying in 1.0 s (1/3)"
            ]
        );
        let stopped = Notice::stopped_repeating(b"!{echo \x1b[2J}");
        let lines = status_lines(&stopped.to_string(), false, true, 80);
        assert_eq!(lines.len(), 1);
        // Only the paint's own escapes: the model's is shown as text.
        assert!(lines[0].contains("!{echo ␛[2J}"), "{lines:?}");
        assert!(!lines[0].contains("\x1b[2J"), "{lines:?}");
        assert_eq!(
            lines[0],
            paint(&format!("· {stopped}"), Tone::DimWarn, true)
        );
        // Control: a report that went fine is dim, not in the warning colour.
        let ran = status_lines("ran %{say hi}", true, true, 80);
        assert_eq!(ran, [paint("· ran %{say hi}", Tone::Dim, true)]);
    }
}
