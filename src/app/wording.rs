//! How the `skillpipe` binary words refusals: the library's reasons (in the policy's terms) with
//! the command-line flag that lifts each, as users of the binary have always seen them. Every
//! front end of the binary (filter, chat, REPL, `run`, MCP) gets it through its dispatcher.

use crate::audit::AuditError;
use crate::chat::Notice;
use crate::confirm::AskError;
use crate::dispatch::Wording;
use crate::exec::ExecError;
use crate::model::{ModelError, ModelWords};
use crate::policy::Denied;
use crate::sandbox::{Hint, Setting};

/// The binary's wording, given to every dispatcher it builds.
pub(crate) const CLI: Wording = Wording {
    denied,
    ask,
    exec,
    hint,
    setting,
    audit,
};

/// A policy refusal, with `--allow-scripts` / `--allow PATTERN` where one lifts it.
pub(crate) fn denied(d: &Denied) -> String {
    match d {
        Denied::ScriptsOff => {
            "scripts are not allowed (pass --allow-scripts or set allow_scripts)".to_string()
        }
        Denied::NotAllowed {
            command,
            suggestion: Some(pattern),
        } => {
            // Quoted for a shell: pasted as is, `--allow` gets the pattern back.
            let quoted = pattern.replace('\'', "'\\''");
            format!("`{command}` is not in allowed_commands (allow it with --allow '{quoted}')")
        }
        other => other.to_string(),
    }
}

/// No answer to a confirmation, with `-y` where there is no terminal.
fn ask(e: &AskError) -> String {
    const NO_TERMINAL: &str = "no terminal to ask for confirmation (pass -y to run without asking)";
    match e {
        AskError::NoTerminal => NO_TERMINAL.to_string(),
        AskError::Terminal(io) => format!("{NO_TERMINAL}: {io}"),
        other => other.to_string(),
    }
}

/// A command that could not start, with `skillpipe doctor` and `--sandbox best-effort` when the
/// sandbox is what failed.
fn exec(e: &ExecError) -> String {
    match e {
        ExecError::Sandbox(why) => format!(
            "cannot sandbox the command: {} (see `skillpipe doctor`; --sandbox best-effort runs it anyway, with a warning)",
            why.word(setting)
        ),
        other => other.to_string(),
    }
}

/// An audit log that cannot be written, with `--audit-log` where there is no place for it.
pub(crate) fn audit(e: &AuditError) -> String {
    match e {
        AuditError::NoLocation => {
            "no audit log location (set XDG_STATE_HOME or HOME, or pass --audit-log)".to_string()
        }
        other => other.to_string(),
    }
}

/// How a duplicate skill's warning ends: the flag that puts its folder (shell-quoted) first.
pub(crate) fn put_first(dir: &str) -> String {
    format!("name its folder first: --skills-dir {dir}")
}

/// A chat notice, with the flags that change what it is about.
pub(crate) fn notice(n: &Notice) -> String {
    match n {
        Notice::ToolsIgnored => crate::chat::notice::tools_ignored("--tools"),
        Notice::CutAtTokenLimit => crate::chat::notice::cut_at_token_limit(
            "--max-tokens N, or max_tokens in the agent's [params],",
        ),
        other => other.to_string(),
    }
}

/// A model endpoint's error, with the flags that change what was asked.
pub(crate) fn model(e: &ModelError) -> String {
    e.worded(&ModelWords {
        model: "the model name (--model)",
        fewer_skills: "fewer skills (--skill NAME)",
        no_tools: "no --tools",
    })
}

/// A setting a sandbox message names, as the flag that sets it.
fn setting(s: &Setting) -> String {
    match s {
        Setting::BestEffort => "--sandbox best-effort".to_string(),
        Setting::AllowRead(path) => format!("--allow-read {path}"),
        Setting::AllowedSockets => "--allow-socket".to_string(),
        Setting::AllowNetwork => "--allow-network".to_string(),
    }
}

