//! What the command line and the REPL share: from plain settings to a dispatcher (policy from
//! agent + overrides, skills, audit log) and a chat session. Nothing here parses flags or
//! prints; the command line fills the config structs and decides exit codes from [`AppError`].

use crate::advice::cli as wording;
use crate::agents::AgentConfig;
use crate::audit::AuditLog;
use crate::dispatch::{AsyncAsker, Dispatcher};
use crate::policy::{PolicyOverrides, ScriptPolicy};
use crate::skills::SkillSet;
use std::path::PathBuf;
use std::sync::Arc;

/// Exit codes (DESIGN §9).
pub(crate) const EXIT_RUNTIME: i32 = 1;
pub(crate) const EXIT_USAGE: i32 = 2;

/// An error of the application, with the exit code it means.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AppError {
    /// A usage or configuration error (exit 2); the message names the flag, file or line.
    #[error("{0}")]
    Usage(String),
    /// Anything else that stops a command (exit 1): I/O, the model endpoint.
    #[error("{0}")]
    Runtime(String),
}

impl AppError {
    /// The process exit code for this error.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            AppError::Usage(_) => EXIT_USAGE,
            AppError::Runtime(_) => EXIT_RUNTIME,
        }
    }
}

/// A line of skillpipe's own on stderr (a notice, a warning), on a line of its own and wrapped
/// at words when stderr is a terminal, as the REPL's lines are.
pub(crate) fn note(line: &str) {
    if let Some(sink) = NOTE_SINK.get() {
        return sink(line);
    }
    let width = crate::term::columns(libc::STDERR_FILENO).unwrap_or(usize::MAX);
    // Notes quote skill names, paths and agents' text, which are foreign.
    let wrapped = crate::render::wrap_text(&crate::term::sanitize(line), width);
    crate::term::line::status(wrapped.trim_end_matches('\n'));
}

/// Where [`note`]s go instead while the REPL keeps its screen (it draws them again after a
/// resize, so they must pass through it).
static NOTE_SINK: std::sync::OnceLock<NoteSink> = std::sync::OnceLock::new();

/// What [`set_note_sink`] keeps.
type NoteSink = Box<dyn Fn(&str) + Send + Sync>;

/// Sends every later [`note`] to `sink` (the first caller's sink stays).
pub(crate) fn set_note_sink(sink: impl Fn(&str) + Send + Sync + 'static) {
    let _ = NOTE_SINK.set(Box::new(sink));
}

/// A usage error (exit 2).
pub(crate) fn usage(msg: impl Into<String>) -> AppError {
    AppError::Usage(msg.into())
}

/// Where directives may come from and what they may do: the agent, skills, policy overrides
/// and the audit log, as plain data.
#[derive(Debug, Clone, Default)]
pub(crate) struct AppConfig {
    /// Changes to the agent's (or the default) policy.
    pub overrides: PolicyOverrides,
    /// Skill directories searched first (`--skills-dir`).
    pub skills_dirs: Vec<PathBuf>,
    /// Only these skills are active (`--skill`), besides the agent's.
    pub only_skills: Vec<String>,
    /// The skills the command uses, when it names them apart from `only_skills` (`run SKILL`):
    /// warnings about the others (duplicates, skipped ones) are not said.
    pub warn_only_about: Vec<String>,
    /// The audit log (default: under `$XDG_STATE_HOME`).
    pub audit_log: Option<PathBuf>,
    /// Agent name or path.
    pub agent: Option<String>,
    /// `K=V` for the agent's instructions.
    pub vars: Vec<String>,
    /// The agent's instructions go to a model (chat): every variable they use needs a value.
    /// Off (filter, mcp, run), only the agent's policy and skills are used.
    pub instructions: bool,
}

