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

pub fn run(args: FilterArgs) -> anyhow::Result<i32> {
    let setup = super::setup::build(&args.policy, &args.skill_flags, args.agent.as_deref(), &[])?;
    let rt = super::setup::runtime()?;
    let opts = crate::filter::FilterOptions {
        scan: crate::scan::ScanOptions {
            exec_in_code: args.exec_in_code,
            ..Default::default()
        },
        show_side_effects: args.show_side_effects,
    };
    let report = crate::filter::run(&rt, setup.dispatcher, opts, std::io::stdin(), raw_stdout())?;
    Ok(if args.strict && report.problems {
        super::EXIT_STRICT
    } else {
        super::EXIT_OK
    })
}

/// Unbuffered stdout: the filter writes whole scanned chunks, so a line buffer would only add
/// system calls and delay.
fn raw_stdout() -> impl std::io::Write {
    use std::os::fd::AsFd;
    let fd = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .expect("stdout is open");
    std::fs::File::from(fd)
}
