//! The interactive REPL (DESIGN §8): `skillpipe chat` without a PROMPT, on a terminal.
//!
//! - [`editor`]: rustyline — history under `$XDG_STATE_HOME/skillpipe/history`, multi-line entry.
//! - [`commands`]: what a slash command means (pure).
//! - [`screen`]: the shared terminal — spinner thread, column tracking, the prompt's exclusive hold.
//! - [`ui`]: the chat loop's [`crate::chat::Ui`] on that screen.
//! - [`tape`]: what the screen shows, kept to lay it out again after a resize.
//! - [`session_file`]: `/save` and `--resume`.
//! - [`clipboard`]: the `/copy` command.
//!
//! Ctrl-C: at the prompt rustyline reads it as a key (the line is dropped). While an answer
//! streams or a script runs the terminal is in cooked mode, so it arrives as SIGINT; the REPL
//! handles SIGINT for its whole life (it never kills the program) and races it against the turn,
//! dropping the turn (which stops the stream and kills a running script's process group) and
//! keeping the partial answer in the history.

mod clipboard;
pub mod commands;
mod editor;
mod info;
mod ink;
mod reflow;
mod rewind;
mod screen;
pub mod session_file;
mod tape;
mod ui;

use crate::app::{self, ChatConfig, Setup, build_session};
use crate::chat::Session;
use crate::model::Settings;
use commands::{Command, Input};
use editor::{LineEditor, Read, lock};
use futures::FutureExt;
use ink::{Tone, paint};
use screen::Screen;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::signal::unix::{Signal, SignalKind};
use ui::TermUi;

pub use screen::Looks;

/// Runs the interactive REPL until the user leaves. `config` is what it was started with,
/// kept so that `/model` and `/agent` rebuild with the rest unchanged.
pub fn run(rt: &tokio::runtime::Runtime, mut config: ChatConfig) -> anyhow::Result<()> {
    let screen = Screen::new(Looks::detect());
    let notes = screen.clone();
    app::set_note_sink(move |line| TermUi::new(notes.clone()).note(line));
    let mut ui = TermUi::new(screen.clone());
    let names = Arc::new(ReplNames::default());
    let history = crate::paths::state_dir().map(|d| d.join("history"));
    let mut editor = LineEditor::new(history, names.clone())?;
    // A saved session is chosen and read before anything is built: it brings the model, the
    // endpoint and the agent it was held with (the defaults may not even be usable, e.g. with no
    // API key).
    let resumed = match config.resume.as_deref() {
        None => None,
        Some(arg) => match pick_and_load(arg, &mut ui, &mut editor, &names)? {
            Picked::Exit => return Ok(()),
            Picked::New => None,
            Picked::Path(path) => {
                let file = session_file::load(&path).map_err(|e| app::usage(format!("{e:#}")))?;
                Some((path, file))
            }
        },
    };
    let setup = match &resumed {
        Some((path, file)) => build_resumed(&mut config, path, file, &|w| ui.warn(w), &|| {
            app::Asking::Terminal(asker(&screen))
        })?,
        None => app::build(&config.app, app::Asking::Terminal(asker(&screen)))?,
    };
    let (session, settings) = build_session(&config, &setup)?;
    names.set_settings(&settings);
    names.set_skills(&setup);
    let sigint = rt.block_on(async { tokio::signal::unix::signal(SignalKind::interrupt()) })?;
    let _spinner = screen.start_spinner();
    let at_prompt = Arc::new(Mutex::new(false));
    if let Some(printer) = editor.printer() {
        redraw_on_resize(rt, screen.clone(), printer, at_prompt.clone());
    }
    let mut repl = Repl {
        rt,
        ui,
        screen,
        session,
        args: config,
        setup,
        settings,
        names,
        editor,
        sigint,
        at_prompt,
        session_path: None,
        told_about_ctrl_c: false,
    };
    for w in &repl.setup.warnings {
        repl.ui.warn(&format!("warning: {w}"));
    }
    repl.welcome();
    if let Some((path, file)) = resumed {
        repl.restore(&path, file);
    }
    repl.main_loop()
}

