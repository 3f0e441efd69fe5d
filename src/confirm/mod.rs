//! The confirmation prompt (DESIGN §2, `confirm = "ask"`).
//!
//! The session state ("always" answers), the prompt's text and the meaning of keys are plain
//! data here; `tty` talks to `/dev/tty` so that only the user can answer (type-ahead flushed,
//! a guard interval, "always" confirmed by a second key).

pub(crate) mod shown;
mod tty;

use crate::policy::{ConfirmMode, SandboxMode, ScriptPolicy};
pub(crate) use shown::Detail;

#[cfg(feature = "cli")]
pub(crate) use tty::TtyInput;
// For the terminal tests, which wait it out before answering; not part of the API.
#[doc(hidden)]
pub use tty::GUARD;
pub(crate) use tty::ask_tty;

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Yes, this once.
    Once,
    /// No.
    No,
    /// Yes, and do not ask again for this argv prefix in this session.
    Always,
}

/// What is about to run, as shown in the prompt.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Prompt<'a> {
    /// The command about to run.
    pub argv: &'a [String],
    /// The skill whose script it is, if any.
    pub skill: Option<&'a str>,
    /// Where it would run.
    pub cwd: &'a std::path::Path,
    /// What the command may reach, one item a line (see `grants`).
    pub grants: &'a [String],
    /// What it gets on stdin: for a JSON-input tool called natively, all of its arguments.
    pub input: Option<&'a [u8]>,
    /// The tool (`SKILL:ID`) whose tool.yaml asks to be confirmed before each run
    /// (`execution.confirm: true`): asked about even under `confirm = "never"` (`-y`), so an
    /// asker that cannot ask must not advise `-y`.
    pub tool_asks: Option<&'a str>,
}

/// Most characters of the input a prompt shows.
const MAX_INPUT_SHOWN: usize = 1000;

/// The input as one escaped line, cut to [`MAX_INPUT_SHOWN`] characters with the full size
/// said; `None` when there is none.
pub(crate) fn input_shown(input: Option<&[u8]>) -> Option<String> {
    let bytes = input.filter(|b| !b.is_empty())?;
    let text = String::from_utf8_lossy(bytes);
    let one_line = shown::escaped(text.trim_end());
    Some(match one_line.char_indices().nth(MAX_INPUT_SHOWN) {
        Some((at, _)) => format!("{}… ({} bytes in all)", &one_line[..at], bytes.len()),
        None => one_line,
    })
}

/// Why there is no answer to a confirmation. It counts as "no", with this as the reason in the
/// audit log and the notice.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// No controlling terminal (a pipe, a service, CI).
    #[error("no terminal to ask for confirmation")]
    NoTerminal,
    /// The terminal could not be put in raw mode or read.
    #[error("no terminal to ask for confirmation: {0}")]
    Terminal(#[source] std::io::Error),
    /// The user pressed the interrupt key (Ctrl-C) at the prompt: not a "no" but "stop". The
    /// prompt reads keys raw, so the key arrives as a byte instead of the SIGINT the terminal
    /// would have sent; the dispatcher audits the command as not run and, for its own terminal
    /// prompts only, sends that SIGINT (from a host's asker it is a decline).
    #[error("interrupted by SIGINT (Ctrl-C at the prompt): not run")]
    Interrupted,
    /// The program gave no way to ask (a library build without the `cli` feature and no
    /// [`crate::DispatcherBuilder::asker`]).
    #[error(
        "confirmation needed, but this program gives no way to ask (DispatcherBuilder::asker); not run"
    )]
    NoAsker,
    /// Another front end's reason (e.g. an MCP client that cannot ask), or a host program's.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// Outcome of [`Confirmer::settle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Go ahead.
    Run,
    /// Declined, with the reason for the audit log and the notice.
    Declined(String),
    /// Not run because the user interrupted at the prompt (Ctrl-C), with the reason for the
    /// audit log: the program is to stop as on SIGINT.
    Interrupted(String),
}

