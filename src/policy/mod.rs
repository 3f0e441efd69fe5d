//! The ScriptPolicy as data (DESIGN §2) and the allow/deny decision. Pure.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod decide;
pub(crate) mod flags;
mod merge;
// The sandbox's keys need the sandbox (feature `runtime`); without it nothing runs anyway.
#[cfg(feature = "runtime")]
mod sandbox_keys;
#[cfg(feature = "runtime")]
pub(crate) use sandbox_keys::protected_places;
pub(crate) mod source;

pub use decide::{CompiledPolicy, Denied, decide};
pub use merge::PolicyError;
pub(crate) use merge::PolicyOverrides;
#[cfg(feature = "cli")]
pub(crate) use merge::heading;

/// What to do when a requested restriction cannot be enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SandboxMode {
    /// Refuse to run, and say why.
    #[default]
    Required,
    /// Run anyway, with a warning.
    BestEffort,
}

/// Whether to ask before each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ConfirmMode {
    /// Ask on the terminal (declines where there is none).
    #[default]
    Ask,
    /// Never ask.
    Never,
}

/// Whether a run may go ahead when its audit line cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum AuditMode {
    /// Log when possible; a log that cannot be written is a warning.
    #[default]
    BestEffort,
    /// Refuse to run a command when the log cannot be written.
    Required,
}

/// What happened to a request: the one vocabulary of the policy, the dispatcher, the reports
/// and the audit log (exactly one per audit line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Decision {
    /// The command ran (whatever its exit status).
    Ran,
    /// Refused by the policy (or by a safety rule).
    Denied,
    /// The user said no, or there was no terminal to ask.
    Declined,
    /// Not a valid command (shell syntax, unknown script, ...).
    Invalid,
}

/// The working directory of a skill script (DESIGN §3). Either way `SKILLPIPE_CALLER_DIR`
/// names the directory skillpipe was started in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Workdir {
    /// The skill's folder: scripts that read their own files by relative path work.
    #[default]
    Skill,
    /// Where the user works: relative paths in arguments (`--repo .`, `input.pdf`) mean theirs.
    Caller,
}

/// Other spellings a policy table may use for a key (the serde aliases), as `(written, key)`.
pub(crate) const KEY_ALIASES: [(&str, &str); 1] = [("allow_env_vars", "env_passthrough")];

