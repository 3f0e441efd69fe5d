//! From a chat's settings and the [`Setup`] to a chat session: the model settings, the
//! provider, the system prompt, the coaching and what each request will cost.

use super::{AppConfig, AppError, Setup, note, usage};
use crate::chat::{ChatOptions, Session};
use crate::coach::CoachMode;
use crate::model::Settings;
use crate::scan::Announced;
use crate::scan::ScanOptions;

/// A chat's settings besides the [`AppConfig`]: model, endpoint and how to talk to it. A field
/// without a comment is the `chat` flag of its name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ChatConfig {
    pub app: AppConfig,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub tools: bool,
    pub no_stream: bool,
    /// `--coach`: over the agent's, the provider entry's and the config file's.
    pub coach: Option<crate::coach::CoachMode>,
    /// Request fields from the command line, over the agent's and the config file's.
    pub params: Vec<(String, serde_json::Value)>,
    pub exec_in_code: bool,
    pub resume: Option<String>,
    pub raw: bool,
    pub show_side_effects: bool,
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
    let (size, over_budget) =
        crate::agents::catalog::size_report(system.as_deref().unwrap_or(""), instructions, &skills);
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
    let over_budget =
        over_budget.or_else(|| crate::agents::catalog::tools_over_budget(tool_bytes, body_bytes));
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
