//! How far an agent file is believed (DESIGN §5a): one in the user's own config folders is the
//! user's word; any other (a trusted project's, or one named with `--agent PATH`) may set
//! instructions, skills, model and params and narrow the script policy, but not raise it, and
//! may not pick a `replay:` model (a replay file scripts what "the model" says, directives too).

use super::AgentConfig;
use crate::policy::source::{self, Ignored};

/// What was taken away from a foreign agent file, and the one-line notice saying so.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Restricted {
    /// False for an agent in the user's own config folders (nothing is restricted then).
    pub foreign: bool,
    /// The settings dropped.
    pub ignored: Vec<Ignored>,
    /// One line for the user, when anything was dropped.
    pub notice: Option<String>,
}

/// Applies the rule to `agent` in place, deciding from where its file lies.
pub fn restrict(agent: &mut AgentConfig) -> Restricted {
    let foreign = !crate::paths::in_user_config(&agent.source);
    restrict_if(agent, foreign)
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

/// [`restrict`] with the decision given (pure).
pub fn restrict_if(agent: &mut AgentConfig, foreign: bool) -> Restricted {
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
        s.as_deref()
            .is_some_and(|m| m == "replay" || m.starts_with("replay:"))
    };
    if replay(&agent.model) || replay(&agent.provider) {
        agent.model = None;
        agent.provider = None;
        ignored.push(Ignored {
            key: "model",
            grant: "--model replay:FILE",
        });
    }
    let notice = source::ignored_notice(&shown_source(&agent.source), &ignored);
    Restricted {
        foreign,
        ignored,
        notice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
