//! `skillpipe chat`: one-shot answer or the interactive REPL.

use super::{PolicyFlags, SkillFlags};
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// Answer this prompt once and exit (stdin is used when it is not a terminal).
    pub prompt: Option<String>,
    /// Agent name or path to an agent TOML.
    #[arg(long, value_name = "NAME|PATH")]
    pub agent: Option<String>,
    /// Model, or provider:model (e.g. openai:gpt-4o-mini, replay:answers.jsonl).
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible endpoint.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Fill {{K}} in the agent's instructions.
    #[arg(long = "var", value_name = "K=V")]
    pub vars: Vec<String>,
    /// Offer skill scripts as native function tools.
    #[arg(long)]
    pub tools: bool,
    /// Ask for the whole answer at once instead of streaming.
    #[arg(long)]
    pub no_stream: bool,
    /// Bound on capture round-trips per user message.
    #[arg(long, value_name = "N")]
    pub max_captures: Option<usize>,
    /// Also run directives inside Markdown code.
    #[arg(long)]
    pub exec_in_code: bool,
    /// Reopen a saved session (lists sessions when no name is given).
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(_args: ChatArgs) -> anyhow::Result<i32> {
    anyhow::bail!("chat is not built yet")
}
