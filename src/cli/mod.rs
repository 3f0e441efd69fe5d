//! Command-line definitions (DESIGN §9) and the entry point. Each subcommand lives in its own
//! module with a `run` function that turns its flags into the app layer's plain config
//! (`crate::app`); this file only parses and maps errors to exit codes.

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
pub mod skills;
pub mod trust;

use crate::app::{AppConfig, AppError, EXIT_RUNTIME, EXIT_USAGE};

/// Exit codes (DESIGN §9) besides the app layer's 1 (runtime) and 2 (usage).
pub const EXIT_OK: i32 = 0;
pub const EXIT_STRICT: i32 = 3;

/// Build a usage error (exit 2) as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    crate::app::usage(msg).into()
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
    /// Check the config, agents, model and endpoint a chat would use, and what this machine can
    /// enforce.
    ///
    /// Parses config.toml and the agent files (exit 2 naming file and line); shows the provider,
    /// endpoint, model and API-key variable chat would use (never the key); with --online asks
    /// the endpoint for its models (exit 1 if it does not answer or does not serve the model
    /// named). Then what the sandbox can enforce here, what scripts cannot read, and where
    /// config, skills, agents and the audit log live.
    Doctor(doctor::DoctorArgs),
    /// Serve skills and their scripts to an MCP client over stdio.
    #[cfg(feature = "mcp")]
    Mcp(mcp::McpArgs),
    /// Trust a directory: use its ./agents and ./skills (or --list, --revoke).
    Trust(trust::TrustArgs),
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
        self.search_path_for(None)
    }

    /// [`Self::search_path`], with the skill folders beside an agent given by path after the
    /// user's own folders (so they never shadow a skill the user installed).
    pub fn search_path_for(&self, agent: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
        let config = AppConfig {
            skills_dirs: self.skills_dirs.clone(),
            agent: agent.map(str::to_string),
            ..AppConfig::default()
        };
        Ok(config.search_path()?)
    }
}

/// `--skill` for filter, chat and mcp; not `run`, which names its one skill itself.
#[derive(Debug, Clone, Default, Args)]
pub struct OnlySkills {
    /// Only these skills (by name) are active.
    #[arg(long = "skill", value_name = "NAME")]
    pub skills: Vec<String>,
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
    /// Accept a --writable/writable_paths entry that is refused by default: $HOME or a folder
    /// holding it, a place where code runs later (shell start-up files, PATH folders, tools'
    /// settings), a system folder (/etc, /usr, /var/lib …), version-control metadata or a bare
    /// repository, or a folder skillpipe reads as yours (its config and state, your agent and
    /// skill folders).
    #[arg(long)]
    pub force_writable: bool,
    /// Let commands read PATH although it is hidden by default (see `skillpipe doctor`): a
    /// hidden path itself, not a folder that merely holds some (`/`, `~` are refused).
    #[arg(long, value_name = "PATH")]
    pub allow_read: Vec<PathBuf>,
    /// Let commands connect to the Unix socket at PATH (repeatable).
    #[arg(long, value_name = "PATH")]
    pub allow_socket: Vec<PathBuf>,
    /// Processes at once per run (0: unlimited).
    #[arg(long, value_name = "N")]
    pub max_processes: Option<u64>,
    /// Memory of the whole run in MiB, its processes together (0: unlimited).
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

impl PolicyFlags {
    /// These flags, the skill flags and the agent as the app layer's config.
    pub fn app_config(
        &self,
        skill_flags: &SkillFlags,
        only: &[String],
        agent: Option<&str>,
        vars: &[String],
    ) -> anyhow::Result<AppConfig> {
        Ok(AppConfig {
            overrides: self.overrides()?,
            skills_dirs: skill_flags.skills_dirs.clone(),
            only_skills: only.to_vec(),
            warn_only_about: Vec::new(),
            audit_log: self.audit_log.clone(),
            agent: agent.map(str::to_string),
            vars: vars.to_vec(),
            instructions: false,
        })
    }

