//! `skillpipe run SKILL SCRIPT`: run one skill script as a directive would.

use super::{PolicyFlags, SkillFlags};
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Skill name.
    pub skill: String,
    /// Script: `scripts/x.py`, `x.py` or `x`.
    pub script: String,
    /// JSON given to the script on stdin.
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    /// Print the result as JSON (DESIGN §3).
    #[arg(long)]
    pub json: bool,
    /// Arguments for the script (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(_args: RunArgs) -> anyhow::Result<i32> {
    anyhow::bail!("run is not built yet")
}
