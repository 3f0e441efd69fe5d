//! Request parameters skillpipe adds on its own, and their retreat (pure): a server that
//! refuses a request with a 400 naming such a parameter gets the request once more without it
//! (or under the name it asked for), and the provider keeps that change for the rest of the
//! session. A parameter the user set explicitly is never changed: the refusal stands and says so.
//!
//! Which parameter was refused is read from the error's structured fields (`error.param`), or
//! else found by name in its message among the parameters the request actually carried — never
//! from a list of phrases.

use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The fields that make a request what it is: never dropped.
const STRUCTURAL: &[&str] = &["model", "messages", "stream", "tools", "system"];

/// What skillpipe leaves out of, or renames in, every request of this provider.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Adaptations {
    /// No `stream_options: {include_usage: true}` (provider setting `stream_usage = false`).
    pub no_stream_usage: bool,
    /// `max_tokens` goes as `max_completion_tokens` (`max_tokens_param`).
    pub max_completion_tokens: bool,
    /// Parameters of the agent's defaults left out (`drop_params`).
    pub dropped: BTreeSet<String>,
}

/// One change made after a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Adaptation {
    /// `stream_options` left out: no token counts from this server.
    StreamUsage,
    /// `max_tokens` sent as `max_completion_tokens`.
    MaxCompletionTokens,
    /// An agent's default parameter left out.
    Dropped(String),
}

impl std::fmt::Display for Adaptation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Adaptation::StreamUsage => f.write_str(
                "the server refused `stream_options`: asked again without it, for the rest of the \
                 session (no token counts; set stream_usage = false for this provider to skip it)",
            ),
            Adaptation::MaxCompletionTokens => f.write_str(
                "the server asked for `max_completion_tokens`: the token limit goes under that \
                 name for the rest of the session (max_tokens_param = \"max_completion_tokens\" \
                 for this provider says so ahead of time)",
            ),
            Adaptation::Dropped(p) => write!(
                f,
                "the server refused `{p}` (from the agent's [params]): asked again without it, \
                 for the rest of the session (drop_params = [\"{p}\"] for this provider skips it)"
            ),
        }
    }
}

impl Adaptations {
    /// Applies every change to a request body (OpenAI or Anthropic shape).
    pub fn apply(&self, body: &mut Map<String, Value>) {
        if self.no_stream_usage {
            body.remove("stream_options");
        }
        if self.max_completion_tokens
            && let Some(n) = body.remove("max_tokens")
        {
            body.entry("max_completion_tokens").or_insert(n);
        }
        for p in &self.dropped {
            body.remove(p);
        }
    }

    /// After a refusal (`error` is the response body, `sent` the request body): the change that
    /// answers it, recorded for the rest of the session; `None` when it named nothing skillpipe
    /// may change (nothing, a structural field, or one of `explicit`, the user's own).
    pub fn on_refusal(
        &mut self,
        error: &[u8],
        sent: &Map<String, Value>,
        explicit: &[String],
    ) -> Option<Adaptation> {
        let named = refused_params(error, sent);
        let change = named.iter().find_map(|(p, asks_for)| {
            if p == "max_tokens" {
                // The same limit under the name asked for: kept, never dropped (a refusal of
                // its value, or Anthropic's, which requires it, stands).
                let renamed =
                    asks_for.contains("max_completion_tokens") && !self.max_completion_tokens;
                return renamed.then_some(Adaptation::MaxCompletionTokens);
            }
            if explicit.iter().any(|e| e == p) || STRUCTURAL.contains(&p.as_str()) {
                return None;
            }
            if p == "stream_options" {
                return (!self.no_stream_usage).then_some(Adaptation::StreamUsage);
            }
            (!self.dropped.contains(p)).then(|| Adaptation::Dropped(p.clone()))
        })?;
        match &change {
            Adaptation::StreamUsage => self.no_stream_usage = true,
            Adaptation::MaxCompletionTokens => self.max_completion_tokens = true,
            Adaptation::Dropped(p) => {
                self.dropped.insert(p.clone());
            }
        }
        Some(change)
    }
}

/// The explicit parameters a refusal named (for the error to say they were the user's own).
pub fn explicit_named(error: &[u8], sent: &Map<String, Value>, explicit: &[String]) -> Vec<String> {
    refused_params(error, sent)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| explicit.contains(p))
        .collect()
}

/// The request's parameters a refusal names, each with the error's whole text (to see what it
/// asks for instead): `error.param` when the server gives it, else every parameter sent whose
/// name stands as a word in the message, in the order the message names them.
fn refused_params(error: &[u8], sent: &Map<String, Value>) -> Vec<(String, String)> {
    // A body that is no JSON is its own message.
    let v = serde_json::from_slice::<Value>(error)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(error).into_owned()));
    let err = v.get("error").unwrap_or(&v);
    let text = match err {
        Value::String(s) => s.clone(),
        _ => err
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| v.to_string(), str::to_string),
    };
    if let Some(p) = err.get("param").and_then(Value::as_str)
        && sent.contains_key(p)
    {
        return vec![(p.to_string(), text)];
    }
    named_in(&text, sent)
        .into_iter()
        .map(|p| (p, text.clone()))
        .collect()
}

/// Names of `sent` that appear in `text` as whole identifiers, in order of appearance.
fn named_in(text: &str, sent: &Map<String, Value>) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found: Vec<(usize, String)> = sent
        .keys()
        .filter_map(|k| {
            text.match_indices(k.as_str())
                .find(|(i, _)| {
                    let before = text[..*i].chars().next_back();
                    let after = text[i + k.len()..].chars().next();
                    !before.is_some_and(ident) && !after.is_some_and(ident)
                })
                .map(|(i, _)| (i, k.clone()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_token_limit_is_renamed_but_never_dropped() {
        let sent = body(json!({"model": "m", "max_tokens": 200000}));
        let err = br#"{"error":{"message":"max_tokens is too large: 200000. This model supports at most 16384 completion tokens","param":"max_tokens"}}"#;
        assert_eq!(Adaptations::default().on_refusal(err, &sent, &[]), None);
    }

    #[test]
    fn names_match_whole_words_of_what_was_sent_only() {
        let sent = body(json!({"model": "m", "top_p": 1, "top_k": 3}));
        assert_eq!(
            named_in("top_pp and xtop_k are unknown", &sent),
            Vec::<String>::new()
        );
        assert_eq!(named_in("'top_k' then top_p", &sent), ["top_k", "top_p"]);
        let mut a = Adaptations::default();
        let err = br#"{"error":{"message":"model must be a string"}}"#;
        assert_eq!(a.on_refusal(err, &sent, &[]), None, "structural");
        assert_eq!(
            a.on_refusal(b"not json: top_k", &sent, &[]),
            Some(Adaptation::Dropped("top_k".into()))
        );
    }
}