/// The skills of the welcome line: a few names, then how many more (with a hundred skills
/// installed the whole list filled the screen).
fn skills_label(names: &[&str]) -> String {
    const SHOWN: usize = 6;
    match names.len() {
        0 => "none".to_string(),
        n if n <= SHOWN + 1 => names.join(", "),
        n => format!(
            "{}, … and {} more (/skills lists them)",
            names[..SHOWN].join(", "),
            n - SHOWN
        ),
    }
}

/// How long the window must keep its size before the screen is laid out again: a drag sends
/// a resize for every step, and the line editor redraws its own line first.
const RESIZE_SETTLE: std::time::Duration = std::time::Duration::from_millis(60);

/// Lays the screen out again at the new width when the window is resized while the line
/// editor waits (see [`tape`]): drawn through the editor, which then draws the prompt and the
/// typed line again under it. While an answer streams, its next piece does it instead.
fn redraw_on_resize(
    rt: &tokio::runtime::Runtime,
    screen: Arc<Screen>,
    mut printer: impl rustyline::ExternalPrinter + Send + 'static,
    at_prompt: Arc<Mutex<bool>>,
) {
    rt.spawn(async move {
        let Ok(mut resized) = tokio::signal::unix::signal(SignalKind::window_change()) else {
            return;
        };
        while resized.recv().await.is_some() {
            loop {
                tokio::select! {
                    more = resized.recv() => if more.is_none() { return },
                    () = tokio::time::sleep(RESIZE_SETTLE) => break,
                }
            }
            let waiting = lock(&at_prompt);
            if !*waiting {
                continue;
            }
            if let Some(redraw) = TermUi::prompt_redraw(&screen) {
                let _ = printer.print(redraw);
            }
            drop(waiting);
        }
    });
}

/// Builds what a saved session needs (its agent, skill folders, `--skill`s) unless the command
/// line names them; the REPL and a one-shot `chat --resume` share it. `warn` gets what could
/// not be brought back, `asking` makes the confirmation asker (called again after a failure).
pub(crate) fn build_resumed(
    config: &mut ChatConfig,
    path: &std::path::Path,
    file: &session_file::SessionFile,
    warn: &dyn Fn(&str),
    asking: &dyn Fn() -> app::Asking,
) -> Result<Setup, app::AppError> {
    let applied = file.apply_to(config, session_file::is_kept(path));
    if applied.paths_left_out {
        warn(&format!(
            "warning: {} is not one of your saved sessions, so the agent file, skill folders and model endpoint it names are not used; pass --agent PATH, --skills-dir DIR and --model/--base-url to use them",
            path.display()
        ));
    }
    for d in &applied.missing_dirs {
        warn(&format!(
            "warning: the session's skill folder {} is gone; resuming without it",
            d.display()
        ));
    }
    match app::build(&config.app, asking()) {
        // The saved agent may be gone (renamed, moved): the conversation still resumes,
        // without it.
        Err(e) if applied.agent => {
            warn(&format!(
                "warning: the session's agent cannot be loaded ({e:#}); resuming without an agent"
            ));
            config.app.agent = None;
            config.app.vars.clear();
            app::build(&config.app, asking())
        }
        built => built,
    }
}