/// What directives may run and under which limits (DESIGN §2 table). Field names are the agent
/// TOML `[script_policy]` keys. The default runs nothing; [`ScriptPolicy::compile`] checks it
/// and parses its patterns once for [`decide`].
///
/// ```
/// use skillpipe::ScriptPolicy;
/// use skillpipe::command::{Target, parse_argv};
/// use skillpipe::policy::{Denied, decide};
///
/// let mut policy = ScriptPolicy::allowing(["git *"]);
/// policy.denied_commands = vec!["git push *".into()];
/// let compiled = policy.compile()?;
/// let judge = |body: &str| {
///     let argv = parse_argv(body).unwrap();
///     decide(&compiled, &Target::System { program: &argv[0], args: &argv[1..] })
/// };
/// assert!(judge("git status").is_ok());
/// // Denied patterns win over allowed ones, and the reason names the pattern.
/// let denied = judge("git push origin main").unwrap_err();
/// assert!(matches!(&denied, Denied::Pattern { pattern, .. } if pattern == "git push *"));
/// assert_eq!(denied.to_string(), "`git push origin main` matches denied pattern `git push *`");
/// // Anything not allowed is denied.
/// assert!(judge("rm -rf /").is_err());
/// // A pattern that does not parse is an error before anything can run.
/// let mut bad = policy;
/// bad.denied_commands = vec!["rm;ls".into()];
/// assert!(bad.compile().is_err());
/// # Ok::<(), skillpipe::policy::PolicyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ScriptPolicy {
    /// Master switch: when false nothing runs and directives are stripped.
    pub allow_scripts: bool,
    /// Patterns a command must match to run. The default, `["scripts/*"]`, is every skill
    /// script; a list of your own replaces it, so keep `"scripts/*"` in it for skill scripts to
    /// run (`allowed_commands: vec!["echo".into(), "scripts/*".into()]`).
    pub allowed_commands: Vec<String>,
    /// Patterns that win over `allowed_commands`.
    pub denied_commands: Vec<String>,
    /// Interpreters skill scripts may use.
    pub allowed_interpreters: Vec<String>,
    /// Wall-clock limit per command (1..=600).
    pub timeout_seconds: u64,
    /// Cap per output stream; the rest is dropped with a warning.
    pub max_output_bytes: usize,
    /// How much captured stdout goes back into a model's context (head and tail kept).
    pub max_capture_bytes: usize,
    /// Let commands use the network (false: a fresh network namespace).
    pub allow_network: bool,
    /// Let commands write anywhere (false: Landlock, writes only to `$TMPDIR` and
    /// `writable_paths`).
    pub allow_filesystem: bool,
    /// Paths that stay writable when `allow_filesystem` is false.
    pub writable_paths: Vec<PathBuf>,
    /// Paths hidden from scripts on top of the built-in list (`~/` is `$HOME`).
    pub deny_read: Vec<PathBuf>,
    /// Paths lifted from the hidden list (this path and everything beneath it).
    pub allow_read: Vec<PathBuf>,
    /// Unix sockets a script may connect to (bound into its sandbox by path).
    pub allowed_sockets: Vec<PathBuf>,
    /// Most processes per run (0: unlimited).
    pub max_processes: u64,
    /// Most memory per run in MiB (0: unlimited).
    pub max_memory_mb: u64,
    /// Largest file a run may write, in MiB (0: unlimited).
    pub max_file_size_mb: u64,
    /// Size of the run's `$TMPDIR` in MiB (0: unlimited).
    pub max_tmp_mb: u64,
    /// CPU seconds per run (0: unlimited).
    pub max_cpu_seconds: u64,
    /// Refuse or warn when a restriction cannot be enforced.
    pub sandbox: SandboxMode,
    /// The only inherited environment variables (r9s writes this list as `allow_env_vars`;
    /// `KEY_ALIASES` lists it for those who read the file as written). r9s's boolean form is
    /// read too: `false`, scripts inherit none of the user's variables; `true`, the default list.
    #[serde(alias = "allow_env_vars", deserialize_with = "env_list")]
    pub env_passthrough: Vec<String>,
    /// Ask before each run, or not.
    pub confirm: ConfirmMode,
    /// Chat: bound on capture round-trips per user message.
    pub max_captures_per_turn: usize,
    /// Chat: bound on side effects (`%{…}`) per user message; the ones past it are refused.
    pub max_side_effects_per_turn: usize,
    /// Refuse a run whose audit line cannot be written, or not.
    pub audit: AuditMode,
    /// The working directory of skill scripts.
    pub workdir: Workdir,
}

/// `env_passthrough`: a list of names, or r9s's boolean (see [`ScriptPolicy::env_passthrough`]).
fn env_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of variable names, or true/false")
        }
        fn visit_bool<E: serde::de::Error>(self, all: bool) -> Result<Vec<String>, E> {
            Ok(if all {
                ScriptPolicy::default().env_passthrough
            } else {
                Vec::new()
            })
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(name) = seq.next_element::<String>()? {
                out.push(name);
            }
            Ok(out)
        }
    }
    d.deserialize_any(V)
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
            max_side_effects_per_turn: 8,
            audit: AuditMode::BestEffort,
            workdir: Workdir::Skill,
        }
    }
}

impl ScriptPolicy {
    /// The defaults with scripts on and `commands` as the allowed patterns (e.g. `["echo",
    /// "git *", "scripts/*"]`); set the other fields on the result.
    pub fn allowing<I, S>(commands: I) -> ScriptPolicy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ScriptPolicy {
            allow_scripts: true,
            allowed_commands: commands.into_iter().map(Into::into).collect(),
            ..ScriptPolicy::default()
        }
    }
}

#[cfg(feature = "runtime")]
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
