//! The interactive REPL (DESIGN §8): `skillpipe chat` without a PROMPT, on a terminal.
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
mod listing;
mod names;
mod reflow;
mod resume;
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
use names::ReplNames;
use resume::{Picked, pick_and_load};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::signal::unix::{Signal, SignalKind};
pub use ui::TermUi;

pub(crate) use resume::build_resumed;
pub use screen::{Looks, Screen};

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
            app::Asking::Terminal(TermUi::asker(&screen))
        })?,
        None => app::build(&config.app, app::Asking::Terminal(TermUi::asker(&screen)))?,
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

    fn skill_names(&self) -> Vec<&str> {
        let skills = self.setup.dispatcher.skills().iter();
        skills.map(|s| s.name.as_str()).collect()
    }

    /// The setup's warnings, then what the session is.
    fn welcome(&self) {
        for w in &self.setup.warnings {
            self.ui.warn(&format!("warning: {w}"));
        }
        let skills = self.skill_names();
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
        let styled = paint(&plain, Tone::Prompt, self.screen.looks().color_tty);
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
        let built = app::build(
            &args.app,
            app::Asking::Terminal(TermUi::asker(&self.screen)),
        )
        .and_then(|setup| {
            let (session, settings) = build_session(&args, &setup)?;
            Ok((setup, session, settings))
        });
        match built {
            Ok((setup, session, settings)) => {
                self.names.set_skills(&setup);
                self.setup = setup;
                self.adopt(args, session, settings);
                self.welcome();
            }
            Err(e) => self.ui.error(&format!("{e:#}")),
        }
    }
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
