//! `skillpipe chat`: one-shot answer or the interactive REPL.

use super::{ModelFlags, SessionFlags, SkillFlags, heading, usage};
use crate::app::{ChatConfig, build_session};
use crate::chat::Session;
use clap::Args;
use std::io::{IsTerminal, Read, Write};
use std::sync::Arc;

#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// Answer this prompt once and exit (stdin is used when it is not a terminal).
    pub prompt: Option<String>,
    #[command(flatten)]
    pub model: ModelFlags,
    /// Fill {{K}} in the agent's instructions.
    #[arg(long = "var", value_name = "K=V", help_heading = heading::SKILLS)]
    pub vars: Vec<String>,
    /// Offer skill scripts as native function tools.
    #[arg(long, help_heading = heading::MODEL)]
    pub tools: bool,
    /// Ask for the whole answer at once instead of streaming.
    #[arg(long, help_heading = heading::MODEL)]
    pub no_stream: bool,
    /// Coaching for the model: `small-model` sends worked exchanges before the conversation;
    /// `off` (the default) sends nothing invented.
    #[arg(long, value_name = "MODE", value_parser = crate::coach::CoachMode::parse, help_heading = heading::MODEL)]
    pub coach: Option<crate::coach::CoachMode>,
    /// Bound on capture round-trips per user message.
    #[arg(long, value_name = "N", help_heading = heading::POLICY)]
    pub max_captures: Option<usize>,
    /// Bound on side effects (`%{…}`) per user message; further ones are refused.
    #[arg(long, value_name = "N")]
    pub max_side_effects: Option<usize>,
    /// Sampling temperature sent with each request (the same as --param temperature=T).
    #[arg(long, value_name = "T", help_heading = heading::MODEL)]
    pub temperature: Option<f64>,
    /// Most tokens per answer (the same as --param max_tokens=N).
    #[arg(long, value_name = "N", help_heading = heading::MODEL)]
    pub max_tokens: Option<u64>,
    /// A request field for every request, over the agent's [params] and the config file's
    /// (repeatable; VALUE is JSON when it parses as JSON, else a string): --param top_p=0.9.
    #[arg(long = "param", value_name = "KEY=VALUE", help_heading = heading::MODEL)]
    pub params: Vec<String>,
    /// Reopen a saved session (lists sessions when no name is given).
    #[arg(long, value_name = "SESSION", num_args = 0..=1, default_missing_value = "", help_heading = heading::MODEL)]
    pub resume: Option<String>,
    /// Also run directives inside Markdown code.
    #[arg(long, help_heading = heading::POLICY)]
    pub exec_in_code: bool,
    #[command(flatten)]
    pub session: SessionFlags,
    #[command(flatten)]
    pub skill_flags: SkillFlags,
    /// Print the system prompt's size (bytes, estimated tokens) and other set-up details to stderr.
    #[arg(long, short = 'v', help_heading = heading::OUTPUT)]
    pub verbose: bool,
    /// Print the request the model would be sent — system prompt, few-shot examples, tool
    /// schemas, then PROMPT if given — as JSON, and exit without sending it.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub print_request: bool,
    /// Show answers as the model wrote them (no Markdown rendering), even on a terminal.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub raw: bool,
    /// Copy the output of side effects to stderr.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub show_side_effects: bool,
}

pub const EXAMPLES: &str = "\
Examples:
  skillpipe chat --model gpt-4o-mini --allow-scripts \"What does ephemeral mean?\"
  skillpipe chat --base-url http://localhost:11434/v1 --model qwen2.5:1.5b
  echo \"12 * 37?\" | skillpipe chat --skills-dir skills --skill calc --allow-scripts -y
  skillpipe chat --print-request --skills-dir skills --skill calc \"12 * 37?\"";

impl ChatArgs {
    /// `--param`s in order, then `--temperature` and `--max-tokens`: a later one wins.
    fn params(&self) -> anyhow::Result<Vec<(String, serde_json::Value)>> {
        let mut out = Vec::new();
        for p in &self.params {
            let Some((key, value)) = p.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
                return Err(usage(format!(
                    "--param {p}: expected KEY=VALUE, e.g. --param top_p=0.9"
                )));
            };
            let value = serde_json::from_str(value)
                .unwrap_or_else(|_| serde_json::Value::String(value.into()));
            out.push((key.trim().to_string(), value));
        }
        if let Some(t) = self.temperature {
            out.push(("temperature".into(), t.into()));
        }
        if let Some(n) = self.max_tokens {
            out.push(("max_tokens".into(), n.into()));
        }
        Ok(out)
    }

    /// The flags as the app layer's plain config.
    fn config(&self) -> anyhow::Result<ChatConfig> {
        let mut app = self.session.app_config(&self.skill_flags, &self.vars);
        app.overrides.max_captures = self.max_captures;
        app.overrides.max_side_effects = self.max_side_effects;
        app.instructions = true;
        Ok(ChatConfig {
            app,
            model: self.model.model.clone(),
            base_url: self.model.base_url.clone(),
            tools: self.tools,
            no_stream: self.no_stream,
            coach: self.coach,
            params: self.params()?,
            exec_in_code: self.exec_in_code,
            resume: self.resume.clone(),
            raw: self.raw,
            show_side_effects: self.show_side_effects,
            verbose: self.verbose,
            offline: self.print_request,
        })
    }
}