/// Session state: the mode and the scopes the user said "always" to.
#[derive(Debug, Default)]
pub(crate) struct Confirmer {
    mode: ConfirmMode,
    always: Vec<Scope>,
}

/// What an "always" answer covers: what runs (the program or script, or an interpreter with its
/// script), whatever arguments follow; or, where code comes in an option (`python3 -c …`),
/// exactly this command and nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    words: Vec<String>,
    exact: bool,
}

/// The "always" scope of `argv` (see [`Scope`]).
pub(crate) fn scope(argv: &[String]) -> Scope {
    match crate::command::interpreter::what_runs(argv) {
        Some(words) => Scope {
            words: words.to_vec(),
            exact: false,
        },
        None => Scope {
            words: argv.to_vec(),
            exact: true,
        },
    }
}

impl Scope {
    fn covers(&self, argv: &[String]) -> bool {
        match self.exact {
            true => argv == self.words.as_slice(),
            false => argv.starts_with(&self.words),
        }
    }

    /// For the prompt: "`python3 scripts/x.py` (any arguments)", or "exactly `…`" when that
    /// is short, else "exactly the command above" (the first line shows it; said again in full
    /// a long command would push the prompt off the screen). Words quoted and shown as the
    /// first line shows them.
    pub(crate) fn shown(&self, detail: Detail) -> String {
        let words = shown::command(&self.words, detail);
        match self.exact {
            true if shown::columns(&words) <= SCOPE_SHOWN => format!("exactly `{words}`"),
            true => "exactly the command above".into(),
            false => format!("`{words}` (any arguments)"),
        }
    }
}

/// Longest exact scope (in columns) the key hint repeats.
const SCOPE_SHOWN: usize = 40;

impl Confirmer {
    /// Confirmation state for one session, starting from the policy's mode.
    pub fn new(mode: ConfirmMode) -> Confirmer {
        Confirmer {
            mode,
            always: Vec::new(),
        }
    }

