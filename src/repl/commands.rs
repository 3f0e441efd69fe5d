//! Slash commands: what a line of input means (pure; the REPL acts on the result).

/// One line (or multi-line entry) the user submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Nothing but whitespace: show the prompt again.
    Empty,
    /// Text for the model.
    Message(String),
    Command(Command),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    Exit,
    Clear,
    /// Show the model, or switch to this one (`M` or `provider:M`).
    Model(Option<String>),
    /// Show the agent and list the others, or switch to this one (name or path).
    Agent(Option<String>),
    /// The active skills, or the one named in detail.
    Skills(Option<String>),
    /// Save the conversation: a bare name goes to the sessions folder, anything else is a path.
    Save(Option<String>),
    Copy,
    /// What this session is: model, endpoint, agent, skills, policy, sandbox, prompt size.
    Info,
    /// Ask the last question again (its answer is dropped from the conversation).
    Retry,
    /// Ask the model to go on with its last answer.
    Continue,
    /// A known command given an argument it does not take.
    NoArgument(&'static str),
    /// `/word` that is no command; `suggestion` is the closest one, if any is close.
    Unknown {
        typed: String,
        suggestion: Option<&'static str>,
    },
}

/// Builds a command from its optional argument.
type Make = fn(Option<String>) -> Command;

/// Every command as typed, aliases last: whether it takes an argument (a stray one is reported,
/// not ignored) and how it is built. The one-letter aliases are not offered for completion.
const NAMES: &[(&str, bool, Make)] = &[
    ("/help", false, |_| Command::Help),
    ("/exit", false, |_| Command::Exit),
    ("/clear", false, |_| Command::Clear),
    ("/model", true, Command::Model),
    ("/agent", true, Command::Agent),
    ("/skills", true, Command::Skills),
    ("/save", true, Command::Save),
    ("/copy", false, |_| Command::Copy),
    ("/info", false, |_| Command::Info),
    ("/retry", false, |_| Command::Retry),
    ("/continue", false, |_| Command::Continue),
    ("/quit", false, |_| Command::Exit),
    ("/q", false, |_| Command::Exit),
    ("/h", false, |_| Command::Help),
    ("/?", false, |_| Command::Help),
];

/// The command words offered for completion and suggestions.
pub fn commands() -> impl Iterator<Item = &'static str> {
    NAMES.iter().map(|(n, ..)| *n).filter(|n| n.len() > 2)
}

/// What `/continue` sends.
pub const CONTINUE: &str =
    "Continue your last answer exactly where it stopped, without repeating any of it.";

/// Reads a submitted entry. A line whose first word looks like `/word` is a command; `//text`
/// sends `/text` to the model; a path such as `/etc/hosts is…` is an ordinary message.
pub fn parse(entry: &str) -> Input {
    let trimmed = entry.trim();
    if trimmed.is_empty() {
        return Input::Empty;
    }
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Input::Message(format!("/{rest}"));
    }
    let Some(after_slash) = trimmed.strip_prefix('/') else {
        return Input::Message(entry.to_string());
    };
    let (word, arg) = match after_slash.find(char::is_whitespace) {
        Some(i) => (&after_slash[..i], after_slash[i..].trim()),
        None => (after_slash, ""),
    };
    if !is_command_word(word) {
        return Input::Message(entry.to_string());
    }
    let lower = word.to_ascii_lowercase();
    let Some((name, takes_arg, make)) = NAMES.iter().find(|(n, ..)| n[1..] == lower) else {
        return Input::Command(Command::Unknown {
            typed: format!("/{word}"),
            suggestion: suggest(&lower),
        });
    };
    if !arg.is_empty() && !takes_arg {
        let shown = commands().find(|c| c == name).unwrap_or("/help");
        return Input::Command(Command::NoArgument(shown));
    }
    let arg = (!arg.is_empty()).then(|| arg.to_string());
    Input::Command(make(arg))
}

