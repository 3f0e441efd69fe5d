//! `--resume` and `/save`: a saved conversation picked, built again and shown as it was seen.

use super::editor::{LineEditor, Read};
use super::ink::Tone;
use super::names::ReplNames;
use super::ui::TermUi;
use super::{Repl, commands, session_file};
use crate::app::{self, ChatConfig, Setup};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

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
pub(super) fn pick_and_load(
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

pub(super) enum Picked {
    Path(PathBuf),
    New,
    Exit,
}

impl Repl<'_> {
    pub(super) fn save(&mut self, arg: Option<&str>) {
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

    /// Puts a saved conversation back and shows it as it was seen.
    pub(super) fn restore(&mut self, path: &std::path::Path, file: session_file::SessionFile) {
        self.session
            .restore(file.history.clone(), file.transcript_pairs());
        let (prompt, _) = self.prompt();
        for e in &file.transcript {
            // A saved transcript holds the model's words: shown inert, like when they streamed.
            let text = crate::term::sanitize(&e.text);
            if e.role == "user" && e.text == commands::CONTINUE {
                // What `/continue` sent, not the user's words: shown as the command typed.
                self.ui.print_in(&format!("{prompt}/continue"), Tone::Bold);
            } else if e.role == "user" {
                self.ui.print_in(&format!("{prompt}{text}"), Tone::Bold);
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
