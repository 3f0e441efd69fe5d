//! `skillpipe agents list|show`.

use super::{SkillFlags, usage};
use crate::agents::{self, AgentConfig, AgentError, AgentListing};
use clap::{Args, Subcommand};
use std::fmt::Write as _;

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
    match args.command {
        AgentsCommand::List { json } => {
            let listing = agents::list();
            warn_all(&listing.warnings);
            print!("{}", render_list(&listing, json)?);
            if listing.agents.is_empty() && !json {
                eprintln!(
                    "skillpipe: no agents found (searched {})",
                    crate::paths::agent_search_path()
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            Ok(super::EXIT_OK)
        }
        AgentsCommand::Show { name, vars } => {
            let vars = agents::parse_vars(&vars).map_err(config_error)?;
            let agent = agents::load(&name, &vars).map_err(config_error)?;
            warn_all(&agent.warnings);
            let dirs = args.skill_flags.search_path_for(Some(&name))?;
            let mut set = crate::skills::SkillSet::load_with(&dirs, &super::setup::load_options()?);
            // As `chat --agent` does: an agent without skills sees the catalog of all of them.
            if !agent.skills.is_empty() {
                set.retain_named(&agent.skills)
                    .map_err(|e| usage(format!("{}: {e}", agent.source.display())))?;
            }
            let skills = agents::skill_prompts_of(&set, &agent.skills);
            let prompt = agents::system_prompt(&agent.instructions, &skills);
            let (_, over_budget) = agents::catalog::size_report(&prompt);
            if let Some(w) = over_budget {
                eprintln!("skillpipe: warning: {w}");
            }
            print!("{}", render_show(&agent, &prompt));
            Ok(super::EXIT_OK)
        }
    }
}

/// Agent config problems are configuration errors: exit 2.
fn config_error(e: AgentError) -> anyhow::Error {
    usage(e.to_string())
}

fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("skillpipe: warning: {w}");
    }
}

/// `agents list`: aligned columns, or a JSON array of summaries.
fn render_list(listing: &AgentListing, json: bool) -> anyhow::Result<String> {
    if json {
        return Ok(serde_json::to_string_pretty(&listing.agents)? + "\n");
    }
    if listing.agents.is_empty() {
        return Ok(String::new());
    }
    let rows: Vec<[String; 4]> = listing
        .agents
        .iter()
        .map(|a| {
            [
                a.name.clone(),
                a.skills.join(","),
                a.source.display().to_string(),
                a.description.clone(),
            ]
        })
        .collect();
    let header = ["NAME", "SKILLS", "SOURCE", "DESCRIPTION"].map(String::from);
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            rows.iter()
                .chain([&header])
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in [&header].into_iter().chain(rows.iter()) {
        let line = format!(
            "{:w0$}  {:w1$}  {:w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Ok(out)
}

/// `agents show`: the resolved config, then the exact system prompt.
fn render_show(agent: &AgentConfig, prompt: &str) -> String {
    let none = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not set)".into());
    let mut out = String::new();
    let _ = writeln!(out, "name:          {}", agent.name);
    let _ = writeln!(out, "description:   {}", agent.description);
    let _ = writeln!(out, "source:        {}", agent.source.display());
    let _ = writeln!(
        out,
        "format:        {}",
        match agent.format {
            agents::AgentFormat::Skillpipe => "skillpipe",
            agents::AgentFormat::R9s => "r9s",
        }
    );
    let _ = writeln!(out, "model:         {}", none(&agent.model));
    let _ = writeln!(out, "provider:      {}", none(&agent.provider));
    let _ = writeln!(out, "skills:        {}", agent.skills.join(", "));
    let _ = writeln!(out, "tool_calls:    {}", agent.tool_calls);
    let vars: Vec<String> = agent
        .variables
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(out, "variables:     {}", vars.join(", "));
    let _ = writeln!(
        out,
        "params:        {}",
        serde_json::Value::Object(agent.params.clone())
    );
    match &agent.script_policy {
        Some(policy) => {
            out.push_str("script_policy:\n");
            let text = toml::to_string(policy).unwrap_or_default();
            for line in text.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        None => out.push_str("script_policy: (not set: defaults and flags apply)\n"),
    }
    let _ = writeln!(
        out,
        "\n--- system prompt (~{} tokens, {} bytes) ---",
        agents::catalog::estimated_tokens(prompt),
        prompt.len()
    );
    out.push_str(prompt);
    out
}