impl AppConfig {
    /// The skill search path. A `--skills-dir` that is not a directory is a usage error: a typo
    /// would otherwise load no skills and leave every directive "not found".
    pub(crate) fn search_path(&self) -> Result<Vec<PathBuf>, AppError> {
        if let Some(d) = self.skills_dirs.iter().find(|d| !d.is_dir()) {
            return Err(usage(format!(
                "--skills-dir {}: no such directory",
                d.display()
            )));
        }
        project_notice(&self.named_dirs(), false);
        for d in &self.skills_dirs {
            if crate::skills::discover::skill_folders(d).is_empty() {
                note(&format!(
                    "skillpipe: warning: --skills-dir {}: no skill found; {}",
                    d.display(),
                    crate::skills::discover::no_skills_hint(d)
                ));
            }
        }
        let mut dirs = crate::trust::skill_search_path(&self.skills_dirs);
        // The skill folders beside an agent given by path, right after the `--skills-dir`s and
        // the user's own skill folders.
        let beside = self
            .agent
            .as_deref()
            .map(crate::paths::agent_skill_dirs)
            .unwrap_or_default();
        let at = (self.skills_dirs.len() + crate::paths::user_skill_dirs().len()).min(dirs.len());
        dirs.splice(at..at, beside);
        Ok(dirs)
    }

    /// Folders the user named on the command line: the `--skills-dir`s, and for an agent given
    /// by path its folder and the skill folders beside it. They are used whether or not the
    /// working directory is trusted, so the untrusted-project notice leaves them out.
    fn named_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.skills_dirs.clone();
        if let Some(agent) = self.agent.as_deref() {
            dirs.extend(crate::paths::agent_dir(agent));
            dirs.extend(crate::paths::agent_skill_dirs(agent));
        }
        dirs
    }
}

/// Everything a command needs to run directives.
pub(crate) struct Setup {
    pub dispatcher: Arc<Dispatcher>,
    pub agent: Option<AgentConfig>,
    /// Problems worth a warning (agent file, skills), for the caller to show.
    pub warnings: Vec<String>,
    /// Skills named by the agent or `--skill`: the system prompt carries their bodies in full,
    /// every other loaded skill as a catalog entry.
    pub named_skills: Vec<String>,
}

/// Who answers the confirmation prompts.
pub(crate) enum Asking {
    /// The dispatcher's default: a key press on `/dev/tty`.
    Default,
    /// Another terminal prompt of skillpipe's (the REPL's), which reads Ctrl-C as a key.
    Terminal(Box<AsyncAsker>),
    /// A protocol peer (an MCP client).
    Peer(Box<AsyncAsker>),
}

