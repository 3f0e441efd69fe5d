//! A scripted model server for tests: OpenAI chat completions (`…/chat/completions`) and the
//! Anthropic Messages API (`…/messages`), streaming or not, on 127.0.0.1 with a free port.
//!
//! It runs on its own thread with its own tokio runtime, so it serves sync tests (assert_cmd
//! driving the binary) and async tests alike. Each request pops the next scripted [`Reply`]; every
//! request is recorded so tests can check what the client sent.
//!
//! ```ignore
//! let server = Server::start([
//!     Reply::text(["Hello", " world"]).usage(10, 2),
//!     Reply::status(429, "slow down").header("Retry-After", "0"),
//!     Reply::chunked("the answer, in 4-byte pieces", 4),
//! ]);
//! // point the client at server.url ("http://127.0.0.1:PORT/v1")
//! assert_eq!(server.requests()[0]["model"], "test-model");
//! ```

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A streamed tool call: arguments are sent as these pieces, one delta each.
#[derive(Debug, Clone)]
pub struct ScriptedCall {
    pub id: String,
    pub name: String,
    pub argument_pieces: Vec<String>,
}

/// A successful answer: text pieces (one SSE event each), then tool calls.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub chunks: Vec<String>,
    pub tool_calls: Vec<ScriptedCall>,
    /// (prompt_tokens, completion_tokens), sent after the finish when set.
    pub usage: Option<(u64, u64)>,
    /// Default: "stop" ("end_turn"), or "tool_calls" ("tool_use") when there are tool calls.
    pub finish_reason: Option<String>,
    /// Re-cut the SSE bytes into chunks of this many bytes (events then straddle chunks).
    pub split_every: Option<usize>,
    /// Leave out the finishing chunk (OpenAI dialect: `[DONE]` follows the last piece at once),
    /// as a llama.cpp-based server does to a request it is too busy to answer.
    pub no_finish: bool,
    /// Wait this long before each SSE chunk after the first (text arriving while a prompt is up).
    pub gap: Option<std::time::Duration>,
    /// After this many text pieces, wait until the test releases the rest (OpenAI dialect).
    pub hold: Option<(usize, Arc<tokio::sync::Notify>)>,
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    Answer(Answer),
    /// An error status with this body and extra headers (e.g. Retry-After).
    Status {
        code: u16,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// Send the first `pieces` content pieces (text chunks and tool-argument pieces), then drop
    /// the connection without finishing.
    CutAfter {
        answer: Answer,
        pieces: usize,
    },
    /// Send the first `pieces` content pieces, then keep the connection open and silent.
    StallAfter {
        answer: Answer,
        pieces: usize,
    },
}

