//! One model answer streamed through the pipeline: text shown as it comes, a capture handed
//! back to stop the stream, the stream's other events taken in.

use super::{Busy, Notice, Session, TurnReport, Ui};
use crate::model::{EventStream, Message, ModelError, StreamEvent, ToolCall};
use crate::pipeline::{Driver, Event, Flow};
use crate::scan::Directive;
use futures::StreamExt;

impl Session {
    /// Streams one model answer until it ends or reaches a capture that should run.
    pub(super) async fn stream_answer(
        &mut self,
        mut stream: EventStream,
        ui: &mut dyn Ui,
        report: &mut TurnReport,
        driver: &mut Driver,
    ) -> Result<Step, ModelError> {
        driver.restart();
        let show_side = self.opts.show_side_effects;
        // Raw text of this answer (what the history keeps when the stream breaks off).
        let mut raw = String::new();
        let mut tool_calls: Vec<ToolCall> = Vec::new();
        let mut first = true;
        // A tool call the model writes as text (no structured call came back) is not shown:
        // the question is asked again, with directives (a fact of the server, for any model).
        let mut hold = crate::model::call_hold::CallHold::new(self.tool_names());
        let shown_at = self.partial_shown.len();
        loop {
            // A stream must end with `Finished`: without it, the answer may be cut.
            let end = StreamEvent::Finished { reason: None };
            let side = &mut |ev: Event<'_>| side_channel(show_side, ui, ev);
            let item = driver.meanwhile(stream.next(), side).await;
            let item = item.unwrap_or(Ok(end));
            driver.finished(side);
            // The raw text this item let the pipeline get through, and the capture it stopped at.
            let mut consumed = String::new();
            let mut capture = None;
            let (finished, end_notice) = match item {
                Ok(StreamEvent::Text(t)) => {
                    raw.push_str(&t);
                    let t = hold.push(&t);
                    if !t.is_empty() {
                        if first {
                            ui.busy(None);
                            first = false;
                        }
                        let sink =
                            &mut |ev: Event<'_>| self.on_event(ui, ev, &mut consumed, &mut capture);
                        driver.feed(t.as_bytes(), sink).await;
                    }
                    (false, None)
                }
                Ok(ev) => take_event(ev, ui, report, &raw, &mut tool_calls),
                Err(e) => {
                    // Keep and show what arrived; the caller reports the error.
                    let held = hold.finish();
                    let sink =
                        &mut |ev: Event<'_>| self.on_event(ui, ev, &mut consumed, &mut capture);
                    driver.feed(held.as_bytes(), sink).await;
                    driver.abandon(sink);
                    if !raw.is_empty() {
                        self.history.push(Message::assistant(raw));
                    }
                    return Err(e);
                }
            };
            let mut call_as_text = false;
            if finished {
                // An empty first answer to a request with tools is a call the server lost.
                let opening = self.turn_start.is_some_and(|s| self.history.len() == s + 1);
                call_as_text = tool_calls.is_empty()
                    && !self.tool_defs.is_empty()
                    && (crate::model::text_call::looks_like_tool_call(&raw, &self.tool_names())
                        || (opening && raw.trim().is_empty()));
                let held = hold.finish();
                if first && !held.is_empty() && !call_as_text {
                    ui.busy(None);
                }
                let sink = &mut |ev: Event<'_>| self.on_event(ui, ev, &mut consumed, &mut capture);
                if !call_as_text {
                    driver.feed(held.as_bytes(), sink).await;
                }
                driver.finish(sink).await;
            }
            if let Some(directive) = capture {
                // Stop here: the model continues once it has the result.
                drop(stream);
                let mut so_far = std::mem::take(&mut self.partial_raw);
                so_far.push_str(&consumed);
                return Ok(Step::Capture {
                    raw: so_far,
                    directive,
                });
            }
            self.partial_raw.push_str(&consumed);
            if finished {
                if let Some(notice) = end_notice {
                    ui.notice(&notice);
                }
                let raw = std::mem::take(&mut self.partial_raw);
                if call_as_text {
                    let open_line =
                        self.partial_shown.len() > shown_at && !self.partial_shown.ends_with('\n');
                    return Ok(Step::CallAsText { open_line });
                }
                return Ok(Step::Done { raw, tool_calls });
            }
        }
    }

