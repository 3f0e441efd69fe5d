//! The chat loop (DESIGN §7): stream tokens through the scanner, show text at once, queue side
//! effects, and for a capture stop the stream, run it, give the result back to the model and
//! show its continuation seamlessly.
//!
//! The loop talks to the screen only through [`Ui`], so one-shot mode, the REPL and tests share it.
//! It acts only on the directives the session announced ([`crate::Announced`]), and asks every
//! coaching question of one hook ([`Coaching`]): it reads no English itself.

mod hook;
mod lines;
pub(crate) mod notice;
pub(crate) mod result;
pub(crate) mod tools;

use crate::audit::Decision;
use crate::dispatch::{Dispatcher, Origin, Outcome};
use crate::model::{
    ChatRequest, EventStream, Message, ModelError, Provider, StreamEvent, ToolCall, ToolDef,
};
use crate::pipeline::{CaptureMode, Driver, DriverOptions, Event, Flow, Report};
use crate::scan::{Announced, Directive, ScanOptions};
use futures::StreamExt;
pub use hook::{Coaching, Uncoached};
pub use notice::{Busy, Notice};
use std::ops::ControlFlow;
use std::sync::Arc;

/// Where the loop shows things. Text is the processed answer; everything else is a side channel,
/// typed ([`Report`], [`Notice`], [`Busy`]) so a front end picks its looks from the variant.
/// Model text reaches the side channel unsanitized: make it inert before a terminal sees it
/// ([`crate::term::sanitize`]).
///
/// ```
/// use skillpipe::{Busy, Notice, Report, Ui};
///
/// /// Answer text to stdout, everything else to stderr.
/// struct Plain;
///
/// impl Ui for Plain {
///     fn text(&mut self, bytes: &[u8]) {
///         print!("{}", String::from_utf8_lossy(bytes));
///     }
///     fn report(&mut self, report: &Report) {
///         eprintln!("{report}");
///     }
///     fn notice(&mut self, notice: &Notice) {
///         match notice {
///             Notice::Retrying { .. } => eprintln!("(waiting) {notice}"),
///             _ => eprintln!("{notice}"),
///         }
///     }
///     fn busy(&mut self, _what: Option<Busy<'_>>) {}
/// }
/// ```
pub trait Ui: Send {
    /// A piece of the processed answer (may split a UTF-8 character).
    fn text(&mut self, bytes: &[u8]);
    /// How a directive or tool call ended (typed: pick colours from [`Report::kind`]).
    fn report(&mut self, report: &Report);
    /// A note about the stream or the turn: retrying, a capture not run again, stopped early.
    fn notice(&mut self, notice: &Notice);
    /// What a side effect wrote (`--show-side-effects`): its stdout then its stderr, as the
    /// bytes came. Foreign: make it inert (`term::sanitize`) before it reaches a terminal; a pipe
    /// or file may get it exact. Ignored unless implemented.
    fn side_output(&mut self, _output: &[u8]) {}
    /// Something is pending: [`Busy::Thinking`] until the first token, [`Busy::Running`] while
    /// a script runs, `None` when output flows again.
    fn busy(&mut self, what: Option<Busy<'_>>);
    /// A directive is about to run and may ask the user first: the text so far must be on
    /// screen as it stands (a renderer holding back a word or an unclosed marker shows it now),
    /// so a prompt never hides what led to it. Ignored unless implemented.
    fn flush(&mut self) {}
}

/// How a [`Session`] talks to the model and runs directives.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChatOptions {
    /// Scanner limits and whether Markdown code counts.
    pub scan: ScanOptions,
    /// Lowers the policy's `max_captures_per_turn` (the bound on capture round-trips and tool
    /// calls per user message) for this session; `None`: the policy's bound. The policy is
    /// the one source of the bound: a larger value here has no effect.
    pub max_captures: Option<usize>,
    /// Offer skill scripts as native tools.
    pub tools: bool,
    /// Stream the answer (false: one request for the whole answer).
    pub stream: bool,
    /// The model name sent with each request.
    pub model: String,
    /// Extra request fields (temperature, max_tokens, …).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The names in `params` the user set explicitly: never dropped after a refusal.
    pub explicit_params: Vec<String>,
    /// Show what side effects write (`--show-side-effects`).
    pub show_side_effects: bool,
}