/// `--resume ARG`: the named session, or with an empty ARG the one the user picks from the list.
fn pick_and_load(
    arg: &str,
    ui: &mut TermUi,
    editor: &mut LineEditor,
    names: &ReplNames,
) -> anyhow::Result<Picked> {
    let dir = session_file::sessions_dir();
    if !arg.is_empty() {
        let path =
            session_file::resolve(arg, dir.as_deref()).map_err(|e| app::usage(e.to_string()))?;
        return Ok(Picked::Path(path));
    }
    let listed = dir.as_deref().map(session_file::list).unwrap_or_default();
    if listed.is_empty() {
        let where_ = dir
            .map(|d| d.display().to_string())
            .unwrap_or_else(|| "(no state folder)".into());
        ui.info(&format!(
            "no saved sessions in {where_}; /save NAME keeps one — starting a new session"
        ));
        return Ok(Picked::New);
    }
    let mut out = String::from("saved sessions (newest first):\n");
    for (i, l) in listed.iter().enumerate() {
        out.push_str(&format!(
            "  {:>2}. {:<24} {}  {:>3} messages  {}\n",
            i + 1,
            l.name,
            l.file
                .saved_at
                .get(..16)
                .unwrap_or(&l.file.saved_at)
                .replace('T', " "),
            l.file.history.len(),
            l.file.first_prompt()
        ));
    }
    ui.print(&out);
    names.picking.store(true, Ordering::Relaxed);
    let picked = pick_from(&listed, ui, editor);
    names.picking.store(false, Ordering::Relaxed);
    picked
}

fn pick_from(
    listed: &[session_file::Listed],
    ui: &mut TermUi,
    editor: &mut LineEditor,
) -> anyhow::Result<Picked> {
    loop {
        let question = "resume which? (number or name, Enter = new session) ";
        match editor.read((question, question))? {
            Read::Eof => return Ok(Picked::Exit),
            Read::Interrupted => return Ok(Picked::New),
            Read::Entry(answer) if answer.trim().is_empty() => return Ok(Picked::New),
            Read::Entry(answer) => match session_file::pick(listed, &answer) {
                Some(l) => return Ok(Picked::Path(l.path.clone())),
                None => ui.warn(&format!("no session `{}` in the list", answer.trim())),
            },
        }
    }
}

/// The REPL's confirmation prompt, which holds the screen while it asks.
fn asker(screen: &Arc<Screen>) -> Box<crate::dispatch::AsyncAsker> {
    let ask = TermUi::asker(screen.clone());
    Box::new(move |p| Box::pin(std::future::ready(ask(p))))
}

/// The names Tab completes: the endpoint's models (asked once per endpoint, on the first Tab
/// after `/model `), the agents and saved sessions (read at each Tab).
#[derive(Default)]
struct ReplNames {
    /// None until the session is built (a `--resume` pick comes first).
    settings: Mutex<Option<Settings>>,
    models: Mutex<Option<Vec<String>>>,
    /// The active skills' names (set at each build).
    skills: Mutex<Vec<String>>,
    picking: AtomicBool,
}

impl ReplNames {
    fn set_skills(&self, setup: &Setup) {
        let names = setup.dispatcher.skills().iter().map(|s| s.name.clone());
        *lock(&self.skills) = names.collect();
    }

    fn set_settings(&self, settings: &Settings) {
        let mut current = lock(&self.settings);
        let same = current
            .as_ref()
            .is_some_and(|c| c.base_url == settings.base_url && c.provider == settings.provider);
        if !same {
            *lock(&self.models) = None;
        }
        *current = Some(settings.clone());
    }
}

impl editor::NameSource for ReplNames {
    fn names(&self, which: editor::Names) -> Vec<String> {
        match which {
            editor::Names::Models => {
                let mut cache = lock(&self.models);
                let settings = lock(&self.settings);
                let Some(settings) = settings.as_ref() else {
                    return Vec::new();
                };
                cache
                    .get_or_insert_with(|| {
                        // No list (replay, an endpoint without /models): nothing to offer.
                        crate::model::models::list(settings, std::time::Duration::from_secs(3))
                            .unwrap_or_default()
                    })
                    .clone()
            }
            editor::Names::Agents => crate::agents::list()
                .agents
                .into_iter()
                .map(|a| a.name)
                .collect(),
            editor::Names::Skills => lock(&self.skills).clone(),
            editor::Names::Sessions => session_file::sessions_dir()
                .map(|d| session_file::list(&d).into_iter().map(|l| l.name).collect())
                .unwrap_or_default(),
        }
    }

