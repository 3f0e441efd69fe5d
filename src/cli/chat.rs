//! `skillpipe chat`: one-shot answer or the interactive REPL.

use super::setup::Setup;
use super::{PolicyFlags, SkillFlags, usage};
use crate::chat::{ChatOptions, Session, Ui};
use crate::model::{AgentModel, Settings};
use crate::render::{Display, Options as RenderOptions};
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
    /// Show answers as the model wrote them (no Markdown rendering), even on a terminal.
    #[arg(long)]
    pub raw: bool,
    /// Copy the output of side effects to stderr.
    #[arg(long)]
    pub show_side_effects: bool,
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
    let (session, settings) = build_session(&args, &setup)?;
    match prompt {
        Some(p) => one_shot(&rt, session, &p, args.raw),
        None => crate::repl::run(
            &rt,
            session,
            crate::repl::ReplInfo {
                model_label: settings.label(),
                args,
                setup,
            },
        ),
    }
}

/// Model settings, provider, system prompt and options → a chat session. Returns the
/// resolved model settings (their `label()` is what the REPL shows).
pub fn build_session(args: &ChatArgs, setup: &Setup) -> anyhow::Result<(Session, Settings)> {
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
    let settings = choose_model(settings)?;
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
        show_side_effects: args.show_side_effects,
    };
    let mut session = Session::new(provider, dispatcher, Some(system), opts);
    session.set_few_shot(crate::agents::prompt::few_shot(&skills));
    Ok((session, settings))
}

/// A base URL of the user's with no model named: the built-in default model belongs to another
/// server, so ask this one what it serves and take its only model, or stop and list them.
fn choose_model(mut settings: Settings) -> anyhow::Result<Settings> {
    if !settings.model_is_default_for_other_url {
        return Ok(settings);
    }
    let url = settings.base_url.clone();
    let models = crate::model::models::list(&settings, std::time::Duration::from_secs(10))
        .map_err(|e| {
            let msg = format!(
                "no model named for {url}, and its model list is not available ({e}); pass --model NAME"
            );
            // Unreachable is a runtime failure (exit 1), as a chat request would have been.
            match e {
                crate::model::models::ListError::Unreachable { .. } => anyhow::anyhow!(msg),
                _ => usage(msg),
            }
        })?;
    match models.as_slice() {
        [only] => {
            eprintln!("skillpipe: using {only}, the only model {url} serves (--model chooses)");
            settings.model = only.clone();
            settings.model_is_default_for_other_url = false;
            Ok(settings)
        }
        [] => Err(usage(format!(
            "no model named, and {url} lists none; pass --model NAME"
        ))),
        many => Err(usage(format!(
            "no model named, and {url} serves {} models; choose one with --model: {}",
            many.len(),
            many.join(", ")
        ))),
    }
}

/// One answer on stdout (processed text only), notices on stderr, then exit.
fn one_shot(
    rt: &tokio::runtime::Runtime,
    mut session: Session,
    prompt: &str,
    raw: bool,
) -> anyhow::Result<i32> {
    super::interrupt::install(rt)?;
    let looks = crate::repl::Looks::detect();
    let opts = RenderOptions::detect(looks.color_out, looks.unicode);
    let mut ui = PlainUi {
        display: Display::new(looks.stdout_tty, raw, opts),
        ..PlainUi::default()
    };
    let result = rt.block_on(session.turn(prompt, &mut ui));
    let rest = ui.display.finish(terminal_width());
    ui.write(&rest);
    if ui.wrote && !ui.ended_with_newline {
        ui.write(b"\n");
    }
    if let Some(code) = super::interrupt::exit_code(rt) {
        return Ok(code);
    }
    match result {
        Ok(_) => Ok(super::EXIT_OK),
        Err(e) => {
            eprintln!("skillpipe: {}", crate::term::sanitize(&e.to_string()));
            Ok(super::EXIT_RUNTIME)
        }
    }
}

/// Output for one-shot mode and pipes: text to stdout (Markdown rendered on a terminal unless
/// `--raw`), status lines to stderr, no spinner.
pub struct PlainUi {
    ended_with_newline: bool,
    wrote: bool,
    display: Display,
}

impl Default for PlainUi {
    fn default() -> Self {
        PlainUi {
            ended_with_newline: false,
            wrote: false,
            display: Display::Exact,
        }
    }
}

/// Columns of the terminal, read for every piece so a resize applies at once; 80 when the
/// terminal does not say (a pty nobody sized reports 0).
fn terminal_width() -> usize {
    match crossterm::terminal::size() {
        Ok((w, _)) if w > 0 => usize::from(w),
        _ => 80,
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
}

impl Ui for PlainUi {
    fn text(&mut self, bytes: &[u8]) {
        let out = self.display.push(bytes, terminal_width());
        self.write(&out);
    }

    /// Status lines quote foreign text (tool names, directive bodies): always sanitized.
    fn status(&mut self, line: &str) {
        eprintln!("skillpipe: {}", crate::term::sanitize(line));
    }

    fn side_output(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(crate::term::sanitize(text).as_bytes());
        let _ = err.flush();
    }

    fn busy(&mut self, _what: Option<&str>) {}
}
