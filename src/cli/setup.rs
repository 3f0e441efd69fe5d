//! What filter, chat and run share: policy from agent + flags, skills, audit log, dispatcher.

use super::{PolicyFlags, SkillFlags, usage};
use crate::agents::AgentConfig;
use crate::audit::AuditLog;
use crate::dispatch::Dispatcher;
use crate::policy::ScriptPolicy;
use crate::skills::SkillSet;
use std::sync::Arc;

/// Everything a command needs to run directives.
pub struct Setup {
    pub dispatcher: Arc<Dispatcher>,
    pub agent: Option<AgentConfig>,
    /// Skills named by the agent or `--skill`: the system prompt carries their bodies in full,
    /// every other loaded skill as a catalog entry.
    pub named_skills: Vec<String>,
}

/// Loads the agent (if any), the skills and the policy, in DESIGN's precedence: flags over agent
/// over defaults. Skill warnings go to stderr.
pub fn build(
    policy_flags: &PolicyFlags,
    skill_flags: &SkillFlags,
    agent_arg: Option<&str>,
    vars: &[String],
) -> anyhow::Result<Setup> {
    let agent = match agent_arg {
        Some(name) => {
            let vars = crate::agents::parse_vars(vars).map_err(|e| usage(e.to_string()))?;
            Some(crate::agents::load(name, &vars).map_err(|e| usage(e.to_string()))?)
        }
        None if !vars.is_empty() => return Err(usage("--var needs --agent")),
        None => None,
    };
    if let Some(a) = &agent {
        for w in &a.warnings {
            eprintln!("skillpipe: warning: {w}");
        }
        if let Some(p) = &a.script_policy {
            check_policy(p, &a.source)?;
        }
    }
    let mut policy = agent
        .as_ref()
        .and_then(|a| a.script_policy.clone())
        .unwrap_or_default();
    policy.apply_flags(policy_flags)?;

    let dirs = skill_flags.search_path_for(agent_arg)?;
    let mut skills = SkillSet::load_with(&dirs, &load_options()?);
    for w in skills.warnings() {
        eprintln!("skillpipe: warning: {w}");
    }
    let mut wanted: Vec<String> = agent.as_ref().map(|a| a.skills.clone()).unwrap_or_default();
    wanted.extend(policy_flags.skills.iter().cloned());
    if !wanted.is_empty() {
        skills.retain_named(&wanted).map_err(usage)?;
    }

    let audit_path = policy_flags
        .audit_log
        .clone()
        .or_else(crate::paths::audit_log);
    let dispatcher = Dispatcher::new(policy, Arc::new(skills), AuditLog::new(audit_path))
        .with_agent(agent.as_ref().map(|a| a.name.clone()));
    Ok(Setup {
        dispatcher: Arc::new(dispatcher),
        agent,
        named_skills: wanted,
    })
}

/// A multi-threaded runtime sized for this tool: commands and streams, not heavy compute.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Checks a policy from an agent TOML, naming the file in the error.
fn check_policy(policy: &ScriptPolicy, source: &std::path::Path) -> anyhow::Result<()> {
    policy
        .validate()
        .map_err(|e| usage(format!("{}: [script_policy]: {e}", source.display())))
}

/// Skill loading options from the config file; a bad file is a configuration error.
pub fn load_options() -> anyhow::Result<crate::skills::LoadOptions> {
    crate::skills::LoadOptions::from_config_file().map_err(usage)
}
