//! `skillpipe agents list|show`.

use super::{SkillFlags, usage, warn_all};
use crate::agents::origin::Restricted;
use crate::agents::{self, AgentConfig, AgentListing};
use clap::{Args, Subcommand};
use std::fmt::Write as _;
use std::io::Write as _;

#[derive(Debug, Clone, Args)]
pub struct AgentsArgs {
    #[command(subcommand)]
    pub command: AgentsCommand,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

#[derive(Debug, Clone, Subcommand)]
pub enum AgentsCommand {
    /// List the agents found on the search path.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show the resolved config and the exact system prompt.
    Show {
        name: String,
        /// Fill {{K}} in the instructions.
        #[arg(long = "var", value_name = "K=V")]
        vars: Vec<String>,
    },
}

pub fn run(args: AgentsArgs) -> anyhow::Result<i32> {
    crate::app::project_notice(&[], true);
    match args.command {
        AgentsCommand::List { json } => {
            let listing = agents::list();
            warn_all(&listing.errors);
            warn_all(&listing.warnings);
            let mut out = match json {
                true => crate::term::Guarded::stdout(),
                false => crate::term::Guarded::listing(),
            };
            write!(out, "{}", render_list(&listing, json)?)?;
            if listing.agents.is_empty() && !json {
                eprintln!(
                    "skillpipe: no agents found (searched {})",
                    crate::trust::agent_search_path()
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            Ok(super::EXIT_OK)
        }
        AgentsCommand::Show { name, vars } => {
            let (mut agent, missing) =
                crate::app::load_agent(&name, &vars, false).map_err(anyhow::Error::from)?;
            warn_all(&agent.warnings);
            if !missing.is_empty() {
                // Shown, not sent: the prompt with `{{NAME}}` as written; chat needs the values.
                let flags: Vec<String> =
                    missing.iter().map(|n| format!("--var {n}=VALUE")).collect();
                eprintln!(
                    "skillpipe: warning: {}: {}, left as written below; chat and the other \
                     commands that send the prompt need {}",
                    crate::term::sanitize(&agent.source.display().to_string()),
                    crate::agents::missing_variables(&missing),
                    flags.join(" ")
                );
            }
            // What chat would refuse to start with is refused here too: a policy value out
            // of range (checked as written, as chat does).
            if let Some(p) = &agent.script_policy {
                crate::app::check_policy(p, &agent.source)?;
            }
            let restricted = agents::origin::restrict(&mut agent);
            if let Some(n) = restricted.notice(&agents::origin::shown_source(&agent.source)) {
                eprintln!("skillpipe: {}", crate::term::sanitize(&n));
            }
            let dirs = args.skill_flags.search_path(Some(&name))?;
            let mut set = crate::skills::SkillSet::load_with(&dirs, &crate::app::load_options()?);
            // As `chat --agent` does: an agent without skills sees the catalog of all of them.
            if !agent.skills.is_empty() {
                set.retain_named(&agent.skills)
                    .map_err(|e| usage(format!("{}: {e}", agent.source.display())))?;
            }
            let mut warnings = Vec::new();
            // As chat: the user's own agent shows (and runs) no project's skill.
            crate::app::own_agent_skills(
                &agent,
                &mut set,
                &args.skill_flags.skills_dirs,
                &mut warnings,
            )?;
            crate::app::add_agent_tools(&mut set, &agent, &mut warnings)?;
            warn_all(&warnings);
            // The agent's own tools are part of it: always shown in full.
            let mut named = agent.skills.clone();
            named.push(agent.name.clone());
            let skills = agents::skill_prompts_of(&set, &named);
            // As a chat with its scripts allowed would send it, coached as the agent says
            // (`--coach` may still change that in a chat).
            let coached = agent.coach.is_some_and(|c| c.is_on());
            let full = crate::scan::Announced::Full;
            let prompt =
                agents::prompt_for(&agent.instructions, &skills, full, coached).unwrap_or_default();
            let (_, over_budget) =
                agents::catalog::size_report(&prompt, &agent.instructions, &skills);
            if let Some(w) = over_budget {
                eprintln!("skillpipe: warning: {}", crate::term::sanitize(&w));
            }
            // The agent file and its skills are foreign text.
            let mut out = crate::term::Guarded::listing();
            write!(out, "{}", render_show(&agent, &restricted, &prompt))?;
            write!(
                out,
                "{}",
                render_few_shot(&match coached {
                    true => agents::prompt::few_shot(&skills),
                    false => Vec::new(),
                })
            )?;
            Ok(super::EXIT_OK)
        }
    }
}

/// The worked examples sent after the system prompt, one `role: text` line each; nothing when
/// there are none.
fn render_few_shot(messages: &[crate::model::Message]) -> String {
    use crate::model::Message;
    let lines: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::User(t) => Some(format!("user: {t}")),
            Message::Assistant { content, .. } => Some(format!("assistant: {content}")),
            _ => None,
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    format!(
        "--- few-shot ({} messages, about {bytes} bytes, sent after the system prompt) ---\n{}\n",
        lines.len(),
        lines.join("\n")
    )
}

/// `agents list`: aligned columns, or a JSON array of summaries.
fn render_list(listing: &AgentListing, json: bool) -> anyhow::Result<String> {
    if json {
        return Ok(serde_json::to_string_pretty(&listing.agents)? + "\n");
    }
    if listing.agents.is_empty() {
        return Ok(String::new());
    }
    let header = ["NAME", "SKILLS", "SOURCE", "DESCRIPTION"];
    let mut rows = vec![header.map(String::from).to_vec()];
    rows.extend(listing.agents.iter().map(|a| {
        vec![
            a.name.clone(),
            a.skills.join(","),
            a.source.display().to_string(),
            a.description.clone(),
        ]
    }));
    Ok(super::columns(&rows))
}

/// `agents show`: the resolved config, then the exact system prompt.
fn render_show(agent: &AgentConfig, restricted: &Restricted, prompt: &str) -> String {
    let none = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not set)".into());
    // Named as `agents list --json` names it.
    let format = serde_json::to_value(agent.format).unwrap_or_default();
    let vars: Vec<String> = (agent.variables.iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let params = serde_json::Value::Object(agent.params.clone());
    let fields = [
        ("name", agent.name.clone()),
        ("description", agent.description.clone()),
        ("source", agent.source.display().to_string()),
        ("format", format.as_str().unwrap_or_default().to_string()),
        ("model", none(&agent.model)),
        ("provider", none(&agent.provider)),
        ("skills", agent.skills.join(", ")),
        ("tool_calls", agent.tool_calls.to_string()),
        ("coach", agent.coach.unwrap_or_default().name().to_string()),
        ("variables", vars.join(", ")),
        ("params", params.to_string()),
    ];
    let mut out = String::new();
    for (key, value) in fields {
        let _ = writeln!(out, "{:15}{value}", format!("{key}:"));
    }
    out.push_str(&render_policy(agent, restricted));
    let _ = writeln!(
        out,
        "\n--- system prompt (~{} tokens, {} bytes) ---",
        agents::catalog::estimated_tokens(prompt),
        prompt.len()
    );
    out.push_str(prompt);
    out
}

/// The script policy the agent yields (before command-line flags), each key with where its value
/// came from: the agent file, the default, or the default because the file may not raise it.
fn render_policy(agent: &AgentConfig, restricted: &Restricted) -> String {
    let policy = agent.script_policy.clone().unwrap_or_default();
    let file = agent.source.display().to_string();
    let file = if restricted.foreign {
        format!("{file} (may only narrow)")
    } else {
        format!("{file} (your config)")
    };
    let mut out = String::from("script_policy: (command-line flags apply on top)\n");
    let table = toml::Table::try_from(&policy).unwrap_or_default();
    for (key, value) in &table {
        let set = agent.script_policy_table.as_ref().is_some_and(|t| {
            t.contains_key(key)
                || crate::policy::KEY_ALIASES
                    .iter()
                    .any(|(written, k)| k == key && t.contains_key(*written))
        });
        let origin = crate::policy::source::origin_of(key, set, &restricted.ignored, &file);
        let _ = writeln!(out, "  {key} = {value}    # {origin}");
    }
    if let Some(i) = restricted.ignored.iter().find(|i| i.key == "model") {
        let _ = writeln!(
            out,
            "  (its replay model was ignored; grant with {})",
            i.grant
        );
    }
    out
}
