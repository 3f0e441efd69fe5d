//! Layering overrides (the command line's policy flags) over a ScriptPolicy, and checking a
//! policy loaded from an agent file.
//!
//! Overrides only ever add: an absent one leaves the agent's setting alone, and there is none
//! to switch a restriction back on. A failed [`ScriptPolicy::apply`] leaves the policy unchanged.

use super::{ConfirmMode, SandboxMode, ScriptPolicy};
use crate::command::{Pattern, PatternError};

/// The allowed range of `timeout_seconds`.
pub const TIMEOUT_RANGE: std::ops::RangeInclusive<u64> = 1..=600;

/// Changes to a policy requested by its user: plain data, so any front end can fill it. With
/// feature `cli` it is also the policy flag group of `skillpipe`'s commands, each field's doc its
/// `--help` line; a field sets the policy key of its name (`max_memory`: `max_memory_mb`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct PolicyOverrides {
    /// Master switch: allow directives to run at all (only skill scripts, scripts/*, by default).
    #[cfg_attr(feature = "cli", arg(long, help_heading = POLICY))]
    pub allow_scripts: bool,
    /// Do not ask before each run (confirm = "never").
    #[cfg_attr(feature = "cli", arg(short = 'y', long = "yes", help_heading = POLICY))]
    pub confirm_never: bool,
    /// Allow a command pattern (implies --allow-scripts): `say`, `git status`, `calc:*`.
    #[cfg_attr(feature = "cli", arg(long = "allow", value_name = "PATTERN", help_heading = POLICY))]
    pub allow: Vec<String>,
    /// Deny a command pattern (wins over --allow).
    #[cfg_attr(feature = "cli", arg(long = "deny", value_name = "PATTERN", help_heading = POLICY))]
    pub deny: Vec<String>,
    /// Timeout per command in seconds (1..=600).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", help_heading = POLICY))]
    pub timeout: Option<u64>,
    /// Let commands use the network.
    #[cfg_attr(feature = "cli", arg(long, help_heading = SANDBOX))]
    pub allow_network: bool,
    /// Let commands write anywhere.
    #[cfg_attr(feature = "cli", arg(long, help_heading = SANDBOX))]
    pub allow_filesystem: bool,
    /// What to do when a restriction cannot be enforced: refuse (required) or warn and run.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODE", value_parser = one_of::<SandboxMode>(["required", "best-effort"]), help_heading = SANDBOX))]
    pub sandbox: Option<SandboxMode>,
    /// Working directory of skill scripts: the skill's folder, or where skillpipe was started.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR", value_parser = one_of::<super::Workdir>(["skill", "caller"]), help_heading = SANDBOX))]
    pub workdir: Option<super::Workdir>,
    // `~/` is `$HOME`; each is made absolute.
    /// Let commands write beneath DIR (repeatable; `--writable .` is the working directory).
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR", help_heading = SANDBOX))]
    pub writable: Vec<std::path::PathBuf>,
    /// Accept a --writable path refused by default ($HOME, PATH folders, tools' settings, system
    /// folders, .git …); skillpipe's own policy files stay read-only.
    #[cfg_attr(feature = "cli", arg(long, help_heading = SANDBOX))]
    pub force_writable: bool,
    /// Let commands read PATH, which they do not see by default (`skillpipe doctor` shows what
    /// they see).
    #[cfg_attr(feature = "cli", arg(long, value_name = "PATH", help_heading = SANDBOX))]
    pub allow_read: Vec<std::path::PathBuf>,
    /// Let commands connect to the Unix socket at PATH (repeatable).
    #[cfg_attr(feature = "cli", arg(long, value_name = "PATH", help_heading = SANDBOX))]
    pub allow_socket: Vec<std::path::PathBuf>,
    /// Processes at once per run (0: unlimited).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", help_heading = SANDBOX))]
    pub max_processes: Option<u64>,
    /// Memory of the whole run in MiB, its processes together (0: unlimited).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MB", help_heading = SANDBOX))]
    pub max_memory: Option<u64>,
    /// Largest file a command may write, MiB (0: unlimited).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MB", help_heading = SANDBOX))]
    pub max_file_size: Option<u64>,
    /// Size of the run's $TMPDIR in MiB (0: the kernel's default, half the RAM).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MB", help_heading = SANDBOX))]
    pub max_tmp: Option<u64>,
    /// CPU seconds per process (0: unlimited).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", help_heading = SANDBOX))]
    pub max_cpu: Option<u64>,
    /// Replaces `max_captures_per_turn` (`chat --max-captures`: the user's bound, which may
    /// raise an agent's).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub max_captures: Option<usize>,
    /// Replaces `max_side_effects_per_turn` (`chat --max-side-effects`, the user's bound).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub max_side_effects: Option<usize>,
}

