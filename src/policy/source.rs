//! Who may raise the script policy (DESIGN §5a). Only the user does: with command-line flags, or
//! with an agent file in their own config folders. Any other agent file (a trusted project's, or
//! one named with `--agent PATH`) may only narrow it: a setting that would grant more is dropped
//! back to its default, and the caller tells the user which flag grants it. Pure.

use super::{ConfirmMode, SandboxMode, ScriptPolicy};

/// A setting dropped from a file that may not raise the policy, and how the user grants it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The key that was dropped (`params.NAME` for a request parameter).
    pub key: std::borrow::Cow<'static, str>,
    /// The flag or setting that grants it instead.
    pub grant: &'static str,
}

/// What grants a setting that no flag grants: the user copying the agent into their own folder.
const OWN_AGENT: &str = "an agent file in $XDG_CONFIG_HOME/skillpipe/agents";

/// True when `pattern` allows only what the default `scripts/*` allows: a script path under
/// `scripts/` (`scripts/x.py`, `SKILL/scripts/x.py`, `SKILL:scripts/x.py`), with or without
/// arguments after it. `SKILL:x` is not: it also names a script at the skill root.
fn within_scripts(pattern: &str) -> bool {
    let Ok(words) = shell_words::split(pattern) else {
        return false;
    };
    match words.first().and_then(|w| crate::command::script_ref(w)) {
        Some(crate::command::ScriptRef::Path { rel_path, .. }) => {
            rel_path.starts_with("scripts/") && crate::command::Pattern::parse(pattern).is_ok()
        }
        _ => false,
    }
}

/// `p` with every setting that grants more than the default put back to the default, and the
/// list of what was dropped. Narrowing settings (deny patterns, lower limits, `audit`) stay.
pub fn narrow_only(p: &ScriptPolicy) -> (ScriptPolicy, Vec<Ignored>) {
    let d = ScriptPolicy::default();
    let mut out = p.clone();
    let mut ignored = Vec::new();
    // A key whose value grants more goes back to the default's, and is named with its grant.
    macro_rules! narrow {
        (> $key:ident) => {
            narrow!($key, p.$key > d.$key)
        };
        // A limit where 0 is none: higher, or none where the default has one.
        (limit $key:ident) => {
            narrow!($key, p.$key > d.$key || (p.$key == 0 && d.$key != 0))
        };
        // A list that may only keep some of the default's entries.
        (in $key:ident) => {
            narrow!($key, !p.$key.iter().all(|x| d.$key.contains(x)))
        };
        ($key:ident, $raised:expr) => {
            if $raised {
                out.$key = d.$key.clone();
                let key = stringify!($key);
                let grant = super::flags::flag(key).unwrap_or(OWN_AGENT);
                ignored.push(Ignored {
                    key: key.into(),
                    grant,
                });
            }
        };
    }
    narrow!(allow_scripts, p.allow_scripts);
    narrow!(confirm, p.confirm == ConfirmMode::Never);
    // Patterns within the default's (`scripts/x.py`, `SKILL/scripts/*`) narrow it and stay;
    // any other is dropped. None left: the default, as if the key were absent.
    let (within, raising): (Vec<String>, Vec<String>) = p
        .allowed_commands
        .iter()
        .cloned()
        .partition(|pat| d.allowed_commands.contains(pat) || within_scripts(pat));
    narrow!(allowed_commands, !raising.is_empty());
    if !raising.is_empty() && !within.is_empty() {
        out.allowed_commands = within;
    }
    narrow!(allow_network, p.allow_network);
    narrow!(allow_filesystem, p.allow_filesystem);
    narrow!(writable_paths, !p.writable_paths.is_empty());
    narrow!(sandbox, p.sandbox == SandboxMode::BestEffort);
    narrow!(in env_passthrough);
    narrow!(in allowed_interpreters);
    narrow!(> timeout_seconds);
    narrow!(> max_output_bytes);
    narrow!(> max_capture_bytes);
    narrow!(> max_captures_per_turn);
    narrow!(> max_side_effects_per_turn);
    // The sandbox's second layer: reading hidden paths, Unix sockets, higher limits (0 is none).
    narrow!(allow_read, !p.allow_read.is_empty());
    narrow!(allowed_sockets, !p.allowed_sockets.is_empty());
    narrow!(limit max_processes);
    narrow!(limit max_memory_mb);
    narrow!(limit max_file_size_mb);
    narrow!(limit max_tmp_mb);
    narrow!(limit max_cpu_seconds);
    (out, ignored)
}

/// The one-line notice for what [`narrow_only`] dropped from `file`, if anything.
pub fn ignored_notice(
    file: &str,
    ignored: &[Ignored],
    open_to_others: Option<&std::path::Path>,
) -> Option<String> {
    if ignored.is_empty() {
        return None;
    }
    let items: Vec<String> = ignored
        .iter()
        .map(|i| format!("{} (grant with {})", i.key, i.grant))
        .collect();
    let why = match open_to_others {
        Some(open) => format!(
            "{} could be changed by another user (make it yours and `chmod o-w` it)",
            open.display()
        ),
        None => "not in your own config folders".to_string(),
    };
    Some(format!(
        "{file}: {why}, so it may only narrow the script policy; ignored: {}",
        items.join(", ")
    ))
}