impl Reply {
    /// An answer streamed as these text pieces.
    pub fn text<I, S>(chunks: I) -> Reply
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Reply::Answer(Answer {
            chunks: chunks.into_iter().map(Into::into).collect(),
            ..Answer::default()
        })
    }

    /// What a busy llama.cpp-based server sends: the role chunk, then `[DONE]`, nothing else.
    pub fn busy() -> Reply {
        Reply::Answer(Answer {
            no_finish: true,
            ..Answer::default()
        })
    }

    /// An answer streamed in pieces of about `size` bytes (never splitting a character).
    pub fn chunked(text: &str, size: usize) -> Reply {
        let mut chunks = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + size.max(1)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            chunks.push(text[start..end].to_string());
            start = end;
        }
        Reply::text(chunks)
    }

    /// An error status with a body.
    pub fn status(code: u16, body: impl Into<String>) -> Reply {
        Reply::Status {
            code,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// Add a header to a `Status` reply.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        match &mut self {
            Reply::Status { headers, .. } => headers.push((name.into(), value.into())),
            _ => panic!("header() applies to Reply::status"),
        }
        self
    }

    fn answer_mut(&mut self) -> &mut Answer {
        match self {
            Reply::Answer(a)
            | Reply::CutAfter { answer: a, .. }
            | Reply::StallAfter { answer: a, .. } => a,
            Reply::Status { .. } => panic!("not an answer"),
        }
    }

    /// Add a tool call whose arguments stream as `argument_pieces`.
    pub fn tool_call<I, S>(mut self, id: &str, name: &str, argument_pieces: I) -> Reply
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.answer_mut().tool_calls.push(ScriptedCall {
            id: id.into(),
            name: name.into(),
            argument_pieces: argument_pieces.into_iter().map(Into::into).collect(),
        });
        self
    }

    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Reply {
        self.answer_mut().usage = Some((prompt_tokens, completion_tokens));
        self
    }

    pub fn finish_reason(mut self, reason: &str) -> Reply {
        self.answer_mut().finish_reason = Some(reason.into());
        self
    }

    /// Leave out the finishing chunk: `[DONE]` follows the last piece.
    pub fn no_finish(mut self) -> Reply {
        self.answer_mut().no_finish = true;
        self
    }

    /// Pause this long between SSE chunks.
    pub fn gap(mut self, pause: std::time::Duration) -> Reply {
        self.answer_mut().gap = Some(pause);
        self
    }

    pub fn split_every(mut self, bytes: usize) -> Reply {
        self.answer_mut().split_every = Some(bytes.max(1));
        self
    }

    /// Drop the connection after `pieces` content pieces.
    pub fn cut_after(self, pieces: usize) -> Reply {
        match self {
            Reply::Answer(answer) => Reply::CutAfter { answer, pieces },
            _ => panic!("cut_after() applies to an answer"),
        }
    }

    /// Send `pieces` text pieces, then the rest once `release` is notified (OpenAI dialect):
    /// the test acts while the answer is half streamed.
    pub fn hold_after(mut self, pieces: usize, release: Arc<tokio::sync::Notify>) -> Reply {
        self.answer_mut().hold = Some((pieces, release));
        self
    }

    /// Go silent (connection open) after `pieces` content pieces.
    pub fn stall_after(self, pieces: usize) -> Reply {
        match self {
            Reply::Answer(answer) => Reply::StallAfter { answer, pieces },
            _ => panic!("stall_after() applies to an answer"),
        }
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    /// Lower-cased header names.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Value::Null` if it was not JSON).
    pub body: Value,
}

struct ServerState {
    script: Mutex<VecDeque<Reply>>,
    recorded: Mutex<Vec<Recorded>>,
    /// Response bodies dropped before they were sent completely (the client went away).
    dropped: AtomicUsize,
    /// What `GET …/models` lists; `None` answers 404 as a server without a list does.
    models: Mutex<Option<Vec<String>>>,
    /// A status `/models` answers with instead of the list (a server that wants a key).
    models_status: Mutex<Option<u16>>,
}

