//! Streaming model clients and settings (DESIGN §6).
//!
//! Every provider turns a [`ChatRequest`] into one stream of [`StreamEvent`]s, so the chat loop does
//! not care whether the answer came from an OpenAI-compatible server, the Anthropic Messages API or a
//! replay file. Streams must be polled inside a tokio runtime. Dropping a stream drops its HTTP
//! response, which is how the chat loop stops a model at a capture.
//!
//! - `sse`: a small incremental Server-Sent Events parser (pure).
//! - `openai`, `anthropic` (feature `http`): wire formats (pure request builders and stream
//!   decoders).
//! - `http`: the shared transport: retries, timeouts, cut streams, error mapping.
//! - `retry`: the backoff policy (pure).
//! - `replay` (feature `http`): recorded answers from a JSONL file, for offline demos and tests.
//! - `settings`: which provider, URL, model and key to use (flags > env > agent > config > defaults).

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

pub(crate) mod adapt;
#[cfg(feature = "http")]
pub(crate) mod anthropic;
pub(crate) mod call_hold;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "http")]
pub(crate) mod models;
#[cfg(feature = "http")]
pub(crate) mod openai;
#[cfg(feature = "http")]
pub(crate) mod probe;
#[cfg(feature = "http")]
pub(crate) mod replay;
pub(crate) mod retry;
#[cfg(feature = "http")]
pub(crate) mod settings;
pub(crate) mod sse;
pub(crate) mod text_call;

pub use adapt::Adaptation;
pub use retry::{GiveUp, RetryPolicy};
#[cfg(feature = "http")]
pub(crate) use settings::{AgentModel, Config};
#[cfg(feature = "http")]
pub use settings::{ClientOptions, ConfigError, ProviderKind, Settings, SettingsError};

/// One message of a conversation, in the order the model sees them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", content = "content", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Message {
    /// Instructions before the conversation.
    System(String),
    /// What the user wrote.
    User(String),
    /// What the model answered.
    Assistant {
        /// The answer's text, as the model sent it.
        content: String,
        /// Native tool calls in the answer.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of a native tool call (`--tools` mode). `is_error`: the call failed or was
    /// refused (Anthropic's `tool_result` carries it as `is_error: true`; for OpenAI-compatible
    /// servers, which have no such field, the content itself says `"is_error": true`).
    Tool {
        /// The id of the call this answers.
        call_id: String,
        /// The tool's result (JSON text).
        content: String,
        /// The call failed or was refused.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Message::System(text.into())
    }
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User(text.into())
    }
    /// An assistant message without tool calls.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            content: text.into(),
            tool_calls: Vec::new(),
        }
    }
    /// A tool result for call `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::tool_result(call_id, content, false)
    }
    /// A tool result that may be an error (see [`Message::Tool`]).
    pub fn tool_result(
        call_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            content: content.into(),
            is_error,
        }
    }
}

/// A function the model may call (native tool calling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Function name, `SKILL__STEM` for skill scripts.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// A complete tool call, assembled from the streamed pieces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call.
    pub id: String,
    /// The function called.
    pub name: String,
    /// The arguments as JSON text, exactly as the model wrote them (may be invalid JSON).
    pub arguments: String,
}

/// What to ask the model.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ChatRequest {
    /// Model name; empty means the provider's configured model.
    pub model: String,
    /// The conversation, system prompt first.
    pub messages: Vec<Message>,
    /// Extra request fields (temperature, top_p, max_tokens, ...), from the agent's `[params]`.
    pub params: Map<String, Value>,
    /// Native tools offered (empty: none).
    pub tools: Vec<ToolDef>,
    /// false (`--no-stream`): one non-streaming request, yielding the same events.
    pub stream: bool,
    /// Names in `params` the user set explicitly (on the command line): a server's refusal of
    /// one of them ends the turn instead of being worked around (see [`Adaptation`]).
    pub explicit: Vec<String>,
}

impl ChatRequest {
    /// A streaming request for `model` with `messages`, no params or tools.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatRequest {
            model: model.into(),
            messages,
            stream: true,
            ..ChatRequest::default()
        }
    }
}

