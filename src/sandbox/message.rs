//! A message of the sandbox's (why a restriction could not be set up, a warning) with the
//! settings it points at kept typed: the launcher writes it in another process, so it crosses
//! the report pipe as data (text pieces and settings, in order), and each front end names the
//! settings its own way — the library by their policy keys, the `skillpipe` binary by its flags.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A policy setting a sandbox message points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Setting {
    /// `sandbox = "best-effort"`: run without what cannot be enforced, with a warning.
    BestEffort,
    /// `allow_read`: this path is no longer hidden.
    AllowRead(String),
    /// `allowed_sockets`: the Unix sockets a script may connect to.
    AllowedSockets,
    /// `allow_network`: commands use the host's network.
    AllowNetwork,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Setting::BestEffort => f.write_str("sandbox = \"best-effort\""),
            // A TOML line to paste into a policy: the path as a TOML string, not Rust's quoting.
            Setting::AllowRead(path) => {
                write!(f, "allow_read = [{}]", toml::Value::String(path.clone()))
            }
            Setting::AllowedSockets => f.write_str("allowed_sockets"),
            Setting::AllowNetwork => f.write_str("allow_network"),
        }
    }
}

/// One piece of a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum Piece {
    Text(String),
    Setting(Setting),
}

/// Text with the settings it names kept typed. `Display` names them by their policy keys;
/// [`Message::word`] names them another way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Message(Vec<Piece>);

impl Message {
    /// Plain text.
    pub fn text(text: impl Into<String>) -> Message {
        Message(vec![Piece::Text(text.into())])
    }

    /// This message, then `text`.
    pub(crate) fn and(mut self, text: impl Into<String>) -> Message {
        self.0.push(Piece::Text(text.into()));
        self
    }

    /// This message, then `setting`.
    pub(crate) fn and_setting(mut self, setting: Setting) -> Message {
        self.0.push(Piece::Setting(setting));
        self
    }

    /// This message, then `other`.
    pub(crate) fn and_message(mut self, other: Message) -> Message {
        self.0.extend(other.0);
        self
    }

    /// The text, with each setting named by `name`.
    pub fn word(&self, name: impl Fn(&Setting) -> String) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Setting(s) => name(s),
            })
            .collect()
    }

    /// One line of the launcher's report (JSON: no newline inside).
    pub(crate) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| self.to_string().replace('\n', " "))
    }

    /// What [`Self::encode`] wrote; text that is not (an older launcher's) is taken as is.
    pub(crate) fn decode(line: &str) -> Message {
        serde_json::from_str(line).unwrap_or_else(|_| Message::text(line))
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.word(ToString::to_string))
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::text(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_survive_the_pipe_and_are_named_by_whoever_words_them() {
        let m = Message::text("hiding /h/x: EPERM; lift it with ")
            .and_setting(Setting::AllowRead("/h/x".into()))
            .and(" if it need not be hidden");
        let back = Message::decode(&m.encode());
        assert_eq!(back, m);
        assert!(!m.encode().contains('\n'));
        assert_eq!(
            back.to_string(),
            "hiding /h/x: EPERM; lift it with allow_read = [\"/h/x\"] if it need not be hidden"
        );
        assert_eq!(
            back.word(|s| match s {
                Setting::AllowRead(p) => format!("--allow-read {p}"),
                other => other.to_string(),
            }),
            "hiding /h/x: EPERM; lift it with --allow-read /h/x if it need not be hidden"
        );
        // A path with a control character or a quote is a TOML string, not Rust's debug form.
        let odd = Message::text("").and_setting(Setting::AllowRead("/h/a\"b\u{1b}".into()));
        assert_eq!(odd.to_string(), r#"allow_read = ["/h/a\"b\u001B"]"#);
        // Plain text (not what `encode` writes) is taken as it is.
        assert_eq!(Message::decode("bad\tthing"), Message::text("bad\tthing"));
    }
}
