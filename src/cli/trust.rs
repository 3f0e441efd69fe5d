//! `skillpipe trust [DIR] | --list | --revoke [DIR]`.

use super::usage;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct TrustArgs {
    /// The directory (default: the current one).
    pub dir: Option<PathBuf>,
    /// List the trusted directories.
    #[arg(long, conflicts_with_all = ["dir", "revoke"])]
    pub list: bool,
    /// Stop trusting the directory.
    #[arg(long)]
    pub revoke: bool,
}

pub fn run(args: TrustArgs) -> anyhow::Result<i32> {
    let config_error = |e: crate::trust::TrustError| usage(e.to_string());
    if args.list {
        let list = crate::trust::load().map_err(config_error)?;
        let mut out = std::io::stdout().lock();
        for d in &list {
            use std::io::Write;
            writeln!(out, "{}", shown(d))?;
        }
        if list.is_empty() {
            eprintln!("skillpipe: no directory is trusted (skillpipe trust DIR adds one)");
        }
        return Ok(super::EXIT_OK);
    }
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    if args.revoke {
        let dir = crate::trust::revoke(&dir).map_err(config_error)?;
        eprintln!(
            "skillpipe: {} is no longer trusted: its ./agents and ./skills are ignored",
            shown(&dir)
        );
    } else {
        let (dir, already) = crate::trust::add(&dir).map_err(config_error)?;
        let what = if already { "was already" } else { "is now" };
        eprintln!(
            "skillpipe: {} {what} trusted: its ./agents and ./skills are used (after your own); \
             their agents may still only narrow the script policy",
            shown(&dir)
        );
    }
    Ok(super::EXIT_OK)
}

/// A directory as one line of text: a name may hold a newline or an escape.
fn shown(dir: &std::path::Path) -> String {
    crate::command::escape_controls(&dir.to_string_lossy())
}