/// The `--help` headings of these flags (`skillpipe`'s other policy flags join them).
#[cfg(feature = "cli")]
pub(crate) mod heading {
    pub const POLICY: &str = "Policy";
    pub const SANDBOX: &str = "Sandbox";
}
#[cfg(feature = "cli")]
use heading::{POLICY, SANDBOX};

/// A flag that takes one of `names`, read as the policy's own value of that name (its serde
/// spelling): clap lists the names in `--help` and refuses any other.
#[cfg(feature = "cli")]
fn one_of<T: serde::de::DeserializeOwned + Clone + Send + Sync + 'static>(
    names: [&'static str; 2],
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).map(|name| {
        T::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(&name))
            .expect("a name clap accepted is a value of the policy")
    })
}

/// Why a policy or its overrides were refused. The message names the key (or flag) and value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A command pattern that does not parse; `key` is the list (or flag) it was in.
    #[error("{}: {error}", shown_key(key, &error.pattern))]
    Pattern {
        /// `--allow`, `--deny`, `allowed_commands` or `denied_commands`.
        key: &'static str,
        /// What is wrong with it (it names the pattern).
        error: PatternError,
    },
    /// A timeout outside 1..=600 seconds; `key` is `--timeout` or `timeout_seconds`.
    #[error("{key} must be between 1 and 600 seconds, got {value}")]
    Timeout {
        /// `--timeout` or `timeout_seconds`.
        key: &'static str,
        /// The value given.
        value: u64,
    },
    /// A writable path that is refused (or cannot be made absolute); names the flag or key.
    #[error("{0}")]
    Writable(String),
    /// An `--allow-read` that would show nothing: no such path, or a path inside a folder
    /// that is hidden as a whole.
    #[error("{0}")]
    AllowRead(String),
    /// A limit that must be positive.
    #[error("{key} must be greater than 0")]
    Zero {
        /// The key.
        key: &'static str,
    },
}

/// A flag is shown with its value (`--allow 'x'`), a file key alone.
fn shown_key(key: &str, pattern: &str) -> String {
    if key.starts_with("--") {
        format!("{key} '{pattern}'")
    } else {
        key.to_string()
    }
}

