//! How far an agent file is believed (DESIGN §5a): one in the user's own config folders is the
//! user's word; any other (a trusted project's, or one named with `--agent PATH`) may set
//! instructions, skills, model and params and narrow the script policy, but not raise it, and
//! may not pick a `replay:` model (a replay file scripts what "the model" says, directives too).

use super::AgentConfig;
use crate::policy::source::{self, Ignored};

/// What was taken away from a foreign agent file, and why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Restricted {
    /// False for an agent in the user's own config folders (nothing is restricted then).
    pub foreign: bool,
    /// The settings dropped.
    pub ignored: Vec<Ignored>,
    /// In the user's config folder, yet not the user's word: this file or folder is open to
    /// other users.
    pub open_to_others: Option<std::path::PathBuf>,
}

impl Restricted {
    /// The one-line notice, when anything was dropped, for the file shown as `file`.
    pub fn notice(&self, file: &str) -> Option<String> {
        source::ignored_notice(file, &self.ignored, self.open_to_others.as_deref())
    }
}

/// Applies the rule to `agent` in place, deciding from where its file lies.
pub fn restrict(agent: &mut AgentConfig) -> Restricted {
    let foreign = !crate::paths::in_user_config(&agent.source);
    // The user's own providers of the replay kind are replay models too, by another name.
    let replays: Vec<String> = crate::config::ConfigFile::global()
        .ok()
        .flatten()
        .map(|c| {
            c.providers
                .iter()
                .filter(|(_, p)| p.kind == Some(crate::config::ProviderKind::Replay))
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut restricted = restrict_if(agent, foreign, &replays);
    restricted.open_to_others = crate::paths::writable_by_others(&agent.source);
    restricted
}

/// An agent file as a notice names it: a link (e.g. into the user's config folder) with where it
/// leads, since that is what decides whether the file is the user's own.
pub fn shown_source(path: &std::path::Path) -> String {
    match linked_to(path) {
        Some(real) => format!("{} (a link to {})", path.display(), real.display()),
        None => path.display().to_string(),
    }
}

/// Where `path` really is when a link on the way (the file itself, or a linked `agents/`
/// folder) leads elsewhere; `None` when it is where it says.
pub fn linked_to(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute
        .ancestors()
        .any(std::path::Path::is_symlink)
        .then(|| path.canonicalize().ok())
        .flatten()
}

/// The request parameters a foreign agent may set: how the answer is sampled and how long it
/// may be. A closed list: anything else (`n`, `store`, `user`, tools, metadata …) changes what is
/// billed, kept or done.
pub const SAMPLING_AND_LENGTH: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "stop_sequences",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "repeat_penalty",
    "repetition_penalty",
];

/// [`restrict`] with the decision given (pure); `replays` names the providers of the replay
/// kind besides `replay` itself.
pub fn restrict_if(agent: &mut AgentConfig, foreign: bool, replays: &[String]) -> Restricted {
    if !foreign {
        return Restricted::default();
    }
    let mut ignored = Vec::new();
    if let Some(p) = &agent.script_policy {
        let (narrowed, dropped) = source::narrow_only(p);
        agent.script_policy = Some(narrowed);
        ignored = dropped;
    }
    let replay = |s: &Option<String>| {
        s.as_deref().is_some_and(|m| {
            let provider = m.split_once(':').map_or(m, |(p, _)| p).trim();
            provider == "replay" || replays.iter().any(|r| r == provider)
        })
    };
    if replay(&agent.model) || replay(&agent.provider) {
        agent.model = None;
        agent.provider = None;
        ignored.push(Ignored {
            key: "model".into(),
            grant: "--model replay:FILE",
        });
    }
    // Request parameters: sampling and length only (no `n = 64` billing 64 answers, no
    // `store = true` keeping the conversation at the provider).
    // Kept in their order (`remove` would move the last one into the gap).
    agent.params.retain(|key, _| {
        let kept = SAMPLING_AND_LENGTH.contains(&key.as_str());
        if !kept {
            ignored.push(Ignored {
                key: format!("params.{key}").into(),
                grant: "--param KEY=VALUE",
            });
        }
        kept
    });
    Restricted {
        foreign,
        ignored,
        open_to_others: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(model: Option<&str>, provider: Option<&str>) -> AgentConfig {
        AgentConfig {
            name: "a".into(),
            model: model.map(str::to_owned),
            provider: provider.map(str::to_owned),
            source: "/project/agents/a.toml".into(),
            ..AgentConfig::default()
        }
    }

    #[test]
    fn a_foreign_agent_may_not_pick_a_replay_model_by_any_name() {
        let replays = ["rec".to_string()];
        for (model, provider) in [
            (Some("replay:answers.jsonl"), None),
            (Some("answers.jsonl"), Some("replay")),
            (Some("answers.jsonl"), Some("rec")),
            (Some("rec:answers.jsonl"), None),
        ] {
            let mut a = agent(model, provider);
            let r = restrict_if(&mut a, true, &replays);
            assert_eq!(
                (a.model, a.provider),
                (None, None),
                "{model:?} {provider:?}"
            );
            assert!(r.ignored.iter().any(|i| i.key == "model"));
        }
        // Controls: an ordinary model stays; the user's own agent keeps a replay model.
        let mut a = agent(Some("ollama:llama3:8b"), None);
        restrict_if(&mut a, true, &replays);
        assert_eq!(a.model.as_deref(), Some("ollama:llama3:8b"));
        let mut a = agent(Some("answers.jsonl"), Some("rec"));
        restrict_if(&mut a, false, &replays);
        assert_eq!(a.provider.as_deref(), Some("rec"));
    }

    #[test]
    fn a_foreign_agent_sets_only_sampling_and_length_parameters() {
        let mut a = agent(None, None);
        for (k, v) in [("n", 64.0), ("temperature", 0.2), ("max_tokens", 100.0)] {
            a.params.insert(k.into(), serde_json::json!(v));
        }
        a.params.insert("store".into(), serde_json::json!(true));
        let mut own = a.clone();
        let r = restrict_if(&mut a, true, &[]);
        let kept: Vec<&String> = a.params.keys().collect();
        assert_eq!(kept, ["temperature", "max_tokens"]);
        let keys: Vec<&str> = r.ignored.iter().map(|i| &*i.key).collect();
        assert_eq!(keys, ["params.n", "params.store"]);
        assert!(
            r.notice("a.toml")
                .unwrap()
                .contains("params.n (grant with --param KEY=VALUE)")
        );
        // Control: the user's own agent keeps them all.
        restrict_if(&mut own, false, &[]);
        assert_eq!(own.params.len(), 4);
    }

    #[test]
    fn a_linked_agent_file_is_named_with_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("elsewhere.toml");
        std::fs::write(&real, "name = \"x\"\n").unwrap();
        let link = dir.path().join("linked.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let real = real.canonicalize().unwrap();
        assert_eq!(
            shown_source(&link),
            format!("{} (a link to {})", link.display(), real.display())
        );
        assert_eq!(shown_source(&real), real.display().to_string());
    }
}
