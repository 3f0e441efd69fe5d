//! Coaching for models that need it (DESIGN §7), off unless the user turns it on (`coach =
//! "small-model"` in the config, a provider entry or an agent file; `--coach small-model`).
//! Nothing here is guessed from the endpoint or the model's name.
//!
//! The chat loop reaches this module only through its hook ([`crate::chat::Coaching`]): the
//! worked exchanges sent before the conversation, the copy guard, asking a turn again without
//! the exchanges, the lead-ins the exchanges teach, a user's "do not run it", and native tool
//! calls that copy an example.

pub mod copies;
mod mode;

pub use mode::CoachMode;

use crate::chat::{CallRefusal, Coaching};
use crate::model::Message;
use crate::pipeline::{Admit, Gate, GateAt};
use crate::scan::{Directive, Kind};
use crate::skills::SkillSet;
use std::sync::Arc;

/// The small-model coach: the worked exchanges (the few-shot of [`crate::agents::few_shot`]),
/// and every guard against what a small model does with them.
#[derive(Debug, Default, Clone)]
pub struct SmallModel {
    few_shot: Vec<Message>,
    /// The directives of `few_shot`: one written again with values nobody in the conversation
    /// wrote is a copy, not a request.
    examples: copies::Examples,
}

impl SmallModel {
    /// A coach that sends `few_shot` (user/assistant messages) before the conversation.
    pub fn new(few_shot: Vec<Message>) -> SmallModel {
        SmallModel {
            examples: copies::Examples::from_messages(&few_shot),
            few_shot,
        }
    }
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
        let (examples, user, asked) = (self.examples.clone(), user.to_string(), asked.to_string());
        let skills = skills.clone();
        Some(Box::new(move |d, at| {
            if let Some(why) = copies::nothing_to_run(&user, &copies::args_of(d, &skills)) {
                return Admit::Refuse(why.into());
            }
            if d.kind == Kind::Capture && at == GateAt::Found {
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
        copies::nothing_to_run(user, &copies::args_of(d, skills))
            .map(|_| copies::as_code(&String::from_utf8_lossy(&d.raw)))
    }

    fn refuse_call_early(&self, user: &str, args: &str) -> Option<CallRefusal> {
        copies::nothing_to_run(user, args).map(|why| CallRefusal {
            reason: why.into(),
            told: why.into(),
        })
    }

    fn refuse_call(&self, argv: &[String], asked: &str, skills: &SkillSet) -> Option<CallRefusal> {
        let why = copies::COPIED;
        self.examples
            .is_copied_call(argv, asked, skills)
            .then(|| CallRefusal {
                reason: why.into(),
                // As a refused directive's message: what to do instead.
                told: format!(
                    "{why}; answer the user's question yourself, or call it with the user's own values"
                ),
            })
    }

    fn ask_again_on(&self, why: &str) -> bool {
        why == copies::COPIED
    }

    fn lead_ins(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_their_names_only() {
        for name in CoachMode::NAMES {
            assert_eq!(CoachMode::parse(name).map(CoachMode::name), Some(name));
        }
        assert_eq!(CoachMode::parse("small-model"), Some(CoachMode::SmallModel));
        assert_eq!(CoachMode::parse("qwen"), None);
        assert!(!CoachMode::default().is_on());
    }
}