/// Every pattern parses; the error names the list (or flag) it was in.
fn check_patterns(lists: [(&'static str, &Vec<String>); 2]) -> Result<(), PolicyError> {
    for (key, patterns) in lists {
        for p in patterns {
            Pattern::parse(p).map_err(|error| PolicyError::Pattern { key, error })?;
        }
    }
    Ok(())
}

impl ScriptPolicy {
    /// Applies `overrides`. Errors name the flag; on error nothing changes.
    pub(crate) fn apply(&mut self, overrides: &PolicyOverrides) -> Result<(), PolicyError> {
        // Worked on a copy, kept only when every check passed (the sandbox flags' checks come
        // after other keys are set).
        let mut next = self.clone();
        next.apply_to(overrides)?;
        *self = next;
        Ok(())
    }

    fn apply_to(&mut self, overrides: &PolicyOverrides) -> Result<(), PolicyError> {
        check_patterns([("--allow", &overrides.allow), ("--deny", &overrides.deny)])?;
        if let Some(t) = overrides.timeout
            && !TIMEOUT_RANGE.contains(&t)
        {
            return Err(PolicyError::Timeout {
                key: "--timeout",
                value: t,
            });
        }
        if overrides.max_captures == Some(0) {
            return Err(PolicyError::Zero {
                key: "--max-captures",
            });
        }
        let o = overrides;
        self.allowed_commands.extend(o.allow.iter().cloned());
        self.denied_commands.extend(o.deny.iter().cloned());
        self.allow_scripts |= o.allow_scripts || !o.allow.is_empty();
        if o.confirm_never {
            self.confirm = ConfirmMode::Never;
        }
        self.timeout_seconds = o.timeout.unwrap_or(self.timeout_seconds);
        self.allow_network |= o.allow_network;
        self.allow_filesystem |= o.allow_filesystem;
        self.sandbox = o.sandbox.unwrap_or(self.sandbox);
        self.workdir = o.workdir.unwrap_or(self.workdir);
        self.max_captures_per_turn = o.max_captures.unwrap_or(self.max_captures_per_turn);
        self.max_side_effects_per_turn =
            o.max_side_effects.unwrap_or(self.max_side_effects_per_turn);
        #[cfg(feature = "runtime")]
        self.apply_sandbox_flags(overrides)?;
        Ok(())
    }

    /// Check a policy from an agent file. The message names the key (and the pattern).
    pub fn validate(&self) -> Result<(), PolicyError> {
        if !TIMEOUT_RANGE.contains(&self.timeout_seconds) {
            return Err(PolicyError::Timeout {
                key: "timeout_seconds",
                value: self.timeout_seconds,
            });
        }
        check_patterns([
            ("allowed_commands", &self.allowed_commands),
            ("denied_commands", &self.denied_commands),
        ])?;
        for (key, value) in [
            ("max_output_bytes", self.max_output_bytes),
            ("max_capture_bytes", self.max_capture_bytes),
            ("max_captures_per_turn", self.max_captures_per_turn),
            ("max_side_effects_per_turn", self.max_side_effects_per_turn),
        ] {
            if value == 0 {
                return Err(PolicyError::Zero { key });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "runtime")]
    use serde::Deserialize;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn absent_flags_keep_the_agent_settings() {
        let agents = ScriptPolicy {
            allow_scripts: true,
            allow_network: true,
            sandbox: SandboxMode::BestEffort,
            confirm: ConfirmMode::Never,
            timeout_seconds: 5,
            ..ScriptPolicy::default()
        };
        for before in [ScriptPolicy::default(), agents] {
            let mut p = before.clone();
            p.apply(&PolicyOverrides::default()).unwrap();
            assert_eq!(p, before);
        }
    }

    #[test]
    fn allow_appends_and_implies_allow_scripts() {
        let mut p = ScriptPolicy::default();
        let flags = PolicyOverrides {
            allow: strings(&["say", "git status"]),
            deny: strings(&["rm"]),
            ..Default::default()
        };
        p.apply(&flags).unwrap();
        assert!(p.allow_scripts);
        assert_eq!(
            p.allowed_commands,
            strings(&["scripts/*", "say", "git status"])
        );
        assert_eq!(p.denied_commands, strings(&["rm"]));

        let mut p = ScriptPolicy::default();
        let flags = PolicyOverrides {
            deny: strings(&["rm"]),
            ..Default::default()
        };
        p.apply(&flags).unwrap();
        assert!(!p.allow_scripts, "--deny alone must not switch scripts on");
    }

    #[test]
    fn switches_and_values() {
        let mut p = ScriptPolicy::default();
        let flags = PolicyOverrides {
            allow_scripts: true,
            confirm_never: true,
            timeout: Some(600),
            allow_network: true,
            allow_filesystem: true,
            sandbox: Some(SandboxMode::BestEffort),
            workdir: Some(super::super::Workdir::Caller),
            ..Default::default()
        };
        p.apply(&flags).unwrap();
        let expected = ScriptPolicy {
            allow_scripts: true,
            confirm: ConfirmMode::Never,
            timeout_seconds: 600,
            allow_network: true,
            allow_filesystem: true,
            sandbox: SandboxMode::BestEffort,
            workdir: super::super::Workdir::Caller,
            ..ScriptPolicy::default()
        };
        assert_eq!(p, expected);
    }

    #[test]
    fn bad_overrides_are_errors_naming_the_flag_and_change_nothing() {
        let with = |f: fn(&mut PolicyOverrides)| {
            let mut o = PolicyOverrides::default();
            f(&mut o);
            o
        };
        for (flags, expected) in [
            (
                with(|o| o.timeout = Some(0)),
                "--timeout must be between 1 and 600 seconds, got 0",
            ),
            (
                with(|o| o.timeout = Some(601)),
                "--timeout must be between 1 and 600 seconds, got 601",
            ),
            (
                with(|o| o.allow = strings(&["say", "echo; rm"])),
                "--allow 'echo; rm': invalid pattern `echo; rm`: shell syntax is not supported; commands run without a shell (found `;`)",
            ),
            (
                with(|o| o.deny = strings(&["/bin/*"])),
                "--deny '/bin/*': invalid pattern",
            ),
            // A sandbox flag checked last, after the others were set on the copy.
            #[cfg(feature = "runtime")]
            (
                with(|o| {
                    (o.allow_scripts, o.allow_network) = (true, true);
                    o.allow_read = vec!["/no/such/path/anywhere".into()];
                }),
                "--allow-read /no/such/path/anywhere: no such file or directory",
            ),
        ] {
            let mut p = ScriptPolicy::default();
            let msg = p.apply(&flags).unwrap_err().to_string();
            assert!(msg.starts_with(expected), "{msg}");
            assert_eq!(p, ScriptPolicy::default());
        }
    }

    #[test]
    fn validate_checks_ranges_and_patterns() {
        assert_eq!(ScriptPolicy::default().validate(), Ok(()));
        let bad = |f: fn(&mut ScriptPolicy)| {
            let mut p = ScriptPolicy::default();
            f(&mut p);
            p.validate().unwrap_err().to_string()
        };
        assert_eq!(
            bad(|p| p.timeout_seconds = 0),
            "timeout_seconds must be between 1 and 600 seconds, got 0"
        );
        assert!(bad(|p| p.timeout_seconds = 601).contains("601"));
        assert_eq!(
            bad(|p| p.allowed_commands.push("ls [x".into())),
            "allowed_commands: invalid pattern `ls [x`: unterminated `[` in `[x`"
        );
        assert!(bad(|p| p.denied_commands.push("a | b".into())).starts_with("denied_commands: "));
        assert_eq!(
            bad(|p| p.max_output_bytes = 0),
            "max_output_bytes must be greater than 0"
        );
        assert_eq!(
            bad(|p| p.max_capture_bytes = 0),
            "max_capture_bytes must be greater than 0"
        );
        assert_eq!(
            bad(|p| p.max_captures_per_turn = 0),
            "max_captures_per_turn must be greater than 0"
        );
    }

    #[cfg(feature = "runtime")]
    #[derive(Debug, Deserialize)]
    struct AgentFile {
        script_policy: ScriptPolicy,
    }

    #[cfg(feature = "runtime")]
    #[test]
    fn toml_section_fills_missing_keys_with_defaults() {
        let a: AgentFile = toml::from_str(
            "[script_policy]\nallow_scripts = true\nallowed_commands = [\"say\", \"scripts/*\"]\n\
             sandbox = \"best-effort\"\nconfirm = \"never\"\n",
        )
        .unwrap();
        let expected = ScriptPolicy {
            allow_scripts: true,
            allowed_commands: strings(&["say", "scripts/*"]),
            sandbox: SandboxMode::BestEffort,
            confirm: ConfirmMode::Never,
            ..ScriptPolicy::default()
        };
        assert_eq!(a.script_policy, expected);
        let a: AgentFile = toml::from_str("[script_policy]\n").unwrap();
        assert_eq!(a.script_policy, ScriptPolicy::default());
    }

    #[cfg(feature = "runtime")]
    #[test]
    fn toml_bad_value_is_an_error_naming_value_and_line() {
        let err = toml::from_str::<AgentFile>("[script_policy]\nsandbox = \"off\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("off"), "{err}");
    }
}
