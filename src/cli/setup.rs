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
    project_notice();
    let agent = match agent_arg {
        Some(name) => {
            let vars = crate::agents::parse_vars(vars).map_err(|e| usage(e.to_string()))?;
            let mut agent = crate::agents::load(name, &vars).map_err(agent_error)?;
            // Checked as written, so a bad value is reported even when it would be dropped.
            if let Some(p) = &agent.script_policy {
                check_policy(p, &agent.source)?;
            }
            let mut restricted = crate::agents::origin::restrict(&mut agent);
            // What the command line grants anyway is not worth a notice.
            restricted
                .ignored
                .retain(|i| !granted_by_flags(i.key, policy_flags));
            let notice = crate::policy::source::ignored_notice(&agent.source, &restricted.ignored);
            if let Some(notice) = notice {
                eprintln!("skillpipe: {notice}");
            }
            Some(agent)
        }
        None if !vars.is_empty() => return Err(usage("--var needs --agent")),
        None => None,
    };
    if let Some(a) = &agent {
        for w in &a.warnings {
            eprintln!("skillpipe: warning: {w}");
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
    if let Some(a) = &agent {
        add_agent_tools(&mut skills, a)?;
    }

    let audit_path = policy_flags
        .audit_log
        .clone()
        .or_else(crate::paths::audit_log);
    // The agent's own tools are part of it: always shown in full.
    let named_skills = wanted
        .into_iter()
        .chain(agent.as_ref().map(|a| a.name.clone()))
        .collect();
    let dispatcher = Dispatcher::new(policy, Arc::new(skills), AuditLog::new(audit_path))
        .with_agent(agent.as_ref().map(|a| a.name.clone()));
    Ok(Setup {
        dispatcher: Arc::new(dispatcher),
        agent,
        named_skills,
    })
}

/// An agent folder with `tools/` (see [`AgentConfig::folder`]) joins the skills under the
/// agent's name, so `AGENT:ID` runs one of its tools.
pub fn add_agent_tools(
    skills: &mut SkillSet,
    agent: &crate::agents::AgentConfig,
) -> anyhow::Result<()> {
    let Some(dir) = agent.folder() else {
        return Ok(());
    };
    let owner = crate::skills::discover::tool_owner(&agent.name, &agent.description, &dir)
        .map_err(usage)?;
    if let Some(owner) = owner {
        for w in &owner.warnings {
            eprintln!("skillpipe: warning: {w}");
        }
        skills.add(owner).map_err(usage)?;
    }
    Ok(())
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

/// Once per process: when the working directory is not trusted but has project-local agents or
/// skills, one stderr line says they are ignored and how to use them.
pub fn project_notice() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if crate::trust::cwd_trusted() {
            return;
        }
        let present = crate::paths::project_dirs_present();
        if present.is_empty() {
            return;
        }
        eprintln!(
            "skillpipe: ignoring ./{} here: this directory is not trusted (run `skillpipe trust` to use them, or pass --skills-dir / --agent PATH)",
            present.join(", ./")
        );
    });
}

/// Whether a policy key an agent file may not raise is raised by the command line anyway.
fn granted_by_flags(key: &str, f: &PolicyFlags) -> bool {
    match key {
        "allow_scripts" => f.allow_scripts || !f.allow.is_empty(),
        "confirm" => f.yes,
        "allow_network" => f.allow_network,
        "allow_filesystem" => f.allow_filesystem,
        "sandbox" => f.sandbox.as_deref() == Some("best-effort"),
        _ => false,
    }
}

/// An agent that cannot be loaded is a configuration error; one that is only in an untrusted
/// project's `./agents` says how to use it.
pub fn agent_error(e: crate::agents::AgentError) -> anyhow::Error {
    if let crate::agents::AgentError::NotFound { name, .. } = &e
        && !crate::trust::cwd_trusted()
    {
        let here =
            std::path::Path::new(crate::paths::PROJECT_AGENT_DIR).join(format!("{name}.toml"));
        if here.is_file() {
            return usage(format!(
                "{e}; ./{} is not used because this directory is not trusted: run `skillpipe trust`, or pass --agent {}",
                here.display(),
                here.display()
            ));
        }
    }
    usage(e.to_string())
}
