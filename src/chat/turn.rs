//! One turn: the user's message, the answers it takes (each capture and tool call answered in
//! turn), and the end that never leaves a turn silent.

use super::stream::{Step, side_channel};
use super::{Busy, Notice};
use super::{Session, TurnReport, Ui, lines, result, tools};
use crate::audit::Decision;
use crate::dispatch::{Origin, Outcome};
use crate::model::{Message, ModelError, ToolCall};
use crate::pipeline::{CaptureMode, Driver, DriverOptions, Event};
use crate::scan::Directive;
use std::ops::ControlFlow;

impl Session {
    /// What makes two captures the same command: the words as parsed (spacing and quoting
    /// aside), with a skill script named by what it resolves to (`calc/scripts/calc.py` is
    /// `scripts/calc.py` of `calc`), and no side effect or tool call between them (after one
    /// the same command may answer otherwise). A body that does not parse is its own key.
    fn capture_key(&self, body: &str) -> String {
        let changes = self.changes;
        let Ok(argv) = crate::command::parse_argv(body) else {
            return format!("{changes}\0{}", body.trim());
        };
        let argv = self.dispatcher.skills().canonical(&argv);
        format!("{changes}\0{}", argv.join("\0"))
    }

    /// One user message and the whole answer, captures and tool calls included. Runs inside a
    /// tokio runtime (the side effects run on it); the future is `Send`, so a server may spawn
    /// one per request.
    pub async fn turn(&mut self, user: &str, ui: &mut dyn Ui) -> Result<TurnReport, ModelError> {
        self.turn_start = Some(self.history.len());
        self.history.push(Message::user(user));
        self.transcript.push(("user".into(), user.to_string()));
        self.partial_raw.clear();
        self.partial_shown.clear();
        self.continuing = false;
        self.lines = lines::DirectiveLines::default();
        // One pipeline for the whole turn: side effects run in order on its worker (dropping the
        // turn, Ctrl-C, stops it); captures are handed back here to stop the model's stream.
        let pipeline = DriverOptions {
            scan: self.opts.scan,
            captures: CaptureMode::HandBack,
            max_captures: Some(self.max_captures()),
            announced: self.announced,
            keep_refused: false,
            max_side_effects: Some(self.dispatcher.policy().max_side_effects_per_turn),
        };
        let rt = tokio::runtime::Handle::current();
        let mut driver = Driver::new(self.dispatcher.clone(), pipeline, &rt, None);
        let mut report = TurnReport::default();
        let mut captures = Captures::default();
        let result = loop {
            ui.busy(Some(Busy::Thinking));
            let stream = self.provider.stream(self.request());
            let step = self
                .stream_answer(stream, ui, &mut report, &mut driver)
                .await;
            let step = match step {
                Ok(step) => step,
                Err(e) => {
                    // Nothing came back: forget the question so a retry does not repeat it.
                    if self.history.last() == Some(&Message::user(user)) {
                        self.history.pop();
                    }
                    break Err(e);
                }
            };
            let flow = match step {
                Step::CallAsText { open_line } => {
                    // The server took the tools but the model wrote its call as text: it will
                    // not call them. Say so once, and ask again with directives only.
                    ui.notice(&Notice::ToolsIgnored);
                    self.tool_defs.clear();
                    if open_line {
                        self.show(ui, b"\n");
                    }
                    ControlFlow::Continue(())
                }
                Step::Done { raw, tool_calls } if tool_calls.is_empty() => {
                    self.history.push(Message::assistant(raw));
                    ControlFlow::Break(())
                }
                Step::Done { raw, tool_calls } => {
                    self.answer_tool_calls(raw, tool_calls, ui, &mut driver, &mut captures)
                        .await
                }
                Step::Capture { raw, directive } => {
                    let key = self.capture_key(&directive.body);
                    self.answer_capture(raw, directive, key, ui, &mut driver, &mut captures)
                        .await
                }
            };
            // A signal is stopping skillpipe: no further request (it would be billed, and tell
            // the model a killed command did not run).
            if flow.is_break() || crate::exec::interrupted_by().is_some() {
                break Ok(());
            }
        };
        self.end_turn(result, ui, driver, &captures, report).await
    }