impl ChatOptions {
    /// The defaults, with `model` as the model name sent with each request.
    pub fn new(model: impl Into<String>) -> ChatOptions {
        ChatOptions {
            model: model.into(),
            ..ChatOptions::default()
        }
    }
}

impl Default for ChatOptions {
    /// Streaming, no native tools, the policy's capture bound, the provider's model.
    fn default() -> Self {
        ChatOptions {
            scan: ScanOptions::default(),
            max_captures: None,
            tools: false,
            stream: true,
            model: String::new(),
            params: Default::default(),
            explicit_params: Vec::new(),
            show_side_effects: false,
        }
    }
}

/// How one turn went.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct TurnReport {
    /// Prompt tokens the provider reported.
    pub prompt_tokens: u64,
    /// Completion tokens the provider reported.
    pub completion_tokens: u64,
    /// Captures and tool calls run this turn.
    pub captures: usize,
    /// A directive was blocked, invalid or failed.
    pub problems: bool,
    /// The processed text shown for this turn.
    pub shown: String,
    /// The model gave no answer this turn: it sent nothing at all (no text, no directive, no
    /// tool call: an endpoint that answers empty), or only read a skill's instructions and
    /// wrote nothing after them. A one-shot caller treats it as a failed request.
    pub model_silent: bool,
}

/// A conversation: history (with the model's raw text), the provider, and the dispatcher.
///
/// ```
/// use futures::stream;
/// use skillpipe::{
///     Announced, Busy, ChatOptions, ChatRequest, Dispatcher, EventStream, Notice, Provider,
///     Report, ScriptPolicy, Session, StreamEvent, Ui,
/// };
/// use std::sync::Arc;
///
/// /// A model that always says the same.
/// struct Canned;
/// impl Provider for Canned {
///     fn stream(&self, _req: ChatRequest) -> EventStream {
///         let tokens = ["Hello ", "%{say hi}", "there."];
///         Box::pin(stream::iter(tokens.map(|t| Ok(StreamEvent::Text(t.into())))))
///     }
/// }
///
/// #[derive(Default)]
/// struct Collect(String, Vec<Report>);
/// impl Ui for Collect {
///     fn text(&mut self, bytes: &[u8]) {
///         self.0.push_str(&String::from_utf8_lossy(bytes));
///     }
///     fn report(&mut self, report: &Report) {
///         self.1.push(report.clone());
///     }
///     fn notice(&mut self, _notice: &Notice) {}
///     fn busy(&mut self, _what: Option<Busy<'_>>) {}
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Scripts are off (the default policy) and no skill is loaded: the model was told of no
/// // directive, so `%{say hi}` is text, kept as written.
/// let dispatcher = Arc::new(Dispatcher::builder(ScriptPolicy::default()).build()?);
/// let mut session = Session::new(Box::new(Canned), dispatcher, None, ChatOptions::new("canned"));
/// assert_eq!(session.announced(), Announced::Nothing);
/// let mut ui = Collect::default();
/// let rt = tokio::runtime::Runtime::new()?;
/// let turn = rt.block_on(session.turn("hi", &mut ui))?;
/// assert_eq!(ui.0, "Hello %{say hi}there.");
/// assert!(ui.1.is_empty() && !turn.problems);
/// # Ok(()) }
/// ```
pub struct Session {
    provider: Box<dyn Provider>,
    dispatcher: Arc<Dispatcher>,
    opts: ChatOptions,
    system: Option<String>,
    /// Everything after the system prompt, as the model sent and received it.
    pub history: Vec<Message>,
    /// (role, processed text) for saved transcripts and /copy.
    pub transcript: Vec<(String, String)>,
    tool_defs: Vec<ToolDef>,
    tool_map: tools::ToolMap,
    /// When tools are offered by skill (see [`Session::offer_tools_of`]): the skills whose
    /// tools go with each request; a skill the model loads joins them. `None`: every tool.
    offered: std::sync::Mutex<Option<Vec<String>>>,
    /// The directives the model may have been told about, from the dispatcher's policy and
    /// skills, fixed for the session: the others are text.
    announced: Announced,
    /// The coaching ([`Uncoached`] unless the user turned coaching on).
    coach: Box<dyn Coaching>,
    /// Where the last turn's question went into the history (its index), for `/retry`; `None`
    /// before a turn and after the history was replaced.
    turn_start: Option<usize>,
    /// Text of the answer in flight, kept so a cancelled turn keeps what was shown.
    partial_raw: String,
    partial_shown: String,
    /// The next text continues after a capture: a space there would double the one shown.
    continuing: bool,
    /// Lines that held only directives are not shown.
    lines: lines::DirectiveLines,
    /// Side effects and tool calls so far: a capture written again after one of them may see
    /// another world, so it is no repeat (see [`Session::capture_key`]).
    changes: u64,
}