/// A running server; stopped when dropped.
pub struct Server {
    /// OpenAI-style base URL: `http://127.0.0.1:PORT/v1` (also works for Anthropic).
    pub url: String,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Server {
    /// Start serving the script on a free port.
    pub fn start(script: impl IntoIterator<Item = Reply>) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(ServerState {
            script: Mutex::new(script.into_iter().collect()),
            recorded: Mutex::new(Vec::new()),
            dropped: AtomicUsize::new(0),
            models: Mutex::new(None),
            models_status: Mutex::new(None),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let app_state = state.clone();
        std::thread::Builder::new()
            .name(format!("test-model-server-{}", addr.port()))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("server runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    let app = axum::Router::new().fallback(handle).with_state(app_state);
                    tokio::select! {
                        _ = axum::serve(listener, app).into_future() => {}
                        _ = rx => {}
                    }
                });
                rt.shutdown_background();
            })
            .expect("spawn server thread");
        Server {
            url: format!("http://{addr}/v1"),
            base: format!("http://{addr}"),
            state,
            shutdown: Some(tx),
        }
    }

    /// Serve `GET …/models` with these ids (OpenAI list format).
    pub fn set_models(&self, ids: &[&str]) {
        *self.state.models.lock().unwrap() = Some(ids.iter().map(|s| s.to_string()).collect());
    }

    /// Answer `/models` with this status and an error body (e.g. 401 for a server that
    /// wants an API key).
    #[allow(dead_code)]
    pub fn set_models_status(&self, code: u16) {
        *self.state.models_status.lock().unwrap() = Some(code);
    }

    /// Append replies to the script.
    pub fn push(&self, reply: Reply) {
        self.state.script.lock().unwrap().push_back(reply);
    }

    /// The JSON bodies of all requests so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.recorded().into_iter().map(|r| r.body).collect()
    }

    /// All requests so far, with path and headers.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.state.recorded.lock().unwrap().clone()
    }

    /// How many scripted replies are still unused.
    pub fn remaining(&self) -> usize {
        self.state.script.lock().unwrap().len()
    }

    /// How many streamed responses the client abandoned before their end.
    pub fn dropped_streams(&self) -> usize {
        self.state.dropped.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn handle(State(state): State<Arc<ServerState>>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let bytes = axum::body::to_bytes(req.into_body(), 64 << 20)
        .await
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let n = {
        let mut rec = state.recorded.lock().unwrap();
        rec.push(Recorded {
            path: path.clone(),
            headers,
            body,
        });
        rec.len()
    };
    if path.ends_with("/models") {
        if let Some(code) = *state.models_status.lock().unwrap() {
            return plain(code, "Incorrect API key provided".to_string());
        }
        return match state.models.lock().unwrap().clone() {
            Some(ids) => {
                let data: Vec<Value> = ids
                    .iter()
                    .map(|id| json!({"id": id, "object": "model"}))
                    .collect();
                json_response(json!({"object": "list", "data": data}))
            }
            None => plain(404, format!("test server: no route for {path}")),
        };
    }
    let dialect = if path.ends_with("/chat/completions") {
        Dialect::OpenAi
    } else if path.ends_with("/messages") {
        Dialect::Anthropic
    } else {
        return plain(404, format!("test server: no route for {path}"));
    };
    let Some(reply) = state.script.lock().unwrap().pop_front() else {
        return plain(
            400,
            format!("test server: no scripted reply left for request {n}"),
        );
    };
    match reply {
        Reply::Status {
            code,
            body,
            headers,
        } => {
            let mut resp = plain(code, body);
            for (k, v) in headers {
                resp.headers_mut().insert(
                    HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    HeaderValue::from_str(&v).unwrap(),
                );
            }
            resp
        }
        Reply::Answer(a) if !stream => json_response(whole(dialect, &a)),
        Reply::Answer(a) => {
            let gap = a.gap;
            // The role chunk comes before the first text piece.
            let hold = a.hold.clone().map(|(pieces, n)| (pieces + 1, n));
            sse_response(
                state,
                events(dialect, &a, None),
                a.split_every,
                End::Close,
                gap,
                hold,
            )
        }
        Reply::CutAfter { answer, pieces } => sse_response(
            state,
            events(dialect, &answer, Some(pieces)),
            answer.split_every,
            End::Cut,
            answer.gap,
            None,
        ),
        Reply::StallAfter { answer, pieces } => sse_response(
            state,
            events(dialect, &answer, Some(pieces)),
            answer.split_every,
            End::Stall,
            answer.gap,
            None,
        ),
    }
}

#[derive(Clone, Copy)]
enum Dialect {
    OpenAi,
    Anthropic,
}

enum End {
    Close,
    Cut,
    Stall,
}

fn plain(code: u16, body: String) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap();
    resp
}

fn json_response(v: Value) -> Response {
    let mut resp = Response::new(Body::from(v.to_string()));
    resp.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    resp
}

