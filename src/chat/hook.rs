//! The chat's one seam for coaching (DESIGN §7): the per-turn decisions a front end may hand to
//! a coach for a model that needs one (`coach = "small-model"`). The chat loop asks; it reads
//! no English and knows no model's quirks itself. [`Uncoached`], the default, answers every
//! question "no": a request is the system prompt, the conversation and the user's message,
//! nothing invented, and a directive is judged by the policy alone.

use crate::model::Message;
use crate::pipeline::Gate;
use crate::scan::Directive;
use crate::skills::SkillSet;
use std::sync::Arc;

/// A refusal the coach makes of a native tool call: what the audit log records, and what the
/// model is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRefusal {
    /// The audited reason.
    pub reason: String,
    /// The tool message's error text.
    pub told: String,
}

/// The coaching decisions of a chat turn. Every method has the uncoached answer as its default.
pub trait Coaching: Send + Sync {
    /// Messages sent between the system prompt and the conversation in every request (fixed, so
    /// a server's prompt cache keeps them); never part of the history.
    fn prefix(&self) -> &[Message] {
        &[]
    }

    /// A check on the directives of a turn whose user wrote `user`. `skills` (the
    /// dispatcher's) say which script a command runs, here as in every question below.
    fn gate(&self, _user: &str, _skills: &Arc<SkillSet>) -> Option<Gate> {
        None
    }

    /// What is shown in place of a directive the gate refused where it was found (`None`:
    /// nothing, as for any refused directive).
    fn shown_refused(&self, _user: &str, _d: &Directive, _skills: &SkillSet) -> Option<String> {
        None
    }

    /// A native tool call refused before anything of it runs: `args` is its arguments' text.
    fn refuse_call_early(&self, _user: &str, _args: &str) -> Option<CallRefusal> {
        None
    }

    /// Words the prefix taught to open a directive with (`Using NAME:`) go with the directive,
    /// and a turn that showed only them showed no answer.
    fn lead_ins(&self) -> bool {
        false
    }
}

/// No coaching: every decision is the plain one.
#[derive(Debug, Default, Clone, Copy)]
pub struct Uncoached;

impl Coaching for Uncoached {}