impl Session {
    /// A conversation with `provider`, running directives through `dispatcher`, with an
    /// optional system prompt.
    pub fn new(
        provider: Box<dyn Provider>,
        dispatcher: Arc<Dispatcher>,
        system: Option<String>,
        opts: ChatOptions,
    ) -> Session {
        let (tool_defs, tool_map) = if opts.tools {
            tools::tool_defs(dispatcher.skills())
        } else {
            Default::default()
        };
        Session {
            announced: dispatcher.announced(),
            coach: Box::new(Uncoached),
            provider,
            dispatcher,
            opts,
            system,
            history: Vec::new(),
            transcript: Vec::new(),
            tool_defs,
            tool_map,
            offered: std::sync::Mutex::new(None),
            turn_start: None,
            partial_raw: String::new(),
            partial_shown: String::new(),
            continuing: false,
            lines: lines::DirectiveLines::default(),
            changes: 0,
        }
    }

    /// The directives this session acts on (what its system prompt may tell the model about);
    /// any other directive-shaped text of an answer is shown and kept as written.
    pub fn announced(&self) -> Announced {
        self.announced
    }

    /// The options in force.
    pub fn options(&self) -> &ChatOptions {
        &self.opts
    }

    /// Most captures (and tool calls) per user message: the policy's `max_captures_per_turn`,
    /// or the options' lower one.
    pub fn max_captures(&self) -> usize {
        let policy = self.dispatcher.policy().max_captures_per_turn;
        self.opts.max_captures.map_or(policy, |m| m.min(policy))
    }

    /// Use another model from the next request on.
    pub fn set_model(&mut self, model: String) {
        self.opts.model = model;
    }