/// One step of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A piece of the answer's text, in order. Never empty.
    Text(String),
    /// A tool call, emitted once it is complete.
    ToolCall(ToolCall),
    /// Token counts, when the server reports them (usually just before `Finished`).
    Usage {
        /// Tokens in the request.
        prompt_tokens: u64,
        /// Tokens in the answer.
        completion_tokens: u64,
    },
    /// The request failed with a retryable status and will be sent again after `delay`.
    /// Nothing of the answer has arrived yet; a display may say "retrying in …".
    Retrying {
        /// This is retry number `attempt`…
        attempt: u32,
        /// …of at most this many.
        max_attempts: u32,
        /// Waiting this long first.
        delay: Duration,
        /// What went wrong.
        reason: String,
    },
    /// The server refused a parameter skillpipe added on its own (or an agent's default): the
    /// request was sent again without it, and so are the rest of the session's.
    Adapted(Adaptation),
    /// The answer is complete. Always the last event of a successful stream (the chat loop
    /// says an answer may be cut when a stream ends without it, or without a reason).
    Finished {
        /// Why, as the provider said (`stop`, `length`, …).
        reason: Option<String>,
    },
}

/// Why a model request failed. Messages say what was wrong and what to check.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    #[error(
        "cannot reach the model endpoint {url}: {reason} — check that the server is running and the base URL is right"
    )]
    /// Could not connect.
    Unreachable {
        /// The URL tried.
        url: String,
        /// Why.
        reason: String,
    },
    /// 401 or 403.
    #[error("authentication failed ({status}) — {}{}", auth_hint(.var, *.key_sent), detail(.message))]
    Auth {
        /// The HTTP status.
        status: u16,
        /// The environment variable that held (or should hold) the key.
        var: Option<String>,
        /// Whether a key was sent at all.
        key_sent: bool,
        /// The server's message.
        message: String,
    },
    #[error("{}", self.worded(&ModelWords::LIBRARY))]
    /// 404 for the model.
    ModelNotFound {
        /// The model asked for.
        model: String,
        /// Where.
        base_url: String,
        /// The server's message.
        message: String,
    },
    /// Another HTTP error, after any retries.
    #[error("HTTP {status} from {url}{}{}{}", detail(.message), gave_up_note(.gave_up), missing_v1(*.status, .url))]
    Http {
        /// The HTTP status.
        status: u16,
        /// The URL requested.
        url: String,
        /// The server's message.
        message: String,
        /// Why it was not retried (further), for a retryable status.
        gave_up: Option<GiveUp>,
    },
    /// The endpoint answered with a web page (a web UI's or a proxy's port given by mistake).
    #[error(
        "{url} answered a web page, not the model API ({page}); check the base URL: an OpenAI-compatible server answers at …/v1/chat/completions"
    )]
    WebPage {
        /// The URL requested.
        url: String,
        /// The page's text, on one line and short.
        page: String,
    },
    /// The endpoint reported an error inside the stream.
    #[error("the model endpoint reported an error: {message}")]
    Api {
        /// The endpoint's message.
        message: String,
    },
    #[error("{}", self.worded(&ModelWords::LIBRARY))]
    /// The stream ended early.
    StreamCut {
        /// Bytes received before the cut.
        bytes: u64,
        /// Why.
        reason: String,
    },
    /// A line or event of the event stream over the bound: the stream was not read further.
    #[error(
        "the model endpoint sent an event-stream line or event longer than {} MiB (after {bytes} bytes); the answer was stopped there — check the base URL points at a model API",
        .limit >> 20
    )]
    EventTooLong {
        /// The bound, in bytes.
        limit: usize,
        /// Bytes received in all when it was passed.
        bytes: u64,
    },
    /// No progress within a time limit.
    #[error("timed out {what} after {} s at {url}", .after.as_secs_f64())]
    Timeout {
        /// The URL requested.
        url: String,
        /// What was awaited (connecting, the first byte, …).
        what: String,
        /// The limit.
        after: Duration,
    },
    /// The response could not be decoded.
    #[error("could not decode the model's response: {0}")]
    Decode(String),
    #[error("replay file {}: no recorded answer left (it has {count})", .file.display())]
    /// A replay file has no answer left for this turn.
    ReplayExhausted {
        /// The file.
        file: PathBuf,
        /// How many answers it has.
        count: usize,
    },
    /// A host program's own provider failed in its own way.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

