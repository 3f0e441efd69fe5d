//! The ScriptPolicy as data (DESIGN §2) and the allow/deny decision. Pure.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod decide;
mod merge;
mod sandbox_keys;
pub mod source;

pub use decide::{Decision, SCRIPTS_NOT_ALLOWED, decide};
pub use merge::TIMEOUT_RANGE;
pub use sandbox_keys::writable_problem;

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
    /// Paths hidden from scripts on top of the built-in list (`~/` is `$HOME`).
    pub deny_read: Vec<PathBuf>,
    /// Paths lifted from the hidden list (this path and everything beneath it).
    pub allow_read: Vec<PathBuf>,
    /// Unix sockets a script may connect to (bound into its sandbox by path).
    pub allowed_sockets: Vec<PathBuf>,
    /// Limits per run; 0 means unlimited.
    pub max_processes: u64,
    pub max_memory_mb: u64,
    pub max_file_size_mb: u64,
    pub max_tmp_mb: u64,
    pub max_cpu_seconds: u64,
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
            deny_read: vec![],
            allow_read: vec![],
            allowed_sockets: vec![],
            max_processes: 256,
            max_memory_mb: 1024,
            max_file_size_mb: 1024,
            max_tmp_mb: 256,
            max_cpu_seconds: 60,
            sandbox: SandboxMode::Required,
            env_passthrough: ["PATH", "HOME", "LANG", "TERM"].map(String::from).to_vec(),
            confirm: ConfirmMode::Ask,
            max_captures_per_turn: 8,
            audit: AuditMode::BestEffort,
            workdir: Workdir::Skill,
        }
    }
}

impl ScriptPolicy {
    /// The run limits (0 in a key means unlimited).
    pub fn limits(&self) -> crate::sandbox::Limits {
        let some = |v: u64| (v > 0).then_some(v);
        crate::sandbox::Limits {
            processes: some(self.max_processes),
            memory_mb: some(self.max_memory_mb),
            file_size_mb: some(self.max_file_size_mb),
            tmp_mb: some(self.max_tmp_mb),
            cpu_seconds: some(self.max_cpu_seconds),
        }
    }
}
