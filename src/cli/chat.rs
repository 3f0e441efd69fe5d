//! `skillpipe chat`: one-shot answer or the interactive REPL.

use super::setup::Setup;
use super::{PolicyFlags, SkillFlags, usage};
use crate::chat::{ChatOptions, Session, Ui};
use crate::model::{AgentModel, Settings};
use crate::scan::ScanOptions;
use clap::Args;
use std::io::{IsTerminal, Read, Write};

#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// Answer this prompt once and exit (stdin is used when it is not a terminal).
    pub prompt: Option<String>,
    /// Agent name or path to an agent TOML.
    #[arg(long, value_name = "NAME|PATH")]
    pub agent: Option<String>,
    /// Model, or provider:model (e.g. openai:gpt-4o-mini, replay:answers.jsonl).
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible endpoint.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Fill {{K}} in the agent's instructions.
    #[arg(long = "var", value_name = "K=V")]
    pub vars: Vec<String>,
    /// Offer skill scripts as native function tools.
    #[arg(long)]
    pub tools: bool,
    /// Ask for the whole answer at once instead of streaming.
    #[arg(long)]
    pub no_stream: bool,
    /// Bound on capture round-trips per user message.
    #[arg(long, value_name = "N")]
    pub max_captures: Option<usize>,
    /// Also run directives inside Markdown code.
    #[arg(long)]
    pub exec_in_code: bool,
    /// Print the system prompt's size (bytes, estimated tokens) and other set-up details to stderr.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Reopen a saved session (lists sessions when no name is given).
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

pub fn run(args: ChatArgs) -> anyhow::Result<i32> {
    if args.resume.is_some() && args.prompt.is_some() {
        return Err(usage(
            "--resume reopens a saved session in the interactive REPL; it does not take a PROMPT",
        ));
    }
    let setup = super::setup::build(
        &args.policy,
        &args.skill_flags,
        args.agent.as_deref(),
        &args.vars,
    )?;
    let prompt = match &args.prompt {
        Some(p) => Some(p.clone()),
        None if args.resume.is_none() && !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            if text.trim().is_empty() {
                return Err(usage("no prompt: stdin was empty (give a PROMPT argument)"));
            }
            Some(text)
        }
        None => None,
    };
    let rt = super::setup::runtime()?;
    let _guard = rt.enter();
    let (session, label) = build_session(&args, &setup)?;
    match prompt {
        Some(p) => one_shot(&rt, session, &p),
        None => crate::repl::run(
            &rt,
            session,
            crate::repl::ReplInfo {
                model_label: label,
                args,
                setup,
            },
        ),
    }
}

/// Model settings, provider, system prompt and options → a chat session. Returns the
/// `provider:model` label for display.
pub fn build_session(args: &ChatArgs, setup: &Setup) -> anyhow::Result<(Session, String)> {
    if args.max_captures == Some(0) {
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
    let settings =
        Settings::from_process(args.model.as_deref(), args.base_url.as_deref(), agent_model)
            .map_err(|e| usage(e.to_string()))?;
    settings.check_api_key().map_err(|e| usage(e.to_string()))?;
    let provider = crate::model::provider_for(&settings).map_err(|e| usage(e.to_string()))?;
    let dispatcher = setup.dispatcher.clone();
    let instructions = agent.map(|a| a.instructions.as_str()).unwrap_or("");
    let skills = crate::agents::skill_prompts_of(dispatcher.skills(), &setup.named_skills);
    let system = crate::agents::system_prompt(instructions, &skills);
    let (size, over_budget) = crate::agents::catalog::size_report(&system);
    if args.verbose {
        let in_catalog = skills.iter().filter(|s| s.catalog_only).count();
        eprintln!(
            "skillpipe: {size} ({} skills in full, {in_catalog} in the catalog)",
            skills.len() - in_catalog
        );
    }
    if let Some(w) = over_budget {
        eprintln!("skillpipe: warning: {w}");
    }
    let policy = dispatcher.policy();
    let opts = ChatOptions {
        scan: ScanOptions {
            exec_in_code: args.exec_in_code,
            ..Default::default()
        },
        max_captures: args.max_captures.unwrap_or(policy.max_captures_per_turn),
        tools: args.tools || agent.is_some_and(|a| a.tool_calls),
        stream: !args.no_stream,
        model: settings.model.clone(),
        params: settings.params.clone(),
    };
    let label = settings.label();
    Ok((
        Session::new(provider, dispatcher, Some(system), opts),
        label,
    ))
}

/// One answer on stdout (processed text only), notices on stderr, then exit.
fn one_shot(
    rt: &tokio::runtime::Runtime,
    mut session: Session,
    prompt: &str,
) -> anyhow::Result<i32> {
    let mut ui = PlainUi::default();
    let result = rt.block_on(session.turn(prompt, &mut ui));
    ui.finish();
    if ui.wrote && !ui.ended_with_newline {
        ui.write(b"\n");
    }
    match result {
        Ok(_) => Ok(super::EXIT_OK),
        Err(e) => {
            eprintln!("skillpipe: {}", crate::term::sanitize(&e.to_string()));
            Ok(super::EXIT_RUNTIME)
        }
    }
}

/// Plain output for one-shot mode and pipes: text to stdout, status lines to stderr, no colour,
/// no spinner.
/// On a terminal the answer is sanitized (DESIGN §8); on a pipe it is the model's bytes.
pub struct PlainUi {
    ended_with_newline: bool,
    wrote: bool,
    sanitizer: Option<crate::term::Sanitizer>,
}

impl Default for PlainUi {
    fn default() -> Self {
        PlainUi {
            ended_with_newline: false,
            wrote: false,
            sanitizer: std::io::stdout()
                .is_terminal()
                .then(crate::term::Sanitizer::default),
        }
    }
}

impl PlainUi {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
        self.wrote = true;
        self.ended_with_newline = bytes.ends_with(b"\n");
    }

    /// Writes what the sanitizer held back at the end of the answer.
    fn finish(&mut self) {
        if let Some(s) = &mut self.sanitizer {
            let mut tail = Vec::new();
            s.finish(&mut tail);
            self.write(&tail);
        }
    }
}

impl Ui for PlainUi {
    fn text(&mut self, bytes: &[u8]) {
        match &mut self.sanitizer {
            Some(s) => {
                let mut shown = Vec::with_capacity(bytes.len());
                s.push(bytes, &mut shown);
                self.write(&shown);
            }
            None => self.write(bytes),
        }
    }

    /// Status lines quote foreign text (tool names, directive bodies): always sanitized.
    fn status(&mut self, line: &str) {
        eprintln!("skillpipe: {}", crate::term::sanitize(line));
    }

    fn busy(&mut self, _what: Option<&str>) {}
}
