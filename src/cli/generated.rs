//! `skillpipe completions SHELL` and `skillpipe man`: generated from the command-line
//! definitions themselves, so they say what `--help` says.

use clap::{Args, CommandFactory};
use std::io::Write;
use std::path::PathBuf;

pub const COMPLETIONS_HELP: &str = "\
Examples:
  skillpipe completions bash > ~/.local/share/bash-completion/completions/skillpipe
  skillpipe completions zsh > ~/.zfunc/_skillpipe      # with fpath+=(~/.zfunc) in ~/.zshrc
  skillpipe completions fish > ~/.config/fish/completions/skillpipe.fish
  skillpipe completions powershell >> $PROFILE";

pub const MAN_HELP: &str = "\
Examples:
  skillpipe man | man -l -
  skillpipe man --dir ~/.local/share/man/man1      # skillpipe.1, skillpipe-chat.1, …";

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write skillpipe.1 and one page per command (skillpipe-chat.1 …) into DIR instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<i32> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "skillpipe", &mut out);
    std::io::stdout().write_all(&out)?;
    Ok(super::EXIT_OK)
}

pub fn man(args: ManArgs) -> anyhow::Result<i32> {
    let cmd = super::Cli::command();
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| super::usage(format!("--dir {}: {e}", dir.display())))?;
            clap_mangen::generate_to(cmd, &dir)?;
        }
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
    }
    Ok(super::EXIT_OK)
}
