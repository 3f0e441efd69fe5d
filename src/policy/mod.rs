//! The ScriptPolicy as data (DESIGN §2) and the allow/deny decision. Pure.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod decide;
mod merge;
pub mod source;

pub use decide::{Decision, SCRIPTS_NOT_ALLOWED, decide};
pub use merge::TIMEOUT_RANGE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    #[default]
    Required,
    BestEffort,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ConfirmMode {
    #[default]
    Ask,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AuditMode {
    /// Log when possible; a log that cannot be written is a warning.
    #[default]
    BestEffort,
    /// Refuse to run a command when the log cannot be written.
    Required,
}

/// The working directory of a skill script (DESIGN §3). Either way `SKILLPIPE_CALLER_DIR`
/// names the directory skillpipe was started in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Workdir {
    /// The skill's folder: scripts that read their own files by relative path work.
    #[default]
    Skill,
    /// Where the user works: relative paths in arguments (`--repo .`, `input.pdf`) mean theirs.
    Caller,
}

/// DESIGN §2 table. Field names are the agent TOML `[script_policy]` keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptPolicy {
    pub allow_scripts: bool,
    pub allowed_commands: Vec<String>,
    pub denied_commands: Vec<String>,
    pub allowed_interpreters: Vec<String>,
    pub timeout_seconds: u64,
    pub max_output_bytes: usize,
    pub max_capture_bytes: usize,
    pub allow_network: bool,
    pub allow_filesystem: bool,
    pub writable_paths: Vec<PathBuf>,
    pub sandbox: SandboxMode,
    /// r9s writes this list as `allow_env_vars`.
    #[serde(alias = "allow_env_vars")]
    pub env_passthrough: Vec<String>,
    pub confirm: ConfirmMode,
    pub max_captures_per_turn: usize,
    pub audit: AuditMode,
    pub workdir: Workdir,
}

impl Default for ScriptPolicy {
    fn default() -> Self {
        ScriptPolicy {
            allow_scripts: false,
            allowed_commands: vec!["scripts/*".into()],
            denied_commands: vec![],
            allowed_interpreters: ["python3", "bash", "sh", "node"].map(String::from).to_vec(),
            timeout_seconds: 30,
            max_output_bytes: 10 * 1024 * 1024,
            max_capture_bytes: 16 * 1024,
            allow_network: false,
            allow_filesystem: false,
            writable_paths: vec![],
            sandbox: SandboxMode::Required,
            env_passthrough: ["PATH", "HOME", "LANG", "TERM"].map(String::from).to_vec(),
            confirm: ConfirmMode::Ask,
            max_captures_per_turn: 8,
            audit: AuditMode::BestEffort,
            workdir: Workdir::Skill,
        }
    }
}
