//! `skillpipe skills list|show|validate`.

use super::SkillFlags;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    pub command: SkillsCommand,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

#[derive(Debug, Clone, Subcommand)]
pub enum SkillsCommand {
    /// List the skills found on the search path.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one skill: frontmatter and scripts.
    Show { name: String },
    /// Check skill folders against the spec; exit 3 on any violation.
    Validate {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

pub fn run(_args: SkillsArgs) -> anyhow::Result<i32> {
    anyhow::bail!("skills is not built yet")
}
