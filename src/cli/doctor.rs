//! `skillpipe doctor`: what this machine can enforce and where files live.

use super::SkillFlags;
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(_args: DoctorArgs) -> anyhow::Result<i32> {
    anyhow::bail!("doctor is not built yet")
}