    /// A step of `turn`: an answer's native tool calls, each answered; breaks when the turn
    /// must end (the capture bound reached).
    async fn answer_tool_calls(
        &mut self,
        raw: String,
        tool_calls: Vec<ToolCall>,
        ui: &mut dyn Ui,
        driver: &mut Driver,
        captures: &mut Captures,
    ) -> ControlFlow<()> {
        let show_side = self.opts.show_side_effects;
        self.history.push(Message::Assistant {
            content: raw,
            tool_calls: tool_calls.clone(),
        });
        // Every call gets its tool message (the API requires one per call), but
        // only max_captures_per_turn of them run, however many one answer holds.
        driver
            .settle(&mut |ev: Event<'_>| side_channel(show_side, ui, ev))
            .await;
        let mut limited = false;
        for call in tool_calls {
            let ((content, is_error), ran) = if let Some(why) = driver.limit_reached() {
                // Audited, not reported one by one: the notice below says it.
                limited = true;
                let argv = std::slice::from_ref(&call.name);
                driver.refuse(Origin::Tool, argv, Decision::Denied, why.clone());
                ((tools::error_json(&why), true), None)
            } else {
                driver.count_capture();
                self.changes += 1;
                self.run_tool(&call, ui, driver).await
            };
            self.history
                .push(Message::tool_result(call.id.clone(), content, is_error));
            if let Some(outcome) = ran {
                // As a capture's: the turn never ends without its result.
                captures.last = Some(outcome);
                captures.last_body = Some(format!("tool {}", call.name));
                captures.shown_at = self.partial_shown.len();
            }
        }
        if limited {
            ui.notice(&Notice::StoppedToolCalls {
                max: self.max_captures(),
            });
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// A step of `turn`: a capture the answer stopped at, run (or answered with its earlier
    /// result) and its result given to the model; breaks when the model keeps repeating it.
    async fn answer_capture(
        &mut self,
        raw: String,
        directive: Directive,
        key: String,
        ui: &mut dyn Ui,
        driver: &mut Driver,
        captures: &mut Captures,
    ) -> ControlFlow<()> {
        let max_bytes = self.dispatcher.policy().max_capture_bytes;
        let message = match captures.seen(&key) {
            Seen::Again(earlier) => {
                // The model did not take the result in: give it again, run nothing.
                ui.notice(&Notice::not_run_again(&directive.raw));
                self.history.push(Message::assistant(raw));
                result::repeated_message(&earlier, max_bytes, &directive.body)
            }
            Seen::TooOften => {
                ui.notice(&Notice::stopped_repeating(&directive.raw));
                // Keep what came before the directive, not the directive itself.
                let written = String::from_utf8_lossy(&directive.raw);
                let before = raw.strip_suffix(&*written).unwrap_or(&raw);
                if !before.trim().is_empty() {
                    self.history.push(Message::assistant(before));
                }
                captures.looped = true;
                return ControlFlow::Break(());
            }
            Seen::New => {
                self.history.push(Message::assistant(raw));
                // Program order: the capture sees every earlier side effect's result.
                let show_side = self.opts.show_side_effects;
                let sink = &mut |ev: Event<'_>| side_channel(show_side, ui, ev);
                let outcome = driver.run_capture(&directive, sink).await;
                ui.busy(None);
                if outcome.succeeded()
                    && let Some(skill) = tools::skill_loaded_by(&directive.body)
                {
                    self.offer_skill(skill);
                }
                let msg = result::capture_message(&outcome, max_bytes, &directive.body);
                captures.ran(key, directive.body.clone(), outcome);
                msg
            }
        };
        captures.shown_at = self.partial_shown.len();
        self.history.push(Message::user(message));
        self.continuing = true;
        ControlFlow::Continue(())
    }

    /// A step of `turn`: what the lines held shown, the turn never left silent, the side effects
    /// settled (their reports come before the prompt) and the report made.
    async fn end_turn(
        &mut self,
        result: Result<(), ModelError>,
        ui: &mut dyn Ui,
        mut driver: Driver,
        captures: &Captures,
        mut report: TurnReport,
    ) -> Result<TurnReport, ModelError> {
        let show_side = self.opts.show_side_effects;
        let max_bytes = self.dispatcher.policy().max_capture_bytes;
        let mut held = Vec::new();
        self.lines.finish(&mut held);
        self.show(ui, &held);
        let mut only_read = false;
        if result.is_ok() {
            only_read = self.never_silent(ui, captures, max_bytes);
        }
        driver
            .settle(&mut |ev: Event<'_>| side_channel(show_side, ui, ev))
            .await;
        report.captures = driver.captures();
        report.problems = driver.problems();
        report.model_silent = only_read
            || result.is_ok()
                && self.history[self.turn_start.unwrap_or(0)..]
                    .iter()
                    .all(|m| match m {
                        Message::Assistant {
                            content,
                            tool_calls,
                        } => content.trim().is_empty() && tool_calls.is_empty(),
                        _ => true,
                    });
        ui.busy(None);
        self.partial_raw.clear();
        report.shown = std::mem::take(&mut self.partial_shown);
        self.transcript
            .push(("assistant".into(), report.shown.clone()));
        result.map(|()| report)
    }

    /// A turn never ends empty: when the model wrote nothing visible after its last capture, or
    /// was stopped for repeating it, the capture's output is shown; when the turn showed nothing
    /// at all (a failed or refused capture, an answer of directives only, no text), a notice
    /// says what happened. The output is kept as the answer; the notice is only shown.
    ///
    /// True when the model only read a skill and wrote nothing after it: no answer.
    fn never_silent(&mut self, ui: &mut dyn Ui, captures: &Captures, max_bytes: usize) -> bool {
        let after = self.partial_shown.get(captures.shown_at..).unwrap_or("");
        let silent_after = captures.looped || after.trim().is_empty();
        // A skill's text is for the model to act on, not an answer: when the model read one
        // and said nothing after it, one line says so instead of showing the whole SKILL.md.
        // A read that was refused (no such skill) falls through to say why.
        let read = matches!(&captures.last, Some(Outcome::Ran(r)) if r.result.success());
        if silent_after
            && read
            && let Some(name) = captures
                .last_body
                .as_deref()
                .and_then(tools::skill_loaded_by)
        {
            ui.notice(&Notice::NoAnswer(result::read_skill_only(&name)));
            return true;
        }
        let output = match &captures.last {
            Some(outcome) if silent_after => result::shown_output(outcome, max_bytes),
            _ => None,
        };
        let Some(output) = output else {
            // A notice, never answer text: not in the history (the model would take it for
            // something to say), nor on stdout (a pipe gets exactly what the model wrote).
            if self.partial_shown.trim().is_empty() {
                ui.notice(&Notice::NoAnswer(result::no_answer(captures.last.as_ref())));
            }
            return false;
        };
        let sep =
            if self.partial_shown.is_empty() || self.partial_shown.ends_with(char::is_whitespace) {
                ""
            } else {
                " "
            };
        let text = format!("{sep}{output}\n");
        self.continuing = false;
        ui.notice(&Notice::ShowedOutput);
        self.show(ui, text.as_bytes());
        match self.history.last_mut() {
            Some(Message::Assistant {
                content,
                tool_calls,
            }) if tool_calls.is_empty() => content.push_str(&text),
            _ => self.history.push(Message::assistant(text)),
        }
        false
    }
}

/// The captures of one turn: each body with its outcome, so a repeat is answered, not run.
#[derive(Default)]
struct Captures {
    /// Each capture run: its key, its body as written, what came of it, and repeats so far.
    done: Vec<(String, String, Outcome, u32)>,
    /// The latest result given to the model, and how much had been shown when it was given.
    last: Option<Outcome>,
    /// The body of the directive that [`Captures::last`] answers.
    last_body: Option<String>,
    shown_at: usize,
    /// The turn was stopped because the model kept writing the same capture.
    looped: bool,
}

enum Seen {
    New,
    /// Written again once: answer with the earlier result.
    Again(Box<Outcome>),
    /// Written again after that: stop the turn.
    TooOften,
}

impl Captures {
    /// Whether a capture with this [`Session::capture_key`] ran before in this turn.
    fn seen(&mut self, key: &str) -> Seen {
        match self.done.iter_mut().find(|(k, _, _, _)| k == key) {
            None => Seen::New,
            Some((_, body, outcome, repeats)) if *repeats == 0 => {
                *repeats += 1;
                self.last = Some(outcome.clone());
                self.last_body = Some(body.clone());
                Seen::Again(Box::new(outcome.clone()))
            }
            Some(_) => Seen::TooOften,
        }
    }

    fn ran(&mut self, key: String, body: String, outcome: Outcome) {
        self.last = Some(outcome.clone());
        self.last_body = Some(body.clone());
        self.done.push((key, body, outcome, 0));
    }
}
