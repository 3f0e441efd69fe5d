//! Layering CLI flags over a ScriptPolicy, and checking a policy loaded from an agent file.
//!
//! Flags only ever add: a flag that is absent leaves the agent's setting alone, and there is no
//! flag to switch a restriction back on. A failed `apply_flags` leaves the policy unchanged.

use super::{ConfirmMode, SandboxMode, ScriptPolicy};
use crate::cli::{PolicyFlags, usage};
use crate::command::Pattern;

pub const TIMEOUT_RANGE: std::ops::RangeInclusive<u64> = 1..=600;

impl ScriptPolicy {
    /// Apply `--allow`, `--deny`, `--allow-scripts`, `-y`, `--timeout`, `--allow-network`,
    /// `--allow-filesystem` and `--sandbox`. Errors are usage errors (exit 2) naming the flag.
    pub fn apply_flags(&mut self, flags: &PolicyFlags) -> anyhow::Result<()> {
        for (flag, patterns) in [("--allow", &flags.allow), ("--deny", &flags.deny)] {
            for p in patterns {
                Pattern::parse(p).map_err(|e| usage(format!("{flag} '{p}': {e}")))?;
            }
        }
        if let Some(t) = flags.timeout
            && !TIMEOUT_RANGE.contains(&t)
        {
            return Err(usage(format!(
                "--timeout must be between 1 and 600 seconds, got {t}"
            )));
        }
        let sandbox = match flags.sandbox.as_deref() {
            None => None,
            Some("required") => Some(SandboxMode::Required),
            Some("best-effort") => Some(SandboxMode::BestEffort),
            Some(other) => {
                return Err(usage(format!(
                    "--sandbox must be `required` or `best-effort`, got `{other}`"
                )));
            }
        };

        let workdir = match flags.workdir.as_deref() {
            None => None,
            Some("skill") => Some(super::Workdir::Skill),
            Some("caller") => Some(super::Workdir::Caller),
            Some(other) => {
                return Err(usage(format!(
                    "--workdir must be `skill` or `caller`, got `{other}`"
                )));
            }
        };

        self.allowed_commands.extend(flags.allow.iter().cloned());
        self.denied_commands.extend(flags.deny.iter().cloned());
        if flags.allow_scripts || !flags.allow.is_empty() {
            self.allow_scripts = true;
        }
        if flags.yes {
            self.confirm = ConfirmMode::Never;
        }
        if let Some(t) = flags.timeout {
            self.timeout_seconds = t;
        }
        if flags.allow_network {
            self.allow_network = true;
        }
        if flags.allow_filesystem {
            self.allow_filesystem = true;
        }
        if let Some(mode) = sandbox {
            self.sandbox = mode;
        }
        if let Some(w) = workdir {
            self.workdir = w;
        }
        self.apply_sandbox_flags(flags)
    }

