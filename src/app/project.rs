//! Which of the working directory's project folders are used, and why not: the trust notices
//! and hints, and the rule that the user's own agent never runs a project's skill.

use super::{AppError, note, usage};
use crate::agents::AgentConfig;
use crate::skills::SkillSet;
use std::path::PathBuf;

/// The loaded skills that were found in a project folder of the working directory (a trusted
/// one: else none is loaded) and not in a `--skills-dir` the user gave: each name and its folder
/// as the user would name it (`./skills/NAME`). An agent of the user's carries the user's grants
/// (network, writable paths, environment); a project's script must not inherit them, neither by
/// sharing a name with a skill the user does not have nor by an agent that names no skills.
fn project_skills(skills: &SkillSet, given: &[PathBuf]) -> Vec<(String, PathBuf)> {
    // The user's own skill folders are the user's even when the working directory holds them
    // (`./.agents/skills` run from `$HOME`).
    let given: Vec<PathBuf> = given
        .iter()
        .chain(crate::paths::user_skill_dirs().iter())
        .filter_map(|d| d.canonicalize().ok())
        .collect();
    let project: Vec<(PathBuf, PathBuf)> = crate::paths::PROJECT_SKILL_DIRS
        .iter()
        .map(|d| PathBuf::from(".").join(d))
        .filter_map(|d| d.canonicalize().ok().map(|c| (d, c)))
        .collect();
    skills
        .iter()
        .filter(|skill| !given.iter().any(|g| skill.dir.starts_with(g)))
        .filter_map(|skill| {
            let (shown, canon) = project.iter().find(|(_, c)| skill.dir.starts_with(c))?;
            let rest = skill.dir.strip_prefix(canon).ok()?;
            Some((skill.name.clone(), shown.join(rest)))
        })
        .collect()
}

/// Tells once, before anything else is said, which project folders of the working directory
/// are not used and why; folders the user named on the command line, and the user's own skill
/// and agent folders (the working directory may be `$HOME`), are used and left out.
pub(crate) fn project_notice(explicit: &[PathBuf], agents: bool) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let (skills, agents_dirs) = (
            crate::paths::user_skill_dirs(),
            crate::paths::agent_search_path_for(false),
        );
        let used: Vec<PathBuf> = (explicit.iter().chain(skills.iter()).chain(&agents_dirs))
            .filter_map(|d| d.canonicalize().ok())
            .collect();
        let present = crate::paths::project_dirs_present()
            .into_iter()
            .filter(|d| {
                (agents || *d != crate::paths::PROJECT_AGENT_DIR)
                    && std::fs::canonicalize(d).is_ok_and(|c| !used.contains(&c))
            });
        if let Some(why) = project_refusal("--skills-dir / --agent PATH") {
            let present: Vec<&str> = present.collect();
            if !present.is_empty() {
                note(&format!(
                    "skillpipe: ignoring ./{} here: {why}",
                    present.join(", ./")
                ));
            }
            return;
        }
        // Trusted: a folder others may write to is still left out, one notice each.
        for d in present {
            if let Some((dir, how)) = crate::paths::project_folder_problem(d) {
                note(&format!(
                    "skillpipe: ignoring ./{d} here: {} is a folder {how}; {MAKE_IT_YOURS}",
                    dir.display()
                ));
            }
        }
    });
}

/// Whether the working directory is `$HOME` or a folder that holds it.
fn cwd_holds_home() -> bool {
    match (
        std::env::current_dir().and_then(std::fs::canonicalize).ok(),
        crate::paths::home().and_then(|h| h.canonicalize().ok()),
    ) {
        (Some(cwd), Some(home)) => home.starts_with(cwd),
        _ => false,
    }
}

const MAKE_IT_YOURS: &str =
    "make it yours alone again (your own, not writable by others) to use it";

/// Why the working directory's project folders are not used, and how to use one anyway (`alt`:
/// the flag that names it, e.g. `--skills-dir ./skills`); `None` when it is trusted.
pub(crate) fn project_refusal(alt: &str) -> Option<String> {
    let shown = |p: &std::path::Path| crate::term::sanitize(&p.display().to_string()).into_owned();
    match crate::trust::cwd_trust() {
        crate::trust::CwdTrust::Trusted => None,
        // `trust` refuses the home folder and the folders holding it: no use suggesting it.
        crate::trust::CwdTrust::NotListed if cwd_holds_home() => Some(format!(
            "this directory is (or holds) your home directory, which is never trusted as a \
             project: pass {alt}"
        )),
        crate::trust::CwdTrust::NotListed => Some(format!(
            "this directory is not trusted: run `skillpipe trust`, or pass {alt}"
        )),
        crate::trust::CwdTrust::Unsafe { listed, dir, why } => {
            let which = match dir == listed {
                true => "it".to_string(),
                false => format!("{}, on the way here,", shown(dir)),
            };
            Some(format!(
                "{} is listed as trusted, but {which} is a folder {why}: {MAKE_IT_YOURS}, or pass {alt}",
                shown(listed)
            ))
        }
        crate::trust::CwdTrust::StoreOpen { store, open } => {
            let which = match open == store {
                true => "it".to_string(),
                false => shown(open),
            };
            Some(format!(
                "the trust list {} trusts no directory: {which} could be changed by another \
                 user; make it yours and `chmod o-w` it, or pass {alt}",
                shown(store)
            ))
        }
    }
}

