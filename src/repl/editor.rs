//! Line editing: rustyline with persistent history, multi-line entry and command completion.
//!
//! New lines inside one entry: Alt-Enter or Ctrl-J, a trailing `\` before Enter, or a paste
//! (bracketed paste keeps a pasted block in one entry).

use super::commands::commands;
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{FileHistory, History};
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, CompletionType, Config, Context, Editor, EventHandler, Helper, KeyCode, KeyEvent,
    Modifiers,
};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use unicode_width::UnicodeWidthStr;

/// What one read of the prompt gave.
#[derive(Debug)]
pub enum Read {
    Entry(String),
    /// Ctrl-C at the prompt: the line was dropped.
    Interrupted,
    /// Ctrl-D on an empty line (or end of input).
    Eof,
}

/// What an argument completes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    Models,
    Agents,
    Sessions,
    /// The active skills (`/skills NAME`).
    Skills,
}

/// Where completion finds names (the REPL supplies the real lists).
pub trait NameSource: Send + Sync {
    fn names(&self, which: Names) -> Vec<String>;
    /// The user is answering "resume which?": a bare word completes session names.
    fn picking_session(&self) -> bool;
}

/// Completes slash commands and their arguments, continues lines that end with a backslash, and
/// redraws the prompt right after a resize on a re-wrapping terminal (see [`super::reflow`]).
pub struct ReplHelper {
    source: Arc<dyn NameSource>,
    reflows: bool,
    /// (terminal width, cursor column from the prompt's start) at the last draw.
    last_draw: Mutex<Option<(usize, usize)>>,
    /// Width of the prompt being drawn.
    prompt_width: Mutex<usize>,
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(complete(&line[..pos], self.source.as_ref()))
    }
}

/// Completion of what is before the cursor: `(start of the replaced text, candidates)`.
pub fn complete(before: &str, source: &dyn NameSource) -> (usize, Vec<Pair>) {
    if source.picking_session() && !before.starts_with('/') {
        return (0, matching(source.names(Names::Sessions), before));
    }
    let Some(space) = before.find(char::is_whitespace) else {
        // The first word: a command's name.
        let names = commands().filter(|c| before.starts_with('/') && c.starts_with(before));
        let pair = |c: &str| Pair {
            display: c.to_string(),
            replacement: format!("{c} "),
        };
        return (0, names.map(pair).collect());
    };
    let which = match &before[..space] {
        "/model" => Names::Models,
        "/agent" => Names::Agents,
        "/save" => Names::Sessions,
        "/skills" => Names::Skills,
        _ => return (0, Vec::new()),
    };
    let start = space + (before[space..].len() - before[space..].trim_start().len());
    let typed = &before[start..];
    if typed.contains(char::is_whitespace) {
        return (0, Vec::new());
    }
    (start, matching(source.names(which), typed))
}