    /// Decides whether to run, asking through `ask` only when needed (the dispatcher asks
    /// asynchronously, through [`Self::needs_asking`] and [`Self::settle`]).
    #[cfg(test)]
    pub fn confirm(
        &mut self,
        prompt: &Prompt<'_>,
        ask: impl FnOnce(&Prompt<'_>) -> Result<Answer, AskError>,
    ) -> Verdict {
        if !self.needs_asking(prompt.argv, prompt.tool_asks.is_some()) {
            return Verdict::Run;
        }
        self.settle(prompt.argv, ask(prompt), |e| e.to_string())
    }

    /// False when the mode or an earlier "always" answer covers `argv`; `tool_asks` (its
    /// tool.yaml asks for confirmation) overrides `confirm = "never"`, never an "always" answer.
    /// Split from [`Self::settle`] so that an asker which waits (a protocol peer) need not hold
    /// this state.
    pub fn needs_asking(&self, argv: &[String], tool_asks: bool) -> bool {
        (tool_asks || self.mode != ConfirmMode::Never)
            && !self.always.iter().any(|s| s.covers(argv))
    }

    /// The verdict for an answer to the prompt about `argv`; "always" is remembered. A missing
    /// answer is declined with `word(error)` as the reason.
    pub fn settle(
        &mut self,
        argv: &[String],
        answer: Result<Answer, AskError>,
        word: fn(&AskError) -> String,
    ) -> Verdict {
        match answer {
            Ok(Answer::Once) => Verdict::Run,
            Ok(Answer::Always) => {
                self.always.push(scope(argv));
                Verdict::Run
            }
            Ok(Answer::No) => Verdict::Declined("declined at the prompt".into()),
            Err(why @ AskError::Interrupted) => Verdict::Interrupted(why.to_string()),
            Err(why) => Verdict::Declined(word(&why)),
        }
    }
}

/// What a command run under `policy` may reach, each item on its own line, nothing summarized:
/// network and sockets, every writable place, the environment passed through. New kinds of
/// grant (more policy keys) add lines here.
pub(crate) fn grants(policy: &ScriptPolicy) -> Vec<String> {
    let mut out = vec![if policy.allow_network {
        "network: ALLOWED (any host)".to_string()
    } else {
        "network: none (loopback only)".to_string()
    }];
    if policy.allowed_sockets.is_empty() {
        out.push("unix sockets: none".into());
    }
    for p in &policy.allowed_sockets {
        out.push(format!("unix socket: {}", p.display()));
    }
    for p in &policy.allow_read {
        out.push(format!("reads (otherwise hidden): {}", p.display()));
    }
    if policy.allow_filesystem {
        // Said, so that a refused write there is expected (see `SandboxSpec::protect`).
        out.push(
            "writes: ANYWHERE (but skillpipe's config, your agents and skills read-only)".into(),
        );
    } else {
        out.push("writes: a fresh $TMPDIR, /dev/null, /dev/shm".into());
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        for p in &policy.writable_paths {
            let real = (home.is_some() || !p.starts_with("~"))
                .then(|| crate::sandbox::secrets::expand_home(p, home.as_deref()));
            // A missing folder is not made: said now, not after the user said yes. Version
            // control metadata in it stays read-only: said too, so a refused write is expected.
            let note = match real {
                Some(r) if !r.exists() => {
                    " (does not exist: nothing is writable there)".to_string()
                }
                Some(r) => {
                    let vcs = crate::sandbox::vcs_metadata(std::slice::from_ref(&r));
                    let names: Vec<String> = vcs
                        .iter()
                        .filter_map(|m| m.strip_prefix(&r).ok())
                        .map(|m| m.display().to_string())
                        .collect();
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!(" (but {} read-only)", names.join(", "))
                    }
                }
                None => String::new(),
            };
            out.push(format!("writes: {}{note}", p.display()));
        }
    }
    out.push(format!("environment: {}", policy.env_passthrough.join(" ")));
    if policy.sandbox == SandboxMode::BestEffort {
        out.push("sandbox: best-effort (runs even where a restriction cannot be enforced)".into());
    }
    out
}

/// The word a terminal prompt writes after the question for `answer`.
pub(crate) fn answer_word(answer: &Result<Answer, AskError>) -> &'static str {
    match answer {
        Ok(Answer::Once) => "yes",
        Ok(Answer::Always) => "always",
        Ok(Answer::No) => "no",
        Err(_) => "interrupted",
    }
}

/// The prompt and its answer as a terminal `width` × `height` showed them (the question `a`
/// adds only when it was asked), with plain newlines: for the REPL's record of its screen.
pub(crate) fn as_shown(
    p: &Prompt<'_>,
    answer: &Result<Answer, AskError>,
    width: usize,
    height: usize,
) -> String {
    let shown = layout(p, width, height);
    let mut text = shown.main;
    if matches!(answer, Ok(Answer::Always)) {
        text.push_str(&shown.always);
    }
    text.push_str(answer_word(answer));
    text.push('\n');
    text.replace("\r\n", "\n")
}

/// The prompt as drawn: its text (broken at spaces to the width, see [`fit`]) and the question
/// `a` adds under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub main: String,
    pub always: String,
}

/// The prompt for a terminal `width` columns wide and `height` rows high: the first [`Detail`]
/// step whose text (with the question `a` adds) fits the height, so the first line — the
/// program and the start of every argument — stays on screen. Where even the least detail does
/// not fit, lines of detail are left out from the end of the list, and a line says how many.
pub(crate) fn layout(p: &Prompt<'_>, width: usize, height: usize) -> Layout {
    let least = Detail::STEPS[Detail::STEPS.len() - 1];
    let dropping = (1..=detail_lines(p, least).len()).map(|n| (least, n));
    let mut tries = (Detail::STEPS.map(|d| (d, 0)).into_iter().chain(dropping)).peekable();
    while let Some((detail, dropped)) = tries.next() {
        let main = fit(&render(p, detail, dropped), width);
        let always = fit(&render_always(p, detail), width);
        if rows(&main, width) + rows(&always, width) - 1 <= height || tries.peek().is_none() {
            return Layout { main, always };
        }
    }
    unreachable!("Detail::STEPS is not empty")
}