    /// The system prompt, if any.
    pub fn system_prompt(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// Replaces the system prompt.
    pub fn set_system_prompt(&mut self, system: Option<String>) {
        self.system = system;
    }

    /// Hands the coaching decisions to `coach` (e.g. [`crate::coach::SmallModel`]) from the
    /// next turn on.
    pub fn set_coaching(&mut self, coach: Box<dyn Coaching>) {
        self.coach = coach;
    }

    /// How many worked-example messages go before the conversation in every request.
    pub(crate) fn few_shot_len(&self) -> usize {
        self.coach.prefix().len()
    }

    /// Forgets the conversation (history and transcript).
    pub fn clear(&mut self) {
        self.history.clear();
        self.transcript.clear();
        self.turn_start = None;
    }

    /// The index in [`Session::history`] where the last turn's question went in (a question
    /// whose request failed was taken out again: then the history's length). `None` before the
    /// first turn and after [`Session::restore`] or [`Session::clear`].
    pub fn turn_start(&self) -> Option<usize> {
        self.turn_start
    }

    /// Keeps the partial answer of a turn that was cancelled (Ctrl-C) in the history.
    pub fn cancelled(&mut self) {
        let raw = std::mem::take(&mut self.partial_raw);
        let shown = std::mem::take(&mut self.partial_shown);
        if !raw.is_empty() {
            self.history.push(Message::assistant(raw));
        }
        self.transcript.push(("assistant".into(), shown));
    }

    /// The request of the next turn, as far as it is known: before the first turn, what every
    /// request starts with (system prompt, few-shot examples, tool schemas).
    pub(crate) fn request(&self) -> ChatRequest {
        let mut messages = Vec::with_capacity(self.history.len() + 1);
        if let Some(s) = &self.system {
            messages.push(Message::system(s.clone()));
        }
        messages.extend(self.coach.prefix().iter().cloned());
        messages.extend(self.history.iter().cloned());
        ChatRequest {
            model: self.opts.model.clone(),
            messages,
            params: self.opts.params.clone(),
            tools: self.offered_tools(),
            stream: self.opts.stream,
            explicit: self.opts.explicit_params.clone(),
        }
    }

    /// The names of the functions offered with requests.
    fn tool_names(&self) -> Vec<String> {
        self.tool_defs.iter().map(|d| d.name.clone()).collect()
    }

    /// Offers only the tools of `skills` (and `load_skill`) with each request; a skill the
    /// model loads (`load_skill`, `!{skill NAME}`) adds its own. For many skills, whose tool schemas on every
    /// request would cost more than their catalog entries: the same progressive disclosure as
    /// the system prompt's.
    pub(crate) fn offer_tools_of(&mut self, skills: &[String]) {
        *self.offered.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(skills.to_vec());
    }

    /// Puts a conversation in place of this one's (a saved session resumed, or the one a
    /// rebuilt session carries on): its history and transcript, and the skills the model
    /// loaded in it, whose tools go with the following requests again.
    pub fn restore(&mut self, history: Vec<Message>, transcript: Vec<(String, String)>) {
        for skill in tools::loaded_skills(&history) {
            self.offer_skill(skill);
        }
        self.history = history;
        self.transcript = transcript;
        self.turn_start = None;
    }

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

    /// The tool definitions that go with the next request.
    fn offered_tools(&self) -> Vec<ToolDef> {
        let offered = self.offered.lock().unwrap_or_else(|e| e.into_inner());
        let Some(skills) = offered.as_ref() else {
            return self.tool_defs.clone();
        };
        self.tool_defs
            .iter()
            .filter(|d| {
                d.name == tools::LOAD_SKILL
                    || self
                        .tool_map
                        .get(&d.name)
                        .is_some_and(|t| skills.contains(&t.skill))
            })
            .cloned()
            .collect()
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
            if flow.is_break() {
                break Ok(());
            }
        };
        self.end_turn(result, ui, driver, &captures, report).await
    }