/// `/word`: letters, digits, `-`, `_`, or a lone `?` — no further `/` (that would be a path).
fn is_command_word(word: &str) -> bool {
    word == "?"
        || (!word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
}

/// The closest command to a mistyped one: a prefix of it, or within two edits.
fn suggest(typed: &str) -> Option<&'static str> {
    if typed.is_empty() {
        return None;
    }
    if let Some(c) = commands().find(|c| c[1..].starts_with(typed)) {
        return Some(c);
    }
    commands()
        .map(|c| (strsim::levenshtein(typed, &c[1..]), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// What `/skills` says first: how the model sees each skill (progressive disclosure).
pub const DISCLOSURE_LEGEND: &str = "\
[in full]  SKILL.md is in the system prompt (named by the agent or --skill)
[catalog]  only name, description and script paths are; the model loads the rest with !{skill NAME} (load_skill with --tools) when it needs it
";

/// How skill `name` reaches the model: `named` are the skills the agent or `--skill` named.
pub fn disclosure(named: &[String], name: &str) -> &'static str {
    if named.iter().any(|n| n == name) {
        "in full"
    } else {
        "catalog"
    }
}

/// The `/help` text.
pub const HELP: &str = "\
Commands
  /help              this help
  /exit              leave (also /quit or Ctrl-D)
  /clear             forget the conversation so far
  /model [M]         show the model, or switch to M (a model name or provider:model)
  /agent [NAME]      show the agent and list the others, or switch to agent NAME
  /skills [NAME]     the active skills, their tools and scripts, in full or only in the catalog; with NAME that skill in detail
  /save [NAME|FILE]  save the conversation. A bare NAME (no '/' or '.') goes to the sessions folder, where `skillpipe chat --resume NAME` finds it; anything else is a file path. Without an argument: the session it was resumed from, else a new name from the date and time
  /copy              copy the last answer to the clipboard
  /info              model, endpoint, agent, skills, policy, sandbox and prompt size
  /retry             ask the last question again (its answer is dropped)
  /continue          ask the model to go on where its last answer stopped
  //text             send a message that starts with '/'

Keys
  Enter              send
  Alt-Enter, Ctrl-J  new line (pasted text keeps its lines; a trailing \\ continues too)
  Tab                complete commands, /model, /agent and /skills names, /save and --resume sessions
  Ctrl-C             cancel the answer or script in flight; at the prompt, clear the line
  Ctrl-D             leave (on an empty line)
  Up, Down, Ctrl-R   history (an entry that starts with a space is not kept)
";

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Command {
        match parse(s) {
            Input::Command(c) => c,
            other => panic!("{s:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn commands_and_arguments() {
        assert_eq!(cmd("/help"), Command::Help);
        assert_eq!(cmd("  /EXIT  "), Command::Exit);
        assert_eq!(cmd("/quit"), Command::Exit);
        assert_eq!(cmd("/model"), Command::Model(None));
        assert_eq!(
            cmd("/model  ollama:llama3.2 "),
            Command::Model(Some("ollama:llama3.2".into()))
        );
        assert_eq!(
            cmd("/save my notes.json"),
            Command::Save(Some("my notes.json".into()))
        );
        assert_eq!(cmd("/agent tutor"), Command::Agent(Some("tutor".into())));
        assert_eq!(cmd("/skills"), Command::Skills(None));
        assert_eq!(cmd("/skills say"), Command::Skills(Some("say".into())));
        assert_eq!(cmd("/clear now"), Command::NoArgument("/clear"));
        assert_eq!(cmd("/?"), Command::Help);
        assert_eq!(cmd("/info"), Command::Info);
        assert_eq!(cmd("/retry"), Command::Retry);
        assert_eq!(cmd("/continue"), Command::Continue);
        assert_eq!(cmd("/retry now"), Command::NoArgument("/retry"));
    }

    #[test]
    fn messages_paths_and_escapes() {
        assert_eq!(parse("   \n "), Input::Empty);
        assert_eq!(parse("hello /help"), Input::Message("hello /help".into()));
        assert_eq!(
            parse("/etc/hosts has what?"),
            Input::Message("/etc/hosts has what?".into())
        );
        assert_eq!(parse("//help me"), Input::Message("/help me".into()));
    }

    #[test]
    fn unknown_commands_get_a_suggestion() {
        for (typed, suggestion) in [
            ("/hlep", Some("/help")),
            ("/sk", Some("/skills")),
            ("/frobnicate", None),
        ] {
            let typed = typed.to_string();
            assert_eq!(cmd(&typed), Command::Unknown { typed, suggestion });
        }
    }

    #[test]
    fn help_names_every_command() {
        for c in commands() {
            assert!(HELP.contains(c), "{c} missing from /help");
        }
    }
}