/// Loads the agent (if any), the skills and the policy, in DESIGN's precedence (overrides over
/// agent over defaults), and builds the dispatcher asking as `asking` says.
pub(crate) fn build(config: &AppConfig, asking: Asking) -> Result<Setup, AppError> {
    // With an agent named, a project's ./agents is one place it could have come from.
    project_notice(&config.named_dirs(), config.agent.is_some());
    let agent = match &config.agent {
        Some(name) => {
            let (mut agent, _) = load_agent(name, &config.vars, config.instructions)?;
            // Checked as written, so a bad value is reported even when it would be dropped.
            if let Some(p) = &agent.script_policy {
                check_policy(p, &agent.source)?;
            }
            let mut restricted = crate::agents::origin::restrict(&mut agent);
            // What the command line grants anyway is not worth a notice.
            restricted
                .ignored
                .retain(|i| !granted_by_overrides(&i.key, &config.overrides));
            let mut shown = crate::agents::origin::shown_source(&agent.source);
            if crate::agents::origin::linked_to(&agent.source).is_some() {
                // Reached from the user's folder, it still counts where it leads.
                shown.push_str(" (to let it grant, copy the file into your own config folder)");
            }
            let notice = crate::policy::source::ignored_notice(&shown, &restricted.ignored);
            if let Some(notice) = notice {
                note(&format!("skillpipe: {}", crate::term::sanitize(&notice)));
            }
            Some(agent)
        }
        None if !config.vars.is_empty() => return Err(usage("--var needs --agent")),
        None => None,
    };
    let mut warnings: Vec<String> = agent.iter().flat_map(|a| a.warnings.clone()).collect();
    let mut policy = agent
        .as_ref()
        .and_then(|a| a.script_policy.clone())
        .unwrap_or_default();
    policy
        .apply(&config.overrides)
        .map_err(|e| usage(e.to_string()))?;

    let dirs = config.search_path()?;
    let mut skills = SkillSet::load_with(&dirs, &load_options()?);
    let mut wanted: Vec<String> = agent.as_ref().map(|a| a.skills.clone()).unwrap_or_default();
    wanted.extend(config.only_skills.iter().cloned());
    // Which skill is used is said every time (of the skills named, when some are); the
    // skills' own spec warnings once in a line (they are `skills validate`'s to list, and
    // repeated on every command they were noise).
    let mut concerning = wanted.clone();
    concerning.extend(config.warn_only_about.iter().cloned());
    warnings.extend(skills.load_problems(&concerning));
    if !wanted.is_empty()
        && let Err(e) = skills.retain_named(&wanted)
    {
        // Found but skipped (a broken SKILL.md) says why, and only that; else where it would
        // have been.
        if let Some(why) = e.names.iter().find_map(|n| {
            skills
                .skipped(n)
                .map(|why| format!("skill `{n}` was found but not loaded: {why}"))
        }) {
            return Err(usage(why));
        }
        let hint = e.names.iter().find_map(|n| untrusted_skill_hint(n));
        let hint = hint.or_else(|| skills.is_empty().then(|| nothing_loaded_hint(&dirs)));
        return Err(usage(match hint {
            Some(hint) => format!("{e}; {hint}"),
            None => e.to_string(),
        }));
    }
    if let Some(a) = &agent {
        own_agent_skills(a, &mut skills, &config.skills_dirs, &mut warnings)?;
    }
    // Counted among the skills named (an agent's, `--skill`, the script run): the user chose
    // those. Of every installed skill (a catalog), `doctor` and `skills list` tell: skills the
    // user did not write would repeat the line on every command.
    let linted = match wanted.is_empty() && config.warn_only_about.is_empty() {
        true => 0,
        false => skills.linted(&config.warn_only_about),
    };
    if linted > 0 {
        warnings.push(format!(
            "{linted} skill{} ha{} spec warnings (`skillpipe skills list` shows them)",
            if linted == 1 { "" } else { "s" },
            if linted == 1 { "s" } else { "ve" }
        ));
    }

    if let Some(a) = &agent {
        add_agent_tools(&mut skills, a, &mut warnings)?;
    }

    let audit_path = config.audit_log.clone().or_else(crate::paths::audit_log);
    // The agent's own tools are part of it: always shown in full.
    let named_skills = wanted
        .into_iter()
        .chain(agent.as_ref().map(|a| a.name.clone()))
        .collect();
    let mut builder = Dispatcher::builder(policy)
        .wording(wording::CLI)
        .skills(Arc::new(skills))
        .audit(
            AuditLog::new(audit_path)
                .on_warning(|e| note(&format!("skillpipe: warning: {}", wording::audit(e)))),
        );
    if let Some(a) = &agent {
        builder = builder.agent(a.name.clone());
    }
    match asking {
        Asking::Default => {}
        Asking::Terminal(asker) => builder = builder.boxed_asker(asker, true),
        Asking::Peer(asker) => builder = builder.boxed_asker(asker, false),
    }
    let dispatcher = builder.build().map_err(|e| match e {
        crate::dispatch::BuildError::NoAuditLog => usage(
            "audit = \"required\" but there is no audit log location (set XDG_STATE_HOME or \
             HOME, or pass --audit-log)",
        ),
        e => usage(e.to_string()),
    })?;
    Ok(Setup {
        dispatcher: Arc::new(dispatcher),
        agent,
        warnings,
        named_skills,
    })
}