fn auth_hint(var: &Option<String>, key_sent: bool) -> String {
    match (var, key_sent) {
        (Some(v), true) => format!("check ${v}"),
        (Some(v), false) => format!("no API key was sent; set ${v}"),
        (None, true) => "check the API key".to_string(),
        (None, false) => {
            "no API key was sent; set one (api_key_env in the config file)".to_string()
        }
    }
}

fn detail(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// A hint when the path the server did not know lacks `/v1`: most OpenAI-compatible servers
/// (Ollama, llama.cpp, vLLM, LM Studio) serve `…/v1/chat/completions`.
fn missing_v1(status: u16, url: &str) -> String {
    let unknown_path = matches!(status, 404 | 405 | 501);
    let base = ["/chat/completions", "/models"]
        .iter()
        .find_map(|end| url.strip_suffix(end));
    // Any version segment (`/v1`, `/v1beta`, `/api/v2`) means the path was meant as it is.
    let versioned = |b: &str| {
        b.split('/').skip(3).any(|seg| {
            seg.strip_prefix('v')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
    };
    if let Some(base) = base.filter(|b| unknown_path && !versioned(b)) {
        format!(" — is /v1 missing from the base URL? Try {base}/v1")
    } else {
        String::new()
    }
}

fn gave_up_note(gave_up: &Option<GiveUp>) -> String {
    match gave_up.as_ref().map(GiveUp::note) {
        Some(note) if !note.is_empty() => format!(" ({note})"),
        _ => String::new(),
    }
}

/// The events of one answer.
pub type EventStream = BoxStream<'static, Result<StreamEvent, ModelError>>;

/// A model backend. `stream` never blocks: all work happens when the stream is polled.
/// Implement it to drive a [`crate::Session`] with your own model (see the `Session` example
/// and `examples/own_provider.rs`); the bundled ones (`http` feature) are an HTTP endpoint
/// speaking the OpenAI or Anthropic wire format and `replay::ReplayProvider`.
pub trait Provider: Send + Sync {
    /// Starts an answer to `req`; nothing happens until the stream is polled.
    fn stream(&self, req: ChatRequest) -> EventStream;
}

#[cfg(feature = "http")]
/// The JSON body the provider of `kind` sends for `req`, for reports of what a request costs
/// (a replay file sends nothing: it is measured as an OpenAI-compatible body).
pub(crate) fn request_body(kind: ProviderKind, req: &ChatRequest) -> Value {
    match kind {
        ProviderKind::Anthropic => anthropic::request_body(req),
        ProviderKind::OpenAi | ProviderKind::Replay => openai::request_body(req),
    }
}

#[cfg(feature = "http")]
/// `{base_url}/{path}` of the API of `kind`: Anthropic's is under `/v1`, which its base URL
/// may already end in.
pub(crate) fn api_url(kind: ProviderKind, base_url: &str, path: &str) -> String {
    let base = base_url.trim_end_matches('/');
    match kind {
        ProviderKind::Anthropic if !base.ends_with("/v1") => format!("{base}/v1/{path}"),
        _ => format!("{base}/{path}"),
    }
}

#[cfg(feature = "http")]
/// The headers that carry `key` to a server speaking `kind`, and Anthropic's version.
pub(crate) fn auth_headers(kind: ProviderKind, key: Option<&str>) -> reqwest::header::HeaderMap {
    use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
    let mut headers = HeaderMap::new();
    let (name, value) = match kind {
        ProviderKind::Anthropic => {
            let version = HeaderValue::from_static(anthropic::API_VERSION);
            headers.insert("anthropic-version", version);
            (
                HeaderName::from_static("x-api-key"),
                key.map(str::to_string),
            )
        }
        _ => (AUTHORIZATION, key.map(|k| format!("Bearer {k}"))),
    };
    if let Some(v) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
        headers.insert(name, v);
    }
    headers
}

#[cfg(feature = "http")]
/// An HTTP endpoint as a [`Provider`]: its kind says which wire format the answer is read in.
struct HttpProvider(std::sync::Arc<http::Endpoint>);

#[cfg(feature = "http")]
impl Provider for HttpProvider {
    fn stream(&self, req: ChatRequest) -> EventStream {
        let req = self.0.request(req);
        match self.0.kind {
            ProviderKind::Anthropic => http::run::<anthropic::AnthropicDecoder>(req),
            _ => http::run::<openai::OpenAiDecoder>(req),
        }
    }
}

#[cfg(feature = "http")]
/// The provider the settings describe. Fails (a configuration error, exit 2) when a remote
/// endpoint has no API key, or a replay file cannot be read.
pub fn provider_for(settings: &Settings) -> Result<Box<dyn Provider>, SettingsError> {
    match settings.provider {
        ProviderKind::OpenAi | ProviderKind::Anthropic => {
            let endpoint = http::Endpoint::new(settings)?;
            Ok(Box::new(HttpProvider(std::sync::Arc::new(endpoint))))
        }
        ProviderKind::Replay => Ok(Box::new(replay::ReplayProvider::open(
            std::path::Path::new(&settings.model),
        )?)),
    }
}

/// How a front end names the settings a [`ModelError`] points at: the library in its own
/// terms, the `skillpipe` binary by its flags.
pub(crate) struct ModelWords {
    /// The model's name.
    pub model: &'static str,
    /// Fewer skills in the prompt.
    pub fewer_skills: &'static str,
    /// No tool definitions in the request.
    pub no_tools: &'static str,
}

impl ModelWords {
    /// The library's.
    pub(crate) const LIBRARY: ModelWords = ModelWords {
        model: "the model name",
        fewer_skills: "fewer skills",
        no_tools: "no tool definitions",
    };
}

impl ModelError {
    /// The message, with the settings it points at named by `words` (the other variants name
    /// none: their `Display`).
    pub(crate) fn worded(&self, words: &ModelWords) -> String {
        match self {
            ModelError::ModelNotFound {
                model,
                base_url,
                message,
            } => format!(
                "model `{}` not found at {base_url} (404){} — check {} and the base URL{}",
                crate::command::escape_controls(model),
                detail(message),
                words.model,
                missing_v1(404, &format!("{}/models", base_url.trim_end_matches('/')))
                    .replace(" — is", "; is")
            ),
            // Nothing at all before the cut is what some servers do with a request longer than
            // their context, so that is said.
            ModelError::StreamCut { bytes: 0, reason } => format!(
                "the server closed the stream before sending anything ({reason}); a request \
                 longer than its context does this on some servers: {}, {}, or a larger context \
                 may help",
                words.fewer_skills, words.no_tools
            ),
            ModelError::StreamCut { bytes, reason } => format!(
                "the stream was cut after {bytes} bytes ({reason}); the answer is incomplete"
            ),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "http")]
    #[test]
    fn anthropic_urls_accept_a_base_with_or_without_v1() {
        use ProviderKind::{Anthropic, OpenAi};
        let (hosted, local) = ("https://api.anthropic.com", "http://127.0.0.1:9");
        let url = |kind, base: &str, path| api_url(kind, base, path);
        assert_eq!(
            url(Anthropic, hosted, "messages"),
            format!("{hosted}/v1/messages")
        );
        assert_eq!(
            url(Anthropic, hosted, "models"),
            format!("{hosted}/v1/models")
        );
        let base = format!("{local}/v1/");
        assert_eq!(
            url(Anthropic, &base, "messages"),
            format!("{local}/v1/messages")
        );
        assert_eq!(url(OpenAi, &base, "models"), format!("{local}/v1/models"));
    }

    #[test]
    fn a_missing_v1_is_suggested_only_where_it_may_be() {
        assert_eq!(
            missing_v1(501, "http://127.0.0.1:8080/chat/completions"),
            " — is /v1 missing from the base URL? Try http://127.0.0.1:8080/v1"
        );
        assert!(missing_v1(404, "http://h:1/models").contains("Try http://h:1/v1"));
        for (status, url) in [
            (404, "http://h/v1/chat/completions"),
            (404, "http://h/api/v1beta/models"),
            (500, "http://h/chat/completions"),
            (404, "http://h/v1/messages"),
        ] {
            assert_eq!(missing_v1(status, url), "", "{status} {url}");
        }
    }

    #[test]
    fn messages_round_trip_through_json() {
        let msgs = vec![
            Message::system("s"),
            Message::user("u"),
            Message::Assistant {
                content: "a".into(),
                tool_calls: vec![ToolCall {
                    id: "1".into(),
                    name: "f".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::tool("1", "r"),
            Message::tool_result("2", "{\"is_error\":true}", true),
        ];
        let text = serde_json::to_string(&msgs).unwrap();
        let back: Vec<Message> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, msgs);
    }
}