    /// The chat's side of the pipeline: text is shown and kept raw for the history, as is a
    /// directive; a capture is kept to run once the stream has stopped.
    fn on_event(
        &mut self,
        ui: &mut dyn Ui,
        ev: Event<'_>,
        consumed: &mut String,
        capture: &mut Option<Directive>,
    ) -> Flow {
        match ev {
            Event::Text(t) => {
                consumed.push_str(&String::from_utf8_lossy(t));
                let mut shown = Vec::with_capacity(t.len());
                self.lines.text(t, &mut shown);
                self.show(ui, &shown);
            }
            Event::Directive(d) => {
                consumed.push_str(&String::from_utf8_lossy(&d.raw));
                if d.kind == crate::scan::Kind::SideEffect {
                    self.changes += 1;
                }
                self.lines.directive();
                // A side effect is queued: its confirmation may be drawn at once.
                ui.flush();
            }
            Event::Capture(d) => *capture = Some(d),
            ev => return side_channel(self.opts.show_side_effects, ui, ev),
        }
        Flow::Continue(())
    }

    /// Shows processed text; after a capture, without the space that would double the one shown.
    pub(super) fn show(&mut self, ui: &mut dyn Ui, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.continuing {
            // Nothing shown yet (a lead-in went with its directive) counts as a line's start.
            if self.partial_shown.is_empty() || self.partial_shown.ends_with([' ', '\n']) {
                while let [b' ', rest @ ..] = bytes {
                    bytes = rest;
                }
            }
            if bytes.is_empty() {
                return;
            }
            self.continuing = false;
        }
        self.partial_shown.push_str(&String::from_utf8_lossy(bytes));
        ui.text(bytes);
    }
}

/// Where an answer stream stopped.
pub(super) enum Step {
    Done {
        raw: String,
        tool_calls: Vec<ToolCall>,
    },
    Capture {
        raw: String,
        directive: Directive,
    },
    /// The answer was a tool call written as text (not kept; not shown, but for text before
    /// it); `open_line`: that text left a line open.
    CallAsText {
        open_line: bool,
    },
}

/// A step of `Session::stream_answer`: a stream event other than text taken in (counted, kept
/// or said); true, with what to say once the text is shown, when the answer is complete.
fn take_event(
    event: StreamEvent,
    ui: &mut dyn Ui,
    report: &mut TurnReport,
    raw: &str,
    tool_calls: &mut Vec<ToolCall>,
) -> (bool, Option<Notice>) {
    match event {
        StreamEvent::Text(_) => unreachable!("text goes through the pipeline"),
        StreamEvent::ToolCall(c) => tool_calls.push(c),
        StreamEvent::Usage {
            prompt_tokens,
            completion_tokens,
        } => {
            report.prompt_tokens += prompt_tokens;
            report.completion_tokens += completion_tokens;
        }
        StreamEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } => ui.notice(&Notice::Retrying {
            reason,
            delay,
            attempt,
            max_attempts,
        }),
        StreamEvent::Adapted(change) => ui.notice(&Notice::Adapted(change)),
        StreamEvent::Finished { reason } => {
            // Said once the answer's text is all shown.
            let end_notice = match reason.as_deref() {
                Some("length" | "max_tokens") => Some(Notice::CutAtTokenLimit),
                None if !raw.is_empty() || !tool_calls.is_empty() => Some(Notice::NoFinishReason),
                _ => None,
            };
            return (true, end_notice);
        }
    }
    (false, None)
}

/// Reports, side-effect output (`--show-side-effects`: stdout then stderr) and "running" notes
/// go to the [`Ui`]'s side channel.
pub(super) fn side_channel(show_side: bool, ui: &mut dyn Ui, ev: Event<'_>) -> Flow {
    match ev {
        Event::Report(r) => ui.report(&r),
        Event::Running(d) => {
            ui.flush();
            ui.busy(Some(Busy::Running(&d.body)))
        }
        Event::Output { stdout, stderr }
            if show_side && !(stdout.is_empty() && stderr.is_empty()) =>
        {
            ui.side_output(&[stdout, stderr].concat())
        }
        _ => {}
    }
    Flow::Continue(())
}
