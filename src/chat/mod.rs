//! The chat loop (DESIGN §7): stream tokens through the scanner, show text at once, queue side
//! effects, and for a capture stop the stream, run it, give the result back to the model and
//! show its continuation seamlessly.
//!
//! The loop talks to the screen only through [`Ui`], so one-shot mode, the REPL and tests share it.
//! It acts only on the directives the session announced ([`crate::Announced`]), and asks every
//! coaching question of one hook ([`Coaching`]): it reads no English itself.
//!
//! Here: the public face (the [`Ui`] seam, the options, the [`Session`] and its state); a turn's
//! steps are in `turn`, one streamed answer in `stream`, native tool calls in `tool_call`.

mod hook;
mod lines;
pub(crate) mod notice;
pub(crate) mod result;
mod stream;
mod tool_call;
pub(crate) mod tools;
mod turn;

use crate::dispatch::Dispatcher;
use crate::model::{ChatRequest, Message, Provider, ToolDef};
use crate::pipeline::Report;
use crate::scan::{Announced, ScanOptions};
pub use hook::{Coaching, Uncoached};
pub use notice::{Busy, Notice};
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
    /// What each function name runs: the offered ones, and the scripts of a skill whose
    /// allowed-tools forbid them (never offered: called anyway, the dispatcher refuses them
    /// saying so).
    tool_map: tools::ToolMap,
    /// When tools are offered by skill (see [`Session::offer_tools_of`]): the skills whose
    /// tools go with each request; a skill the model loads joins them. `None`: every tool.
    offered: Option<Vec<String>>,
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
        let (tool_defs, mut tool_map) = if opts.tools {
            tools::tool_defs(dispatcher.skills())
        } else {
            Default::default()
        };
        for (name, target) in tools::locked_targets(dispatcher.skills()) {
            tool_map.entry(name).or_insert(target);
        }
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
            offered: None,
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
        self.offered = Some(skills.to_vec());
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

    /// The tool definitions that go with the next request.
    fn offered_tools(&self) -> Vec<ToolDef> {
        let Some(skills) = &self.offered else {
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

    /// A skill the model loaded (`load_skill`, `!{skill NAME}`): its tools go with the
    /// following requests.
    fn offer_skill(&mut self, skill: String) {
        if let Some(skills) = &mut self.offered
            && !skills.contains(&skill)
        {
            skills.push(skill);
        }
    }
}
