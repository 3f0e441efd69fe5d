//! Command-line definitions (DESIGN §9) and the entry point. Each subcommand lives in its own
//! module with a `run` function; this file only parses and maps errors to exit codes.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub mod agents;
pub mod chat;
pub mod doctor;
pub mod filter;
mod interrupt;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod run;
pub mod setup;
pub mod skills;
pub mod trust;

/// Exit codes (DESIGN §9).
pub const EXIT_OK: i32 = 0;
pub const EXIT_RUNTIME: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_STRICT: i32 = 3;

/// A usage or configuration error: exit code 2. The message names the flag, file or line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Build a usage error (exit 2) as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

#[derive(Debug, Parser)]
#[command(
    name = "skillpipe",
    version,
    about = "Let a language model act through inline directives in its streamed output"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Process model output on stdin: run directives, write the text to stdout.
    Filter(filter::FilterArgs),
    /// Chat with a model (one-shot with PROMPT or piped stdin, else an interactive REPL).
    Chat(chat::ChatArgs),
    /// Run one skill script as a directive would.
    Run(run::RunArgs),
    /// List, show or validate skills.
    Skills(skills::SkillsArgs),
    /// List or show agents.
    Agents(agents::AgentsArgs),
    /// Report what this machine can enforce and where files live.
    Doctor(doctor::DoctorArgs),
    /// Serve skills and their scripts to an MCP client over stdio.
    #[cfg(feature = "mcp")]
    Mcp(mcp::McpArgs),
    /// Trust a directory: use its ./agents and ./skills (or --list, --revoke).
    Trust(trust::TrustArgs),
    /// Internal: sandbox launcher (applies restrictions, then execs the command).
    #[command(name = "__launch", hide = true)]
    Launch(crate::sandbox::LaunchArgs),
}

/// Skill search options accepted by every subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct SkillFlags {
    // Global: `skills list --skills-dir D` must work as well as `skills --skills-dir D list`.
    /// Add a skills directory (searched first, in order).
    #[arg(long = "skills-dir", value_name = "DIR", global = true)]
    pub skills_dirs: Vec<PathBuf>,
}

impl SkillFlags {
    /// The skill search path. A `--skills-dir` that is not a directory is a usage error: a typo
    /// would otherwise load no skills and leave every directive "not found".
    pub fn search_path(&self) -> anyhow::Result<Vec<PathBuf>> {
        if let Some(d) = self.skills_dirs.iter().find(|d| !d.is_dir()) {
            return Err(usage(format!(
                "--skills-dir {}: no such directory",
                d.display()
            )));
        }
        setup::project_notice();
        Ok(crate::paths::skill_search_path(&self.skills_dirs))
    }

    /// [`Self::search_path`], with the skill folders beside an agent given by path after the
    /// user's own folders (so they never shadow a skill the user installed).
    pub fn search_path_for(&self, agent: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
        let mut dirs = self.search_path()?;
        let beside = agent
            .map(crate::paths::agent_skill_dirs)
            .unwrap_or_default();
        let at = (self.skills_dirs.len() + crate::paths::user_skill_dirs().len()).min(dirs.len());
        dirs.splice(at..at, beside);
        Ok(dirs)
    }
}

/// ScriptPolicy overrides (DESIGN §2), shared by filter, chat and run.
#[derive(Debug, Clone, Default, Args)]
pub struct PolicyFlags {
    /// Master switch: allow directives to run at all.
    #[arg(long)]
    pub allow_scripts: bool,
    /// Do not ask before each run (confirm = "never").
    #[arg(short = 'y', long = "yes")]
    pub yes: bool,
    /// Allow a command pattern (implies --allow-scripts).
    #[arg(long = "allow", value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Deny a command pattern (wins over --allow).
    #[arg(long = "deny", value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// Only these skills (by name) are active.
    #[arg(long = "skill", value_name = "NAME")]
    pub skills: Vec<String>,
    /// Timeout per command in seconds (1..=600).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// Append one JSON line per decision to PATH.
    #[arg(long, value_name = "PATH")]
    pub audit_log: Option<PathBuf>,
    /// Let commands use the network.
    #[arg(long)]
    pub allow_network: bool,
    /// Let commands write anywhere.
    #[arg(long)]
    pub allow_filesystem: bool,
    /// What to do when a restriction cannot be enforced.
    #[arg(long, value_name = "MODE", value_parser = ["required", "best-effort"])]
    pub sandbox: Option<String>,
    /// Working directory of skill scripts: the skill's folder, or where skillpipe was started.
    #[arg(long, value_name = "DIR", value_parser = ["skill", "caller"])]
    pub workdir: Option<String>,
    /// Let commands write beneath DIR (repeatable; `--writable .` is the working directory).
    #[arg(long, value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// Accept a --writable/writable_paths entry that is $HOME, a shell start-up file or
    /// skillpipe's own config/state directory.
    #[arg(long)]
    pub force_writable: bool,
    /// Let commands read PATH although it is hidden by default (see `skillpipe doctor`).
    #[arg(long, value_name = "PATH")]
    pub allow_read: Vec<PathBuf>,
    /// Let commands connect to the Unix socket at PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub allow_socket: Vec<PathBuf>,
    /// Processes at once per run (0: unlimited).
    #[arg(long, value_name = "N")]
    pub max_processes: Option<u64>,
    /// Writable memory per process in MiB (0: unlimited).
    #[arg(long, value_name = "MB")]
    pub max_memory: Option<u64>,
    /// Largest file a command may write, MiB (0: unlimited).
    #[arg(long, value_name = "MB")]
    pub max_file_size: Option<u64>,
    /// Size of the run's $TMPDIR in MiB (0: the kernel's default, half the RAM).
    #[arg(long, value_name = "MB")]
    pub max_tmp: Option<u64>,
    /// CPU seconds per process (0: unlimited).
    #[arg(long, value_name = "SECS")]
    pub max_cpu: Option<u64>,
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Filter(a) => filter::run(a),
        Command::Chat(a) => chat::run(a),
        Command::Run(a) => run::run(a),
        Command::Skills(a) => skills::run(a),
        Command::Agents(a) => agents::run(a),
        Command::Doctor(a) => doctor::run(a),
        #[cfg(feature = "mcp")]
        Command::Mcp(a) => mcp::run(a),
        Command::Trust(a) => trust::run(a),
        Command::Launch(a) => crate::sandbox::launch(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Errors quote files, servers and arguments: shown inert.
            eprintln!("skillpipe: {}", crate::term::sanitize(&format!("{e:#}")));
            if e.downcast_ref::<UsageError>().is_some() {
                EXIT_USAGE
            } else {
                EXIT_RUNTIME
            }
        }
    }
}
