//! Command-line definitions (DESIGN §9) and the entry point. Each subcommand lives in its own
//! module with a `run` function that turns its flags into the app layer's plain config
//! (`crate::app`); this file only parses and maps errors to exit codes.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub mod agents;
pub mod chat;
pub mod doctor;
pub mod filter;
mod generated;
mod interrupt;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod run;
pub mod skills;
pub mod trust;

use crate::app::{AppConfig, AppError, EXIT_RUNTIME, EXIT_USAGE};
use crate::policy::PolicyOverrides;

/// Exit codes (DESIGN §9) besides the app layer's 1 (runtime) and 2 (usage).
pub const EXIT_OK: i32 = 0;
pub const EXIT_STRICT: i32 = 3;

/// Build a usage error (exit 2) as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    crate::app::usage(msg).into()
}

/// Headings of `--help`: every flag sits under the one that says what it is about.
pub mod heading {
    pub const MODEL: &str = "Model";
    pub const SKILLS: &str = "Skills";
    // The policy flags' own (`policy::PolicyOverrides`), shared with the CLI's other such flags.
    pub use crate::policy::heading::POLICY;
    pub const OUTPUT: &str = "Output";
}

const EXAMPLES: &str = "\
Examples:
  skillpipe chat --model gpt-4o-mini --allow-scripts \"What does ephemeral mean?\"
  printf 'Hi !{echo there}\\n' | skillpipe filter --allow echo -y
  skillpipe run calc calc --skills-dir skills --allow-scripts -y -- \"2 ** 10\"
  skillpipe doctor

Nothing runs unless --allow-scripts or --allow PATTERN says so; every run is sandboxed.
`skillpipe help COMMAND` shows a command's flags; `skillpipe man` prints the manual page.";

#[derive(Debug, Parser)]
#[command(
    name = "skillpipe",
    version,
    about = "Let a language model act through inline directives in its streamed output",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Process model output on stdin: run directives, write the text to stdout.
    #[command(after_help = filter::EXAMPLES)]
    Filter(filter::FilterArgs),
    /// Chat with a model (one-shot with PROMPT or piped stdin, else an interactive REPL).
    #[command(after_help = chat::EXAMPLES)]
    Chat(chat::ChatArgs),
    /// Run one skill script as a directive would.
    #[command(after_help = run::EXAMPLES)]
    Run(run::RunArgs),
    /// List, show or validate skills.
    Skills(skills::SkillsArgs),
    /// List or show agents.
    Agents(agents::AgentsArgs),
    /// Check the config, agents, model and endpoint a chat would use, and what this machine can
    /// enforce.
    ///
    /// Parses config.toml and the agent files (exit 2 naming file and line); shows the provider,
    /// endpoint, model and API-key variable chat would use (never the key; a missing key is a
    /// warning); with --online asks the endpoint for its models (exit 1 if it does not answer
    /// or does not serve the model named, exit 2 when its key is missing). Then what the
    /// sandbox can enforce here, what scripts cannot read, and where config, skills, agents and
    /// the audit log live.
    Doctor(doctor::DoctorArgs),
    /// Serve skills and their scripts to an MCP client over stdio.
    #[cfg(feature = "mcp")]
    #[command(after_help = mcp::EXAMPLES)]
    Mcp(mcp::McpArgs),
    /// Trust a directory: use its ./agents and ./skills (or --list, --revoke).
    Trust(trust::TrustArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(after_help = generated::COMPLETIONS_HELP)]
    Completions(generated::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command into a folder.
    #[command(after_help = generated::MAN_HELP)]
    Man(generated::ManArgs),
}

/// Skill search options accepted by every subcommand.
#[derive(Debug, Clone, Default, Args)]
pub struct SkillFlags {
    // Global: `skills list --skills-dir D` must work as well as `skills --skills-dir D list`.
    /// Add a skills directory (searched first, in order).
    #[arg(long = "skills-dir", value_name = "DIR", global = true, help_heading = heading::SKILLS)]
    pub skills_dirs: Vec<PathBuf>,
}

impl SkillFlags {
    /// [`AppConfig::search_path`] for these flags and `agent`.
    pub fn search_path(&self, agent: Option<&str>) -> anyhow::Result<Vec<PathBuf>> {
        let config = AppConfig {
            skills_dirs: self.skills_dirs.clone(),
            agent: agent.map(str::to_string),
            ..AppConfig::default()
        };
        Ok(config.search_path()?)
    }
}