/// Counts a response body as dropped unless it was sent to the end.
struct DropGuard {
    state: Arc<ServerState>,
    complete: bool,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.complete {
            self.state.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn sse_response(
    state: Arc<ServerState>,
    events: Vec<String>,
    split_every: Option<usize>,
    end: End,
    gap: Option<std::time::Duration>,
    hold: Option<(usize, Arc<tokio::sync::Notify>)>,
) -> Response {
    let chunks: Vec<Bytes> = match split_every {
        None => events.into_iter().map(Bytes::from).collect(),
        Some(n) => events
            .concat()
            .into_bytes()
            .chunks(n)
            .map(Bytes::copy_from_slice)
            .collect(),
    };
    let mut guard = DropGuard {
        state,
        complete: false,
    };
    let body = async_stream::stream! {
        for (n, c) in chunks.into_iter().enumerate() {
            if let Some(pause) = gap.filter(|_| n > 0) {
                tokio::time::sleep(pause).await;
            }
            if let Some((_, release)) = hold.as_ref().filter(|(at, _)| *at == n) {
                release.notified().await;
            }
            yield Ok::<Bytes, std::io::Error>(c);
        }
        match end {
            End::Close => guard.complete = true,
            End::Cut => {
                guard.complete = true;
                // Let the connection flush what was sent before it is aborted.
                tokio::task::yield_now().await;
                yield Err(std::io::Error::other("scripted cut"));
            }
            End::Stall => futures::future::pending::<()>().await,
        }
        drop(guard);
    };
    let mut resp = Response::new(Body::from_stream(body.boxed()));
    resp.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/event-stream"),
    );
    resp
}

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn named_sse(data: &Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn finish_reason(dialect: Dialect, a: &Answer) -> String {
    a.finish_reason.clone().unwrap_or_else(|| {
        match (dialect, a.tool_calls.is_empty()) {
            (Dialect::OpenAi, true) => "stop",
            (Dialect::OpenAi, false) => "tool_calls",
            (Dialect::Anthropic, true) => "end_turn",
            (Dialect::Anthropic, false) => "tool_use",
        }
        .to_string()
    })
}

/// The SSE events of an answer; with `cut`, only the preamble and the first `cut` pieces.
fn events(dialect: Dialect, a: &Answer, cut: Option<usize>) -> Vec<String> {
    let mut preamble = Vec::new();
    let mut pieces = Vec::new();
    let mut tail = Vec::new();
    let reason = finish_reason(dialect, a);
    match dialect {
        Dialect::OpenAi => {
            let chunk = |delta: Value, finish: Value| {
                sse(
                    &json!({"id": "chatcmpl-test", "object": "chat.completion.chunk",
                    "model": "test-model",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                )
            };
            preamble.push(chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            ));
            for c in &a.chunks {
                pieces.push(chunk(json!({"content": c}), Value::Null));
            }
            for (i, call) in a.tool_calls.iter().enumerate() {
                pieces.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for p in &call.argument_pieces {
                    pieces.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                        Value::Null,
                    ));
                }
            }
            if !a.no_finish {
                tail.push(chunk(json!({}), json!(reason)));
            }
            if let Some((p, c)) = a.usage {
                tail.push(sse(&json!({"id": "chatcmpl-test", "choices": [],
                    "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}})));
            }
            tail.push("data: [DONE]\n\n".to_string());
        }
        Dialect::Anthropic => {
            let (p, c) = a.usage.unwrap_or((0, 0));
            preamble.push(named_sse(&json!({"type": "message_start", "message": {
                "id": "msg_test", "type": "message", "role": "assistant", "content": [],
                "model": "test-model", "usage": {"input_tokens": p, "output_tokens": 1}}})));
            preamble.push(named_sse(
                &json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ));
            for t in &a.chunks {
                pieces.push(named_sse(
                    &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": t}}),
                ));
            }
            pieces.push(named_sse(
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            for (i, call) in a.tool_calls.iter().enumerate() {
                let index = i + 1;
                pieces.push(named_sse(&json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}})));
                for piece in &call.argument_pieces {
                    pieces.push(named_sse(
                        &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    ));
                }
                pieces.push(named_sse(
                    &json!({"type": "content_block_stop", "index": index}),
                ));
            }
            tail.push(named_sse(&json!({"type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": null},
                "usage": {"output_tokens": c}})));
            tail.push(named_sse(&json!({"type": "message_stop"})));
        }
    }
    match cut {
        Some(n) => {
            pieces.truncate(n);
            preamble.extend(pieces);
        }
        None => {
            preamble.extend(pieces);
            preamble.extend(tail);
        }
    }
    preamble
}

/// The non-streaming response body of an answer.
fn whole(dialect: Dialect, a: &Answer) -> Value {
    let text = a.chunks.concat();
    let reason = finish_reason(dialect, a);
    let (p, c) = a.usage.unwrap_or((0, 0));
    match dialect {
        Dialect::OpenAi => {
            let mut message = json!({"role": "assistant", "content": text});
            if !a.tool_calls.is_empty() {
                message["tool_calls"] = a
                    .tool_calls
                    .iter()
                    .map(|t| {
                        json!({"id": t.id, "type": "function",
                        "function": {"name": t.name, "arguments": t.argument_pieces.concat()}})
                    })
                    .collect();
            }
            json!({"id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
                "choices": [{"index": 0, "message": message, "finish_reason": reason}],
                "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}})
        }
        Dialect::Anthropic => {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for t in &a.tool_calls {
                let input: Value =
                    serde_json::from_str(&t.argument_pieces.concat()).unwrap_or(json!({}));
                content
                    .push(json!({"type": "tool_use", "id": t.id, "name": t.name, "input": input}));
            }
            json!({"id": "msg_test", "type": "message", "role": "assistant", "model": "test-model",
                "content": content, "stop_reason": reason,
                "usage": {"input_tokens": p, "output_tokens": c}})
        }
    }
}