fn matching(names: Vec<String>, typed: &str) -> Vec<Pair> {
    let pair = |n: String| Pair {
        display: n.clone(),
        replacement: n,
    };
    names
        .into_iter()
        .filter(|n| n.starts_with(typed))
        .map(pair)
        .collect()
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, _: bool) -> Cow<'b, str> {
        *lock(&self.prompt_width) =
            super::ink::advance_column(0, &mut Vec::new(), prompt.as_bytes());
        let fix = match *lock(&self.last_draw) {
            Some((old, cursor)) if self.reflows => {
                super::reflow::correction(cursor, old, stdout_width())
            }
            _ => None,
        };
        match fix {
            Some(fix) => Cow::Owned(format!("{fix}{prompt}")),
            None => Cow::Borrowed(prompt),
        }
    }

    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        // Only one-row entries are corrected; a multi-line entry keeps rustyline's own redraw.
        let prompt_width = *lock(&self.prompt_width);
        let width = stdout_width();
        let cursor =
            (!line.contains('\n')).then(|| prompt_width + line[..pos.min(line.len())].width());
        *lock(&self.last_draw) = cursor.map(|c| (width, c));
        match self.reflows {
            true => super::reflow::hard_rows(prompt_width, line, width)
                .map_or(Cow::Borrowed(line), Cow::Owned),
            false => Cow::Borrowed(line),
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Columns of the terminal on stdout; 0 if unknown (then nothing is corrected).
fn stdout_width() -> usize {
    crossterm::terminal::size().map_or(0, |(w, _)| usize::from(w))
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if continues(ctx.input()) {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl Helper for ReplHelper {}

/// An entry ending in a single backslash continues on the next line.
pub fn continues(input: &str) -> bool {
    let trailing = input.bytes().rev().take_while(|b| *b == b'\\').count();
    trailing % 2 == 1
}

/// The entry as sent: a backslash that continued a line is dropped, the newline kept.
pub fn join_continued(entry: &str) -> String {
    entry.replace("\\\n", "\n")
}

pub struct LineEditor {
    editor: Editor<ReplHelper, FileHistory>,
    history: Option<PathBuf>,
}

impl LineEditor {
    /// An editor whose history lives in `history` (loaded now, appended after every entry).
    pub fn new(
        history: Option<PathBuf>,
        source: Arc<dyn NameSource>,
    ) -> anyhow::Result<LineEditor> {
        let config = Config::builder()
            .max_history_size(2000)?
            .history_ignore_dups(true)?
            .history_ignore_space(true)
            .auto_add_history(false)
            .completion_type(CompletionType::List)
            // The editor draws on the terminal itself (`/dev/tty`), not on stdout: with stdout
            // piped (`skillpipe chat | tee log`) its prompt and escapes stay on the screen and
            // the pipe gets the answers only, as Python's REPL keeps its prompt off stdout.
            .behavior(rustyline::Behavior::PreferTerm)
            .build();
        let mut editor = Editor::with_config(config)?;
        let var = |k: &str| std::env::var(k).ok();
        let reflows = super::reflow::terminal_reflows(
            &var("TERM").unwrap_or_default(),
            var("XTERM_VERSION").as_deref(),
        );
        editor.set_helper(Some(ReplHelper {
            source,
            reflows,
            last_draw: Mutex::new(None),
            prompt_width: Mutex::new(0),
        }));
        for key in [
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            KeyEvent::ctrl('J'),
        ] {
            editor.bind_sequence(key, EventHandler::Simple(Cmd::Newline));
        }
        if let Some(path) = &history
            && path.exists()
            && let Err(e) = editor.load_history(path)
        {
            crate::app::note(&format!(
                "skillpipe: warning: cannot read history {}: {e}",
                path.display()
            ));
        }
        Ok(LineEditor { editor, history })
    }

    /// Reads one entry. `prompt` is (plain, styled); the styled one must be as wide.
    pub fn read(&mut self, prompt: (&str, &str)) -> anyhow::Result<Read> {
        use rustyline::error::ReadlineError;
        // A new prompt starts on a fresh line: nothing of an earlier one to correct.
        if let Some(h) = self.editor.helper_mut() {
            *lock(&h.last_draw) = None;
        }
        match self.editor.readline(&prompt) {
            Ok(line) => Ok(Read::Entry(join_continued(&line))),
            Err(ReadlineError::Interrupted | ReadlineError::Signal(_)) => Ok(Read::Interrupted),
            Err(ReadlineError::Eof) => Ok(Read::Eof),
            Err(e) => Err(anyhow::anyhow!("cannot read the terminal: {e}")),
        }
    }

    /// A way to draw on the terminal while the editor waits for a line: it clears the prompt,
    /// writes, and draws the prompt and the typed line again below. `None` off a terminal.
    pub fn printer(&mut self) -> Option<impl rustyline::ExternalPrinter + Send + 'static> {
        self.editor.create_external_printer().ok()
    }

    /// Remembers an entry and appends it to the history file at once, so it survives a crash.
    pub fn remember(&mut self, entry: &str) {
        if entry.trim().is_empty() {
            return;
        }
        let _ = self.editor.add_history_entry(entry);
        let Some(path) = &self.history else { return };
        if let Some(dir) = path.parent() {
            let _ = crate::paths::create_private_dirs(dir);
        }
        if let Err(e) = self.editor.history_mut().append(path) {
            crate::app::note(&format!(
                "skillpipe: warning: cannot write history {}: {e}",
                path.display()
            ));
            self.history = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backslash_continues_unless_escaped() {
        assert!(continues("first \\"));
        assert!(!continues("first \\\\"));
        assert!(!continues("plain"));
        assert_eq!(join_continued("a \\\nb"), "a \nb");
        assert_eq!(join_continued("a\nb"), "a\nb");
    }

    struct Fixed;

    impl NameSource for Fixed {
        fn names(&self, which: Names) -> Vec<String> {
            match which {
                Names::Models => vec!["gpt-4o".into(), "gpt-4o-mini".into(), "o3".into()],
                Names::Agents => vec!["tutor".into()],
                Names::Sessions => vec!["notes".into(), "news".into()],
                Names::Skills => vec!["say".into(), "search".into(), "calc".into()],
            }
        }
        fn picking_session(&self) -> bool {
            false
        }
    }

    #[test]
    fn completes_command_words_and_arguments_from_the_lists() {
        for (typed, start, names) in [
            ("/model gpt", 7, &["gpt-4o", "gpt-4o-mini"][..]),
            ("/agent ", 7, &["tutor"]),
            ("/save  ne", 7, &["news"]),
            ("/skills s", 8, &["say", "search"]),
            ("/clear x", 0, &[]),
            ("/mo", 0, &["/model "]),
            ("/s", 0, &["/skills ", "/save "]),
            ("hello", 0, &[]),
            ("", 0, &[]),
        ] {
            let (at, pairs) = complete(typed, &Fixed);
            let got: Vec<String> = pairs.into_iter().map(|p| p.replacement).collect();
            assert_eq!(
                (at, got),
                (start, names.iter().map(|n| n.to_string()).collect()),
                "{typed}"
            );
        }
    }
}
