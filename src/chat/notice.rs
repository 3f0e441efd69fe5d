//! What the chat loop tells a [`Ui`](super::Ui) besides the answer and the directive reports,
//! typed: a front end picks tone and layout from the variant, never from the text.

use std::fmt;
use std::time::Duration;

/// A note about the stream or the turn (a retry, a turn stopped early). [`fmt::Display`] names
/// settings by their keys (the `skillpipe` binary names its flags); text from the model or the
/// server inside it
/// (a directive, a reason) is not sanitized for a terminal: sanitize the line before showing it
/// (see [`crate::term::sanitize`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// The request failed before any of the answer arrived; it is sent again after `delay`.
    Retrying {
        /// What went wrong (e.g. `HTTP 429`), as the provider said it.
        reason: String,
        /// Waiting this long first.
        delay: Duration,
        /// This is retry number `attempt`…
        attempt: u32,
        /// …of at most this many.
        max_attempts: u32,
    },
    /// The model wrote a capture it had already run in this answer: it was not run again, and
    /// the model was given the earlier result.
    NotRunAgain {
        /// The directive as written, on one line (controls escaped, as in a report).
        directive: String,
    },
    /// The model wrote that capture once more after being given its result again: the turn
    /// stopped (its last result is shown as the answer).
    StoppedRepeating {
        /// The directive as written, on one line (controls escaped, as in a report).
        directive: String,
    },
    /// One answer held more native tool calls than `max_captures_per_turn`: the first `max` ran,
    /// the rest were refused and the turn stopped.
    StoppedToolCalls {
        /// The limit (`max_captures_per_turn`).
        max: usize,
    },
    /// The model wrote a tool call as text instead of calling the tool (the server or model does
    /// not do native tool calls): the tools are dropped for the rest of the session and the
    /// answer is asked for again, with directives only.
    ToolsIgnored,
    /// The server refused a parameter the user did not set: the request went again without it.
    Adapted(crate::model::Adaptation),
    /// The model said nothing after its last capture (or was stopped for repeating it): the
    /// capture's output is shown as the answer, so the user knows those words are the command's.
    ShowedOutput,
    /// The answer reached the model's token limit (finish reason `length`, or `max_tokens` from
    /// Anthropic): what was shown is all there is.
    CutAtTokenLimit,
    /// The server ended the answer without a finish reason after some text: it may have been
    /// cut (a llama.cpp-based server does this to an answer while it serves another request).
    NoFinishReason,
    /// The turn showed nothing at all: why (the model wrote no text, only read a skill, or its
    /// last capture failed or was not run). Said beside the answer, never as its text: output to
    /// a pipe stays exactly what the model wrote.
    NoAnswer(String),
}

impl Notice {
    /// [`Notice::NotRunAgain`] for a directive as written (`raw` may hold anything the model
    /// wrote: it is kept on one line with its controls escaped).
    pub fn not_run_again(raw: &[u8]) -> Notice {
        Notice::NotRunAgain {
            directive: one_line(raw),
        }
    }

    /// [`Notice::StoppedRepeating`] for a directive as written (see [`Notice::not_run_again`]).
    pub fn stopped_repeating(raw: &[u8]) -> Notice {
        Notice::StoppedRepeating {
            directive: one_line(raw),
        }
    }
}

/// Model text shown in a one-line notice, as a report shows a directive.
fn one_line(raw: &[u8]) -> String {
    crate::command::escape_controls(&String::from_utf8_lossy(raw))
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Retrying {
                reason,
                delay,
                attempt,
                max_attempts,
            } => write!(
                f,
                "{reason}; retrying in {:.1} s ({attempt}/{max_attempts})",
                delay.as_secs_f64()
            ),
            Notice::NotRunAgain { directive } => {
                write!(
                    f,
                    "not run again: {directive} (same as earlier in this answer)"
                )
            }
            Notice::StoppedRepeating { directive } => write!(
                f,
                "stopped: the model wrote {directive} again after being given its result"
            ),
            Notice::StoppedToolCalls { max } => write!(
                f,
                "stopped: more than {max} tool call{} in one answer (max_captures_per_turn)",
                if *max == 1 { "" } else { "s" }
            ),
            Notice::ShowedOutput => f.write_str(
                "the model said nothing after its last capture: the command's output is shown as the answer",
            ),
            Notice::ToolsIgnored => f.write_str(&tools_ignored("native tool calls")),
            Notice::CutAtTokenLimit => f.write_str(&cut_at_token_limit(
                "a larger max_tokens in the agent's [params]",
            )),
            Notice::NoFinishReason => f.write_str(
                "the server ended the answer without saying it was complete: it may be cut",
            ),
            Notice::NoAnswer(why) => f.write_str(why),
            Notice::Adapted(change) => write!(f, "{change}"),
        }
    }
}

/// [`Notice::ToolsIgnored`]'s line, `tools` naming what is given up.
pub(crate) fn tools_ignored(tools: &str) -> String {
    format!(
        "no tool call came back where the model tried one (a call written as text, or an empty \
         answer: this server or model does not do native tool calls); using directives instead \
         of {tools} for the rest of this session"
    )
}

/// [`Notice::CutAtTokenLimit`]'s line, `more` naming what allows more.
pub(crate) fn cut_at_token_limit(more: &str) -> String {
    format!("the answer was cut at the token limit ({more} allows more)")
}

/// What the loop is waiting for, while nothing else shows (a spinner's label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Busy<'a> {
    /// The request is sent; no token has arrived yet.
    Thinking,
    /// A capture, side effect or tool call runs: its command as written (a directive's body or
    /// a script), untrusted model text to sanitize before a terminal sees it.
    Running(&'a str),
}

impl fmt::Display for Busy<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Busy::Thinking => f.write_str("thinking"),
            Busy::Running(what) => write!(f, "running {what}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wording_names_keys_not_flags() {
        let retry = Notice::Retrying {
            reason: "HTTP 429".into(),
            delay: Duration::from_millis(1500),
            attempt: 1,
            max_attempts: 3,
        };
        assert_eq!(retry.to_string(), "HTTP 429; retrying in 1.5 s (1/3)");
        assert_eq!(
            Notice::not_run_again(b"!{echo same}").to_string(),
            "not run again: !{echo same} (same as earlier in this answer)"
        );
        assert_eq!(
            Notice::stopped_repeating(b"!{echo same}").to_string(),
            "stopped: the model wrote !{echo same} again after being given its result"
        );
        assert_eq!(
            Notice::StoppedToolCalls { max: 1 }.to_string(),
            "stopped: more than 1 tool call in one answer (max_captures_per_turn)"
        );
        assert_eq!(
            Notice::StoppedToolCalls { max: 8 }.to_string(),
            "stopped: more than 8 tool calls in one answer (max_captures_per_turn)"
        );
        assert!(
            Notice::ToolsIgnored
                .to_string()
                .contains("instead of native tool calls")
        );
        assert_eq!(
            Notice::CutAtTokenLimit.to_string(),
            "the answer was cut at the token limit (a larger max_tokens in the agent's [params] \
             allows more)"
        );
        assert_eq!(Busy::Thinking.to_string(), "thinking");
        assert_eq!(Busy::Running("say hi").to_string(), "running say hi");
    }

    #[test]
    fn a_directive_in_a_notice_stays_one_inert_line() {
        let n = Notice::not_run_again(b"!{echo \x1b[31mred\nline\xe2\x80\xae}");
        let text = n.to_string();
        assert!(!text.contains(['\x1b', '\n', '\u{202e}']), "{text}");
        assert!(text.contains("!{echo ␛[31mred␊line<U+202E>}"), "{text}");
    }
}