/// Where the value of policy key `key` came from, for `agents show`: the agent file named
/// `file` set it, it was ignored from there, or it is the default.
pub fn origin_of(key: &str, set_by_file: bool, ignored: &[Ignored], file: &str) -> String {
    if let Some(i) = ignored.iter().find(|i| i.key == key) {
        return format!(
            "default; {file} asked to raise it (ignored; grant with {})",
            i.grant
        );
    }
    if set_by_file {
        return file.to_string();
    }
    "default".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grant_is_dropped_and_named() {
        let hostile = ScriptPolicy {
            allow_scripts: true,
            confirm: ConfirmMode::Never,
            allowed_commands: vec!["*".into()],
            allow_network: true,
            allow_filesystem: true,
            writable_paths: vec!["~".into()],
            sandbox: SandboxMode::BestEffort,
            env_passthrough: vec!["PATH".into(), "OPENAI_API_KEY".into()],
            allowed_interpreters: vec!["python3".into(), "ruby".into()],
            timeout_seconds: 600,
            max_captures_per_turn: 100,
            ..ScriptPolicy::default()
        };
        let (p, ignored) = narrow_only(&hostile);
        assert_eq!(p, ScriptPolicy::default());
        let keys: Vec<&str> = ignored.iter().map(|i| &*i.key).collect();
        assert_eq!(
            keys,
            [
                "allow_scripts",
                "confirm",
                "allowed_commands",
                "allow_network",
                "allow_filesystem",
                "writable_paths",
                "sandbox",
                "env_passthrough",
                "allowed_interpreters",
                "timeout_seconds",
                "max_captures_per_turn"
            ]
        );
        let line = ignored_notice("agents/x.toml", &ignored, None).unwrap();
        assert!(line.starts_with("agents/x.toml: not in your own config folders"));
        assert!(line.contains("allow_scripts (grant with --allow-scripts)"));
        assert!(line.contains("confirm (grant with -y)"));
        assert!(!line.contains('\n'));
    }

    #[test]
    fn narrowing_settings_stay() {
        let narrow = ScriptPolicy {
            denied_commands: vec!["rm".into()],
            allowed_commands: vec![],
            env_passthrough: vec!["PATH".into()],
            allowed_interpreters: vec!["python3".into()],
            timeout_seconds: 5,
            max_capture_bytes: 100,
            audit: super::super::AuditMode::Required,
            ..ScriptPolicy::default()
        };
        let (p, ignored) = narrow_only(&narrow);
        assert_eq!(p, narrow);
        assert!(ignored.is_empty());
        assert_eq!(ignored_notice("x", &ignored, None), None);
    }

    #[test]
    fn script_patterns_within_the_default_narrow_it() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for pats in [
            &["data/scripts/echo.py"][..],
            &["scripts/x.py --fast", "data:scripts/y.sh"],
        ] {
            let (p, ignored) = narrow_only(&ScriptPolicy {
                allowed_commands: strings(pats),
                ..ScriptPolicy::default()
            });
            assert_eq!(p.allowed_commands, strings(pats));
            assert!(ignored.is_empty(), "{pats:?}");
        }
        // A raising one is dropped, the narrowing ones stay.
        let (p, ignored) = narrow_only(&ScriptPolicy {
            allowed_commands: strings(&["data/scripts/echo.py", "git", "data:root"]),
            ..ScriptPolicy::default()
        });
        assert_eq!(p.allowed_commands, strings(&["data/scripts/echo.py"]));
        assert_eq!(ignored[0].key, "allowed_commands");
        // Only raising ones: the default, as if the key were absent.
        let (p, _) = narrow_only(&ScriptPolicy {
            allowed_commands: strings(&["*"]),
            ..ScriptPolicy::default()
        });
        assert_eq!(p.allowed_commands, ScriptPolicy::default().allowed_commands);
    }

    #[test]
    fn origin_names_file_default_or_ignored() {
        let ignored = vec![Ignored {
            key: "allow_network".into(),
            grant: "--allow-network",
        }];
        assert_eq!(
            origin_of("timeout_seconds", true, &ignored, "a.toml"),
            "a.toml"
        );
        assert_eq!(origin_of("confirm", false, &ignored, "a.toml"), "default");
        assert!(origin_of("allow_network", true, &ignored, "a.toml").contains("--allow-network"));
    }

    #[test]
    fn sandbox_keys_that_grant_more_are_dropped_and_narrowing_ones_kept() {
        let p = ScriptPolicy {
            allow_read: vec!["~/.ssh".into()],
            allowed_sockets: vec!["/run/docker.sock".into()],
            deny_read: vec!["~/notes".into()],
            max_processes: 0,
            max_memory_mb: 64,
            max_cpu_seconds: 6000,
            ..ScriptPolicy::default()
        };
        let (out, ignored) = narrow_only(&p);
        let keys: Vec<&str> = ignored.iter().map(|i| &*i.key).collect();
        assert_eq!(
            keys,
            [
                "allow_read",
                "allowed_sockets",
                "max_processes",
                "max_cpu_seconds"
            ]
        );
        let d = ScriptPolicy::default();
        assert!(out.allow_read.is_empty() && out.allowed_sockets.is_empty());
        assert_eq!(
            (out.max_processes, out.max_cpu_seconds),
            (d.max_processes, d.max_cpu_seconds)
        );
        assert_eq!(out.max_memory_mb, 64);
        assert_eq!(out.deny_read, p.deny_read);
    }
}