    fn picking_session(&self) -> bool {
        self.picking.load(Ordering::Relaxed)
    }
}

struct Repl<'rt> {
    rt: &'rt tokio::runtime::Runtime,
    screen: Arc<Screen>,
    ui: TermUi,
    session: Session,
    /// The flags, updated by `/model` and `/agent` so later rebuilds keep the choice.
    args: ChatConfig,
    setup: Setup,
    /// The resolved model settings (model, endpoint, key variable).
    settings: Settings,
    names: Arc<ReplNames>,
    editor: LineEditor,
    sigint: Signal,
    /// The line editor is waiting for a line: a resize is laid out at once (see
    /// [`redraw_on_resize`]). Held while that redraw is drawn, so the REPL goes on only after.
    at_prompt: Arc<Mutex<bool>>,
    /// Where `/save` without an argument writes: the resumed or last saved file.
    session_path: Option<PathBuf>,
    told_about_ctrl_c: bool,
}

impl Repl<'_> {
    fn agent_name(&self) -> Option<&str> {
        self.setup.agent.as_ref().map(|a| a.name.as_str())
    }

    fn welcome(&self) {
        let skills: Vec<&str> = self
            .setup
            .dispatcher
            .skills()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let mut line = format!(
            "skillpipe {} · {} · agent: {} · skills: {}",
            env!("CARGO_PKG_VERSION"),
            self.settings.label(),
            self.agent_name().unwrap_or("none"),
            skills_label(&skills)
        );
        if !skills.is_empty() && !self.setup.dispatcher.policy().allow_scripts {
            line.push_str(" (scripts off: --allow-scripts)");
        }
        line.push_str(" · /help for commands");
        self.ui.info(&line);
    }

    /// `agent@model> `, or `model> ` without an agent.
    fn prompt(&self) -> (String, String) {
        let model = match self.settings.provider {
            crate::model::ProviderKind::Replay => "replay".to_string(),
            _ => crate::term::sanitize(&self.settings.model).into_owned(),
        };
        let plain = match self.agent_name() {
            Some(a) => format!("{a}@{model}> "),
            None => format!("{model}> "),
        };
        let styled = if self.screen.looks().color_tty {
            use crossterm::style::Stylize;
            plain.as_str().green().bold().to_string()
        } else {
            plain.clone()
        };
        (plain, styled)
    }

    fn main_loop(&mut self) -> anyhow::Result<()> {
        loop {
            let (plain, styled) = self.prompt();
            *lock(&self.at_prompt) = true;
            let read = self.editor.read((&plain, &styled));
            *lock(&self.at_prompt) = false;
            match read? {
                Read::Eof => return Ok(()),
                Read::Interrupted => {
                    if !self.told_about_ctrl_c {
                        self.ui.info("(Ctrl-D or /exit leaves)");
                        self.told_about_ctrl_c = true;
                    }
                }
                Read::Entry(entry) => {
                    self.ui.typed(&styled, &entry);
                    self.ui.redraw_if_resized();
                    self.editor.remember(&entry);
                    match commands::parse(&entry) {
                        Input::Empty => {}
                        Input::Message(text) => self.turn(&text),
                        Input::Command(c) => {
                            if self.command(c).is_break() {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
    }

    /// One message and its answer; Ctrl-C (SIGINT) cancels it and keeps what was shown.
    fn turn(&mut self, text: &str) {
        // A Ctrl-C pressed between turns must not cancel this one.
        while let Some(Some(())) = self.sigint.recv().now_or_never() {}
        let mut ui = TermUi::answer(self.screen.clone(), self.args.raw);
        let session = &mut self.session;
        let sigint = &mut self.sigint;
        let outcome = self.rt.block_on(async {
            tokio::select! {
                r = session.turn(text, &mut ui) => Some(r),
                _ = sigint.recv() => None,
            }
        });
        ui.end_render();
        match outcome {
            None => {
                self.session.cancelled();
                self.ui.finish_answer(None);
                self.ui
                    .info("cancelled — the partial answer stays in the conversation");
            }
            Some(Ok(report)) => self.ui.finish_answer(Some(&report)),
            Some(Err(e)) => {
                self.ui.finish_answer(None);
                self.ui.error(&crate::advice::cli::model(&e));
            }
        }
    }

    /// Breaks when the user leaves.
    fn command(&mut self, c: Command) -> ControlFlow<()> {
        match c {
            Command::Help => self.ui.print(commands::HELP),
            Command::Exit => return ControlFlow::Break(()),
            Command::Clear => {
                self.session.clear();
                self.ui.info("conversation cleared");
            }
            Command::Model(None) => self.ui.info(&format!(
                "model: {} (/model NAME switches)",
                self.settings.label()
            )),
            Command::Model(Some(m)) => self.switch_model(m),
            Command::Agent(None) => self.show_agents(),
            Command::Agent(Some(name)) => self.switch_agent(name),
            Command::Skills(name) => self.show_skills(name.as_deref()),
            Command::Save(arg) => self.save(arg.as_deref()),
            Command::Copy => self.copy(),
            Command::Info => self.show_info(),
            Command::Retry => {
                let start = self.session.turn_start();
                match rewind::last_question(
                    &mut self.session.history,
                    &mut self.session.transcript,
                    start,
                ) {
                    Some(question) => self.turn(&question),
                    None => self.ui.info("nothing to retry yet"),
                }
            }
            Command::Continue => {
                if self.session.transcript.is_empty() {
                    self.ui.info("no answer to continue yet");
                } else {
                    self.turn(commands::CONTINUE);
                }
            }
            Command::NoArgument(c) => self.ui.warn(&format!("{c} takes no argument")),
            Command::Unknown { typed, suggestion } => {
                let hint = suggestion.map(|s| format!("did you mean {s}? "));
                let hint = hint.unwrap_or_default();
                self.ui.warn(&format!(
                    "unknown command {typed} — {hint}(/help lists the commands)"
                ));
            }
        }
        ControlFlow::Continue(())
    }

    /// Goes on in a rebuilt session (the conversation moves into it) with its flags and
    /// settings.
    fn adopt(&mut self, args: ChatConfig, mut session: Session, settings: Settings) {
        session.restore(
            std::mem::take(&mut self.session.history),
            std::mem::take(&mut self.session.transcript),
        );
        self.session = session;
        self.args = args;
        self.names.set_settings(&settings);
        self.settings = settings;
    }

    fn switch_model(&mut self, model: String) {
        let mut args = self.args.clone();
        args.model = Some(model);
        match build_session(&args, &self.setup) {
            Ok((session, settings)) => {
                self.adopt(args, session, settings);
                self.ui.info(&format!("model: {}", self.settings.label()));
            }
            Err(e) => self.ui.error(&format!("{e:#}")),
        }
    }

    fn switch_agent(&mut self, name: String) {
        let mut args = self.args.clone();
        args.app.agent = Some(name);
        let built =
            app::build(&args.app, app::Asking::Terminal(asker(&self.screen))).and_then(|setup| {
                let (session, settings) = build_session(&args, &setup)?;
                Ok((setup, session, settings))
            });
        match built {
            Ok((setup, session, settings)) => {
                for w in &setup.warnings {
                    self.ui.warn(&format!("warning: {w}"));
                }
                self.names.set_skills(&setup);
                self.setup = setup;
                self.adopt(args, session, settings);
                self.welcome();
            }
            Err(e) => self.ui.error(&format!("{e:#}")),
        }
    }

    fn show_info(&self) {
        // Measured as sent, as `chat -v` does: the body the provider would send next.
        let request = self.session.request();
        let request_bytes = crate::model::request_body(self.settings.provider, &request)
            .to_string()
            .len();
        let facts = info::Facts {
            model: &self.settings.label(),
            endpoint: &self.settings.base_url,
            agent: self
                .setup
                .agent
                .as_ref()
                .map(|a| (a.name.as_str(), a.source.display().to_string())),
            skills: self
                .setup
                .dispatcher
                .skills()
                .iter()
                .map(|s| s.name.as_str())
                .collect(),
            policy: self.setup.dispatcher.policy(),
            tools: self.session.options().tools,
            system_prompt_bytes: self.session.system_prompt().map_or(0, str::len),
            few_shot: self.session.few_shot_len(),
            messages: self.session.history.len(),
            request_bytes,
        };
        self.ui.print(&crate::term::sanitize(&info::text(&facts)));
    }

    fn show_agents(&self) {
        let mut out = String::new();
        match &self.setup.agent {
            Some(a) => {
                out.push_str(&format!("agent: {} — {}\n", a.name, a.description));
                out.push_str(&format!("  from {}\n", a.source.display()));
            }
            None => out.push_str("agent: none\n"),
        }
        let listing = crate::agents::list();
        if listing.agents.is_empty() {
            out.push_str("no agents found on the search path (skillpipe doctor shows where)\n");
        } else {
            out.push_str("available:\n");
            for a in &listing.agents {
                let mark = if Some(a.name.as_str()) == self.agent_name() {
                    "*"
                } else {
                    " "
                };
                let line = format!(" {mark} {:<20} {}", a.name, a.description);
                out.push_str(&crate::term::sanitize(&line));
                out.push('\n');
            }
            out.push_str("/agent NAME switches (the conversation is kept; /clear forgets it)\n");
        }
        self.ui.print(&out);
    }

    /// `/skills`: every active skill; `/skills NAME`: that one in detail.
    fn show_skills(&self, name: Option<&str>) {
        let skills = self.setup.dispatcher.skills();
        if skills.is_empty() {
            self.ui.info(
                "no skills are active (skillpipe skills list shows what is on the search path)",
            );
            return;
        }
        let width = self.ui.width();
        let mut out = String::new();
        match name {
            None => {
                out.push_str(&crate::render::wrap_text(
                    commands::DISCLOSURE_LEGEND,
                    width,
                ));
                for s in skills.iter() {
                    out.push_str(&self.skill_block(s, width, false));
                }
            }
            Some(name) => match skills.iter().find(|s| s.name == name) {
                Some(s) => out.push_str(&self.skill_block(s, width, true)),
                None => {
                    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
                    return self.ui.warn(&format!(
                        "no active skill `{}`; active: {} (/skills lists them)",
                        crate::command::escape_controls(name),
                        names.join(", ")
                    ));
                }
            },
        }
        if !self.setup.dispatcher.policy().allow_scripts {
            let line = "directives do not run in this session: start with --allow-scripts";
            out.push_str(&crate::render::wrap_text(line, width));
        }
        self.ui.print_styled(&out);
    }

    /// One skill as `/skills` shows it: its name, how the model sees it, its description, tools
    /// and scripts with how a directive calls them; `detail` adds where it lives and how the
    /// model reads it. Names and descriptions come from skill files: inert before painting.
    /// Wrapped at words to `width`, continuation lines indented.
    fn skill_block(&self, s: &crate::skills::Skill, width: usize, detail: bool) -> String {
        use crate::term::sanitize;
        let wrap = |text: &str, first: &str, rest: &str| {
            crate::render::wrap_plain(text, width, first, rest)
        };
        let mut out = String::new();
        let name = sanitize(&s.name);
        let line = format!(
            "{name} [{}] — {}",
            commands::disclosure(&self.setup.named_skills, &s.name),
            sanitize(&s.description.replace('\n', " "))
        );
        let wrapped = wrap(&line, "", "    ");
        let rest = wrapped.strip_prefix(&*name).unwrap_or(&wrapped);
        out.push_str(&paint(&name, Tone::Bold, self.ui.color()));
        out.push_str(rest);
        if detail {
            let folder = format!("folder: {}", s.dir.display());
            out.push_str(&wrap(&sanitize(&folder), "  ", "    "));
            if let Some(c) = &s.compatibility {
                out.push_str(&wrap(&sanitize(&format!("needs: {c}")), "  ", "    "));
            }
            let read = format!(
                "the model reads its SKILL.md with !{{skill {name}}}, a file of it with !{{skill {name} FILE}}"
            );
            out.push_str(&wrap(&read, "  ", "    "));
        }
        if !s.allows_scripts() {
            let why = "(its allowed-tools has no Bash entry: its scripts may not run)";
            out.push_str(&wrap(why, "  ", "    "));
        }
        if s.scripts().is_empty() && s.tools().next().is_none() {
            out.push_str("  no scripts\n");
        }
        for t in s.tools() {
            // A tool folder: how a directive calls it, typed by its schema.
            let usage = t.flag_usage();
            let sep = if usage.is_empty() { "" } else { " " };
            let call = format!("!{{{}:{}{sep}{usage}}}", s.name, t.id);
            let mut line = sanitize(&call).into_owned();
            if !t.description.is_empty() {
                let about = t.description.replace('\n', " ");
                line = format!("{line} — {}", sanitize(&about));
            }
            out.push_str(&wrap(&line, "  ", "      "));
        }
        for sc in s.scripts() {
            let name = (self.setup.dispatcher.skills()).listed_name(&s.name, &sc.rel_path);
            let path = sanitize(&name);
            let line = match sc.description.is_empty() {
                true => path.to_string(),
                false => format!("{path:<28} {}", sanitize(&sc.description)),
            };
            out.push_str(&wrap(&line, "  ", "      "));
            // A script with a schema beside it takes typed flags, as a tool does.
            let typed = crate::skills::tools::script_tool(sc).ok().flatten();
            if let Some(t) = &typed {
                let usage = format!("JSON on stdin: {}", t.flag_usage());
                out.push_str(&wrap(&sanitize(&usage), "      ", "      "));
            }
            if detail && typed.is_none() {
                let usage = format!(
                    "!{{{path} ARGS}} (output back to the model), %{{{path} ARGS}} (output not shown)"
                );
                out.push_str(&wrap(&usage, "      ", "      "));
            }
        }
        out
    }

    fn save(&mut self, arg: Option<&str>) {
        if self.session.history.is_empty() {
            self.ui.info("nothing to save yet");
            return;
        }
        let dir = session_file::sessions_dir();
        let now = std::time::SystemTime::now();
        let path =
            match session_file::save_target(arg, self.session_path.as_deref(), dir.as_deref(), now)
            {
                Ok(p) => p,
                Err(e) => return self.ui.error(&e.to_string()),
            };
        let mut file = session_file::SessionFile::new(
            &self.settings.label(),
            self.agent_name(),
            &self.session.history,
            &self.session.transcript,
            now,
        );
        file.base_url = Some(self.settings.base_url.clone()).filter(|u| !u.is_empty());
        // Resumable from any folder: relative paths made absolute where they were meant.
        let cwd = std::env::current_dir().unwrap_or_default();
        file.model = session_file::absolute_model(&file.model, &cwd);
        let scripts = self.setup.dispatcher.policy().allow_scripts;
        file.reload = session_file::Reload::of(&self.args, scripts, &cwd);
        match session_file::save(&path, &file) {
            Ok(()) => {
                let (how, outside) = match (dir.as_deref(), path.parent(), path.file_stem()) {
                    (Some(d), Some(p), Some(stem)) if p == d => {
                        (stem.to_string_lossy().into_owned(), "")
                    }
                    // Outside the sessions folder: by its absolute path (the hint works from
                    // anywhere), and it comes back as a file not of the user's own folder does.
                    _ => (
                        std::path::absolute(&path)
                            .unwrap_or_else(|_| path.clone())
                            .display()
                            .to_string(),
                        " (outside your sessions folder, so it brings back the conversation but \
                         not its agent, skills folders or endpoint)",
                    ),
                };
                // Quoted as a shell needs it: `/save my notes` resumes as `--resume 'my notes'`,
                // and a name starting with `-` goes after `=`, or it would read as a flag.
                let quoted = shell_words::quote(&how);
                let how = match how.starts_with('-') {
                    true => format!("--resume={quoted}"),
                    false => format!("--resume {quoted}"),
                };
                self.ui.info(&format!(
                    "saved {} messages to {} — resume with: skillpipe chat {how}{outside}",
                    file.history.len(),
                    path.display()
                ));
                self.session_path = Some(path);
            }
            Err(e) => self.ui.error(&format!("{e:#}")),
        }
    }

    fn copy(&self) {
        let last = self
            .session
            .transcript
            .iter()
            .rev()
            .find(|(role, text)| role == "assistant" && !text.trim().is_empty());
        let Some((_, text)) = last else {
            return self.ui.info("no answer to copy yet");
        };
        match clipboard::copy(text) {
            Ok(how) => self.ui.info(&how),
            Err(why) => self.ui.warn(&why.to_string()),
        }
    }

    /// Puts a saved conversation back and shows it as it was seen.
    fn restore(&mut self, path: &std::path::Path, file: session_file::SessionFile) {
        self.session
            .restore(file.history.clone(), file.transcript_pairs());
        let (prompt, _) = self.prompt();
        for e in &file.transcript {
            // A saved transcript holds the model's words: shown inert, like when they streamed.
            let text = crate::term::sanitize(&e.text);
            if e.role == "user" && e.text == commands::CONTINUE {
                // What `/continue` sent, not the user's words: shown as the command typed.
                self.ui.print_bold(&format!("{prompt}/continue"));
            } else if e.role == "user" {
                self.ui.print_bold(&format!("{prompt}{text}"));
            } else {
                self.ui.print_markdown(&e.text, self.args.raw);
            }
        }
        self.ui.info(&format!(
            "resumed {} ({} messages, saved {})",
            path.display(),
            file.history.len(),
            file.saved_at
        ));
        if file.model != self.settings.label() {
            self.ui.info(&format!(
                "it was saved with {}; now using {} (/model switches)",
                file.model,
                self.settings.label()
            ));
        }
        if file.agent.as_deref() != self.agent_name() {
            self.ui.info(&format!(
                "it was saved with agent {}; now {} (/agent switches)",
                file.agent.as_deref().unwrap_or("none"),
                self.agent_name().unwrap_or("none")
            ));
        }
        if file.reload.scripts_allowed && !self.setup.dispatcher.policy().allow_scripts {
            self.ui.info(
                "it ran with scripts allowed; a saved session does not carry the policy: pass --allow-scripts (and the other policy flags) again to run them",
            );
        }
        self.session_path = Some(path.to_path_buf());
    }
}

enum Picked {
    Path(PathBuf),
    New,
    Exit,
}

#[cfg(test)]
mod tests {
    use super::skills_label;

    #[test]
    fn the_welcome_line_names_a_few_skills_and_counts_the_rest() {
        assert_eq!(skills_label(&[]), "none");
        let seven = ["a", "b", "c", "d", "e", "f", "g"];
        assert_eq!(skills_label(&seven), "a, b, c, d, e, f, g");
        let many: Vec<String> = (0..146).map(|i| format!("s{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            skills_label(&many),
            "s0, s1, s2, s3, s4, s5, … and 140 more (/skills lists them)"
        );
    }
}
