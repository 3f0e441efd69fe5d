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

mod project;
mod session;

pub(crate) use project::{
    HintKind, not_loaded, own_agent_skills, project_notice, project_refusal, unknown_skill_hint,
    with_hint,
};
pub(crate) use session::{ChatConfig, build_session};

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
        // the user's own skill folders (so they never shadow a skill the user installed).
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
            let notice = restricted.notice(&shown);
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
        return Err(not_loaded(&skills, &e.names, &e, &dirs));
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
        crate::dispatch::BuildError::NoAuditLog => usage(format!(
            "audit = \"required\" but there is {}",
            wording::audit(&crate::audit::AuditError::NoLocation)
        )),
        e => usage(e.to_string()),
    })?;
    Ok(Setup {
        dispatcher: Arc::new(dispatcher),
        agent,
        warnings,
        named_skills,
    })
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

/// The model a chat with no model named uses, from the endpoint's list.
pub(crate) struct Chosen {
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
