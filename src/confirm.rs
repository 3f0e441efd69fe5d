//! The confirmation prompt (DESIGN §2, `confirm = "ask"`).
//!
//! The session state ("always" answers) is plain data; asking is a separate function that talks
//! to `/dev/tty`, so the decision logic is testable without a terminal.

use crate::policy::ConfirmMode;
use std::io::Write;

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    No,
    /// Yes, and do not ask again for this argv prefix in this session.
    Always,
}

/// What is about to run, as shown in the prompt.
#[derive(Debug, Clone)]
pub struct Prompt<'a> {
    pub argv: &'a [String],
    pub skill: Option<&'a str>,
    pub cwd: &'a std::path::Path,
    /// Human description of the restrictions, e.g. "no network, writes only to $TMPDIR".
    pub sandbox: &'a str,
}

/// Outcome of [`Confirmer::confirm`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    /// Declined, with the reason for the audit log and the notice.
    Declined(String),
}

/// Session state: the mode and the prefixes the user said "always" to.
#[derive(Debug, Default)]
pub struct Confirmer {
    mode: ConfirmMode,
    always: Vec<String>,
}

/// The "always" scope: the program or script (argv[0]), whatever its arguments.
pub fn scope(argv: &[String]) -> &str {
    argv.first().map(String::as_str).unwrap_or("")
}

impl Confirmer {
    pub fn new(mode: ConfirmMode) -> Confirmer {
        Confirmer {
            mode,
            always: Vec::new(),
        }
    }

    /// Decides whether to run, asking through `ask` only when needed.
    pub fn confirm(
        &mut self,
        prompt: &Prompt<'_>,
        ask: impl FnOnce(&Prompt<'_>) -> Result<Answer, String>,
    ) -> Verdict {
        if !self.needs_asking(prompt.argv) {
            return Verdict::Run;
        }
        self.settle(prompt.argv, ask(prompt))
    }

    /// False when the mode or an earlier "always" answer covers `argv`. Split from
    /// [`Self::settle`] so that an asker which waits (a protocol peer) need not hold this state.
    pub fn needs_asking(&self, argv: &[String]) -> bool {
        self.mode != ConfirmMode::Never && !self.always.iter().any(|p| p == scope(argv))
    }

    /// The verdict for an answer to the prompt about `argv`; "always" is remembered.
    pub fn settle(&mut self, argv: &[String], answer: Result<Answer, String>) -> Verdict {
        match answer {
            Ok(Answer::Once) => Verdict::Run,
            Ok(Answer::Always) => {
                self.always.push(scope(argv).to_string());
                Verdict::Run
            }
            Ok(Answer::No) => Verdict::Declined("declined at the prompt".into()),
            Err(why) => Verdict::Declined(why),
        }
    }
}

/// Renders the prompt text (without the trailing key hint line).
///
/// Words can come straight from a model (tool-call arguments are not parsed from a directive
/// body, so nothing rejected their control characters): everything shown is escaped, so that
/// `\r`, terminal escapes or a right-to-left override cannot redraw the prompt into a lie.
pub fn render(p: &Prompt<'_>) -> String {
    use crate::command::escape_controls as shown;
    let cmd = shown(&shell_words::join(p.argv));
    let mut s = format!("skillpipe: run `{cmd}`?\r\n");
    if let Some(skill) = p.skill {
        s.push_str(&format!("  skill:   {}\r\n", shown(skill)));
    }
    s.push_str(&format!(
        "  cwd:     {}\r\n",
        shown(&p.cwd.display().to_string())
    ));
    s.push_str(&format!("  sandbox: {}\r\n", p.sandbox));
    s.push_str(&format!(
        "  [y] yes once  [n] no  [a] always run `{}` (any arguments) this session  (Enter = no) ",
        shown(scope(p.argv))
    ));
    s
}

/// Maps a key to an answer; anything unexpected means no.
pub fn answer_for(c: char) -> Answer {
    match c {
        'y' | 'Y' => Answer::Once,
        'a' | 'A' => Answer::Always,
        _ => Answer::No,
    }
}

/// Asks on the controlling terminal with a single key press. Without a terminal it returns an
/// error (a decline with a hint), so it never hangs and never silently allows.
pub fn ask_tty(p: &Prompt<'_>) -> Result<Answer, String> {
    const NO_TTY: &str = "no terminal to ask for confirmation (pass -y to run without asking)";
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| NO_TTY.to_string())?;
    let _ = tty.write_all(render(p).as_bytes());
    let _ = tty.flush();
    let key = read_key().map_err(|e| format!("{NO_TTY}: {e}"))?;
    let answer = answer_for(key);
    let word = match answer {
        Answer::Once => "yes",
        Answer::Always => "always",
        Answer::No => "no",
    };
    let _ = write!(tty, "{word}\r\n");
    Ok(answer)
}

