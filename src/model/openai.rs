//! OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, …):
//! `POST {base_url}/chat/completions`, streamed as SSE chunks ending in `data: [DONE]`.

use super::http::{self, Decoder};
use super::sse::SseEvent;
use super::{ChatRequest, Message, ModelError, StreamEvent, ToolCall};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The JSON body for a chat request. `params` go first so they cannot replace the fields that
/// make the request work (model, messages, stream).
pub fn request_body(req: &ChatRequest) -> Value {
    let mut body: Map<String, Value> = req.params.clone();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "messages".into(),
        Value::Array(req.messages.iter().map(message_json).collect()),
    );
    body.insert("stream".into(), json!(req.stream));
    if req.stream {
        // Set in the params (null: not sent), it is the user's; else usage is asked for.
        let asked = body
            .entry("stream_options")
            .or_insert(json!({"include_usage": true}));
        if asked.is_null() {
            body.remove("stream_options");
        }
    } else {
        body.remove("stream_options");
    }
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        // llama.cpp-based servers call no tool unless asked to choose; an agent's params may
        // still pick another value.
        body.entry("tool_choice").or_insert(json!("auto"));
    }
    Value::Object(body)
}

fn message_json(m: &Message) -> Value {
    match m {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant {
            content,
            tool_calls,
        } if tool_calls.is_empty() => json!({"role": "assistant", "content": content}),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            let content = if content.is_empty() {
                Value::Null
            } else {
                json!(content)
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        // The chat API has no error flag: an error's content says `"is_error": true` itself.
        Message::Tool {
            call_id, content, ..
        } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    /// Non-streaming responses carry `message` instead of `delta`.
    message: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Assembles the chat-completions stream into events.
#[derive(Default)]
pub struct OpenAiDecoder {
    /// Calls still arriving, by index: their pieces joined as they come.
    calls: BTreeMap<usize, ToolCall>,
    /// Index of the call the last delta without an index belonged to.
    last_index: Option<usize>,
    finish_reason: Option<String>,
    finished: bool,
}

impl OpenAiDecoder {
    fn tool_delta(&mut self, d: ToolCallDelta) {
        let index = d.index.unwrap_or_else(|| match (&d.id, self.last_index) {
            // Servers that omit `index` start a new call with a new id.
            (Some(id), Some(last)) if self.calls.get(&last).is_some_and(|c| c.id != *id) => {
                self.calls.keys().next_back().map_or(0, |k| k + 1)
            }
            (_, Some(last)) => last,
            (_, None) => 0,
        });
        self.last_index = Some(index);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = d.id.filter(|s| !s.is_empty()) {
            call.id = id;
        }
        if let Some(f) = d.function {
            if let Some(name) = f.name {
                call.name.push_str(&name);
            }
            if let Some(args) = f.arguments {
                call.arguments.push_str(&args);
            }
        }
    }

    fn flush_calls(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        for (index, mut call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(ModelError::Decode(format!(
                    "tool call #{index} has no function name"
                )));
            }
            if call.id.is_empty() {
                call.id = format!("call_{index}");
            }
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".into();
            }
            out.push(StreamEvent::ToolCall(call));
        }
        self.last_index = None;
        Ok(())
    }

    fn chunk(&mut self, chunk: Chunk, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if let Some(err) = chunk.error {
            return Err(ModelError::Api {
                message: http::server_message(err.to_string().as_bytes()),
            });
        }
        // Only the first choice matters: skillpipe never asks for n > 1.
        if let Some(choice) = chunk.choices.into_iter().next() {
            let delta = choice.delta.or(choice.message).unwrap_or_default();
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Text(text));
            }
            for d in delta.tool_calls.unwrap_or_default() {
                self.tool_delta(d);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
                self.flush_calls(out)?;
            }
        }
        if let Some(u) = chunk.usage {
            out.push(StreamEvent::Usage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
            });
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        self.flush_calls(out)?;
        if !self.finished {
            self.finished = true;
            out.push(StreamEvent::Finished {
                reason: self.finish_reason.take(),
            });
        }
        Ok(())
    }
}

impl Decoder for OpenAiDecoder {
    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, ModelError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.finish(out)?;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Chunk = http::parse_json(data)?;
        self.chunk(chunk, out)?;
        Ok(false)
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        // Some servers close without `[DONE]`; a finish_reason already said the answer is whole.
        self.finish_reason.is_some() && self.finish(out).is_ok()
    }

    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let chunk: Chunk = http::parse_json(&String::from_utf8_lossy(body))?;
        self.chunk(chunk, out)?;
        self.finish(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::sse::parse_all;
    use super::*;
    use crate::model::ToolDef;

    fn decode(input: &str) -> (Vec<StreamEvent>, bool) {
        let mut d = OpenAiDecoder::default();
        let mut out = Vec::new();
        for ev in parse_all([input.as_bytes()]) {
            if d.event(&ev, &mut out).unwrap() {
                return (out, true);
            }
        }
        let ok = d.end(&mut out);
        (out, ok)
    }

    #[test]
    fn tool_call_deltas_are_assembled() {
        let (out, done) = decode(concat!(
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"say__speak\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"args\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"function\":{\"name\":\"x\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":[\\\"hi\\\"]}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n"
        ));
        assert!(done);
        assert_eq!(
            out,
            vec![
                StreamEvent::ToolCall(ToolCall {
                    id: "call_a".into(),
                    name: "say__speak".into(),
                    arguments: "{\"args\":[\"hi\"]}".into()
                }),
                StreamEvent::ToolCall(ToolCall {
                    id: "call_b".into(),
                    name: "x".into(),
                    arguments: "{}".into()
                }),
                StreamEvent::Finished {
                    reason: Some("tool_calls".into())
                },
            ]
        );
    }

    #[test]
    fn end_without_done_is_complete_only_after_a_finish_reason() {
        let (_, ok) = decode("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n");
        assert!(!ok);
        let (out, ok) = decode(
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\n",
        );
        assert!(ok);
        assert_eq!(
            out.last(),
            Some(&StreamEvent::Finished {
                reason: Some("stop".into())
            })
        );
    }

    #[test]
    fn error_chunk_becomes_an_api_error() {
        let mut d = OpenAiDecoder::default();
        let ev = SseEvent {
            event: None,
            data: r#"{"error":{"message":"context length exceeded"}}"#.into(),
        };
        let err = d.event(&ev, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("context length exceeded"), "{err}");
    }

    #[test]
    fn body_has_stream_options_tools_and_params() {
        let mut req = ChatRequest::new(
            "m",
            vec![
                Message::system("sys"),
                Message::user("hi"),
                Message::Assistant {
                    content: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c".into(),
                        name: "f".into(),
                        arguments: "{}".into(),
                    }],
                },
                Message::tool("c", "out"),
            ],
        );
        req.params.insert("temperature".into(), json!(0.3));
        req.params.insert("model".into(), json!("not-this"));
        req.tools.push(ToolDef {
            name: "f".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        });
        let body = request_body(&req);
        assert_eq!(body["model"], "m");
        assert_eq!(body["temperature"], 0.3);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["tools"][0]["function"]["name"], "f");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["name"],
            "f"
        );
        assert_eq!(body["messages"][3]["tool_call_id"], "c");
        req.params.insert("tool_choice".into(), json!("required"));
        assert_eq!(request_body(&req)["tool_choice"], "required");
        req.tools.clear();
        req.params.remove("tool_choice");
        assert!(request_body(&req).get("tool_choice").is_none());
        req.stream = false;
        assert!(request_body(&req).get("stream_options").is_none());
    }
}
