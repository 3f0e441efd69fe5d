//! The interactive REPL (DESIGN §8).

use crate::chat::Session;
use crate::cli::chat::ChatArgs;
use crate::cli::setup::Setup;

/// What the REPL needs besides the session: the flags it was started with (to rebuild on
/// `/model` or `/agent`) and the shared setup.
pub struct ReplInfo {
    pub model_label: String,
    pub args: ChatArgs,
    pub setup: Setup,
}

pub fn run(
    _rt: &tokio::runtime::Runtime,
    _session: Session,
    _info: ReplInfo,
) -> anyhow::Result<i32> {
    anyhow::bail!("the interactive REPL is not built yet; pass a PROMPT for one-shot mode")
}
