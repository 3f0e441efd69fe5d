//! The chat's one seam for coaching (DESIGN §7): what a front end may hand to a coach for a model
//! that needs one (`coach = "small-model"`). The chat loop asks; it reads no English and knows no
//! model's quirks itself. [`Uncoached`], the default, adds nothing: a request is the system
//! prompt, the conversation and the user's message.

use crate::model::Message;

/// The coaching of a chat. Every method has the uncoached answer as its default; a piece joins
/// only when the held-out evaluation shows it pays on both model sizes.
pub trait Coaching: Send + Sync {
    /// Messages sent between the system prompt and the conversation in every request (fixed, so
    /// a server's prompt cache keeps them); never part of the history.
    fn prefix(&self) -> &[Message] {
        &[]
    }
}

/// No coaching.
#[derive(Debug, Default, Clone, Copy)]
pub struct Uncoached;

impl Coaching for Uncoached {}