/// Rows `fitted` takes on a terminal `width` columns wide (a line wider than a row wraps).
fn rows(fitted: &str, width: usize) -> usize {
    let width = width.max(1);
    fitted
        .split("\r\n")
        .map(|l| shown::columns(l).div_ceil(width).max(1))
        .sum()
}

/// The lines under the question: input, skill, working directory, grants, as shown.
fn detail_lines(p: &Prompt<'_>, detail: Detail) -> Vec<String> {
    let shown = |t: &str| shown::text(t, detail.piece);
    let labelled = [
        ("input:", input_shown(p.input)),
        ("skill:", p.skill.map(str::to_string)),
        ("cwd:", Some(p.cwd.display().to_string())),
    ];
    let labelled =
        (labelled.into_iter()).filter_map(|(label, v)| Some(format!("  {label:9}{}", shown(&v?))));
    labelled
        .chain(p.grants.iter().map(|g| format!("  {}", shown(g))))
        .collect()
}

/// Renders the prompt text, the key hint last, at `detail`; the last `dropped` lines of detail
/// are replaced by one that counts them.
///
/// Words can come straight from a model (tool-call arguments are not parsed from a directive
/// body, so nothing rejected their control characters): everything shown is escaped, so that
/// `\r`, terminal escapes or a right-to-left override cannot redraw the prompt into a lie, and
/// shortened (see [`shown`]) so that whitespace or length cannot push it off the screen.
pub(crate) fn render(p: &Prompt<'_>, detail: Detail, dropped: usize) -> String {
    let cmd = shown::command(p.argv, detail);
    let mut s = format!("skillpipe: run `{cmd}`?\r\n");
    let mut lines = detail_lines(p, detail);
    if dropped > 0 {
        let dropped = dropped.min(lines.len());
        // What the command may do (the grants, last) is the last to go: input, skill and
        // working directory first.
        let plain = lines.len() - p.grants.len();
        let from_front = dropped.min(plain);
        lines.drain(plain - from_front..plain);
        lines.truncate(lines.len() - (dropped - from_front));
        lines.push(format!(
            "  ⟨{dropped}\u{a0}more\u{a0}lines\u{a0}not\u{a0}shown: the window is too small⟩"
        ));
    }
    for line in lines {
        s.push_str(&line);
        s.push_str("\r\n");
    }
    s.push_str(&format!(
        "  [y] yes once  [n] no  [a] always run {} this session  (Enter = no) ",
        scope(p.argv).shown(detail)
    ));
    s
}

/// The question after `a`: "always" is the widest answer, so it takes a second key.
pub(crate) fn render_always(p: &Prompt<'_>, detail: Detail) -> String {
    format!(
        "\r\n  always run {} this session? [a] or Enter = always  [y] once  other = no ",
        scope(p.argv).shown(detail)
    )
}

/// Room kept at the end of the prompt's last line for the answer echoed after it ("interrupted").
const ANSWER_ROOM: usize = 12;

/// `text` (lines ended by `\r\n`; the last one is where the answer is typed) broken at spaces
/// so no line is wider than `width` columns, continuation rows indented: the terminal would
/// otherwise break a word, or the answer, at its right edge. A word wider than a row stays
/// whole. Pure.
pub(crate) fn fit(text: &str, width: usize) -> String {
    let lines: Vec<&str> = text.split("\r\n").collect();
    let last = lines.len() - 1;
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in lines.iter().enumerate() {
        let room = if n == last {
            width.saturating_sub(ANSWER_ROOM)
        } else {
            width
        }
        .max(20);
        let mut used = 0;
        let words = line.split(' ').count();
        for (k, word) in line.split(' ').enumerate() {
            let len = shown::columns(word);
            // The space the answer follows stays on its row (the room kept is for the answer).
            let answer_space = n == last && k + 1 == words && word.is_empty();
            if k > 0 {
                if used > 0 && used + 1 + len > room && !answer_space {
                    out.push_str("\r\n    ");
                    used = 4;
                } else {
                    out.push(' ');
                    used += 1;
                }
            }
            out.push_str(word);
            used += len;
        }
        if n < last {
            out.push_str("\r\n");
        }
    }
    out
}

