//! Coaching for models that need it (DESIGN §7), off unless the user turns it on (`coach =
//! "small-model"` in the config, a provider entry or an agent file; `--coach small-model`), or
//! some of its pieces ([`Piece`]). Nothing here is guessed from the endpoint or the model's name.
//!
//! The chat loop reaches this module only through its hook ([`crate::chat::Coaching`]): the
//! worked exchanges sent before the conversation, the copy guard, asking a turn again without
//! the exchanges, the lead-ins the exchanges teach, a user's "do not run it", and native tool
//! calls that copy an example.

pub mod copies;
mod mode;

pub use mode::{CoachMode, Piece};

use crate::chat::{CallRefusal, Coaching};
use crate::model::Message;
use crate::pipeline::{Admit, Gate, GateAt};
use crate::scan::{Directive, Kind};
use crate::skills::SkillSet;
use std::sync::Arc;

/// The small-model coach: the worked exchanges (the few-shot of [`crate::agents::few_shot`]),
/// and the guards against what a small model does with them; each only where its piece is on.
#[derive(Debug, Default, Clone)]
pub struct SmallModel {
    mode: CoachMode,
    few_shot: Vec<Message>,
    /// The directives of `few_shot`: one written again with values nobody in the conversation
    /// wrote is a copy, not a request.
    examples: copies::Examples,
}

impl SmallModel {
    /// A coach of `mode`'s pieces; with [`Piece::Examples`] it sends `few_shot` (user/assistant
    /// messages) before the conversation.
    pub fn new(mode: CoachMode, few_shot: Vec<Message>) -> SmallModel {
        let few_shot = match mode.has(Piece::Examples) {
            true => few_shot,
            false => Vec::new(),
        };
        SmallModel {
            mode,
            examples: copies::Examples::from_messages(&few_shot),
            few_shot,
        }
    }

    /// Whether the user said to run nothing in this turn (and why), where that piece is on.
    fn nothing_to_run(&self, user: &str, args: &str) -> Option<&'static str> {
        nothing_to_run(self.mode, user, args)
    }
}

/// Whether the user said to run nothing in this turn (and why), where that piece is on.
fn nothing_to_run(mode: CoachMode, user: &str, args: &str) -> Option<&'static str> {
    (mode.has(Piece::DoNotRun))
        .then(|| copies::nothing_to_run(user, args))
        .flatten()
}

impl Coaching for SmallModel {
    fn prefix(&self) -> &[Message] {
        &self.few_shot
    }

    /// Nothing runs that the user did not ask for: in a turn that asks for nothing to run (or
    /// is about directives themselves) every directive is refused where it is found; a copied
    /// example is judged for a side effect where it is found, for a capture when it would run,
    /// so that the model is told why and a repeat meets the loop guard.
    fn gate(&self, user: &str, asked: &str, skills: &Arc<SkillSet>) -> Option<Gate> {
        if !self.mode.has(Piece::DoNotRun) && !self.mode.has(Piece::CopyGuard) {
            return None;
        }
        let (mode, examples) = (self.mode, self.examples.clone());
        let (user, asked, skills) = (user.to_string(), asked.to_string(), skills.clone());
        Some(Box::new(move |d, at| {
            if let Some(why) = nothing_to_run(mode, &user, &copies::args_of(d, &skills)) {
                return Admit::Refuse(why.into());
            }
            if d.kind == Kind::Capture && at == GateAt::Found || !mode.has(Piece::CopyGuard) {
                return Admit::Run;
            }
            match examples.is_copy(d, &asked, &skills) {
                true => Admit::Refuse(copies::COPIED.into()),
                false => Admit::Run,
            }
        }))
    }

    /// In a turn that asked for nothing to run, the directive is what the user wanted to see:
    /// shown where it was written, as code.
    fn shown_refused(&self, user: &str, d: &Directive, skills: &SkillSet) -> Option<String> {
        self.nothing_to_run(user, &copies::args_of(d, skills))
            .map(|_| copies::as_code(&String::from_utf8_lossy(&d.raw)))
    }

    fn refuse_call_early(&self, user: &str, args: &str) -> Option<CallRefusal> {
        self.nothing_to_run(user, args).map(|why| CallRefusal {
            reason: why.into(),
            told: why.into(),
        })
    }

    fn refuse_call(&self, argv: &[String], asked: &str, skills: &SkillSet) -> Option<CallRefusal> {
        let why = copies::COPIED;
        (self.mode.has(Piece::CopyGuard) && self.examples.is_copied_call(argv, asked, skills))
            .then(|| CallRefusal {
                reason: why.into(),
                // As a refused directive's message: what to do instead.
                told: format!(
                    "{why}; answer the user's question yourself, or call it with the user's own values"
                ),
            })
    }

    fn ask_again_on(&self, why: &str) -> bool {
        self.mode.has(Piece::AskAgain) && why == copies::COPIED
    }

    fn lead_ins(&self) -> bool {
        self.mode.has(Piece::LeadIns)
    }
}
