//! The replay provider (`--model replay:FILE`): recorded assistant answers, one JSONL line per
//! request, streamed in small pieces so directives arrive split exactly as from a real model.
//! Lets the whole chat loop be shown and tested offline.

use super::settings::SettingsError;
use super::{ChatRequest, EventStream, ModelError, Provider, StreamEvent, ToolCall};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes per streamed piece (rounded up to a character boundary).
pub const PIECE_BYTES: usize = 4;

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The recorded text.
    pub content: String,
    /// Recorded tool calls.
    pub tool_calls: Vec<ToolCall>,
}

/// Streams recorded answers from a JSONL file, one per turn, for offline demos and tests.
pub struct ReplayProvider {
    file: PathBuf,
    answers: Vec<Answer>,
    next: AtomicUsize,
}

impl ReplayProvider {
    /// Read FILE (relative to the current directory).
    pub fn open(file: &Path) -> Result<Self, SettingsError> {
        let text = std::fs::read_to_string(file).map_err(|e| SettingsError::Replay {
            file: file.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        let answers = parse(&text).map_err(|(line, message)| SettingsError::Replay {
            file: file.to_path_buf(),
            message: format!("line {line}: {message}"),
        })?;
        Ok(ReplayProvider {
            file: file.to_path_buf(),
            answers,
            next: AtomicUsize::new(0),
        })
    }
}

/// Parse the JSONL text; blank lines are skipped. Errors carry the 1-based line number.
pub fn parse(text: &str) -> Result<Vec<Answer>, (usize, String)> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Line {
        Text(String),
        Full {
            #[serde(default)]
            content: String,
            #[serde(default)]
            tool_calls: Vec<Value>,
        },
    }
    let mut answers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(line).map_err(|_| {
            (
                i + 1,
                "expected a JSON string or an object {\"content\": ..., \"tool_calls\": [...]}"
                    .to_string(),
            )
        })?;
        let (content, calls) = match parsed {
            Line::Text(content) => (content, Vec::new()),
            Line::Full {
                content,
                tool_calls,
            } => (content, tool_calls),
        };
        let tool_calls = (calls.iter().enumerate())
            .map(|(n, v)| tool_call(v, answers.len(), n))
            .collect::<Result<_, _>>()
            .map_err(|m| (i + 1, m))?;
        answers.push(Answer {
            content,
            tool_calls,
        });
    }
    Ok(answers)
}

/// Accepts the OpenAI shape `{"id", "function": {"name", "arguments"}}` or the flat
/// `{"id"?, "name", "arguments"}`; arguments may be JSON text or a JSON value.
fn tool_call(v: &Value, answer: usize, n: usize) -> Result<ToolCall, String> {
    let f = v.get("function").unwrap_or(v);
    let name = f
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a tool call needs a \"name\"")?;
    let arguments = match f.get("arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let id = v
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("call_replay_{}_{n}", answer + 1));
    Ok(ToolCall {
        id,
        name: name.to_string(),
        arguments,
    })
}

/// `text` in pieces of about `size` bytes, never splitting a character.
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text.ceil_char_boundary((start + size.max(1)).min(text.len()));
        out.push(text[start..end].to_string());
        start = end;
    }
    out
}

impl Provider for ReplayProvider {
    fn stream(&self, req: ChatRequest) -> EventStream {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(answer) = self.answers.get(n).cloned() else {
            let err = ModelError::ReplayExhausted {
                file: self.file.clone(),
                count: self.answers.len(),
            };
            return Box::pin(futures::stream::iter([Err(err)]));
        };
        let mut events: Vec<Result<StreamEvent, ModelError>> = if req.stream {
            pieces(&answer.content, PIECE_BYTES)
                .into_iter()
                .map(|p| Ok(StreamEvent::Text(p)))
                .collect()
        } else if answer.content.is_empty() {
            Vec::new()
        } else {
            vec![Ok(StreamEvent::Text(answer.content))]
        };
        let reason = if answer.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.extend(
            answer
                .tool_calls
                .into_iter()
                .map(|c| Ok(StreamEvent::ToolCall(c))),
        );
        events.push(Ok(StreamEvent::Finished {
            reason: Some(reason.into()),
        }));
        Box::pin(futures::stream::iter(events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_respect_char_boundaries() {
        assert_eq!(pieces("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        let p = pieces("aé€😀b", 2);
        assert_eq!(p.concat(), "aé€😀b");
        assert!(p.iter().all(|s| !s.is_empty()));
        assert!(pieces("", 4).is_empty());
    }

    #[test]
    fn parses_strings_objects_and_tool_call_shapes() {
        let text = "\"plain\"\n\n{\"content\":\"x\",\"tool_calls\":[{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},{\"name\":\"g\",\"arguments\":{\"k\":1}}]}\n";
        let a = parse(text).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].content, "plain");
        assert_eq!(a[1].tool_calls[0].id, "a");
        assert_eq!(a[1].tool_calls[1].name, "g");
        assert_eq!(a[1].tool_calls[1].arguments, "{\"k\":1}");
        assert_eq!(a[1].tool_calls[1].id, "call_replay_2_1");
    }
}
