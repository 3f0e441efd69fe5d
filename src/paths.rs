//! Where config, state, skills and agents live (XDG base directories, DESIGN §4–§6).

use std::path::{Path, PathBuf};

fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `$HOME`, if set.
pub fn home() -> Option<PathBuf> {
    env_path("HOME")
}

/// `$XDG_CONFIG_HOME/skillpipe` (default `~/.config/skillpipe`).
pub fn config_dir() -> Option<PathBuf> {
    env_path("XDG_CONFIG_HOME")
        .or_else(|| home().map(|h| h.join(".config")))
        .map(|d| d.join("skillpipe"))
}

/// `$XDG_STATE_HOME/skillpipe` (default `~/.local/state/skillpipe`): history, sessions, audit log.
pub fn state_dir() -> Option<PathBuf> {
    env_path("XDG_STATE_HOME")
        .or_else(|| home().map(|h| h.join(".local/state")))
        .map(|d| d.join("skillpipe"))
}

/// The config file (`config.toml` in [`config_dir`]).
pub fn config_file() -> Option<PathBuf> {
    config_dir().map(|d| d.join("config.toml"))
}

/// Default audit log location.
pub fn audit_log() -> Option<PathBuf> {
    state_dir().map(|d| d.join("audit.jsonl"))
}

/// Skill search path, first match by name wins (DESIGN §4). `extra` are the `--skills-dir` flags.
pub fn skill_search_path(extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.to_vec();
    let cwd = Path::new(".");
    dirs.push(cwd.join("skills"));
    dirs.push(cwd.join(".agents/skills"));
    dirs.push(cwd.join(".skillpipe/skills"));
    dirs.extend(config_dir().map(|d| d.join("skills")));
    let home = home();
    dirs.extend(home.as_ref().map(|h| h.join(".agents/skills")));
    dirs.extend(
        env_path("R9S_SKILLS_DIR").or_else(|| home.as_ref().map(|h| h.join(".r9s/skills"))),
    );
    // Codex installs skills here (OpenAI's curated ones among them).
    dirs.extend(env_path("CODEX_HOME").map(|d| d.join("skills")));
    dirs.extend(home.as_ref().map(|h| h.join(".codex/skills")));
    dirs.push(cwd.join(".claude/skills"));
    dirs.extend(home.as_ref().map(|h| h.join(".claude/skills")));
    dirs
}

/// Skill folders that sit beside an agent given by path (`--agent /proj/agents/x.toml`): the
/// agent's own folder's `skills/` and its parent's (`/proj/skills`), so the agent finds its
/// skills from any working directory. Nothing for an agent given by name.
pub fn agent_skill_dirs(agent_arg: &str) -> Vec<PathBuf> {
    let path = Path::new(agent_arg);
    if !agent_arg.contains('/') && !agent_arg.ends_with(".toml") {
        return Vec::new();
    }
    let dir = if path.is_dir() {
        path
    } else {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    };
    vec![dir.join("skills"), dir.join("../skills")]
}

/// Agent search path (DESIGN §5), after an explicit `--agent PATH`: `./agents`,
/// `$XDG_CONFIG_HOME/skillpipe/agents`, then r9s's `~/.r9s/agents` (folder-per-agent layout).
pub fn agent_search_path() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("agents")];
    dirs.extend(config_dir().map(|d| d.join("agents")));
    dirs.extend(home().map(|h| h.join(".r9s/agents")));
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_dir_flags_come_first() {
        let p = skill_search_path(&[PathBuf::from("/x")]);
        assert_eq!(p[0], PathBuf::from("/x"));
        assert_eq!(p[1], PathBuf::from("./skills"));
    }

    #[test]
    fn skills_beside_an_agent_file() {
        assert_eq!(
            agent_skill_dirs("/p/agents/x.toml"),
            [
                PathBuf::from("/p/agents/skills"),
                PathBuf::from("/p/agents/../skills")
            ]
        );
        assert_eq!(agent_skill_dirs("x.toml")[0], PathBuf::from("./skills"));
        assert!(agent_skill_dirs("tutor").is_empty());
    }

    #[test]
    fn codex_skills_are_searched() {
        let p = skill_search_path(&[]);
        if let Some(h) = home() {
            assert!(p.contains(&h.join(".codex/skills")), "{p:?}");
        }
    }
}
