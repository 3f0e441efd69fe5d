//! `skillpipe filter`: model output on stdin, processed text on stdout.

use super::{PolicyFlags, SkillFlags};
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct FilterArgs {
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
    /// Agent name or path to an agent TOML (brings skills and a script policy).
    #[arg(long, value_name = "NAME|PATH")]
    pub agent: Option<String>,
    /// Also run directives inside Markdown code.
    #[arg(long)]
    pub exec_in_code: bool,
    /// Exit 3 if any directive was blocked, invalid or failed.
    #[arg(long)]
    pub strict: bool,
    /// Copy the output of side effects to stderr.
    #[arg(long)]
    pub show_side_effects: bool,
}

pub fn run(_args: FilterArgs) -> anyhow::Result<i32> {
    anyhow::bail!("filter is not built yet")
}
