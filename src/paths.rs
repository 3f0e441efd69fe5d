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

/// Project-local skill folders, relative to the working directory (used only when it is trusted).
pub const PROJECT_SKILL_DIRS: &[&str] = &[
    "skills",
    ".agents/skills",
    ".skillpipe/skills",
    ".claude/skills",
];
/// The project-local agent folder (used only when the working directory is trusted).
pub const PROJECT_AGENT_DIR: &str = "agents";

/// The folders of a project skillpipe loads skills and agents from (relative to the project's
/// top): [`PROJECT_SKILL_DIRS`] and [`PROJECT_AGENT_DIR`]. Read-only in every run inside a
/// writable path, and a change to one is flagged (see `sandbox::changes`).
pub fn project_places() -> Vec<PathBuf> {
    PROJECT_SKILL_DIRS
        .iter()
        .chain(std::iter::once(&PROJECT_AGENT_DIR))
        .map(PathBuf::from)
        .collect()
}

/// Skill search path, first match by name wins (DESIGN §4). `extra` are the `--skills-dir` flags;
/// project-local folders come last and only when `project_trusted` (the working directory's
/// trust, [`crate::trust::skill_search_path`]): the user's own folders before the
/// project's, so a cloned repository can never shadow a skill the user installed.
pub fn skill_search_path_for(extra: &[PathBuf], project_trusted: bool) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.to_vec();
    dirs.extend(user_skill_dirs());
    if project_trusted {
        let users = canonical_all(&dirs);
        dirs.extend(
            PROJECT_SKILL_DIRS
                .iter()
                .filter(|d| project_folder_problem(d).is_none())
                .map(|d| Path::new(".").join(d))
                // Run from `$HOME`, `./.agents/skills` is the user's own folder: searched (and
                // counted) as that, not as a project's.
                .filter(|d| !is_one_of(d, &users)),
        );
    }
    dirs
}

/// The canonical paths of those of `dirs` that exist.
fn canonical_all(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect()
}

/// Whether `dir` is (resolves to) one of `canonical`.
fn is_one_of(dir: &Path, canonical: &[PathBuf]) -> bool {
    std::fs::canonicalize(dir).is_ok_and(|c| canonical.contains(&c))
}

/// Why the project folder `rel` (e.g. `.claude/skills`) of a trusted working directory is not
/// used: the first folder on the way down to it that is not the user's alone (another user may
/// have put agents or skills there), with how. `None` when it may be used (or does not exist).
pub fn project_folder_problem(rel: &str) -> Option<(PathBuf, &'static str)> {
    let mut dir = PathBuf::from(".");
    for part in Path::new(rel).components() {
        dir.push(part);
        if !dir.is_dir() {
            return None;
        }
        if let Some(why) = not_users_alone(&dir) {
            return Some((dir, why));
        }
    }
    None
}

/// Whether `dir` is one of a trusted project's skill folders as the search path names them
/// (`./skills`, `./.claude/skills` …).
pub fn is_project_skill_dir(dir: &Path) -> bool {
    PROJECT_SKILL_DIRS
        .iter()
        .any(|d| dir == Path::new(".").join(d))
}

/// The user's own skill folders, in search order.
pub fn user_skill_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    dirs.extend(config_dir().map(|d| d.join("skills")));
    let home = home();
    dirs.extend(home.as_ref().map(|h| h.join(".agents/skills")));
    dirs.extend(
        env_path("R9S_SKILLS_DIR").or_else(|| home.as_ref().map(|h| h.join(".r9s/skills"))),
    );
    // Codex installs skills here (OpenAI's curated ones among them), and keeps the ones it ships
    // itself in the hidden `.system` folder below, which a folder walk skips: searched last, so
    // that an installed skill of the same name wins.
    let codex_roots: Vec<PathBuf> = env_path("CODEX_HOME")
        .into_iter()
        .chain(home.as_ref().map(|h| h.join(".codex")))
        .collect();
    dirs.extend(codex_roots.iter().map(|r| r.join("skills")));
    dirs.extend(home.as_ref().map(|h| h.join(".claude/skills")));
    dirs.extend(codex_roots.iter().map(|r| r.join("skills/.system")));
    dirs
}

/// The folder of an agent given by path (`--agent /proj/agents/x.toml` → `/proj/agents`; a
/// folder-per-agent path is its own folder). `None` for an agent given by name.
pub fn agent_dir(agent_arg: &str) -> Option<PathBuf> {
    let path = Path::new(agent_arg);
    if !agent_arg.contains('/') && !agent_arg.ends_with(".toml") {
        return None;
    }
    Some(if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    })
}