    /// The flags that change the policy, as the library's plain type.
    pub fn overrides(&self) -> anyhow::Result<crate::policy::PolicyOverrides> {
        use crate::policy::SandboxMode;
        let sandbox = match self.sandbox.as_deref() {
            None => None,
            Some("required") => Some(SandboxMode::Required),
            Some("best-effort") => Some(SandboxMode::BestEffort),
            Some(other) => {
                return Err(usage(format!(
                    "--sandbox must be `required` or `best-effort`, got `{other}`"
                )));
            }
        };
        use crate::policy::Workdir;
        let workdir = match self.workdir.as_deref() {
            None => None,
            Some("skill") => Some(Workdir::Skill),
            Some("caller") => Some(Workdir::Caller),
            Some(other) => {
                return Err(usage(format!(
                    "--workdir must be `skill` or `caller`, got `{other}`"
                )));
            }
        };
        // A socket that is not there is left out of each run in silence (an agent may name a
        // sound server's several places); one the user names on the command line is worth a word.
        for socket in &self.allow_socket {
            let literal = socket.starts_with("~") || socket.to_string_lossy().starts_with('$');
            if !literal && !socket.exists() {
                warn_all(&[format!(
                    "--allow-socket {}: nothing is there now; a run reaches it only once it exists",
                    socket.display()
                )]);
            }
        }
        Ok(crate::policy::PolicyOverrides {
            allow_scripts: self.allow_scripts,
            confirm_never: self.yes,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            timeout: self.timeout,
            allow_network: self.allow_network,
            allow_filesystem: self.allow_filesystem,
            sandbox,
            workdir,
            writable: self.writable.clone(),
            force_writable: self.force_writable,
            allow_read: self.allow_read.clone(),
            allow_socket: self.allow_socket.clone(),
            max_processes: self.max_processes,
            max_memory: self.max_memory,
            max_file_size: self.max_file_size,
            max_tmp: self.max_tmp,
            max_cpu: self.max_cpu,
            // A chat flag, set by `chat` itself.
            max_captures: None,
        })
    }
}

/// Warnings of the set-up (agent file, skills), one line each on stderr.
pub fn warn_all(warnings: &[String]) {
    for w in warnings {
        crate::app::note(&format!("skillpipe: warning: {}", crate::term::sanitize(w)));
    }
}

pub fn main() -> i32 {
    // `skillpipe __launch …` is the sandbox launcher: it must run before anything starts a thread.
    crate::sandbox::run_if_launcher();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            // Arguments need not be UTF-8: read as the parser shows them.
            let args: Vec<String> = std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            if e.use_stderr() && run::json_requested(&args) {
                // `run --json` promises one JSON object on stdout, a command-line error too:
                // the parser's message without its usage and help lines.
                let text = e.to_string();
                let message: Vec<&str> = text
                    .lines()
                    .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                let message = message.join(" ");
                let message = message.strip_prefix("error: ").unwrap_or(&message);
                println!(
                    "{}",
                    serde_json::json!({"success": false, "error": message})
                );
            }
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
    };
    match result {
        Ok(code) => code,
        // The reader of stdout has gone (`| head -1`): the output ended early, which is not a
        // failure (as in `filter`): no message, exit 0.
        Err(e) if output_closed(&e) => EXIT_OK,
        Err(e) => {
            // Errors quote files, servers and arguments: shown inert.
            let text = format!("{e:#}");
            let text = crate::term::sanitize(&text);
            crate::term::line::status(&format!("skillpipe: {text}"));
            e.downcast_ref::<AppError>()
                .map_or(EXIT_RUNTIME, AppError::exit_code)
        }
    }
}

/// Whether `e` is, or was caused by, a write to stdout after its reader had gone.
fn output_closed(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(crate::term::closed::stdout_reader_gone)
}