/// `--agent`, for every command that loads an agent's skills, policy or model.
#[derive(Debug, Clone, Default, Args)]
pub struct AgentFlag {
    /// Agent name or path to an agent TOML (brings instructions, a model, skills and a policy).
    #[arg(long, value_name = "NAME|PATH", help_heading = heading::SKILLS)]
    pub agent: Option<String>,
}

/// The model and endpoint, for chat and for doctor (which checks what chat would use).
#[derive(Debug, Clone, Default, Args)]
pub struct ModelFlags {
    /// Model, or provider:model (e.g. openai:gpt-4o-mini, ollama:qwen2.5:1.5b,
    /// replay:answers.jsonl).
    #[arg(long, short = 'm', help_heading = heading::MODEL)]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible endpoint (e.g. http://localhost:11434/v1).
    #[arg(long, value_name = "URL", help_heading = heading::MODEL)]
    pub base_url: Option<String>,
}

/// What a session loads and may run: the one flag group of filter, chat and mcp (DESIGN §9).
#[derive(Debug, Clone, Default, Args)]
pub struct SessionFlags {
    #[command(flatten)]
    pub agent: AgentFlag,
    // Not `run`'s: it names its one skill itself.
    /// Only these skills (by name) are active, shown to the model in full.
    #[arg(long = "skill", value_name = "NAME", help_heading = heading::SKILLS)]
    pub skills: Vec<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
}

impl SessionFlags {
    /// These flags, the skill flags and `--var`s as the app layer's config.
    pub fn app_config(&self, skill_flags: &SkillFlags, vars: &[String]) -> AppConfig {
        self.policy
            .app_config(skill_flags, &self.skills, self.agent.agent.as_deref(), vars)
    }
}

/// ScriptPolicy overrides (DESIGN §2) and the audit log, shared by filter, chat, run and mcp.
#[derive(Debug, Clone, Default, Args)]
pub struct PolicyFlags {
    #[command(flatten)]
    pub overrides: PolicyOverrides,
    /// Append one JSON line per decision to PATH.
    #[arg(long, value_name = "PATH", help_heading = heading::POLICY)]
    pub audit_log: Option<PathBuf>,
}

impl PolicyFlags {
    /// These flags, the skill flags and the agent as the app layer's config.
    pub fn app_config(
        &self,
        skill_flags: &SkillFlags,
        only: &[String],
        agent: Option<&str>,
        vars: &[String],
    ) -> AppConfig {
        // A socket that is not there is left out of each run in silence (an agent may name a
        // sound server's several places); one the user names on the command line is worth a word.
        for socket in &self.overrides.allow_socket {
            let literal = socket.starts_with("~") || socket.to_string_lossy().starts_with('$');
            if !literal && !socket.exists() {
                warn_all(&[format!(
                    "--allow-socket {}: nothing is there now; a run reaches it only once it exists",
                    socket.display()
                )]);
            }
        }
        AppConfig {
            overrides: self.overrides.clone(),
            skills_dirs: skill_flags.skills_dirs.clone(),
            only_skills: only.to_vec(),
            audit_log: self.audit_log.clone(),
            agent: agent.map(str::to_string),
            vars: vars.to_vec(),
            ..AppConfig::default()
        }
    }
}

/// Rows (a header first) as aligned columns two spaces apart: each cell but a row's last is
/// padded to the widest such cell of its column, in characters; no trailing blanks.
pub fn columns(rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        let padded = rows.iter().filter(|r| i + 1 < r.len());
        padded.map(|r| r[i].chars().count()).max().unwrap_or(0)
    };
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = (row.iter().enumerate())
            .map(|(i, cell)| format!("{cell:w$}", w = width(i)))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
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
        Command::Completions(a) => generated::completions(a),
        Command::Man(a) => generated::man(a),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{SandboxMode, Workdir};

    /// Every name `--sandbox` and `--workdir` list is read as the policy's value of that name.
    #[test]
    fn sandbox_and_workdir_flags_read_every_policy_value() {
        for (args, sandbox, workdir) in [
            ("required skill", SandboxMode::Required, Workdir::Skill),
            (
                "best-effort caller",
                SandboxMode::BestEffort,
                Workdir::Caller,
            ),
        ] {
            let (s, w) = args.split_once(' ').unwrap();
            let argv = ["skillpipe", "filter", "--sandbox", s, "--workdir", w];
            let Command::Filter(f) = Cli::try_parse_from(argv).unwrap().command else {
                panic!("{argv:?}")
            };
            let policy = f.session.policy.overrides;
            assert_eq!(
                (policy.sandbox, policy.workdir),
                (Some(sandbox), Some(workdir))
            );
        }
    }
}