/// Skill folders that sit beside an agent given by path (`--agent /proj/agents/x.toml`): the
/// agent's own folder's `skills/` and its parent's (`/proj/skills`), so the agent finds its
/// skills from any working directory. Nothing for an agent given by name.
pub fn agent_skill_dirs(agent_arg: &str) -> Vec<PathBuf> {
    agent_dir(agent_arg)
        .map(|dir| vec![dir.join("skills"), dir.join("../skills")])
        .unwrap_or_default()
}

/// Agent search path (DESIGN §5), after an explicit `--agent PATH`:
/// `$XDG_CONFIG_HOME/skillpipe/agents`, r9s's `~/.r9s/agents` (folder-per-agent layout), then
/// `./agents` when `project_trusted` (the working directory's trust,
/// [`crate::trust::agent_search_path`]).
pub fn agent_search_path_for(project_trusted: bool) -> Vec<PathBuf> {
    let mut dirs = user_config_dirs()
        .into_iter()
        .map(|d| d.join("agents"))
        .collect::<Vec<_>>();
    if project_trusted
        && project_folder_problem(PROJECT_AGENT_DIR).is_none()
        && !is_one_of(Path::new(PROJECT_AGENT_DIR), &canonical_all(&dirs))
    {
        dirs.push(PathBuf::from(PROJECT_AGENT_DIR));
    }
    dirs
}

/// The user's own config folders: the only places an agent file may raise the script policy from.
pub fn user_config_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    dirs.extend(config_dir());
    dirs.extend(home().map(|h| h.join(".r9s")));
    dirs
}

/// Every folder skillpipe reads as the user's own, with what it holds there: its config and
/// state, the user's agent folders ([`user_config_dirs`]) and skill folders
/// ([`user_skill_dirs`]). What a script wrote there would come back as the user's own — an agent
/// granting scripts more, a skill the model runs — so none may be a writable path.
pub fn own_folders() -> Vec<(PathBuf, &'static str)> {
    let mut seen = Vec::new();
    let listed = config_dir()
        .map(|d| (d, "skillpipe's config"))
        .into_iter()
        .chain(state_dir().map(|d| (d, "skillpipe's state")))
        .chain(
            user_config_dirs()
                .into_iter()
                .map(|d| (d, "your agents, whose files set what scripts may do")),
        )
        .chain(
            user_skill_dirs()
                .into_iter()
                .map(|d| (d, "your skills, whose scripts the model runs")),
        );
    listed.filter(|(d, _)| first_time(&mut seen, d)).collect()
}

/// Whether `dir` is not in `seen` yet (then it is, after).
fn first_time(seen: &mut Vec<PathBuf>, dir: &Path) -> bool {
    let new = !seen.iter().any(|s| s == dir);
    if new {
        seen.push(dir.to_path_buf());
    }
    new
}

/// Where skillpipe reads its policy and the user's own agents and skills from: its config
/// folder (config.toml, agents, skills, the trust store `trusted-dirs`), the user's agent
/// folders and skill folders. Kept read-only for scripts under every policy (the state folder
/// is hidden from them instead).
///
/// The entries skillpipe reads inside its config folders are listed too: one that is a link
/// (a dotfiles checkout's `agents -> ~/dotfiles/agents`) leads out of its folder's mount, and
/// the mount over each resolves it to where it leads.
pub fn policy_places() -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let inner = user_config_dirs().into_iter().flat_map(|d| {
        ["agents", "skills", "config.toml", "trusted-dirs"]
            .into_iter()
            .map(move |entry| d.join(entry))
    });
    // A skill installed as a link (`~/.agents/skills/foo -> ~/dev/foo`) leads out of its
    // folder's mount the same way, loaded for the run or not.
    let linked = user_skill_dirs().into_iter().flat_map(|d| {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
            .map(|e| e.path())
            .collect::<Vec<_>>()
    });
    (user_config_dirs().into_iter())
        .chain(user_skill_dirs())
        .chain(inner)
        .chain(linked)
        .filter(|d| first_time(&mut seen, d))
        .collect()
}

/// The folders skillpipe reads as the user's own ([`user_config_dirs`], [`user_skill_dirs`],
/// [`state_dir`]), whether they exist or not: a missing one must not be made by a script
/// (see `sandbox::placeholders`).
pub fn own_places() -> Vec<PathBuf> {
    let mut seen = Vec::new();
    (user_config_dirs().into_iter())
        .chain(user_skill_dirs())
        .chain(state_dir())
        .filter(|d| d.is_absolute() && first_time(&mut seen, d))
        .collect()
}

