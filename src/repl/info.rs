//! `/info`: what this session is — model, endpoint, agent, skills, policy, sandbox, prompt size
//! (pure: facts in, text out).

use crate::policy::{ConfirmMode, SandboxMode, ScriptPolicy};
use std::fmt::Write;

/// What `/info` shows.
pub struct Facts<'a> {
    pub model: &'a str,
    pub endpoint: &'a str,
    /// Name and file of the agent.
    pub agent: Option<(&'a str, String)>,
    pub skills: Vec<&'a str>,
    pub policy: &'a ScriptPolicy,
    pub tools: bool,
    pub system_prompt_chars: usize,
    /// Worked-example messages sent before the conversation with every request.
    pub few_shot: usize,
    pub messages: usize,
    /// The next request's body as the provider would send it (system prompt, few-shot,
    /// history, tool schemas), in bytes.
    pub request_bytes: usize,
    /// The terminal's width: rows wrap at words under their value.
    pub width: usize,
}

pub fn text(f: &Facts<'_>) -> String {
    let mut s = String::new();
    let mut row = |k: &str, v: &str| {
        let first = format!("  {k:<10} ");
        let rest = " ".repeat(first.len());
        s.push_str(&crate::render::wrap_plain(v, f.width, &first, &rest));
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
        let _ = write!(v, "; {confirm}; timeout {} s", p.timeout_seconds);
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
            "system {} chars; {} few-shot and {} conversation messages; the next request {} \
             bytes (~{} tokens){}",
            f.system_prompt_chars,
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

    #[test]
    fn names_every_part_of_the_session() {
        let policy = ScriptPolicy::default();
        let t = text(&Facts {
            model: "openai:gpt-4o-mini",
            endpoint: "https://api.openai.com/v1",
            agent: Some(("tutor", "agents/tutor.toml".into())),
            skills: vec!["say", "calc"],
            policy: &policy,
            tools: false,
            system_prompt_chars: 400,
            few_shot: 4,
            messages: 2,
            request_bytes: 1000,
            width: 200,
        });
        for want in [
            "model      openai:gpt-4o-mini",
            "endpoint   https://api.openai.com/v1",
            "agent      tutor (agents/tutor.toml)",
            "skills     say, calc",
            "policy     scripts off",
            "sandbox    required; network off",
            "prompt     system 400 chars; 4 few-shot and 2 conversation messages; the next request 1000 bytes (~250 tokens)",
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
        let t = text(&Facts {
            model: "m",
            endpoint: "e",
            agent: None,
            skills: vec![],
            policy: &policy,
            tools: false,
            system_prompt_chars: 0,
            few_shot: 0,
            messages: 0,
            request_bytes: 0,
            width: 40,
        });
        assert!(
            t.contains("  writable   $TMPDIR, /home/u/out,\n             /srv/data/long/folder\n"),
            "{t}"
        );
        assert!(t.contains("  env        PATH, PYTHONPATH passed to"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 40), "{t}");
    }
}
