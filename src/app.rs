//! What the command line and the REPL share: from plain settings to a dispatcher (policy from
//! agent + overrides, skills, audit log) and a chat session. Nothing here parses flags or
//! prints; the command line fills the config structs and decides exit codes from [`AppError`].

use crate::agents::AgentConfig;
use crate::audit::AuditLog;
use crate::dispatch::{Asker, Dispatcher};
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
    /// The audit log (default: under `$XDG_STATE_HOME`).
    pub audit_log: Option<PathBuf>,
    /// Agent name or path.
    pub agent: Option<String>,
    /// `K=V` for the agent's instructions.
    pub vars: Vec<String>,
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
        Ok(crate::paths::skill_search_path(&self.skills_dirs))
    }
}

/// Everything a command needs to run directives.
pub(crate) struct Setup {
    pub dispatcher: Arc<Dispatcher>,
    pub agent: Option<AgentConfig>,
    /// Problems worth a warning (agent file, skills), for the caller to show.
    pub warnings: Vec<String>,
}

/// Loads the agent (if any), the skills and the policy, in DESIGN's precedence (overrides over
/// agent over defaults), and builds the dispatcher with `asker` (default: the terminal prompt).
pub(crate) fn build(config: &AppConfig, asker: Option<Arc<Asker>>) -> Result<Setup, AppError> {
    let agent = match &config.agent {
        Some(name) => {
            let vars = crate::agents::parse_vars(&config.vars).map_err(|e| usage(e.to_string()))?;
            Some(crate::agents::load(name, &vars).map_err(|e| usage(e.to_string()))?)
        }
        None if !config.vars.is_empty() => return Err(usage("--var needs --agent")),
        None => None,
    };
    let mut warnings = Vec::new();
    if let Some(a) = &agent {
        warnings.extend(a.warnings.iter().cloned());
        if let Some(p) = &a.script_policy {
            check_policy(p, &a.source)?;
        }
    }
    let mut policy = agent
        .as_ref()
        .and_then(|a| a.script_policy.clone())
        .unwrap_or_default();
    policy
        .apply(&config.overrides)
        .map_err(|e| usage(e.to_string()))?;

    let dirs = config.search_path()?;
    let mut skills = SkillSet::load_with(&dirs, &load_options()?);
    warnings.extend(skills.warnings().iter().cloned());
    let mut wanted: Vec<String> = agent.as_ref().map(|a| a.skills.clone()).unwrap_or_default();
    wanted.extend(config.only_skills.iter().cloned());
    if !wanted.is_empty() {
        skills
            .retain_named(&wanted)
            .map_err(|e| usage(e.to_string()))?;
    }

    let audit_path = config.audit_log.clone().or_else(crate::paths::audit_log);
    let mut builder = Dispatcher::builder(policy)
        .skills(Arc::new(skills))
        .audit(AuditLog::new(audit_path).on_warning(|e| eprintln!("skillpipe: warning: {e}")));
    if let Some(a) = &agent {
        builder = builder.agent(a.name.clone());
    }
    if let Some(asker) = asker {
        builder = builder.asker(move |p| asker(p));
    }
    let dispatcher = builder.build().map_err(|e| usage(e.to_string()))?;
    Ok(Setup {
        dispatcher: Arc::new(dispatcher),
        agent,
        warnings,
    })
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
fn check_policy(policy: &ScriptPolicy, source: &std::path::Path) -> Result<(), AppError> {
    policy
        .validate()
        .map_err(|e| usage(format!("{}: [script_policy]: {e}", source.display())))
}

/// Skill loading options from the config file; a bad file is a configuration error.
pub(crate) fn load_options() -> Result<crate::skills::LoadOptions, AppError> {
    crate::skills::LoadOptions::from_config_file().map_err(|e| usage(e.to_string()))
}

pub(crate) use session::{ChatConfig, build_session};

mod session {
    use super::{AppConfig, AppError, Setup, usage};
    use crate::chat::{ChatOptions, Session};
    use crate::model::{AgentModel, Settings};
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
        /// Bound on capture round-trips per user message.
        pub max_captures: Option<usize>,
        /// Run directives inside Markdown code too.
        pub exec_in_code: bool,
        /// A saved session to reopen (REPL).
        pub resume: Option<String>,
    }

    /// Model settings, provider, system prompt and options → a chat session. Returns the
    /// `provider:model` label for display.
    pub(crate) fn build_session(
        config: &ChatConfig,
        setup: &Setup,
    ) -> Result<(Session, String), AppError> {
        if config.max_captures == Some(0) {
            return Err(usage("--max-captures must be at least 1"));
        }
        let agent = setup.agent.as_ref();
        let agent_model = AgentModel {
            model: agent.and_then(|a| a.model.clone()),
            provider: agent.and_then(|a| a.provider.clone()),
            params: agent.map(|a| a.params.clone()).unwrap_or_default(),
            origin: agent
                .map(|a| format!("agent file {}", a.source.display()))
                .unwrap_or_default(),
        };
        let settings = Settings::from_process(
            config.model.as_deref(),
            config.base_url.as_deref(),
            agent_model,
        )
        .map_err(|e| usage(e.to_string()))?;
        settings.check_api_key().map_err(|e| usage(e.to_string()))?;
        let provider = crate::model::provider_for(&settings).map_err(|e| usage(e.to_string()))?;
        let dispatcher = setup.dispatcher.clone();
        let instructions = agent.map(|a| a.instructions.as_str()).unwrap_or("");
        let skills = crate::agents::skill_prompts_of(dispatcher.skills());
        let system = crate::agents::system_prompt(instructions, &skills);
        let policy = dispatcher.policy();
        let opts = ChatOptions {
            scan: ScanOptions {
                exec_in_code: config.exec_in_code,
                ..Default::default()
            },
            max_captures: config.max_captures.unwrap_or(policy.max_captures_per_turn),
            tools: config.tools || agent.is_some_and(|a| a.tool_calls),
            stream: !config.no_stream,
            model: settings.model.clone(),
            params: settings.params.clone(),
        };
        let label = settings.label();
        Ok((
            Session::new(provider, dispatcher, Some(system), opts),
            label,
        ))
    }
}