/// What key `b` answers; `intr` is the terminal's interrupt key (`VINTR`, 0 when disabled),
/// which interrupts. `a` is "always": the first time (`confirming` false) it is asked once more,
/// where `a` or Enter confirms it. `y` is once; anything else (Enter first, Esc) is no.
pub(crate) fn key(b: u8, intr: u8, confirming: bool) -> Result<Answer, AskError> {
    match b {
        b if b == intr && b != 0 => Err(AskError::Interrupted),
        b'a' | b'A' => Ok(Answer::Always),
        b'\r' | b'\n' if confirming => Ok(Answer::Always),
        b'y' | b'Y' => Ok(Answer::Once),
        _ => Ok(Answer::No),
    }
}

/// Before the prompt is drawn: attributes reset, scroll region reset (the cursor saved around
/// it, since resetting the region homes the cursor), cursor shown, and a query for where the
/// cursor is (answered `ESC [ row ; col R`), so the prompt can start on a fresh line.
pub(crate) const PREPARE: &str = "\x1b[0m\x1b7\x1b[r\x1b8\x1b[?25h\x1b[6n";

/// The cursor column from a cursor position report somewhere in `bytes`, if there is one.
pub(crate) fn reported_column(bytes: &[u8]) -> Option<u16> {
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(2).position(|w| w == b"\x1b[") {
        let rest = &bytes[from + at + 2..];
        if let Some(end) = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'))
            && rest[end] == b'R'
            && let Some((_, col)) = std::str::from_utf8(&rest[..end])
                .ok()
                .and_then(|t| t.split_once(';'))
            && let Ok(col) = col.parse()
        {
            return Some(col);
        }
        from += at + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn render_all(p: &Prompt<'_>) -> String {
        render(p, Detail::ALL, 0)
    }

    /// Asserts that `text` holds `part`.
    #[track_caller]
    fn shows(text: &str, part: &str) {
        assert!(text.contains(part), "{part:?} not in {text:?}");
    }

    fn prompt(argv: &[String]) -> Prompt<'_> {
        Prompt {
            argv,
            skill: Some("lookup"),
            cwd: Path::new("/tmp"),
            grants: &[],
            input: None,
            tool_asks: None,
        }
    }

    #[test]
    fn the_input_is_shown_escaped_and_capped() {
        assert_eq!(input_shown(None), None);
        assert_eq!(input_shown(Some(b"")), None);
        let a = argv(&["data:stats"]);
        let text = render_all(&Prompt {
            input: Some(b"{\"path\":\n \"a\x1b[2J\"}\n"),
            tool_asks: None,
            ..prompt(&a)
        });
        shows(&text, "  input:   {\"path\":␊ \"a␛[2J\"}\r\n");
        let big = format!("{{\"x\": \"{}\"}}", "y".repeat(5000));
        let shown = input_shown(Some(big.as_bytes())).unwrap();
        assert!(shown.ends_with("… (5009 bytes in all)"), "{shown}");
        assert_eq!(
            shown.chars().count(),
            MAX_INPUT_SHOWN + "… (5009 bytes in all)".len() - 2
        );
    }

    pub(super) fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    /// Asks `c` about `words`, answering `answer` if it asks: whether it asked, and whether the
    /// command runs.
    fn ask(c: &mut Confirmer, words: &[&str], answer: Answer) -> (bool, bool) {
        let mut asked = false;
        let v = c.confirm(&prompt(&argv(words)), |_| {
            asked = true;
            Ok(answer)
        });
        assert!(!matches!(v, Verdict::Interrupted(_)), "{v:?}");
        (asked, v == Verdict::Run)
    }

    #[test]
    fn under_never_only_a_tool_that_asks_is_asked_about_until_always() {
        let mut c = Confirmer::new(ConfirmMode::Never);
        assert_eq!(ask(&mut c, &["rm", "x"], Answer::No), (false, true));
        let a = argv(&["s:wc", "--text", "x"]);
        let p = Prompt {
            tool_asks: Some("s:wc"),
            ..prompt(&a)
        };
        let mut asked = 0;
        let v = c.confirm(&p, |_| {
            asked += 1;
            Ok(Answer::Always)
        });
        assert_eq!((v, asked), (Verdict::Run, 1));
        // The "always" answer covers it from then on.
        let v = c.confirm(&p, |_| panic!("asked again"));
        assert_eq!(v, Verdict::Run);
        let v = c.confirm(&p, |_| Ok(Answer::No));
        assert_eq!(v, Verdict::Run);
        let mut fresh = Confirmer::new(ConfirmMode::Never);
        assert_eq!(
            fresh.confirm(&p, |_| Ok(Answer::No)),
            Verdict::Declined("declined at the prompt".into())
        );
    }

    /// "Always" covers what runs: the same program with any arguments, an interpreter's script
    /// with any arguments, and where code comes in an option, exactly that command.
    #[test]
    fn always_covers_what_runs_only() {
        use Answer::{Always, No};
        let mut c = Confirmer::new(ConfirmMode::Ask);
        // (argv, the answer if asked, asked, runs), in turn.
        for (words, answer, asked, runs) in [
            (&["say", "hi"][..], Always, true, true),
            (&["say", "bye"], No, false, true),
            (&["sayx"], No, true, false),
            (&["python3", "scripts/a.py", "x"], Always, true, true),
            (&["python3", "scripts/a.py", "y"], No, false, true),
            (&["python3", "scripts/b.py"], No, true, false),
            (&["python3", "-c", "print(1)"], No, true, false),
            (&["python3", "-c", "print(1)"], Always, true, true),
            (&["python3", "-c", "print(1)"], No, false, true),
            (&["python3", "-c", "print(1)", "more"], No, true, false),
        ] {
            assert_eq!(ask(&mut c, words, answer), (asked, runs), "{words:?}");
        }
        assert_eq!(
            scope(&argv(&["python3", "scripts/a.py", "x"])).shown(Detail::ALL),
            "`python3 scripts/a.py` (any arguments)"
        );
        assert_eq!(
            scope(&argv(&["node", "-e", "x"])).shown(Detail::ALL),
            "exactly `node -e x`"
        );
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
        let v = c.confirm(&prompt(&argv(&["say"])), |_| Err(AskError::NoTerminal));
        assert_eq!(v, Verdict::Declined(AskError::NoTerminal.to_string()));
        // Ctrl-C at the prompt is not a "no": the caller stops as on SIGINT.
        let v = c.confirm(&prompt(&argv(&["say"])), |_| Err(AskError::Interrupted));
        assert_eq!(v, Verdict::Interrupted(AskError::Interrupted.to_string()));
        // In the library's terms: the binary adds its `-y`.
        assert!(!AskError::NoTerminal.to_string().contains("-y"));
    }

    #[test]
    fn prompt_shows_hostile_words_escaped() {
        let a = argv(&[
            "scripts/x.py",
            "harmless\r\u{1b}[2Kskillpipe: run `ls`?",
            "\u{202e}txt.exe",
        ]);
        let text = render_all(&prompt(&a));
        // The prompt's own line ends are the only control characters left.
        let stripped = text.replace("\r\n", "");
        assert!(
            !stripped.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text:?}"
        );
        shows(&text, "␍␛[2K");
        shows(&text, "⟨U+202E⟩txt.exe");
    }

    #[test]
    fn keys_map_to_answers_and_prompt_states_the_scope() {
        use Answer::{Always, No, Once};
        // (key, VINTR, after `a`, the answer; None: interrupted). Ctrl-C interrupts (the
        // terminal's VINTR, whatever it is); with VINTR disabled it is just another key.
        for (b, intr, confirming, answer) in [
            (b'y', 3, false, Some(Once)),
            (b'a', 3, false, Some(Always)),
            (b'\r', 3, false, Some(No)),
            (b'x', 3, false, Some(No)),
            (0x03, 3, false, None),
            (0x1d, 0x1d, false, None),
            (0x03, 0, false, Some(No)),
            (0, 0, false, Some(No)),
            (b'a', 3, true, Some(Always)),
            (b'\r', 3, true, Some(Always)),
            (b'y', 3, true, Some(Once)),
            (b'n', 3, true, Some(No)),
            (b' ', 3, true, Some(No)),
            (0x03, 3, true, None),
        ] {
            let got = key(b, intr, confirming);
            assert!(answer.is_some() || matches!(got, Err(AskError::Interrupted)));
            assert_eq!(got.ok(), answer, "{b:#x} after a: {confirming}");
        }
        let a = argv(&["scripts/lookup.py", "two words"]);
        let text = render_all(&prompt(&a));
        shows(&text, "run `scripts/lookup.py 'two words'`?");
        shows(
            &text,
            "always run `scripts/lookup.py` (any arguments) this session",
        );
        shows(&text, "skill:   lookup");
    }

    #[test]
    fn a_prompt_fits_the_width_at_spaces_with_room_for_the_answer() {
        let text = "skillpipe: run `say hello there`?\r\n  cwd:     /tmp\r\n  [y] yes once  [n] no  [a] always run `say` (any arguments) this session  (Enter = no) ";
        let fitted = fit(text, 40);
        let rows: Vec<&str> = fitted.split("\r\n").collect();
        assert!(rows.iter().all(|r| r.chars().count() <= 40), "{rows:?}");
        assert!(
            rows.last().unwrap().chars().count() + ANSWER_ROOM <= 40,
            "{rows:?}"
        );
        // Nothing but the breaks changed.
        assert_eq!(
            fitted.replace("\r\n    ", " "),
            text,
            "the words and their order stay"
        );
        // Wide enough: unchanged.
        assert_eq!(fit(text, 200), text);
        // The last row exactly as wide as the room: the answer still follows on it.
        let hint = "  [y] yes once  [n] no  [a] always run `echo` (any arguments) this session  (Enter = no) ";
        assert_eq!(fit(hint, 88 + ANSWER_ROOM), hint);
    }

    #[test]
    fn every_writable_path_and_the_network_are_listed() {
        let policy = ScriptPolicy {
            writable_paths: vec!["~".into(), "/nonexistent-skillpipe/out".into()],
            allow_network: true,
            ..ScriptPolicy::default()
        };
        let g = grants(&policy);
        assert!(g.iter().any(|l| l.starts_with("writes: ~")), "{g:?}");
        let missing =
            "writes: /nonexistent-skillpipe/out (does not exist: nothing is writable there)";
        assert!(g.iter().any(|l| l == missing), "{g:?}");
        assert!(g[0].starts_with("network: ALLOWED"), "{g:?}");
        // A repository's metadata is said to stay read-only.
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        let policy = ScriptPolicy {
            writable_paths: vec![repo.path().to_path_buf()],
            ..ScriptPolicy::default()
        };
        let line = format!("writes: {} (but .git read-only)", repo.path().display());
        assert!(grants(&policy).contains(&line), "{:?}", grants(&policy));
        let a = argv(&["say"]);
        let text = render_all(&Prompt {
            grants: &g,
            ..prompt(&a)
        });
        shows(&text, "  writes: ~");
        let g = grants(&ScriptPolicy::default());
        assert!(g.iter().all(|l| !l.contains("ANY")), "{g:?}");
        assert!(
            g.iter().any(|l| l == "environment: PATH HOME LANG TERM"),
            "{g:?}"
        );
    }

    #[test]
    fn the_always_line_quotes_words_and_does_not_repeat_a_long_command() {
        let a = argv(&["bash", "-c", "printf hi"]);
        let text = render_all(&prompt(&a));
        shows(&text, "run `bash -c 'printf hi'`?");
        shows(
            &text,
            "[a] always run exactly `bash -c 'printf hi'` this session",
        );
        let long = argv(&["bash", "-c", &format!("echo {}", "word ".repeat(40))]);
        let text = render_all(&prompt(&long));
        shows(
            &text,
            "[a] always run exactly the command above this session",
        );
        assert!(
            render_always(&prompt(&long), Detail::ALL)
                .contains("always run exactly the command above"),
        );
    }

    #[test]
    fn whitespace_and_length_never_push_the_command_off_the_screen() {
        let grants = grants(&ScriptPolicy::default());
        let spaces = argv(&[
            "bash",
            "-c",
            &format!("rm -rf /tmp/x;{}echo hello", " ".repeat(3000)),
        ]);
        let huge = argv(&[
            "bash",
            "-c",
            &format!("rm -rf /tmp/x; {}", "y".repeat(20_000)),
        ]);
        let many: Vec<String> = std::iter::once("rm".to_string())
            .chain((0..2000).map(|n| format!("file{n}")))
            .collect();
        for a in [&spaces, &huge, &many] {
            let p = Prompt {
                grants: &grants,
                ..prompt(a)
            };
            // Positive control: shown whole, the command alone is taller than the window.
            let whole = crate::command::escape_controls(&shell_words::join(a));
            assert!(whole.chars().count() / 80 > 24);
            let l = layout(&p, 80, 24);
            let tall = rows(&l.main, 80) + rows(&l.always, 80) - 1;
            assert!(tall <= 24, "{tall} rows: {}", l.main);
            assert!(
                l.main
                    .starts_with("skillpipe: run `bash -c 'rm -rf /tmp/x;")
                    || l.main.starts_with("skillpipe: run `rm file0 file1"),
                "{}",
                l.main
            );
            shows(&l.main, "(Enter = no)");
            // A marker says what is hidden.
            shows(&l.main, "⟨");
            if a == &spaces {
                shows(&l.main, "⟨3000\u{a0}spaces⟩echo hello'");
            }
        }
        // A window too small for even the least detail: lines of detail go, and a line says so.
        let many_grants: Vec<String> = (0..30).map(|n| format!("writes: /data/{n}")).collect();
        let a = argv(&["rm", "x"]);
        let p = Prompt {
            grants: &many_grants,
            ..prompt(&a)
        };
        let l = layout(&p, 80, 16);
        assert!(
            rows(&l.main, 80) + rows(&l.always, 80) - 1 <= 16,
            "{}",
            l.main
        );
        assert!(l.main.starts_with("skillpipe: run `rm x`?"), "{}", l.main);
        shows(
            &l.main,
            "⟨22\u{a0}more\u{a0}lines\u{a0}not\u{a0}shown: the window is too small⟩",
        );
        // The grants are the last to go: the working directory went first, and the first
        // grants are still there.
        assert!(!l.main.contains("cwd:"), "{}", l.main);
        shows(&l.main, "writes: /data/0");
        // Room enough: everything, unchanged.
        let l = layout(&p, 80, 60);
        assert_eq!(l.main, fit(&render(&p, Detail::ALL, 0), 80));
    }

    #[test]
    fn cursor_report_is_found_among_other_bytes() {
        assert_eq!(reported_column(b"\x1b[12;1R"), Some(1));
        assert_eq!(reported_column(b"xy\x1b[A\x1b[3;40Rz"), Some(40));
        assert_eq!(reported_column(b"\x1b[3;"), None);
        assert_eq!(reported_column(b"abc"), None);
    }
}
