//! `/info`: what this session is — model, endpoint, agent, skills, policy, sandbox, prompt size
//! (pure: facts in, text out).

use crate::policy::{ConfirmMode, SandboxMode, ScriptPolicy};
use std::fmt::Write;

/// Between a number and its unit, so that wrapping never leaves the unit alone on a line.
const NBSP: char = '\u{a0}';

/// What `/info` shows.
pub struct Facts<'a> {
    pub model: &'a str,
    pub endpoint: &'a str,
    /// Name and file of the agent.
    pub agent: Option<(&'a str, String)>,
    pub skills: Vec<&'a str>,
    pub policy: &'a ScriptPolicy,
    pub tools: bool,
    /// The system prompt's size in bytes (as `chat -v` counts it).
    pub system_prompt_bytes: usize,
    /// Worked-example messages sent before the conversation with every request.
    pub few_shot: usize,
    pub messages: usize,
    /// The next request's body as the provider would send it (system prompt, few-shot,
    /// history, tool schemas), in bytes.
    pub request_bytes: usize,
}

/// One line a row, `  KEY        value`, not wrapped here: where it is shown (and again after a
/// resize) the REPL wraps it to the window, under the value's column where that fits.
pub fn text(f: &Facts<'_>) -> String {
    let mut s = String::new();
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(s, "  {k:<10} {v}");
    };
    row("model", f.model);
    row(
        "endpoint",
        if f.endpoint.is_empty() {
            "(none: replay)"
        } else {
            f.endpoint
        },
    );
    match &f.agent {
        Some((name, file)) => row("agent", &format!("{name} ({file})")),
        None => row("agent", "none"),
    }
    row(
        "skills",
        &if f.skills.is_empty() {
            "none".to_string()
        } else {
            f.skills.join(", ")
        },
    );
    let p = f.policy;
    let policy = if p.allow_scripts {
        let mut v = format!("scripts run: allow {}", p.allowed_commands.join(" "));
        if !p.denied_commands.is_empty() {
            let _ = write!(v, "; deny {}", p.denied_commands.join(" "));
        }
        let confirm = match p.confirm {
            ConfirmMode::Ask => "ask before each run",
            ConfirmMode::Never => "no questions (-y)",
        };
        let _ = write!(v, "; {confirm}; timeout {}{NBSP}s", p.timeout_seconds);
        v
    } else {
        "scripts off (--allow-scripts turns them on)".to_string()
    };
    row("policy", &policy);
    let mode = match p.sandbox {
        SandboxMode::Required => "required",
        SandboxMode::BestEffort => "best-effort",
    };
    row(
        "sandbox",
        &format!(
            "{mode}; network {}; filesystem {}",
            if p.allow_network { "allowed" } else { "off" },
            if p.allow_filesystem {
                "writable"
            } else {
                "read-only but $TMPDIR"
            }
        ),
    );
    let writes = if p.allow_filesystem {
        "anywhere (--allow-filesystem)".to_string()
    } else {
        let mut v = String::from("$TMPDIR");
        for w in &p.writable_paths {
            let _ = write!(v, ", {}", w.display());
        }
        if p.writable_paths.is_empty() {
            v.push_str(" only (--writable DIR adds one)");
        }
        v
    };
    row("writable", &writes);
    row(
        "env",
        &format!(
            "{} passed to scripts (besides skillpipe's own SKILL_*, SKILLPIPE_*, TMPDIR)",
            match p.env_passthrough.is_empty() {
                true => "nothing".to_string(),
                false => p.env_passthrough.join(", "),
            }
        ),
    );
    row(
        "prompt",
        &format!(
            "system {}{NBSP}bytes; {} few-shot and {} conversation messages; the next request \
             {}{NBSP}bytes (~{}{NBSP}tokens){}",
            f.system_prompt_bytes,
            f.few_shot,
            f.messages,
            f.request_bytes,
            f.request_bytes.div_ceil(4),
            if f.tools {
                "; skill scripts offered as tools"
            } else {
                ""
            }
        ),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session with nothing in it but `policy`.
    fn facts(policy: &ScriptPolicy) -> Facts<'_> {
        Facts {
            model: "m",
            endpoint: "e",
            agent: None,
            skills: vec![],
            policy,
            tools: false,
            system_prompt_bytes: 0,
            few_shot: 0,
            messages: 0,
            request_bytes: 0,
        }
    }

    #[test]
    fn names_every_part_of_the_session() {
        let policy = ScriptPolicy::default();
        let t = text(&Facts {
            model: "openai:gpt-4o-mini",
            endpoint: "https://api.openai.com/v1",
            agent: Some(("tutor", "agents/tutor.toml".into())),
            skills: vec!["say", "calc"],
            system_prompt_bytes: 400,
            few_shot: 4,
            messages: 2,
            request_bytes: 1000,
            ..facts(&policy)
        });
        for want in [
            "model      openai:gpt-4o-mini",
            "endpoint   https://api.openai.com/v1",
            "agent      tutor (agents/tutor.toml)",
            "skills     say, calc",
            "policy     scripts off",
            "sandbox    required; network off",
            "prompt     system 400\u{a0}bytes; 4 few-shot and 2 conversation messages; the next request 1000\u{a0}bytes (~250\u{a0}tokens)",
            "writable   $TMPDIR only (--writable DIR adds one)",
            "env        PATH, HOME, LANG, TERM passed to scripts",
        ] {
            assert!(t.contains(want), "{want:?} missing from\n{t}");
        }
    }

    #[test]
    fn writable_grants_and_the_environment_are_named_and_wrapped() {
        let policy = ScriptPolicy {
            writable_paths: vec!["/home/u/out".into(), "/srv/data/long/folder".into()],
            env_passthrough: vec!["PATH".into(), "PYTHONPATH".into()],
            ..Default::default()
        };
        let t = text(&facts(&policy));
        // As the REPL shows it: wrapped to the window, and again at each new width.
        let t = crate::render::wrap_text(&t, 40);
        assert!(
            t.contains("  writable   $TMPDIR, /home/u/out,\n             /srv/data/long/folder\n"),
            "{t}"
        );
        assert!(t.contains("  env        PATH, PYTHONPATH passed to"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 40), "{t}");
    }

    /// Laid out at one width and again at another (a resize), a row continues under its value
    /// (13 columns in), and at the narrowest window every row still fits.
    #[test]
    fn rows_wrap_under_the_value_at_every_width() {
        let policy = ScriptPolicy::default();
        let names = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
        ];
        let t = text(&Facts {
            model: "openai:gpt-4o-mini",
            endpoint: "http://127.0.0.1:11434/v1",
            skills: names.to_vec(),
            system_prompt_bytes: 7327,
            request_bytes: 9000,
            ..facts(&policy)
        });
        for width in [80, 50] {
            let shown = crate::render::wrap_text(&t, width);
            let skills: Vec<&str> = shown
                .lines()
                .skip_while(|l| !l.starts_with("  skills"))
                .take_while(|l| l.starts_with("  skills") || l.starts_with("   "))
                .collect();
            assert!(skills.len() >= 2 || width == 80, "{shown}");
            for cont in &skills[1..] {
                let indent = cont.len() - cont.trim_start().len();
                assert_eq!(indent, 13, "at {width}:\n{shown}");
            }
            assert!(shown.lines().all(|l| l.chars().count() <= width), "{shown}");
        }
        for width in [20, 24, 30] {
            let shown = crate::render::wrap_text(&t, width);
            assert!(
                shown.lines().all(|l| l.chars().count() <= width),
                "at {width}:\n{shown}"
            );
        }
        // At every width a unit stays with its number: no line opens with one.
        for width in 30..=80 {
            let shown = crate::render::wrap_text(&t, width);
            for line in shown.lines() {
                let first = line.split_whitespace().next().unwrap_or("");
                assert!(
                    !["s", "s;", "bytes", "bytes;", "tokens)"].contains(&first),
                    "at {width}: {line:?}\n{shown}"
                );
            }
        }
    }
}