pub fn run(args: ChatArgs) -> anyhow::Result<i32> {
    let one_shot_wanted =
        args.prompt.is_some() || args.print_request || !std::io::stdin().is_terminal();
    if args.resume.as_deref() == Some("") && one_shot_wanted {
        return Err(usage(
            "--resume without a name lists the saved sessions to pick from in the REPL; with a PROMPT or piped input, name the session: --resume NAME",
        ));
    }
    let mut config = args.config()?;
    // A named session is found (or not) before stdin is read.
    let resumed = match config.resume.as_deref() {
        Some(name) if one_shot_wanted => Some(load_resumed(name)?),
        _ => None,
    };
    let prompt = match &args.prompt {
        Some(p) => Some(p.clone()),
        None if !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            match text.trim().is_empty() {
                // What is sent before any prompt is worth printing too.
                true if args.print_request => None,
                true => return Err(usage("no prompt: stdin was empty (give a PROMPT argument)")),
                false => Some(text),
            }
        }
        None => None,
    };
    let rt = crate::app::runtime()?;
    let _guard = rt.enter();
    if args.print_request || prompt.is_some() {
        // `--resume NAME` with a prompt goes on with that conversation; only the new answer is
        // written (the saved one is not shown again, nor is the file changed).
        let setup = match &resumed {
            Some((path, file)) => crate::repl::build_resumed(
                &mut config,
                path,
                file,
                &|w| crate::app::note(&format!("skillpipe: {}", crate::term::sanitize(w))),
                &|| crate::app::Asking::Default,
            )?,
            None => crate::app::build(&config.app, crate::app::Asking::Default)?,
        };
        super::warn_all(&setup.warnings);
        let (mut session, settings) = build_session(&config, &setup)?;
        if let Some((_, file)) = resumed {
            let transcript = file.transcript_pairs();
            session.restore(file.history, transcript);
        }
        if args.print_request {
            // Exactly what the next request would carry, sent nowhere.
            if let Some(p) = prompt {
                session.history.push(crate::model::Message::user(p));
            }
            let mut body = crate::model::request_body(settings.provider, &session.request());
            if settings.ask_endpoint_for_model {
                // Chat would take the model from the endpoint's list, which is not asked here:
                // no name rather than one the server may not serve.
                body["model"] = serde_json::Value::Null;
                crate::app::note(&format!(
                    "skillpipe: --print-request asks nothing of {}: with no model named, chat would ask it for its models and use its only one (or stop and list them), so \"model\" is null here; --model NAME prints it",
                    crate::term::sanitize(&settings.base_url)
                ));
            }
            // Skill and agent text is foreign: escaped like everything shown.
            let mut out = crate::term::Guarded::stdout();
            writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
            return Ok(super::EXIT_OK);
        }
        if let Some(p) = prompt {
            return one_shot(&rt, session, &p, config.raw);
        }
    }
    crate::repl::run(&rt, config)?;
    Ok(super::EXIT_OK)
}

/// The saved session `name` (a name in the sessions folder or a file).
fn load_resumed(
    name: &str,
) -> anyhow::Result<(std::path::PathBuf, crate::repl::session_file::SessionFile)> {
    use crate::repl::session_file;
    let dir = session_file::sessions_dir();
    let path = session_file::resolve(name, dir.as_deref()).map_err(|e| usage(e.to_string()))?;
    let file = session_file::load(&path).map_err(|e| usage(format!("{e:#}")))?;
    Ok((path, file))
}

/// One answer on stdout (processed text only), notices on stderr, then exit.
fn one_shot(
    rt: &tokio::runtime::Runtime,
    mut session: Session,
    prompt: &str,
    raw: bool,
) -> anyhow::Result<i32> {
    super::interrupt::install(rt)?;
    let screen = crate::repl::Screen::plain(crate::repl::Looks::detect());
    let held = screen.clone();
    super::interrupt::on_stop_write_held(move || held.write_held());
    let mut ui = crate::repl::TermUi::answer(screen, raw);
    // The reader of stdout may go (`| head -1`) while the model still streams: the turn stops
    // then, as the filter stops, and main ends quietly (a broken pipe on stdout).
    let closed = Arc::new(tokio::sync::Notify::new());
    let watch = closed.clone();
    std::thread::Builder::new()
        .name("stdout-watch".into())
        .spawn(move || {
            if crate::term::closed::reader_gone(libc::STDOUT_FILENO, None) {
                watch.notify_one();
            }
        })?;
    let result = rt.block_on(async {
        tokio::select! {
            r = session.turn(prompt, &mut ui) => Some(r),
            _ = closed.notified() => None,
        }
    });
    let Some(result) = result else {
        return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into());
    };
    ui.end_render();
    ui.finish_answer(None);
    if let Some(code) = super::interrupt::exit_code(rt) {
        return Ok(code);
    }
    match result {
        // Nothing came back at all (the notice said so): a script reading stdout must not
        // take the empty answer for one.
        Ok(report) if report.model_silent => Ok(crate::app::EXIT_RUNTIME),
        Ok(_) => Ok(super::EXIT_OK),
        Err(e) => {
            crate::app::note(&format!(
                "skillpipe: {}",
                crate::term::sanitize(&crate::advice::cli::model(&e))
            ));
            Ok(crate::app::EXIT_RUNTIME)
        }
    }
}
