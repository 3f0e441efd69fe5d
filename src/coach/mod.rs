//! Coaching for models that need it (DESIGN §7), off unless the user turns it on (`coach =
//! "small-model"` in the config, a provider entry or an agent file; `--coach small-model`).
//! Nothing here is guessed from the endpoint or the model's name. The chat loop reaches it only
//! through its hook ([`crate::chat::Coaching`]).

pub use crate::config::CoachMode;

use crate::chat::Coaching;
use crate::model::Message;

/// The small-model coach: the worked exchanges (the few-shot of [`crate::agents::few_shot`])
/// sent before the conversation.
#[derive(Debug, Default, Clone)]
pub struct SmallModel {
    few_shot: Vec<Message>,
}

impl SmallModel {
    /// A coach that sends `few_shot` (user/assistant messages) before the conversation.
    pub fn new(few_shot: Vec<Message>) -> SmallModel {
        SmallModel { few_shot }
    }
}

impl Coaching for SmallModel {
    fn prefix(&self) -> &[Message] {
        &self.few_shot
    }
}