/// For a skill that is not loaded but sits in a project folder of an untrusted working directory:
/// how to use it (the error alone says "unknown skill", which a user who can see
/// `./skills/NAME` cannot make sense of).
fn untrusted_skill_hint(name: &str) -> Option<String> {
    crate::paths::PROJECT_SKILL_DIRS
        .iter()
        .map(|d| std::path::Path::new(".").join(d).join(name))
        .find(|d| d.join("SKILL.md").is_file())
        .and_then(|d| {
            let folder = d
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let why = project_refusal(&format!("--skills-dir {folder}"))?;
            Some(format!("{} is not used because {why}", d.display()))
        })
}

/// For an unknown skill when none is loaded at all ("available: none" alone says nothing):
/// where skills were looked for (`~` for the home folder) and how to add one.
fn nothing_loaded_hint(searched: &[PathBuf]) -> String {
    let home = crate::paths::home();
    let shown: Vec<String> = searched
        .iter()
        .map(
            |d| match home.as_deref().and_then(|h| d.strip_prefix(h).ok()) {
                Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
                Some(rest) => format!("~/{}", rest.display()),
                None => d.display().to_string(),
            },
        )
        .map(|d| crate::term::sanitize(&d).into_owned())
        .collect();
    let searched = match shown.is_empty() {
        true => "no folder".to_string(),
        false => shown.join(", "),
    };
    format!(
        "no skill is loaded: looked in {searched}; add skills with --skills-dir DIR (a skill's \
         folder, or a folder of them)"
    )
}

/// What the hint on an unknown skill is about (`hint_kind` in `run --json`).
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HintKind {
    /// The skill is in a project folder of a directory that is not trusted: `skillpipe trust`,
    /// or `--skills-dir` naming the folder.
    UntrustedProject,
    /// No skill is loaded at all: `--skills-dir DIR` adds some.
    NoSkillsLoaded,
}

/// The hint for unknown skills `names`: [`untrusted_skill_hint`] of the first that has one,
/// else, when no skill is loaded at all (`searched`: where skills were looked for),
/// [`nothing_loaded_hint`].
pub(crate) fn unknown_skill_hint(
    names: &[String],
    searched: Option<&[PathBuf]>,
) -> Option<(HintKind, String)> {
    match names.iter().find_map(|n| untrusted_skill_hint(n)) {
        Some(h) => Some((HintKind::UntrustedProject, h)),
        None => searched.map(|s| (HintKind::NoSkillsLoaded, nothing_loaded_hint(s))),
    }
}

/// The error for skills `names` that are not loaded: one found but skipped (a broken SKILL.md)
/// says why, and only that; else `e` with the hint for them ([`unknown_skill_hint`], with
/// `searched`: where skills were looked for).
pub(crate) fn not_loaded(
    skills: &SkillSet,
    names: &[String],
    e: impl std::fmt::Display,
    searched: &[PathBuf],
) -> AppError {
    let skipped = |n: &String| skills.skipped(n).map(|why| (n.clone(), why));
    if let Some((n, why)) = names.iter().find_map(skipped) {
        return usage(format!("skill `{n}` was found but not loaded: {why}"));
    }
    let hint = unknown_skill_hint(names, skills.is_empty().then_some(searched));
    usage(with_hint(e, hint.as_ref()))
}

/// `e` with `hint`'s words appended.
pub(crate) fn with_hint(e: impl std::fmt::Display, hint: Option<&(HintKind, String)>) -> String {
    match hint {
        Some((_, h)) => format!("{e}; {h}"),
        None => e.to_string(),
    }
}

/// The user's own agent never runs a project's skill under its grants (DESIGN §5a): naming
/// one is an error that says how to choose it; without a skill list, the project's are left
/// out with a warning. Used wherever an agent's skills are gathered (chat, filter, run, mcp,
/// `agents show`), so what is shown is what runs.
pub(crate) fn own_agent_skills(
    a: &AgentConfig,
    skills: &mut SkillSet,
    skills_dirs: &[PathBuf],
    warnings: &mut Vec<String>,
) -> Result<(), AppError> {
    if !crate::paths::in_user_config(&a.source) {
        return Ok(());
    }
    let project = project_skills(skills, skills_dirs);
    if let Some((skill, folder)) = project.iter().find(|(name, _)| a.skills.contains(name)) {
        return Err(usage(format!(
            "agent `{}` ({}) names skill `{skill}`, which only this project has ({}): a \
             project's skill does not run under your own agent's grants; install it in your \
             skills folder, or pass --skills-dir {} to choose it",
            a.name,
            a.source.display(),
            folder.display(),
            shell_words::quote(&folder.to_string_lossy())
        )));
    }
    // An agent with no skill list would otherwise take them all: not the project's.
    if !project.is_empty() {
        let names: Vec<&str> = project.iter().map(|(n, _)| n.as_str()).collect();
        skills.remove_named(&names);
        warnings.push(format!(
            "agent `{}` is yours, so it does not use this project's skills ({}): a project's \
             script does not run under your own agent's grants; pass --skills-dir FOLDER to \
             choose one",
            a.name,
            names.join(", ")
        ));
    }
    Ok(())
}
