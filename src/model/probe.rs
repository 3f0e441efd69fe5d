//! `doctor --online`'s question to the endpoint: does it return structured tool calls? One
//! small request offering one function and asking for it to be called; the answer is read as
//! the chat would read it.

use super::{ChatRequest, Message, ModelError, Settings, StreamEvent, ToolDef};
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;

/// The function offered.
pub const PROBE: &str = "report_word";

/// What the endpoint did with a request offering a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCalls {
    /// A structured call of the function came back.
    Structured,
    /// Text came back instead (shown short and sanitized by the caller); empty for none.
    Text(String),
}

/// Asks `model` (already chosen) at the endpoint of `s` to call [`PROBE`], within `within`.
pub fn probe(s: &Settings, model: &str, within: Duration) -> Result<ToolCalls, ModelError> {
    let provider = super::provider_for(s).map_err(|e| ModelError::Other(Box::new(e)))?;
    let mut req = ChatRequest::new(
        model,
        vec![Message::user(format!(
            "Call the function {PROBE} with the word \"ready\". Do not answer in text."
        ))],
    );
    req.stream = false;
    req.params.insert("max_tokens".into(), json!(200));
    req.tools = vec![ToolDef {
        name: PROBE.into(),
        description: "Reports one word. Arguments: a JSON object {\"word\": \"…\"}.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"word": {"type": "string", "description": "The word to report."}},
            "required": ["word"],
        }),
    }];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ModelError::Other(Box::new(e)))?;
    rt.block_on(async {
        let mut stream = provider.stream(req);
        let mut text = String::new();
        let read = async {
            while let Some(ev) = stream.next().await {
                match ev? {
                    StreamEvent::ToolCall(c) if c.name == PROBE => {
                        return Ok(ToolCalls::Structured);
                    }
                    StreamEvent::Text(t) => text.push_str(&t),
                    _ => {}
                }
            }
            Ok(ToolCalls::Text(std::mem::take(&mut text)))
        };
        match tokio::time::timeout(within, read).await {
            Ok(r) => r,
            Err(_) => Err(ModelError::Timeout {
                url: s.base_url.clone(),
                what: "asking for a tool call".into(),
                after: within,
            }),
        }
    })
}