/// One key press in raw mode; Enter, Esc and Ctrl-C read as 'n'.
fn read_key() -> std::io::Result<char> {
    use crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers, read};
    crossterm::terminal::enable_raw_mode()?;
    let result = loop {
        match read() {
            Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                break Ok(match k.code {
                    KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => 'n',
                    KeyCode::Char(c) => c,
                    _ => 'n',
                });
            }
            Ok(_) => continue,
            Err(e) => break Err(e),
        }
    };
    let _ = crossterm::terminal::disable_raw_mode();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn prompt(argv: &[String]) -> Prompt<'_> {
        Prompt {
            argv,
            skill: Some("lookup"),
            cwd: Path::new("/tmp"),
            sandbox: "no network",
        }
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn never_mode_does_not_ask() {
        let mut c = Confirmer::new(ConfirmMode::Never);
        let v = c.confirm(&prompt(&argv(&["rm", "x"])), |_| panic!("asked"));
        assert_eq!(v, Verdict::Run);
    }

    #[test]
    fn always_covers_the_same_program_only() {
        let mut c = Confirmer::new(ConfirmMode::Ask);
        assert_eq!(
            c.confirm(&prompt(&argv(&["say", "hi"])), |_| Ok(Answer::Always)),
            Verdict::Run
        );
        assert_eq!(
            c.confirm(&prompt(&argv(&["say", "bye"])), |_| panic!("asked again")),
            Verdict::Run
        );
        let v = c.confirm(&prompt(&argv(&["sayx"])), |_| Ok(Answer::No));
        assert!(matches!(v, Verdict::Declined(_)));
    }

    #[test]
    fn once_asks_every_time_and_errors_decline() {
        let mut c = Confirmer::new(ConfirmMode::Ask);
        let mut asked = 0;
        for _ in 0..2 {
            c.confirm(&prompt(&argv(&["say"])), |_| {
                asked += 1;
                Ok(Answer::Once)
            });
        }
        assert_eq!(asked, 2);
        let v = c.confirm(&prompt(&argv(&["say"])), |_| Err("no terminal".into()));
        assert_eq!(v, Verdict::Declined("no terminal".into()));
    }

    #[test]
    fn prompt_shows_hostile_words_escaped() {
        let a = argv(&[
            "scripts/x.py",
            "harmless\r\u{1b}[2Kskillpipe: run `ls`?",
            "\u{202e}txt.exe",
        ]);
        let text = render(&prompt(&a));
        // The prompt's own line ends are the only control characters left.
        let stripped = text.replace("\r\n", "");
        assert!(
            !stripped.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text:?}"
        );
        assert!(text.contains("\\r\\u{1b}[2K"), "{text:?}");
        assert!(text.contains("\\u{202e}txt.exe"), "{text:?}");
    }

    #[test]
    fn keys_map_to_answers_and_prompt_states_the_scope() {
        assert_eq!(answer_for('y'), Answer::Once);
        assert_eq!(answer_for('a'), Answer::Always);
        assert_eq!(answer_for('\r'), Answer::No);
        assert_eq!(answer_for('x'), Answer::No);
        let a = argv(&["scripts/lookup.py", "two words"]);
        let text = render(&prompt(&a));
        assert!(text.contains("run `scripts/lookup.py 'two words'`?"));
        assert!(text.contains("always run `scripts/lookup.py` (any arguments) this session"));
        assert!(text.contains("skill:   lookup"));
    }
}