    /// A step of `turn`: an answer's native tool calls, each answered; breaks when the turn
    /// must end (the capture bound reached, or a signal stopping skillpipe).
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
        if crate::exec::interrupted_by().is_some() {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// A step of `turn`: a capture the answer stopped at, run (or answered with its earlier
    /// result) and its result given to the model; breaks when the turn must end.
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
        // A signal is stopping skillpipe: no further request (it would be billed,
        // and tell the model a killed command did not run).
        if crate::exec::interrupted_by().is_some() {
            return ControlFlow::Break(());
        }
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

    /// Streams one model answer until it ends or reaches a capture that should run.
    async fn stream_answer(
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
            let item = stream.next().await.unwrap_or(Ok(end));
            driver.finished(&mut |ev: Event<'_>| side_channel(show_side, ui, ev));
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

    fn show(&mut self, ui: &mut dyn Ui, mut bytes: &[u8]) {
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

    /// Runs one native tool call; returns the tool message's content and whether it is an error,
    /// and the outcome of a command that ran (the turn shows it if the model then says nothing).
    async fn run_tool(
        &self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        driver: &Driver,
    ) -> ((String, bool), Option<Outcome>) {
        if call.name == tools::LOAD_SKILL && !self.tool_defs.is_empty() {
            return (self.load_skill_tool(call, ui, driver).await, None);
        }
        // A script of a skill whose allowed-tools forbid it is not offered; called anyway, it
        // is refused by the dispatcher saying so.
        let locked = match self.tool_map.contains_key(&call.name) {
            true => None,
            false => tools::locked_target(self.dispatcher.skills(), &call.name),
        };
        let Some(target) = self.tool_map.get(&call.name).or(locked.as_ref()) else {
            let why = format!("unknown tool `{}`", call.name);
            return (
                self.invalid_tool_call(call, &call.name, why, ui, driver),
                None,
            );
        };
        let script = &target.reference;
        let (args, input) = match tools::parse_arguments(&call.arguments, target) {
            Ok(v) => v,
            Err(e) => {
                return (self.invalid_tool_call(call, script, e, ui, driver), None);
            }
        };
        let mut argv = vec![script.clone()];
        argv.extend(args);
        ui.busy(Some(Busy::Running(script)));
        let outcome = self.dispatcher.run_argv(Origin::Tool, argv, input).await;
        ui.busy(None);
        self.tool_report(call, &outcome, ui, driver);
        (tools::result_json(&outcome), Some(outcome))
    }
}

impl Session {
    /// A tool call's reports, through the pipeline's one wording (`tool NAME`).
    fn tool_report(&self, call: &ToolCall, outcome: &Outcome, ui: &mut dyn Ui, driver: &Driver) {
        let show_side = self.opts.show_side_effects;
        let what = format!("tool {}", call.name);
        driver.report(what.as_bytes(), outcome, &mut |ev: Event<'_>| {
            side_channel(show_side, ui, ev)
        });
    }

    /// A tool call that cannot become a run (unknown tool, bad arguments): audited as invalid,
    /// reported, and answered to the model as an error.
    fn invalid_tool_call(
        &self,
        call: &ToolCall,
        argv0: &String,
        why: String,
        ui: &mut dyn Ui,
        driver: &Driver,
    ) -> (String, bool) {
        let argv = std::slice::from_ref(argv0);
        let outcome = driver.refuse(Origin::Tool, argv, Decision::Invalid, why.clone());
        self.tool_report(call, &outcome, ui, driver);
        (tools::error_json(&why), true)
    }

    /// The `load_skill` tool: the built-in `skill NAME [FILE]`, through the dispatcher (audited).
    async fn load_skill_tool(
        &self,
        call: &ToolCall,
        ui: &mut dyn Ui,
        driver: &Driver,
    ) -> (String, bool) {
        let argv = match tools::load_skill_argv(&call.arguments) {
            Ok(argv) => argv,
            Err(e) => {
                return self.invalid_tool_call(call, &call.name, e, ui, driver);
            }
        };
        let skill = argv.get(1).cloned();
        let outcome = self.dispatcher.run_argv(Origin::Tool, argv, None).await;
        self.tool_report(call, &outcome, ui, driver);
        if let (true, Some(skill)) = (outcome.succeeded(), skill) {
            self.offer_skill(skill);
        }
        tools::result_json(&outcome)
    }

    /// A skill the model loaded (`load_skill`, `!{skill NAME}`): its tools go with the
    /// following requests.
    fn offer_skill(&self, skill: String) {
        let mut offered = self.offered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(skills) = offered.as_mut()
            && !skills.contains(&skill)
        {
            skills.push(skill);
        }
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

/// Where an answer stream stopped.
enum Step {
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

/// Reports, side-effect output and "running" notes go to the [`Ui`]'s side channel.
fn side_channel(show_side: bool, ui: &mut dyn Ui, ev: Event<'_>) -> Flow {
    match ev {
        Event::Report(r) => ui.report(&r),
        Event::Running(d) => {
            ui.flush();
            ui.busy(Some(Busy::Running(&d.body)))
        }
        Event::Output { stdout, stderr } if show_side => show_side_output(ui, stdout, stderr),
        _ => {}
    }
    Flow::Continue(())
}

/// What a side effect wrote (`--show-side-effects`), stdout then stderr.
fn show_side_output(ui: &mut dyn Ui, stdout: &[u8], stderr: &[u8]) {
    if !stdout.is_empty() || !stderr.is_empty() {
        ui.side_output(&[stdout, stderr].concat());
    }
}
