//! How the `skillpipe` binary words refusals and advice: the library's reasons (in the policy's terms) with
//! the command-line flag that lifts each, as users of the binary have always seen them. Every
//! front end of the binary (filter, chat, REPL, `run`, MCP) gets it through its dispatcher.

use crate::audit::AuditError;
use crate::chat::Notice;
use crate::confirm::AskError;
use crate::dispatch::Wording;
use crate::exec::ExecError;
use crate::model::{ModelError, ModelWords};
use crate::policy::Denied;
use crate::sandbox::Setting;

/// The binary's wording, given to every dispatcher it builds.
pub(crate) const CLI: Wording = Wording {
    denied,
    ask,
    exec,
    advise,
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
        ExecError::SafePathRefused { command, program } => {
            crate::exec::safe_path_refused(command, program, "run it with --workdir skill")
        }
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

/// A setting a sandbox message names, as the flag that sets it: with its path where the
/// message has one, else without the placeholder (`drop --allow-socket`).
fn setting(s: &Setting) -> String {
    let (key, path) = match s {
        Setting::BestEffort => ("sandbox", None),
        Setting::AllowRead(path) => ("allow_read", Some(std::path::Path::new(path))),
        Setting::AllowedSockets => ("allowed_sockets", None),
        Setting::AllowNetwork => ("allow_network", None),
    };
    let flag = super::setting(key, path, super::Audience::Cli);
    match path {
        Some(_) => flag,
        None => flag.trim_end_matches(" PATH").to_string(),
    }
}

/// The advice after a failed run, with the flags that lift it.
fn advise(r: &crate::exec::RunResult) -> Option<crate::exec::Advice> {
    Some(super::explain(r)?.advice(super::Audience::Cli))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Target, parse_argv};

    fn judged(policy: &crate::ScriptPolicy, program: &str, args: &[String]) -> Denied {
        let target = Target::System { program, args };
        crate::policy::decide(&policy.compile().unwrap(), &target).unwrap_err()
    }

    /// A path is filled in as it is (even one ending in the placeholder's word); without one,
    /// the placeholder goes.
    #[test]
    fn a_sandbox_setting_is_its_flag() {
        let read = Setting::AllowRead("/p/.env PATH".into());
        assert_eq!(setting(&read), "--allow-read /p/.env PATH");
        assert_eq!(setting(&Setting::AllowedSockets), "--allow-socket");
        assert_eq!(setting(&Setting::BestEffort), "--sandbox best-effort");
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
    fn a_missing_terminal_names_y() {
        assert_eq!(
            ask(&AskError::NoTerminal),
            "no terminal to ask for confirmation (pass -y to run without asking)"
        );
        assert_eq!(
            AskError::NoTerminal.to_string(),
            "no terminal to ask for confirmation"
        );
    }
}