/// The loaded skills that were found in a project folder of the working directory (a trusted
/// one: else none is loaded) and not in a `--skills-dir` the user gave: each name and its folder
/// as the user would name it (`./skills/NAME`). An agent of the user's carries the user's grants
/// (network, writable paths, environment); a project's script must not inherit them, neither by
/// sharing a name with a skill the user does not have nor by an agent that names no skills.
fn project_skills(skills: &SkillSet, given: &[PathBuf]) -> Vec<(String, PathBuf)> {
    let canonical = |d: &std::path::Path| d.canonicalize().ok();
    // The user's own skill folders are the user's even when the working directory holds them
    // (`./.agents/skills` run from `$HOME`).
    let given: Vec<PathBuf> = given
        .iter()
        .chain(crate::paths::user_skill_dirs().iter())
        .filter_map(|d| canonical(d))
        .collect();
    let project: Vec<(PathBuf, PathBuf)> = crate::paths::PROJECT_SKILL_DIRS
        .iter()
        .map(|d| PathBuf::from(".").join(d))
        .filter_map(|d| canonical(&d).map(|c| (d, c)))
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
        let canonical = |d: &std::path::Path| d.canonicalize().ok();
        let (skills, agents_dirs) = (
            crate::paths::user_skill_dirs(),
            crate::paths::agent_search_path_for(false),
        );
        let used: Vec<PathBuf> = (explicit.iter().chain(skills.iter()).chain(&agents_dirs))
            .filter_map(|d| canonical(d))
            .collect();
        let present = crate::paths::project_dirs_present()
            .into_iter()
            .filter(|d| {
                (agents || *d != crate::paths::PROJECT_AGENT_DIR)
                    && canonical(std::path::Path::new(d)).is_some_and(|c| !used.contains(&c))
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
    let canonical = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    match (
        std::env::current_dir().ok().and_then(|d| canonical(&d)),
        crate::paths::home().and_then(|h| canonical(&h)),
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
pub(crate) fn untrusted_skill_hint(name: &str) -> Option<String> {
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
pub(crate) fn nothing_loaded_hint(searched: &[PathBuf]) -> String {
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

/// `e` for skill `name`, with [`untrusted_skill_hint`] when there is one.
pub(crate) fn skill_error(e: impl std::fmt::Display, name: &str) -> String {
    match untrusted_skill_hint(name) {
        Some(hint) => format!("{e}; {hint}"),
        None => e.to_string(),
    }
}

/// Whether a policy key an agent file may not raise is raised by the overrides anyway.
fn granted_by_overrides(key: &str, o: &PolicyOverrides) -> bool {
    match key {
        "allow_scripts" => o.allow_scripts || !o.allow.is_empty(),
        "confirm" => o.confirm_never,
        "allow_network" => o.allow_network,
        "allow_filesystem" => o.allow_filesystem,
        "sandbox" => o.sandbox == Some(crate::policy::SandboxMode::BestEffort),
        _ => false,
    }
}

/// The agent `name` with its instructions filled from `--var K=V` arguments; a variable it does
/// not use is a warning. With `strict` (the instructions go to a model) a variable without a
/// value is an error; else (`agents show`, or no model) it is left as `{{NAME}}` and its name
/// returned (the `--var` flags `chat` will require).
pub(crate) fn load_agent(
    name: &str,
    vars: &[String],
    strict: bool,
) -> Result<(AgentConfig, Vec<String>), AppError> {
    let vars = parse_vars(vars)?;
    let file =
        crate::agents::find(name, &crate::trust::agent_search_path()).map_err(agent_error)?;
    let (mut agent, missing) = match file.clone().resolve(&vars) {
        Ok(agent) => (agent, Vec::new()),
        Err(crate::agents::AgentError::MissingVariable { names, .. }) if !strict => {
            (file.resolve_policy_only(&vars), names)
        }
        Err(e) => return Err(agent_error(e)),
    };
    let mut told: Vec<&str> = Vec::new();
    for (k, _) in &vars {
        if !agent.variables.iter().any(|(n, _)| n == k) && !told.contains(&k.as_str()) {
            told.push(k);
            let w = format!("--var {k}: agent `{}` has no variable `{k}`", agent.name);
            agent.warnings.push(w);
        }
    }
    Ok((agent, missing))
}

/// `--var K=V` arguments; a missing `=` or an empty key is a usage error naming the flag.
fn parse_vars(kv: &[String]) -> Result<Vec<(String, String)>, AppError> {
    kv.iter()
        .map(|arg| match arg.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(usage(format!(
                "--var `{}`: expected K=V, e.g. --var lang=Spanish",
                crate::command::escape_controls(arg)
            ))),
        })
        .collect()
}

/// An agent that cannot be loaded is a configuration error, with `--var` where a variable is
/// missing; one that is only in an untrusted project's `./agents` says how to use it.
pub(crate) fn agent_error(e: crate::agents::AgentError) -> AppError {
    if let crate::agents::AgentError::MissingVariable { file, names } = &e {
        let flags: Vec<String> = names.iter().map(|n| format!("--var {n}=VALUE")).collect();
        return usage(format!(
            "{}: {}: pass {}",
            file.display(),
            crate::agents::missing_variables(names),
            flags.join(" ")
        ));
    }
    if let crate::agents::AgentError::NotFound { name, .. } = &e {
        let here =
            std::path::Path::new(crate::paths::PROJECT_AGENT_DIR).join(format!("{name}.toml"));
        let alt = format!("--agent ./{}", here.display());
        if here.is_file()
            && let Some(why) = project_refusal(&alt)
        {
            return usage(format!(
                "{e}; ./{} is not used because {why}",
                here.display()
            ));
        }
    }
    usage(e.to_string())
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

/// An agent folder with `tools/` (see [`AgentConfig::folder`]) joins the skills under the
/// agent's name, so `AGENT:ID` runs one of its tools.
pub(crate) fn add_agent_tools(
    skills: &mut SkillSet,
    agent: &AgentConfig,
    warnings: &mut Vec<String>,
) -> Result<(), AppError> {
    let Some(dir) = agent.folder() else {
        return Ok(());
    };
    let owner = crate::skills::discover::tool_owner(&agent.name, &agent.description, &dir)
        .map_err(|e| usage(e.to_string()))?;
    if let Some(owner) = owner {
        warnings.extend(owner.warnings.iter().cloned());
        skills.add(owner).map_err(|e| usage(e.to_string()))?;
    }
    Ok(())
}

/// The agent's say in the model settings (`model`, `provider`, `[params]`); none without one.
pub(crate) fn agent_model(agent: Option<&AgentConfig>) -> crate::model::AgentModel {
    crate::model::AgentModel {
        model: agent.and_then(|a| a.model.clone()),
        provider: agent.and_then(|a| a.provider.clone()),
        params: agent.map(|a| a.params.clone()).unwrap_or_default(),
        origin: agent
            .map(|a| format!("agent file {}", a.source.display()))
            .unwrap_or_default(),
    }
}

/// A multi-threaded runtime sized for this tool: commands and streams, not heavy compute.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, AppError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| AppError::Runtime(format!("cannot start the async runtime: {e}")))
}

/// Checks a policy from an agent TOML, naming the file in the error.
pub(crate) fn check_policy(
    policy: &ScriptPolicy,
    source: &std::path::Path,
) -> Result<(), AppError> {
    policy
        .validate()
        .map_err(|e| usage(format!("{}: [script_policy]: {e}", source.display())))
}

/// Skill loading options from the config file; a bad file is a configuration error.
pub(crate) fn load_options() -> Result<crate::skills::LoadOptions, AppError> {
    let mut opts =
        crate::skills::LoadOptions::from_config_file().map_err(|e| usage(e.to_string()))?;
    opts.put_first = wording::put_first;
    Ok(opts)
}

pub(crate) use session::{ChatConfig, build_session};

mod session {
    use super::{AppConfig, AppError, Setup, note, usage};
    use crate::chat::{ChatOptions, Session};
    use crate::coach::CoachMode;
    use crate::model::Settings;
    use crate::scan::Announced;
    use crate::scan::ScanOptions;

    /// A chat's settings besides the [`AppConfig`]: model, endpoint and how to talk to it.
    #[derive(Debug, Clone, Default)]
    pub(crate) struct ChatConfig {
        pub app: AppConfig,
        /// Model, or provider:model.
        pub model: Option<String>,
        /// Base URL of an OpenAI-compatible endpoint.
        pub base_url: Option<String>,
        /// Offer skill scripts as native tools.
        pub tools: bool,
        /// One request for the whole answer.
        pub no_stream: bool,
        /// `--coach`: over the agent's, the provider entry's and the config file's.
        pub coach: Option<crate::coach::CoachMode>,
        /// Request fields from the command line, over the agent's and the config file's.
        pub params: Vec<(String, serde_json::Value)>,
        /// Run directives inside Markdown code too.
        pub exec_in_code: bool,
        /// A saved session to reopen (REPL).
        pub resume: Option<String>,
        /// Show answers as the model wrote them (sanitized), not rendered.
        pub raw: bool,
        /// Show what side effects write.
        pub show_side_effects: bool,
        /// Print the system prompt's size and other set-up details to stderr.
        pub verbose: bool,
        /// Only show what would be sent (`--print-request`): no API key is needed and the
        /// endpoint is not asked for its models (the default model name stands).
        pub offline: bool,
    }

    /// Model settings, provider, system prompt and options → a chat session. Returns the
    /// resolved model settings (their `label()` is what the REPL shows).
    pub(crate) fn build_session(
        config: &ChatConfig,
        setup: &Setup,
    ) -> Result<(Session, Settings), AppError> {
        let agent = setup.agent.as_ref();
        let settings = Settings::from_process(
            config.model.as_deref(),
            config.base_url.as_deref(),
            super::agent_model(agent),
        )
        .map_err(|e| usage(e.to_string()))?;
        let settings = if config.offline {
            settings
        } else {
            settings.check_api_key().map_err(|e| usage(e.to_string()))?;
            choose_model(settings)?
        };
        let provider = if config.offline {
            // Never asked (nothing is sent), so it needs no key.
            let mut unsent = settings.clone();
            unsent.api_key.get_or_insert_with(String::new);
            crate::model::provider_for(&unsent)
        } else {
            crate::model::provider_for(&settings)
        }
        .map_err(|e| usage(e.to_string()))?;
        let dispatcher = setup.dispatcher.clone();
        let instructions = agent.map(|a| a.instructions.as_str()).unwrap_or("");
        let coach = coach_mode(config, agent, &settings)?;
        let opts = ChatOptions {
            scan: ScanOptions {
                exec_in_code: config.exec_in_code,
                ..Default::default()
            },
            tools: config.tools || agent.is_some_and(|a| a.tool_calls),
            stream: !config.no_stream,
            model: settings.model.clone(),
            params: (settings.params.clone().into_iter())
                .chain(config.params.iter().cloned())
                .collect(),
            explicit_params: config
                .params
                .iter()
                .map(|(k, _)| k.clone())
                .chain(settings.explicit.iter().cloned())
                .collect(),
            show_side_effects: config.show_side_effects,
            // `--max-captures` is in the policy (see `PolicyOverrides::max_captures`).
            max_captures: None,
        };
        let mut session = Session::new(provider, dispatcher.clone(), None, opts);
        // What the model is told is what the session acts on: one fact, the session's.
        let announced = session.announced();
        let skills = match announced {
            Announced::Nothing => Vec::new(),
            _ => crate::agents::skill_prompts_of(dispatcher.skills(), &setup.named_skills),
        };
        let system = crate::agents::prompt_for(instructions, &skills, announced, coach.is_on());
        let (size, over_budget) = crate::agents::catalog::size_report(
            system.as_deref().unwrap_or(""),
            instructions,
            &skills,
        );
        let in_catalog = skills.iter().filter(|s| s.catalog_only).count();
        let size = format!(
            "{size} (skills: {} in full, {in_catalog} in the catalog)",
            skills.len() - in_catalog
        );
        session.set_system_prompt(system);
        // The worked exchanges show directives that run: only where they do.
        if coach.is_on() {
            let few_shot = crate::agents::prompt::few_shot_for(&skills, announced);
            session.set_coaching(Box::new(crate::coach::SmallModel::new(few_shot)));
        }
        // What is sent, measured as sent: the tool schemas (`--tools`) and the few-shot
        // examples ride on every request besides the system prompt.
        let measure = |session: &Session| {
            let body = crate::model::request_body(settings.provider, &session.request());
            let tools = body["tools"].as_array().map_or(0, Vec::len);
            let tool_bytes = match tools {
                0 => 0,
                _ => body["tools"].to_string().len(),
            };
            (tools, tool_bytes, body.to_string().len())
        };
        let (mut tools, mut tool_bytes, mut body_bytes) = measure(&session);
        // Every skill's tools on every request would cost more than the budget: only the
        // skills named in full go with it at first, a catalog skill's once the model loads it.
        if crate::agents::catalog::tools_over_budget(tool_bytes, body_bytes).is_some() {
            session.offer_tools_of(&setup.named_skills);
            let all = tools;
            (tools, tool_bytes, body_bytes) = measure(&session);
            let which = match setup.named_skills.is_empty() {
                true => "only load_skill: no skill is named in full",
                false => "load_skill and the tools of the skills named in full",
            };
            note(&format!(
                "skillpipe: --tools: {tools} of {all} tools are offered at first ({which}); a catalog skill's tools join once the model loads it (load_skill or !{{skill NAME}})"
            ));
        }
        if config.verbose {
            let line = crate::agents::catalog::request_line(&size, tools, tool_bytes, body_bytes);
            note(&format!("skillpipe: {line}"));
        }
        let over_budget = over_budget
            .or_else(|| crate::agents::catalog::tools_over_budget(tool_bytes, body_bytes));
        if let Some(w) = over_budget {
            note(&format!("skillpipe: warning: {w}"));
        }
        Ok((session, settings))
    }

    /// The coaching the user chose: `--coach`, else the agent's `coach`, else the provider
    /// entry's, else the config file's; off when none says.
    fn coach_mode(
        config: &ChatConfig,
        agent: Option<&crate::agents::AgentConfig>,
        settings: &Settings,
    ) -> Result<CoachMode, AppError> {
        let file = crate::config::ConfigFile::global().map_err(|e| usage(e.to_string()))?;
        let provider = file
            .and_then(|f| f.providers.get(&settings.provider_name))
            .and_then(|p| p.coach);
        Ok(config
            .coach
            .or(agent.and_then(|a| a.coach))
            .or(provider)
            .or(file.and_then(|f| f.coach))
            .unwrap_or_default())
    }

    /// No model named, and the default is only a guess for this server (see
    /// `Settings::ask_endpoint_for_model`): ask it what it serves and take its only model, or
    /// the default when it serves that among others, or stop and list them.
    fn choose_model(mut settings: Settings) -> Result<Settings, AppError> {
        if !settings.ask_endpoint_for_model {
            return Ok(settings);
        }
        let url = settings.base_url.clone();
        let models = crate::model::models::list(&settings, std::time::Duration::from_secs(10))
            .map_err(|e| {
                // A server that wants a key or is not running is not helped by a model name.
                let fix = e
                    .fix(&settings)
                    .unwrap_or_else(|| "pass --model NAME".to_string());
                let msg = format!(
                    "no model named for {url}, and its model list is not available ({e}); {fix}"
                );
                // Unreachable is a runtime failure (exit 1), as a chat request would have been.
                match e {
                    crate::model::models::ListError::Unreachable { .. } => AppError::Runtime(msg),
                    _ => usage(msg),
                }
            })?;
        let chosen = crate::app::model_from_list(&settings.model, &models)
            .map_err(|why| usage(format!("no model named, and {url} {why}")))?;
        if chosen.only {
            // The name is the server's text.
            note(&format!(
                "skillpipe: using {}, the only model {url} serves (--model chooses)",
                crate::term::sanitize(&chosen.name)
            ));
        }
        settings.model = chosen.name;
        settings.ask_endpoint_for_model = false;
        Ok(settings)
    }
}

/// The model a chat with no model named uses, from the endpoint's list.
pub(crate) struct Chosen {
    /// Its name.
    pub name: String,
    /// It is the only one the endpoint serves (the default was not among several).
    pub only: bool,
}

/// Picks from the endpoint's `models` for a chat that named none: its only model, or the
/// `default` when it serves that among others; else what the list is, to follow "no model
/// named, and URL …". The one rule for `chat` and `doctor --online`.
pub(crate) fn model_from_list(default: &str, models: &[String]) -> Result<Chosen, String> {
    match models {
        [only] => Ok(Chosen {
            name: only.clone(),
            only: true,
        }),
        [] => Err("lists none; pass --model NAME".into()),
        many if many.iter().any(|m| m == default) => Ok(Chosen {
            name: default.to_string(),
            only: false,
        }),
        many => Err(format!(
            "serves {} models; choose one with --model: {}",
            many.len(),
            many.join(", ")
        )),
    }
}
