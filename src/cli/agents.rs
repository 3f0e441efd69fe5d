//! `skillpipe agents list|show`.

use super::SkillFlags;
use clap::{Args, Subcommand};

#[derive(Debug, Clone, Args)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: AgentsCommand,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

#[derive(Debug, Clone, Subcommand)]
pub enum AgentsCommand {
    /// List the agents found on the search path.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show the resolved config and the exact system prompt.
    Show {
        name: String,
        /// Fill {{K}} in the instructions.
        #[arg(long = "var", value_name = "K=V")]
        vars: Vec<String>,
    },
}

pub fn run(_args: AgentsArgs) -> anyhow::Result<i32> {
    anyhow::bail!("agents is not built yet")
}
