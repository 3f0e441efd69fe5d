//! Anthropic Messages API: `POST {base_url}/v1/messages` with `x-api-key` and
//! `anthropic-version`, streamed as named SSE events (message_start, content_block_*, message_delta,
//! message_stop).

use super::http::{self, Decoder};
use super::sse::SseEvent;
use super::{ChatRequest, Message, ModelError, StreamEvent, ToolCall};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The API version this client speaks.
pub const API_VERSION: &str = "2023-06-01";
/// Anthropic requires `max_tokens`; used when the agent's params do not set it.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The JSON body: system messages become the top-level `system`, tool results become
/// `tool_result` blocks of a user turn, and consecutive turns of one role are merged (the API
/// wants user and assistant to alternate, with tool results first in the turn after the call).
pub fn request_body(req: &ChatRequest) -> Value {
    let mut body: Map<String, Value> = req.params.clone();
    if !body.contains_key("max_tokens") {
        body.insert("max_tokens".into(), json!(DEFAULT_MAX_TOKENS));
    }
    body.insert("model".into(), json!(req.model));
    body.insert("stream".into(), json!(req.stream));

    let system: Vec<&str> = req
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::System(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }

    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let (role, blocks) = match m {
            Message::System(_) => continue,
            Message::User(text) => ("user", text_block(text)),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks = text_block(content);
                blocks.extend(tool_calls.iter().map(|c| {
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
                }));
                ("assistant", blocks)
            }
            Message::Tool {
                call_id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        match turns.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .filter(|(_, blocks)| !blocks.is_empty())
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect();
    body.insert("messages".into(), Value::Array(messages));

    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Value::Object(body)
}

/// The API rejects empty text blocks.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: Block,
    },
    ContentBlockDelta {
        index: usize,
        delta: ContentDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        usage: Option<Usage>,
    },
    MessageStop,
    Error {
        error: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageStart {
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl Usage {
    fn prompt(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

/// Assembles the Messages event stream into events.
#[derive(Default)]
pub struct AnthropicDecoder {
    /// Tool calls still arriving, by block: their JSON pieces joined as `arguments`, and the
    /// `input` given at block start, used when no pieces follow.
    tools: BTreeMap<usize, (ToolCall, Value)>,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    stop_reason: Option<String>,
    finished: bool,
}

impl AnthropicDecoder {
    fn usage(&mut self, u: &Usage) {
        if let Some(p) = u.prompt() {
            self.prompt_tokens = Some(p);
        }
        if let Some(c) = u.output_tokens {
            self.completion_tokens = Some(c);
        }
    }

    /// A content block begins: its text is shown, a tool call is held until the block ends.
    fn block_start(&mut self, index: usize, block: Block, out: &mut Vec<StreamEvent>) {
        match block {
            Block::Text { text } if !text.is_empty() => out.push(StreamEvent::Text(text)),
            Block::ToolUse { id, name, input } => {
                let arguments = String::new();
                let call = ToolCall {
                    id,
                    name,
                    arguments,
                };
                self.tools.insert(index, (call, input));
            }
            _ => {}
        }
    }

    fn finish_tool(&mut self, index: usize, out: &mut Vec<StreamEvent>) {
        if let Some((mut call, initial)) = self.tools.remove(&index) {
            if call.arguments.trim().is_empty() {
                call.arguments = match initial {
                    Value::Object(_) => initial.to_string(),
                    _ => "{}".to_string(),
                };
            }
            out.push(StreamEvent::ToolCall(call));
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let open: Vec<usize> = self.tools.keys().copied().collect();
        for i in open {
            self.finish_tool(i, out);
        }
        if self.finished {
            return;
        }
        self.finished = true;
        if self.prompt_tokens.is_some() || self.completion_tokens.is_some() {
            out.push(StreamEvent::Usage {
                prompt_tokens: self.prompt_tokens.unwrap_or(0),
                completion_tokens: self.completion_tokens.unwrap_or(0),
            });
        }
        out.push(StreamEvent::Finished {
            reason: self.stop_reason.take(),
        });
    }
}

impl Decoder for AnthropicDecoder {
    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, ModelError> {
        let data = ev.data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        let event: Event = http::parse_json(data)?;
        match event {
            Event::MessageStart { message } => {
                if let Some(u) = message.usage {
                    self.usage(&u);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => self.block_start(index, content_block, out),
            Event::ContentBlockDelta { index, delta } => match delta {
                ContentDelta::TextDelta { text } if !text.is_empty() => {
                    out.push(StreamEvent::Text(text))
                }
                ContentDelta::InputJsonDelta { partial_json } => {
                    if let Some((call, _)) = self.tools.get_mut(&index) {
                        call.arguments.push_str(&partial_json);
                    }
                }
                _ => {}
            },
            Event::ContentBlockStop { index } => self.finish_tool(index, out),
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(u) = usage {
                    self.usage(&u);
                }
            }
            Event::MessageStop => {
                self.finish(out);
                return Ok(true);
            }
            Event::Error { error } => {
                return Err(ModelError::Api {
                    message: http::server_message(json!({ "error": error }).to_string().as_bytes()),
                });
            }
            Event::Other => {}
        }
        Ok(false)
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        if self.stop_reason.is_some() {
            self.finish(out);
            true
        } else {
            false
        }
    }

    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        #[derive(Deserialize)]
        struct Whole {
            #[serde(default)]
            content: Vec<Block>,
            stop_reason: Option<String>,
            usage: Option<Usage>,
        }
        let whole: Whole = http::parse_json(&String::from_utf8_lossy(body))?;
        for (index, block) in whole.content.into_iter().enumerate() {
            self.block_start(index, block, out);
            self.finish_tool(index, out);
        }
        if let Some(u) = whole.usage {
            self.usage(&u);
        }
        self.stop_reason = whole.stop_reason;
        self.finish(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::sse::parse_all;
    use super::*;
    use crate::model::ToolDef;

    /// A whole stream (text, a tool call in pieces, usage from start and delta, the stop
    /// reason) is tests/all/model.rs anthropic_stream's; here: an event of no known type between
    /// the others is skipped.
    #[test]
    fn an_event_of_no_known_type_is_skipped() {
        let input = concat!(
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: ping\ndata: {\"type\":\"ping\"}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \"}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let mut d = AnthropicDecoder::default();
        let mut out = Vec::new();
        let done: Vec<bool> = (parse_all([input.as_bytes()]).iter())
            .map(|ev| d.event(ev, &mut out).unwrap())
            .collect();
        assert_eq!(done, [false, false, false, true]);
        let finished = StreamEvent::Finished { reason: None };
        assert_eq!(out, [StreamEvent::Text("Hi ".into()), finished]);
    }

    #[test]
    fn error_event() {
        let mut d = AnthropicDecoder::default();
        let ev = SseEvent {
            event: Some("error".into()),
            data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
        };
        let e = d.event(&ev, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("Overloaded"), "{e}");
    }

    #[test]
    fn body_layout() {
        let mut req = ChatRequest::new(
            "claude",
            vec![
                Message::system("be brief"),
                Message::user("hi"),
                Message::Assistant {
                    content: "let me look".into(),
                    tool_calls: vec![ToolCall {
                        id: "t1".into(),
                        name: "f".into(),
                        arguments: "{\"a\":1}".into(),
                    }],
                },
                Message::tool("t1", "result"),
                Message::user("and?"),
            ],
        );
        req.tools.push(ToolDef {
            name: "f".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        });
        let b = request_body(&req);
        assert_eq!(b["system"], "be brief");
        assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(b["tools"][0]["input_schema"]["type"], "object");
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
        assert_eq!(msgs[1]["content"][1]["input"]["a"], 1);
        assert_eq!(msgs[2]["role"], "user");
        assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
        assert_eq!(msgs[2]["content"][0]["tool_use_id"], "t1");
        assert!(msgs[2]["content"][0].get("is_error").is_none());
        assert_eq!(msgs[2]["content"][1]["text"], "and?");
        req.messages[3] = Message::tool_result("t1", "failed", true);
        let b = request_body(&req);
        assert_eq!(b["messages"][2]["content"][0]["is_error"], true);
    }
}