    /// Check a policy from an agent file. The message names the key (and the pattern).
    pub fn validate(&self) -> Result<(), String> {
        if !TIMEOUT_RANGE.contains(&self.timeout_seconds) {
            return Err(format!(
                "timeout_seconds must be between 1 and 600, got {}",
                self.timeout_seconds
            ));
        }
        for (key, patterns) in [
            ("allowed_commands", &self.allowed_commands),
            ("denied_commands", &self.denied_commands),
        ] {
            for p in patterns {
                Pattern::parse(p).map_err(|e| format!("{key}: {e}"))?;
            }
        }
        for (key, value) in [
            ("max_output_bytes", self.max_output_bytes),
            ("max_capture_bytes", self.max_capture_bytes),
            ("max_captures_per_turn", self.max_captures_per_turn),
        ] {
            if value == 0 {
                return Err(format!("{key} must be greater than 0"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::UsageError;
    use serde::Deserialize;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    fn usage_message(e: anyhow::Error) -> String {
        assert!(
            e.downcast_ref::<UsageError>().is_some(),
            "not a usage error: {e}"
        );
        e.to_string()
    }

    #[test]
    fn no_flags_change_nothing() {
        let mut p = ScriptPolicy::default();
        p.apply_flags(&PolicyFlags::default()).unwrap();
        assert_eq!(p, ScriptPolicy::default());
    }

    #[test]
    fn allow_appends_and_implies_allow_scripts() {
        let mut p = ScriptPolicy::default();
        let flags = PolicyFlags {
            allow: strings(&["say", "git status"]),
            deny: strings(&["rm"]),
            ..Default::default()
        };
        p.apply_flags(&flags).unwrap();
        assert!(p.allow_scripts);
        assert_eq!(
            p.allowed_commands,
            strings(&["scripts/*", "say", "git status"])
        );
        assert_eq!(p.denied_commands, strings(&["rm"]));

        let mut p = ScriptPolicy::default();
        let flags = PolicyFlags {
            deny: strings(&["rm"]),
            ..Default::default()
        };
        p.apply_flags(&flags).unwrap();
        assert!(!p.allow_scripts, "--deny alone must not switch scripts on");
    }

    #[test]
    fn switches_and_values() {
        let mut p = ScriptPolicy::default();
        let flags = PolicyFlags {
            allow_scripts: true,
            yes: true,
            timeout: Some(600),
            allow_network: true,
            allow_filesystem: true,
            sandbox: Some("best-effort".into()),
            workdir: Some("caller".into()),
            skills: strings(&["ignored"]),
            audit_log: Some("/tmp/ignored".into()),
            ..Default::default()
        };
        p.apply_flags(&flags).unwrap();
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
    fn absent_flags_keep_the_agent_settings() {
        let mut p = ScriptPolicy {
            allow_scripts: true,
            allow_network: true,
            sandbox: SandboxMode::BestEffort,
            confirm: ConfirmMode::Never,
            timeout_seconds: 5,
            ..ScriptPolicy::default()
        };
        let before = p.clone();
        p.apply_flags(&PolicyFlags::default()).unwrap();
        assert_eq!(p, before);
    }

    #[test]
    fn bad_flags_are_usage_errors_and_change_nothing() {
        for (flags, expected) in [
            (
                PolicyFlags {
                    timeout: Some(0),
                    ..Default::default()
                },
                "--timeout must be between 1 and 600 seconds, got 0",
            ),
            (
                PolicyFlags {
                    timeout: Some(601),
                    ..Default::default()
                },
                "--timeout must be between 1 and 600 seconds, got 601",
            ),
            (
                PolicyFlags {
                    allow: strings(&["say", "echo; rm"]),
                    ..Default::default()
                },
                "--allow 'echo; rm': invalid pattern `echo; rm`: shell syntax is not supported; commands run without a shell (found `;`)",
            ),
            (
                PolicyFlags {
                    deny: strings(&["/bin/*"]),
                    ..Default::default()
                },
                "--deny '/bin/*': invalid pattern",
            ),
            (
                PolicyFlags {
                    sandbox: Some("off".into()),
                    ..Default::default()
                },
                "--sandbox must be `required` or `best-effort`, got `off`",
            ),
        ] {
            let mut p = ScriptPolicy::default();
            let msg = usage_message(p.apply_flags(&flags).unwrap_err());
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
            p.validate().unwrap_err()
        };
        assert_eq!(
            bad(|p| p.timeout_seconds = 0),
            "timeout_seconds must be between 1 and 600, got 0"
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

    #[derive(Debug, Deserialize)]
    struct AgentFile {
        script_policy: ScriptPolicy,
    }

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

    #[test]
    fn toml_unknown_key_is_an_error_naming_key_and_line() {
        let err = toml::from_str::<AgentFile>(
            "[script_policy]\nallow_scripts = true\nallowed_comands = [\"say\"]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("allowed_comands"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        let err = toml::from_str::<AgentFile>("[script_policy]\nsandbox = \"off\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("off"), "{err}");
    }
}
