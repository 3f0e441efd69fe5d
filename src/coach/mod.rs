//! Coaching for models that need it (DESIGN §7), off unless the user turns it on (`coach =
//! "small-model"` in the config, a provider entry or an agent file; `--coach small-model`), or
//! some of its pieces ([`Piece`]). Nothing here is guessed from the endpoint or the model's name.
//!
//! The chat loop reaches this module only through its hook ([`crate::chat::Coaching`]): the
//! worked exchanges sent before the conversation, the lead-ins they teach, and a user's "do not
//! run it".

pub mod do_not_run;
mod mode;

pub use mode::{CoachMode, Piece};

use crate::chat::{CallRefusal, Coaching};
use crate::model::Message;
use crate::pipeline::{Admit, Gate};
use crate::scan::Directive;
use crate::skills::SkillSet;
use std::sync::Arc;

/// The small-model coach: the worked exchanges (the few-shot of [`crate::agents::few_shot`])
/// and what goes with them, each only where its piece is on.
#[derive(Debug, Default, Clone)]
pub struct SmallModel {
    mode: CoachMode,
    few_shot: Vec<Message>,
}

impl SmallModel {
    /// A coach of `mode`'s pieces; with [`Piece::Examples`] it sends `few_shot` (user/assistant
    /// messages) before the conversation.
    pub fn new(mode: CoachMode, few_shot: Vec<Message>) -> SmallModel {
        let few_shot = match mode.has(Piece::Examples) {
            true => few_shot,
            false => Vec::new(),
        };
        SmallModel { mode, few_shot }
    }

    /// Whether the user said to run nothing in this turn (and why), where that piece is on.
    fn nothing_to_run(&self, user: &str, args: &str) -> Option<&'static str> {
        (self.mode.has(Piece::DoNotRun))
            .then(|| do_not_run::nothing_to_run(user, args))
            .flatten()
    }
}

impl Coaching for SmallModel {
    fn prefix(&self) -> &[Message] {
        &self.few_shot
    }

    /// Nothing runs that the user did not ask for: in a turn that asks for nothing to run (or
    /// is about directives themselves) every directive is refused where it is found.
    fn gate(&self, user: &str, skills: &Arc<SkillSet>) -> Option<Gate> {
        if !self.mode.has(Piece::DoNotRun) {
            return None;
        }
        let (user, skills) = (user.to_string(), skills.clone());
        Some(Box::new(move |d, _| {
            match do_not_run::nothing_to_run(&user, &do_not_run::args_of(d, &skills)) {
                Some(why) => Admit::Refuse(why.into()),
                None => Admit::Run,
            }
        }))
    }

    /// In a turn that asked for nothing to run, the directive is what the user wanted to see:
    /// shown where it was written, as code.
    fn shown_refused(&self, user: &str, d: &Directive, skills: &SkillSet) -> Option<String> {
        self.nothing_to_run(user, &do_not_run::args_of(d, skills))
            .map(|_| do_not_run::as_code(&String::from_utf8_lossy(&d.raw)))
    }

    fn refuse_call_early(&self, user: &str, args: &str) -> Option<CallRefusal> {
        self.nothing_to_run(user, args).map(|why| CallRefusal {
            reason: why.into(),
            told: why.into(),
        })
    }

    fn lead_ins(&self) -> bool {
        self.mode.has(Piece::LeadIns)
    }
}