/// Makes `dir` and the missing folders above it, for the user's eyes only (0700, whatever the
/// umask): skillpipe's config and state hold the trust list, conversations and the audit log.
pub fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Whether `file` lies in one of [`user_config_dirs`] (symlinks resolved on both sides) and
/// only the user could have put it there (see [`writable_by_others`]).
pub fn in_user_config(file: &Path) -> bool {
    config_root_of(file).is_some() && writable_by_others(file).is_none()
}

/// The canonical config folder of [`user_config_dirs`] that holds `file`, and `file` canonical.
fn config_root_of(file: &Path) -> Option<(PathBuf, PathBuf)> {
    let file = std::fs::canonicalize(file).ok()?;
    user_config_dirs()
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .find(|d| file.starts_with(d))
        .map(|d| (d, file))
}

/// For a file in the user's config folders: the first of it and the folders from it up to that
/// config folder that another user could have written — a file others may write or that is not
/// the user's (nor root's), a folder others may write without the sticky bit — as ssh refuses
/// a key others could change. An agent file there is then not the user's word.
pub fn writable_by_others(file: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let (root, file) = config_root_of(file)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let meta = std::fs::metadata(&file).ok()?;
    if meta.mode() & 0o002 != 0 || (meta.uid() != me && meta.uid() != 0) {
        return Some(file);
    }
    file.ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(&root))
        .find(|d| {
            std::fs::metadata(d).is_ok_and(|m| m.mode() & 0o002 != 0 && m.mode() & 0o1000 == 0)
        })
        .map(Path::to_path_buf)
}

/// The project-local folders that exist in the working directory (for the "not trusted" notice).
pub fn project_dirs_present() -> Vec<&'static str> {
    std::iter::once(PROJECT_AGENT_DIR)
        .chain(PROJECT_SKILL_DIRS.iter().copied())
        .filter(|d| Path::new(d).is_dir())
        .collect()
}

/// Why `dir` is not this user's alone (another user owns it, anyone may write to it, or it
/// cannot be looked at), or `None`: such a folder may hold files others put there (trust, and
/// the `.env` search above the working directory, go no further).
pub(crate) fn not_users_alone(dir: &Path) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(dir) else {
        return Some("that cannot be looked at");
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        Some("that another user owns")
    } else if meta.mode() & 0o002 != 0 {
        Some("that anyone may write to")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_dir_flags_first_project_folders_only_when_trusted_and_after_the_users() {
        let p = skill_search_path_for(&[PathBuf::from("/x")], true);
        assert_eq!(p[0], PathBuf::from("/x"));
        assert_eq!(p.last(), Some(&PathBuf::from("./.claude/skills")));
        let untrusted = skill_search_path_for(&[], false);
        assert!(
            untrusted.iter().all(|d| !d.starts_with(".")),
            "{untrusted:?}"
        );
        let trusted = skill_search_path_for(&[], true);
        let first_project = trusted.iter().position(|d| d.starts_with(".")).unwrap();
        assert_eq!(first_project, untrusted.len());
        assert!(!agent_search_path_for(false).contains(&PathBuf::from("agents")));
        assert_eq!(
            agent_search_path_for(true).last(),
            Some(&PathBuf::from("agents"))
        );
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
    fn own_folders_hold_every_agent_and_skill_folder_of_the_users() {
        let own: Vec<PathBuf> = own_folders().into_iter().map(|(d, _)| d).collect();
        let covered = |p: &Path| own.iter().any(|d| p.starts_with(d));
        for d in user_skill_dirs()
            .into_iter()
            .chain(agent_search_path_for(false))
            .chain(state_dir())
        {
            assert!(covered(&d), "{d:?} not in {own:?}");
        }
        if let Some(h) = home() {
            assert!(covered(&h.join(".r9s/agents/evil")), "{own:?}");
            assert!(covered(&h.join(".agents/skills")), "{own:?}");
        }
    }

    #[test]
    fn codex_skills_are_searched() {
        let p = skill_search_path_for(&[], false);
        if let Some(h) = home() {
            let claude = p
                .iter()
                .position(|d| *d == h.join(".claude/skills"))
                .unwrap();
            let system = p.iter().position(|d| *d == h.join(".codex/skills/.system"));
            assert!(system > Some(claude), "shipped skills come last: {p:?}");
        }
    }
}
