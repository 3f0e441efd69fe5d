//! `skillpipe chat`: one-shot answer or the interactive REPL.

use super::{PolicyFlags, SkillFlags, usage};
use crate::app::{ChatConfig, build_session};
use crate::chat::{Session, Ui};
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
    /// Reopen a saved session (lists sessions when no name is given).
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub policy: PolicyFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
}

impl ChatArgs {
    /// The flags as the app layer's plain config.
    fn config(&self) -> anyhow::Result<ChatConfig> {
        Ok(ChatConfig {
            app: self
                .policy
                .app_config(&self.skill_flags, self.agent.as_deref(), &self.vars)?,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            tools: self.tools,
            no_stream: self.no_stream,
            max_captures: self.max_captures,
            exec_in_code: self.exec_in_code,
            resume: self.resume.clone(),
        })
    }
}

pub fn run(args: ChatArgs) -> anyhow::Result<i32> {
    if args.resume.is_some() && args.prompt.is_some() {
        return Err(usage(
            "--resume reopens a saved session in the interactive REPL; it does not take a PROMPT",
        ));
    }
    let config = args.config()?;
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
    let rt = crate::app::runtime()?;
    let _guard = rt.enter();
    match prompt {
        Some(p) => {
            let setup = crate::app::build(&config.app, None)?;
            super::warn_all(&setup.warnings);
            let (session, _label) = build_session(&config, &setup)?;
            one_shot(&rt, session, &p)
        }
        None => {
            crate::repl::run(&rt, config)?;
            Ok(super::EXIT_OK)
        }
    }
}

/// One answer on stdout (processed text only), notices on stderr, then exit.
fn one_shot(
    rt: &tokio::runtime::Runtime,
    mut session: Session,
    prompt: &str,
) -> anyhow::Result<i32> {
    let mut ui = PlainUi::default();
    let result = rt.block_on(session.turn(prompt, &mut ui));
    if ui.wrote && !ui.ended_with_newline {
        ui.text(b"\n");
    }
    match result {
        Ok(_) => Ok(super::EXIT_OK),
        Err(e) => {
            eprintln!("skillpipe: {e}");
            Ok(crate::app::EXIT_RUNTIME)
        }
    }
}

/// Plain output for one-shot mode and pipes: text to stdout, status lines to stderr, no colour,
/// no spinner.
#[derive(Default)]
pub struct PlainUi {
    ended_with_newline: bool,
    wrote: bool,
}

impl Ui for PlainUi {
    fn text(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
        self.wrote = true;
        self.ended_with_newline = bytes.ends_with(b"\n");
    }

    fn report(&mut self, report: &crate::pipeline::Report) {
        eprintln!("skillpipe: {report}");
    }

    fn status(&mut self, line: &str) {
        eprintln!("skillpipe: {line}");
    }

    fn busy(&mut self, _what: Option<&str>) {}
}