/// What a failed run likely ran into, with the flag that lifts it.
fn hint(h: &Hint) -> String {
    match h {
        Hint::Limit { key, value, unit } => {
            let flag = match *key {
                "max_cpu_seconds" => "--max-cpu SECS",
                "max_file_size_mb" => "--max-file-size MB",
                "max_tmp_mb" => "--max-tmp MB",
                "max_processes" => "--max-processes N",
                "max_memory_mb" => "--max-memory MB",
                _ => return h.to_string(),
            };
            let v = value.map_or(String::new(), |v| format!(" = {v}{unit}"));
            format!("sandbox: the run likely hit the limit {key}{v}; raise it with {flag}")
        }
        Hint::OutsideView { path } => format!(
            "sandbox: {} is outside the run's view: --allow-read {} shows it to scripts, \
             --writable DIR lets them write in DIR",
            path.display(),
            path.display()
        ),
        Hint::Hidden { path } => format!(
            "sandbox: {} is hidden from scripts (deny_read); lift it with --allow-read {}",
            path.display(),
            path.display()
        ),
        Hint::HiddenSomewhere { name, here } => format!(
            "{}; lift it with --allow-read and its full path",
            crate::sandbox::hint::hidden_somewhere(name, here.as_deref())
        ),
        // Names no flag: the same either way.
        Hint::OwnPermissions { .. } => h.to_string(),
        Hint::Sockets { network_off, named } => format!(
            "{}; allow one with --allow-socket PATH{}",
            crate::sandbox::hint::sockets_closed(*named),
            if *network_off {
                " (a separate flag from --allow-network, which opens only the network)"
            } else {
                ""
            }
        ),
        Hint::Writes {
            writable,
            ran_in: Some(dir),
        } => format!(
            "{}; {}",
            crate::sandbox::hint::writes_refused(writable),
            crate::sandbox::hint::ran_elsewhere(dir, "--workdir caller")
        ),
        Hint::Writes { writable, .. } => format!(
            "{}; allow {} with --writable DIR",
            crate::sandbox::hint::writes_refused(writable),
            if writable.is_empty() {
                "a directory"
            } else {
                "another directory"
            }
        ),
        Hint::Denied {
            path,
            in_proc,
            read,
        } => crate::sandbox::hint::denied_story(path.as_deref(), *in_proc, *read).unwrap_or_else(
            || {
                format!(
                    "{}; it may lift with --writable DIR (a write), --allow-read PATH (a hidden \
                     file) or --allow-socket PATH (a Unix socket)",
                    crate::sandbox::hint::denied_words(path.as_deref(), *read)
                )
            },
        ),
        // Names no flag: the same either way.
        Hint::VcsMetadata { .. } => h.to_string(),
        Hint::Namespaces => h.to_string(),
        Hint::Network { local } => format!(
            "{}: --allow-network",
            crate::sandbox::hint::no_network(local.as_deref())
        ),
        Hint::Protected {
            path,
            why,
            ran_in: Some(dir),
        } => format!(
            "{}; {}",
            crate::sandbox::hint::protected(path, why),
            crate::sandbox::hint::ran_elsewhere(dir, "--workdir caller")
        ),
        // Names no flag: the same either way.
        Hint::Protected { .. } => h.to_string(),
        Hint::Timeout {
            after,
            network_off,
            tool,
        } => {
            let mut s = match tool {
                Some((tool, policy)) => crate::sandbox::hint::tool_timeout(tool, *after, *policy),
                None => format!(
                    "stopped at the timeout (timeout_seconds = {}): --timeout SECS \
                     allows longer (at most 600)",
                    crate::term::duration::text(*after)
                ),
            };
            if *network_off {
                s.push_str(
                    "; with the network off, a script waiting on a download also ends here \
                     (--allow-network)",
                );
            }
            s
        }
        // Names no key: the same either way.
        Hint::Refused { .. } => h.to_string(),
        Hint::Workdir { arg } => format!(
            "{}: --workdir caller runs skill scripts where you are",
            crate::sandbox::hint::workdir_story(arg)
        ),
        Hint::RootAsked { git } => format!(
            "{}: --workdir caller runs skill scripts where you are",
            crate::sandbox::hint::root_story(*git)
        ),
        Hint::MissingModule(_) => {
            h.missing_module(|path| format!("--allow-read {}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Target, parse_argv};

    fn judged(policy: &crate::ScriptPolicy, program: &str, args: &[String]) -> Denied {
        let target = Target::System { program, args };
        crate::policy::decide(&policy.compile().unwrap(), &target).unwrap_err()
    }

    #[test]
    fn the_binary_names_its_flags_and_the_library_does_not() {
        let off = Denied::ScriptsOff;
        assert_eq!(
            denied(&off),
            "scripts are not allowed (pass --allow-scripts or set allow_scripts)"
        );
        assert!(!off.to_string().contains("--"), "{off}");

        let nothing = crate::ScriptPolicy::allowing(Vec::<String>::new());
        let d = judged(&nothing, "it's", &["a\nb".to_string()]);
        assert_eq!(
            denied(&d),
            r"`'it'\''s' 'a␊b'` is not in allowed_commands (allow it with --allow ''\''it'\''\'\'''\''s'\''')"
        );
        assert!(!d.to_string().contains("--allow"), "{d}");
        // What the shell hands to --allow is the suggested pattern, which allows the command.
        let Denied::NotAllowed {
            suggestion: Some(pattern),
            ..
        } = &d
        else {
            panic!("{d:?}")
        };
        let pasted = format!("x '{}'", pattern.replace('\'', "'\\''"));
        assert_eq!(&parse_argv(&pasted).unwrap()[1], pattern);

        // A denied pattern needs no flag: the same text either way.
        let mut policy = crate::ScriptPolicy::allowing(["git *"]);
        policy.denied_commands = vec!["git push *".into()];
        let d = judged(&policy, "git", &parse_argv("push origin").unwrap());
        assert_eq!(denied(&d), d.to_string());
        assert_eq!(
            d.to_string(),
            "`git push origin` matches denied pattern `git push *`"
        );
    }

    #[test]
    fn a_sandbox_hint_names_the_flag_and_the_library_the_key() {
        let cases = [
            (
                Hint::Limit {
                    key: "max_cpu_seconds",
                    value: Some(10),
                    unit: " s",
                },
                "sandbox: the run likely hit the limit max_cpu_seconds = 10 s; raise it with --max-cpu SECS",
            ),
            (
                Hint::Hidden {
                    path: "/h/.aws".into(),
                },
                "sandbox: /h/.aws is hidden from scripts (deny_read); lift it with --allow-read /h/.aws",
            ),
            (
                Hint::Writes {
                    writable: vec![],
                    ran_in: None,
                },
                "sandbox: writes outside $TMPDIR are refused; allow a directory with --writable DIR",
            ),
            (
                Hint::Writes {
                    writable: vec!["/p/out".into()],
                    ran_in: None,
                },
                "sandbox: writes outside $TMPDIR and /p/out are refused; allow another directory with --writable DIR",
            ),
            (
                Hint::VcsMetadata { name: ".git" },
                "sandbox: .git stays read-only, inside writable paths too (its hooks and settings would run commands outside the sandbox); change it yourself, outside skillpipe",
            ),
            (
                Hint::Sockets {
                    network_off: true,
                    named: false,
                },
                "sandbox: Unix sockets are closed; allow one with --allow-socket PATH (a separate flag from --allow-network, which opens only the network)",
            ),
            (
                Hint::Sockets {
                    network_off: false,
                    named: true,
                },
                "sandbox: only the Unix sockets named in the policy are open; allow one with --allow-socket PATH",
            ),
            (
                Hint::Namespaces,
                "sandbox: scripts cannot make namespaces of their own (unshare, user namespaces, a nested sandbox or container); no setting lifts that",
            ),
            (
                Hint::Network {
                    local: Some("127.0.0.1:48123".into()),
                },
                "sandbox: there is no network, and the run has a loopback of its own: services on this machine, such as 127.0.0.1:48123, are outside the sandbox: --allow-network",
            ),
            (
                Hint::Timeout {
                    after: std::time::Duration::from_secs(5),
                    network_off: true,
                    tool: None,
                },
                "stopped at the timeout (timeout_seconds = 5 s): --timeout SECS allows longer (at most 600); with the network off, a script waiting on a download also ends here (--allow-network)",
            ),
            (
                // A tool's own timeout in milliseconds: as `skills show` spells it, not cut.
                Hint::Timeout {
                    after: std::time::Duration::from_millis(1500),
                    network_off: false,
                    tool: Some(("mine:slow".into(), 30)),
                },
                "stopped at the timeout of tool `mine:slow` (its tool.yaml's timeout, 1.5 s): a larger timeout there allows longer (up to the policy's 30 s)",
            ),
            (
                Hint::Workdir {
                    arg: "input.pdf".into(),
                },
                "the script ran in its skill's folder, where `input.pdf` does not exist (it does where you are): --workdir caller runs skill scripts where you are",
            ),
            (
                Hint::RootAsked { git: true },
                "the script ran in its skill's folder, which is in no Git repository (where you are is): --workdir caller runs skill scripts where you are",
            ),
            (
                Hint::MissingModule(Box::new(crate::sandbox::hint::MissingModule {
                    module: "docx".into(),
                    package: "python-docx".into(),
                    renamed: Some("docx".into()),
                    hidden: Some("/home/u/.local".into()),
                    dropped: vec!["PYTHONPATH"],
                })),
                "python: the module `docx` is missing; install it with `pip install python-docx` (the package's name is not the module's `docx`); the sandbox hides /home/u/.local (deny_read), where `pip install --user` puts packages: --allow-read /home/u/.local shows it; PYTHONPATH is set here but not passed to scripts (add it to env_passthrough)",
            ),
        ];
        for (h, cli) in cases {
            assert_eq!(hint(&h), cli);
            // pip's own flag is not skillpipe's.
            let library = h.to_string().replace("pip install --user", "");
            assert!(!library.contains("--"), "{h}");
        }
    }

    #[test]
    fn the_launchers_messages_name_flags_as_they_always_did_and_the_library_keys() {
        let old = [
            "hiding /h/.aws: mounting tmpfs on /h/.aws: Operation not permitted (os error 1) (`skillpipe doctor` shows whether private mounts work here; --sandbox best-effort runs without them, with a warning); lift it with --allow-read /h/.aws if it need not be hidden",
            "abstract Unix sockets cannot be closed: that needs Landlock ABI 6 (Linux 6.12); drop --allow-socket, or keep the network isolated",
            "Landlock enforced writes only partly or not at all (kernel status partial); --sandbox best-effort runs without it, with a warning",
            "no seccomp filter is written for the mips architecture; run with --sandbox best-effort to go without it (with a warning)",
            "cannot hand connect(2) to the sandbox's init (no seccomp filter is written for the mips architecture; run with --sandbox best-effort to go without it (with a warning); seccomp user notification needs Linux 5.0 or later); drop --allow-socket to run with Unix sockets closed",
            "bringing loopback up failed at SIOCSIFFLAGS: Operation not permitted (os error 1); 127.0.0.1 stays unreachable in the sandbox (--allow-network runs in the host's network instead)",
        ];
        let messages = crate::sandbox::messages_naming_settings();
        assert_eq!(messages.len(), old.len());
        for (m, old) in messages.iter().zip(old) {
            assert_eq!(m.word(setting), old);
            assert!(!m.to_string().contains("--"), "{m}");
        }
        assert!(
            messages[0]
                .to_string()
                .contains("lift it with allow_read = [\"/h/.aws\"] if"),
            "{}",
            messages[0]
        );
        // Through the error the dispatcher words.
        let e = ExecError::Sandbox(messages[1].clone());
        assert_eq!(
            exec(&e),
            format!(
                "cannot sandbox the command: {} (see `skillpipe doctor`; --sandbox best-effort runs it anyway, with a warning)",
                old[1]
            )
        );
        assert!(!e.to_string().contains("--"), "{e}");
    }

    #[test]
    fn notices_name_the_flags_as_before() {
        assert_eq!(
            notice(&Notice::CutAtTokenLimit),
            "the answer was cut at the token limit (--max-tokens N, or max_tokens in the agent's [params], allows more)"
        );
        assert_eq!(
            notice(&Notice::ToolsIgnored),
            "no tool call came back where the model tried one (a call written as text, or an empty answer: this server or model does not do native tool calls); using directives instead of --tools for the rest of this session"
        );
        assert!(!Notice::ToolsIgnored.to_string().contains("--"));
    }

    #[test]
    fn model_errors_name_the_flags_and_the_library_the_settings() {
        let e = ModelError::ModelNotFound {
            model: "gpt-x".into(),
            base_url: "http://h/v1".into(),
            message: "no such model".into(),
        };
        assert_eq!(
            model(&e),
            "model `gpt-x` not found at http://h/v1 (404): no such model — check the model name (--model) and the base URL"
        );
        assert_eq!(
            e.to_string(),
            "model `gpt-x` not found at http://h/v1 (404): no such model — check the model name and the base URL"
        );
        let e = ModelError::StreamCut {
            bytes: 0,
            reason: "connection reset".into(),
        };
        assert_eq!(
            model(&e),
            "the server closed the stream before sending anything (connection reset); a request longer than its context does this on some servers: fewer skills (--skill NAME), no --tools, or a larger context may help"
        );
        assert!(!e.to_string().contains("--"), "{e}");
    }

    #[test]
    fn no_audit_log_location_names_the_flag_and_the_library_the_constructor() {
        assert_eq!(
            audit(&AuditError::NoLocation),
            "no audit log location (set XDG_STATE_HOME or HOME, or pass --audit-log)"
        );
        assert!(!AuditError::NoLocation.to_string().contains("--"));
    }

    #[test]
    fn a_missing_terminal_names_y_and_a_failed_sandbox_names_doctor() {
        assert_eq!(
            ask(&AskError::NoTerminal),
            "no terminal to ask for confirmation (pass -y to run without asking)"
        );
        assert_eq!(
            AskError::NoTerminal.to_string(),
            "no terminal to ask for confirmation"
        );
        let e = ExecError::Sandbox("network isolation: no user namespaces".into());
        assert_eq!(
            exec(&e),
            "cannot sandbox the command: network isolation: no user namespaces (see `skillpipe doctor`; --sandbox best-effort runs it anyway, with a warning)"
        );
        assert!(!e.to_string().contains("--sandbox"), "{e}");
    }
}
