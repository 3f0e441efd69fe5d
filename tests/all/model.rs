//! The model clients against a real (in-test) HTTP server: streaming, tool calls, retries,
//! errors, cut streams, the Anthropic dialect and the replay provider.

use crate::common;

use common::{Reply, Server, TestHome};
use futures::StreamExt;
use skillpipe::model::{
    ChatRequest, GiveUp, Message, ModelError, Provider, ProviderKind, Settings, SettingsError,
    StreamEvent, ToolCall, ToolDef, provider_for,
};
use std::time::Duration;

fn settings(kind: ProviderKind, url: &str) -> Settings {
    let mut s = Settings::new(kind, url, "test-model");
    s.options.retry.base_delay = Duration::from_millis(5);
    s.options.connect_timeout = Duration::from_secs(2);
    s.options.idle_timeout = Duration::from_secs(5);
    s
}

fn openai(server: &Server) -> Box<dyn Provider> {
    provider_for(&settings(ProviderKind::OpenAi, &server.url)).unwrap()
}

fn request(prompt: &str) -> ChatRequest {
    ChatRequest::new("", vec![Message::system("be brief"), Message::user(prompt)])
}

/// All events up to the end or the first error.
async fn collect(p: &dyn Provider, req: ChatRequest) -> (Vec<StreamEvent>, Option<ModelError>) {
    let mut stream = p.stream(req);
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(ev) => events.push(ev),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

fn text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_is_streamed_piece_by_piece() {
    let server = Server::start([Reply::text(["Hel", "lo, ", "wörld"])]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::Text("Hel".into()),
            StreamEvent::Text("lo, ".into()),
            StreamEvent::Text("wörld".into()),
            StreamEvent::Finished {
                reason: Some("stop".into())
            },
        ]
    );
    let rec = server.recorded();
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0].path, "/v1/chat/completions");
    assert!(!rec[0].headers.contains_key("authorization"));
    let body = &rec[0].body;
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["content"], "hi");
}

#[tokio::test]
async fn events_split_across_network_chunks_are_reassembled() {
    let reply = Reply::text(["naïve ", "café ", "😀 done"]).split_every(3);
    let server = Server::start([reply]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&events), "naïve café 😀 done");
}

#[tokio::test]
async fn usage_is_reported_before_finished() {
    let server = Server::start([Reply::text(["ok"]).usage(12, 3)]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    let n = events.len();
    assert_eq!(
        events[n - 2],
        StreamEvent::Usage {
            prompt_tokens: 12,
            completion_tokens: 3
        }
    );
    assert!(matches!(events[n - 1], StreamEvent::Finished { .. }));
}

#[tokio::test]
async fn tool_call_deltas_are_assembled() {
    let server = Server::start([Reply::text(["Let me look."])
        .tool_call("call_1", "dict__lookup", ["{\"args\"", ":[\"wo", "rd\"]}"])
        .tool_call("call_2", "say__speak", ["{}"])]);
    let mut req = request("hi");
    req.tools.push(ToolDef {
        name: "dict__lookup".into(),
        description: "look a word up".into(),
        parameters: serde_json::json!({"type": "object"}),
    });
    let (events, err) = collect(&*openai(&server), req).await;
    assert!(err.is_none(), "{err:?}");
    let calls: Vec<&ToolCall> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "call_1");
    assert_eq!(calls[0].name, "dict__lookup");
    assert_eq!(calls[0].arguments, "{\"args\":[\"word\"]}");
    assert_eq!(calls[1].name, "say__speak");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished {
            reason: Some("tool_calls".into())
        })
    );
    assert_eq!(
        server.requests()[0]["tools"][0]["function"]["name"],
        "dict__lookup"
    );
}

#[tokio::test]
async fn tool_results_go_back_as_tool_messages() {
    let server = Server::start([Reply::text(["done"])]);
    let req = ChatRequest::new(
        "",
        vec![
            Message::user("hi"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "f".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::tool("call_1", "42"),
        ],
    );
    let (_, err) = collect(&*openai(&server), req).await;
    assert!(err.is_none(), "{err:?}");
    let body = &server.requests()[0];
    assert_eq!(body["messages"][1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(body["messages"][2]["role"], "tool");
    assert_eq!(body["messages"][2]["tool_call_id"], "call_1");
    assert_eq!(body["messages"][2]["content"], "42");
}

#[tokio::test]
async fn unauthorized_names_the_key_variable() {
    let server = Server::start([Reply::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    )]);
    let mut s = settings(ProviderKind::OpenAi, &server.url);
    s.api_key = Some("sk-wrong".into());
    s.api_key_var = Some("OPENAI_API_KEY".into());
    let p = provider_for(&s).unwrap();
    let (events, err) = collect(&*p, request("hi")).await;
    assert!(events.is_empty());
    let err = err.expect("an error");
    assert!(matches!(err, ModelError::Auth { status: 401, .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with("authentication failed (401) — check $OPENAI_API_KEY"),
        "{msg}"
    );
    assert!(msg.contains("Incorrect API key provided"), "{msg}");
    assert_eq!(
        server.recorded()[0].headers["authorization"],
        "Bearer sk-wrong"
    );
    assert_eq!(server.recorded().len(), 1, "401 is not retried");
}

#[tokio::test]
async fn rate_limit_then_success() {
    let server = Server::start([
        Reply::status(429, "slow down").header("Retry-After", "0"),
        Reply::text(["fine"]),
    ]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert!(matches!(
        &events[0],
        StreamEvent::Retrying { attempt: 1, max_attempts: 3, delay, reason }
            if delay.is_zero() && reason == "HTTP 429"
    ));
    assert_eq!(text(&events), "fine");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_answer_with_nothing_in_it_is_asked_for_again() {
    // A busy llama.cpp-based server ends a second request at once: role chunk, `[DONE]`.
    let server = Server::start([Reply::busy(), Reply::text(["fine"])]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert!(
        matches!(&events[0], StreamEvent::Retrying { attempt: 1, reason, .. }
            if reason.contains("nothing in it")),
        "{events:?}"
    );
    assert_eq!(text(&events), "fine");
    assert_eq!(server.requests().len(), 2);
    // Once the retries are used up, the empty answer is passed on as it came.
    let server = Server::start([Reply::busy(), Reply::busy(), Reply::busy()]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(server.requests().len(), 3);
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Finished { reason: None })
    ));
    // The control: an empty answer the server finished ("stop") is the model's, not retried.
    let server = Server::start([Reply::text([""]), Reply::text(["never sent"])]);
    let (events, _) = collect(&*openai(&server), request("hi")).await;
    assert_eq!(server.requests().len(), 1, "{events:?}");
    assert_eq!(text(&events), "");
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    let server = Server::start([
        Reply::status(500, "boom 1"),
        Reply::status(502, "boom 2"),
        Reply::status(503, r#"{"error":{"message":"overloaded"}}"#),
        Reply::text(["never sent"]),
    ]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    let retries = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Retrying { .. }))
        .count();
    assert_eq!(retries, 2);
    let err = err.expect("an error");
    // Why it stopped is typed, not only worded.
    assert!(
        matches!(
            err,
            ModelError::Http {
                status: 503,
                gave_up: Some(GiveUp::Exhausted { attempts: 3 }),
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.starts_with("HTTP 503 from http://127.0.0.1:"), "{msg}");
    assert!(msg.contains("overloaded"), "{msg}");
    assert!(msg.contains("gave up after 3 attempts"), "{msg}");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn a_long_retry_after_is_not_waited_for() {
    let server = Server::start([Reply::status(429, "quota").header("Retry-After", "3600")]);
    let (_, err) = collect(&*openai(&server), request("hi")).await;
    let err = err.expect("an error");
    assert!(
        matches!(
            err,
            ModelError::Http {
                gave_up: Some(GiveUp::WaitTooLong { asked }),
                ..
            } if asked == Duration::from_secs(3600)
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("asks to wait 3600 s"), "{msg}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_cut_stream_keeps_the_text_and_says_so() {
    let server = Server::start([Reply::text(["The ", "answer ", "is ", "42."]).cut_after(2)]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert_eq!(text(&events), "The answer ");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Finished { .. }))
    );
    let err = err.expect("an error");
    assert!(matches!(err, ModelError::StreamCut { bytes, .. } if bytes > 0));
    assert!(
        err.to_string().starts_with("the stream was cut after "),
        "{err}"
    );
    // Nothing at all: what some servers do with a request longer than their context.
    let server = Server::start([Reply::status(200, "")]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(text(&events).is_empty());
    let err = err.expect("an error");
    assert!(
        matches!(err, ModelError::StreamCut { bytes: 0, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("a request longer than its context does this on some servers"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_model_is_named() {
    let server = Server::start([Reply::status(
        404,
        r#"{"error":{"message":"The model `nope` does not exist"}}"#,
    )]);
    let mut req = request("hi");
    req.model = "nope".into();
    let (_, err) = collect(&*openai(&server), req).await;
    let err = err.expect("an error");
    let msg = err.to_string();
    assert!(matches!(err, ModelError::ModelNotFound { .. }));
    assert!(
        msg.starts_with("model `nope` not found at http://127.0.0.1:"),
        "{msg}"
    );
    assert!(msg.contains("/v1 (404)"), "{msg}");
}

#[tokio::test]
async fn unreachable_endpoint_is_named() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }; // closed again: nothing listens there now
    let url = format!("http://127.0.0.1:{port}/v1");
    let p = provider_for(&settings(ProviderKind::OpenAi, &url)).unwrap();
    let (_, err) = collect(&*p, request("hi")).await;
    let err = err.expect("an error");
    let msg = err.to_string();
    assert!(matches!(err, ModelError::Unreachable { .. }), "{msg}");
    assert!(msg.contains(&format!("{url}/chat/completions")), "{msg}");
    assert!(msg.to_lowercase().contains("refused"), "{msg}");
    assert!(msg.contains("check that the server is running"), "{msg}");
}

#[tokio::test]
async fn tls_works_in_principle() {
    // An https URL builds a client (the rustls crypto provider is installed), and talking TLS to a
    // plain-HTTP server fails with an error, not a panic.
    let server = Server::start([]);
    let url = server.url.replace("http://", "https://");
    let p = provider_for(&settings(ProviderKind::OpenAi, &url)).unwrap();
    let (_, err) = collect(&*p, request("hi")).await;
    assert!(
        matches!(err, Some(ModelError::Unreachable { .. })),
        "{err:?}"
    );
    let mut remote = settings(ProviderKind::OpenAi, "https://api.openai.com/v1");
    remote.api_key = Some("sk-test".into());
    assert!(provider_for(&remote).is_ok());
}

#[test]
fn remote_endpoint_without_key_is_a_configuration_error() {
    let mut s = settings(ProviderKind::OpenAi, "https://api.openai.com/v1");
    s.api_key_var = Some("OPENAI_API_KEY".into());
    let err = provider_for(&s).err().expect("an error");
    assert!(matches!(err, SettingsError::MissingKey { .. }));
    assert!(err.to_string().contains("$OPENAI_API_KEY"), "{err}");
}

#[tokio::test]
async fn idle_timeout_stops_a_silent_stream() {
    let server = Server::start([Reply::text(["partial", " more"]).stall_after(1)]);
    let mut s = settings(ProviderKind::OpenAi, &server.url);
    s.options.idle_timeout = Duration::from_millis(300);
    let p = provider_for(&s).unwrap();
    let (events, err) = collect(&*p, request("hi")).await;
    assert_eq!(text(&events), "partial");
    let msg = err.expect("an error").to_string();
    assert!(
        msg.starts_with("timed out waiting for the next chunk"),
        "{msg}"
    );
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let server = Server::start([Reply::text(["first", "second"]).stall_after(1)]);
    let p = openai(&server);
    let mut stream = p.stream(request("hi"));
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        StreamEvent::Text("first".into())
    );
    drop(stream);
    // The server notices the closed connection and drops its response body.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while server.dropped_streams() == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.dropped_streams(), 1);
}

#[tokio::test]
async fn no_stream_yields_the_same_events() {
    let server = Server::start([Reply::text(["Hel", "lo"])
        .tool_call("c1", "f", ["{\"a\":", "1}"])
        .usage(4, 2)]);
    let mut req = request("hi");
    req.stream = false;
    let (events, err) = collect(&*openai(&server), req).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::Text("Hello".into()),
            StreamEvent::ToolCall(ToolCall {
                id: "c1".into(),
                name: "f".into(),
                arguments: "{\"a\":1}".into()
            }),
            StreamEvent::Usage {
                prompt_tokens: 4,
                completion_tokens: 2
            },
            StreamEvent::Finished {
                reason: Some("tool_calls".into())
            },
        ]
    );
    let body = &server.requests()[0];
    assert_eq!(body["stream"], false);
    assert!(body.get("stream_options").is_none());
}

#[tokio::test]
async fn params_are_sent() {
    let server = Server::start([Reply::text(["x"])]);
    let mut req = request("hi");
    req.params
        .insert("temperature".into(), serde_json::json!(0.3));
    let (_, err) = collect(&*openai(&server), req).await;
    assert!(err.is_none());
    assert_eq!(server.requests()[0]["temperature"], 0.3);
}

#[tokio::test]
async fn anthropic_stream() {
    let server = Server::start([Reply::text(["Bonjour", " à tous"])
        .tool_call("toolu_1", "say__speak", ["{\"args\":", "[\"salut\"]}"])
        .usage(20, 9)]);
    let mut s = settings(ProviderKind::Anthropic, &server.base);
    s.api_key = Some("ak-test".into());
    s.api_key_var = Some("ANTHROPIC_API_KEY".into());
    let p = provider_for(&s).unwrap();
    let req = ChatRequest::new(
        "claude-test",
        vec![Message::system("be brief"), Message::user("hi")],
    );
    let (events, err) = collect(&*p, req).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::Text("Bonjour".into()),
            StreamEvent::Text(" à tous".into()),
            StreamEvent::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "say__speak".into(),
                arguments: "{\"args\":[\"salut\"]}".into()
            }),
            StreamEvent::Usage {
                prompt_tokens: 20,
                completion_tokens: 9
            },
            StreamEvent::Finished {
                reason: Some("tool_use".into())
            },
        ]
    );
    let rec = &server.recorded()[0];
    assert_eq!(rec.path, "/v1/messages");
    assert_eq!(rec.headers["x-api-key"], "ak-test");
    assert_eq!(rec.headers["anthropic-version"], "2023-06-01");
    assert_eq!(rec.body["system"], "be brief");
    assert_eq!(rec.body["model"], "claude-test");
    assert_eq!(rec.body["messages"][0]["role"], "user");
    assert_eq!(rec.body["stream"], true);
}

#[tokio::test]
async fn anthropic_errors_and_cuts() {
    let server = Server::start([
        Reply::status(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        ),
        Reply::text(["a", "b", "c"]).cut_after(2),
    ]);
    let mut s = settings(ProviderKind::Anthropic, &server.url);
    s.api_key = Some("bad".into());
    s.api_key_var = Some("ANTHROPIC_API_KEY".into());
    let p = provider_for(&s).unwrap();
    let (_, err) = collect(&*p, request("hi")).await;
    let msg = err.expect("an error").to_string();
    assert!(msg.contains("check $ANTHROPIC_API_KEY"), "{msg}");
    assert!(msg.contains("invalid x-api-key"), "{msg}");
    let (events, err) = collect(&*p, request("hi")).await;
    assert_eq!(text(&events), "ab");
    assert!(matches!(err, Some(ModelError::StreamCut { .. })), "{err:?}");
}

#[tokio::test]
async fn anthropic_without_streaming() {
    let server = Server::start([Reply::text(["whole ", "answer"]).usage(3, 2)]);
    let p = provider_for(&settings(ProviderKind::Anthropic, &server.url)).unwrap();
    let mut req = request("hi");
    req.stream = false;
    let (events, err) = collect(&*p, req).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(events[0], StreamEvent::Text("whole answer".into()));
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finished {
            reason: Some("end_turn".into())
        })
    );
}

#[tokio::test]
async fn replay_file_answers_in_small_pieces_then_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("answers.jsonl");
    std::fs::write(
        &file,
        concat!(
            "\"Looking it up: !{scripts/lookup.py \\\"word\\\"} — done.\"\n",
            "{\"content\": \"Bye\", \"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"x\": 1}}]}\n",
        ),
    )
    .unwrap();
    let s = Settings::new(ProviderKind::Replay, "", file.to_str().unwrap());
    let p = provider_for(&s).unwrap();

    let (events, err) = collect(&*p, request("one")).await;
    assert!(err.is_none(), "{err:?}");
    let pieces: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Text(t) => Some(t),
            _ => None,
        })
        .collect();
    assert!(pieces.len() > 5);
    assert!(pieces.iter().all(|p| p.len() <= 4 + 3));
    assert!(
        !pieces.iter().any(|p| p.contains("!{scripts")),
        "directive arrives split"
    );
    assert_eq!(
        text(&events),
        "Looking it up: !{scripts/lookup.py \"word\"} — done."
    );

    let (events, err) = collect(&*p, request("two")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&events), "Bye");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCall(c) if c.arguments == "{\"x\":1}"))
    );

    let (_, err) = collect(&*p, request("three")).await;
    let msg = err.expect("an error").to_string();
    assert!(msg.contains("answers.jsonl"), "{msg}");
    assert!(msg.contains("no recorded answer left (it has 2)"), "{msg}");
}

#[test]
fn replay_file_problems_name_the_file_and_line() {
    let missing = Settings::new(ProviderKind::Replay, "", "/nonexistent/answers.jsonl");
    let err = provider_for(&missing).err().expect("an error").to_string();
    assert!(err.contains("/nonexistent/answers.jsonl"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, "\"ok\"\nnot json\n").unwrap();
    let s = Settings::new(ProviderKind::Replay, "", file.to_str().unwrap());
    let err = provider_for(&s).err().expect("an error").to_string();
    assert!(err.contains("bad.jsonl: line 2:"), "{err}");
}

#[test]
fn test_server_serves_sync_callers_too() {
    // The chat tests drive the binary synchronously; the server must not need their runtime.
    let server = Server::start([Reply::chunked("abcdefghij", 4)]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (events, err) = rt.block_on(async { collect(&*openai(&server), request("hi")).await });
    assert!(err.is_none());
    assert_eq!(text(&events), "abcdefghij");
    assert_eq!(events.len(), 4, "3 pieces and Finished");
}

/// A web page answered to the chat request (a web UI's port given as the base URL) is said to
/// be one, not reported as a cut stream; a whole JSON answer to a streaming request (a server
/// that ignores `stream: true`) is read as the answer.
#[tokio::test]
async fn a_web_page_is_named_and_a_whole_json_answer_is_read() {
    let page =
        "<!doctype html><html><head><title>Open WebUI</title></head><body>Open WebUI</body></html>";
    let server =
        Server::start(
            [Reply::status(200, page).header("content-type", "text/html; charset=utf-8")],
        );
    let (_, err) = collect(&*openai(&server), request("hi")).await;
    let err = err.expect("an error").to_string();
    assert!(
        err.contains("answered a web page, not the model API (Open WebUI)"),
        "{err}"
    );
    let whole = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello from non-stream"}, "finish_reason": "stop"}]
    });
    let server = Server::start([
        Reply::status(200, whole.to_string()).header("content-type", "application/json")
    ]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&events), "Hello from non-stream");
    // An event stream labelled JSON is still read as the stream it is.
    let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi there\"}}]}\n\n\
               data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
               data: [DONE]\n\n";
    let server =
        Server::start([Reply::status(200, sse).header("content-type", "application/json")]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text(&events), "Hi there");
}

// ---- Refusals of what skillpipe adds on its own, through the binary ----

fn chat_cmd(home: &TestHome, server: &Server) -> assert_cmd::Command {
    let mut c = home.cmd();
    c.args(["chat", "--base-url", &server.url, "--model", "test-model"]);
    c
}

fn err_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A first answer that captures `echo again`, then the continuation: two requests of one
/// session after the refusal (the retry, and the next one that remembers it).
fn refusal_then_capture(refusal: Reply) -> Server {
    Server::start([
        refusal,
        Reply::text(["!{echo again}"]),
        Reply::text(["done"]),
    ])
}

/// Older Azure API versions refuse `stream_options`: the request is sent again without it,
/// once, said in one line, and the session's next request leaves it out too. Control: the
/// same refusal of a `stream_options` the user set ends the chat.
#[test]
fn a_refused_stream_options_is_left_out_for_the_session() {
    let home = TestHome::new();
    let refusal = || {
        Reply::status(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}"#,
        )
    };
    let server = refusal_then_capture(refusal());
    let out = chat_cmd(&home, &server)
        .args(["--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err_of(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].get("stream_options").is_some());
    assert!(reqs[1].get("stream_options").is_none(), "{}", reqs[1]);
    assert!(
        reqs[2].get("stream_options").is_none(),
        "remembered: {}",
        reqs[2]
    );
    assert_eq!(
        err_of(&out).matches("`stream_options`").count(),
        1,
        "{}",
        err_of(&out)
    );

    // Control: set by the user, it is sent as set and the refusal ends the chat.
    let server = refusal_then_capture(refusal());
    let out = chat_cmd(&home, &server)
        .args(["--param", r#"stream_options={"include_usage":true}"#])
        .args(["--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err_of(&out));
    assert_eq!(server.requests().len(), 1);
    assert!(err_of(&out).contains("stream_options"), "{}", err_of(&out));

    // `--param stream_options=null` leaves it out from the start; so does the provider
    // setting `stream_usage = false`.
    let server = Server::start([Reply::text(["ok"])]);
    let out = chat_cmd(&home, &server)
        .args(["--param", "stream_options=null", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err_of(&out));
    assert!(server.requests()[0].get("stream_options").is_none());
    let server = Server::start([Reply::text(["ok"])]);
    home.write(
        "config/skillpipe/config.toml",
        &format!(
            "default_provider = \"azure\"\n\n[providers.azure]\nbase_url = \"{}\"\n\
             model = \"m\"\nstream_usage = false\nmax_tokens_param = \"max_completion_tokens\"\n",
            server.url
        ),
    );
    let out = home
        .cmd()
        .args(["chat", "--max-tokens", "40", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err_of(&out));
    let req = &server.requests()[0];
    assert!(req.get("stream_options").is_none(), "{req}");
    assert_eq!(req["max_completion_tokens"], 40, "{req}");
    assert!(req.get("max_tokens").is_none(), "{req}");
}

/// A reasoning model refuses `max_tokens` and asks for `max_completion_tokens`: the limit the
/// user set goes again under that name, and stays so. Control: a refusal naming a field that
/// makes the request (`messages`) ends the chat.
#[test]
fn max_tokens_goes_as_max_completion_tokens_when_the_server_asks() {
    let home = TestHome::new();
    let server = refusal_then_capture(Reply::status(
        400,
        r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#,
    ));
    let out = chat_cmd(&home, &server)
        .args(["--max-tokens", "50", "--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err_of(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0]["max_tokens"], 50);
    for r in &reqs[1..] {
        assert_eq!(r["max_completion_tokens"], 50, "{r}");
        assert!(r.get("max_tokens").is_none(), "{r}");
    }
    assert_eq!(
        err_of(&out).matches("`max_completion_tokens`").count(),
        1,
        "{}",
        err_of(&out)
    );

    // Control.
    let server = refusal_then_capture(Reply::status(
        400,
        r#"{"error":{"message":"'messages' must contain the word 'json'","param":"messages"}}"#,
    ));
    let out = chat_cmd(&home, &server)
        .args(["--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err_of(&out));
    assert_eq!(server.requests().len(), 1);
}

/// Newer models refuse `temperature`: an agent's default is left out (said once, remembered);
/// the user's own `--temperature` is not, and the refusal ends the chat naming it.
#[test]
fn an_agents_default_temperature_is_dropped_and_the_users_is_not() {
    let home = TestHome::new();
    let agent = home.path().join("a.toml");
    std::fs::write(
        &agent,
        "name = \"a\"\ninstructions = \"Hi.\"\n[params]\ntemperature = 0.2\n",
    )
    .unwrap();
    let refusal = || {
        Reply::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"`temperature` is deprecated for this model."}}"#,
        )
    };
    let server = refusal_then_capture(refusal());
    let out = chat_cmd(&home, &server)
        .arg("--agent")
        .arg(&agent)
        .args(["--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err_of(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0]["temperature"], 0.2);
    assert!(reqs[1].get("temperature").is_none(), "{}", reqs[1]);
    assert!(reqs[2].get("temperature").is_none(), "{}", reqs[2]);
    assert_eq!(
        err_of(&out).matches("`temperature`").count(),
        1,
        "{}",
        err_of(&out)
    );

    // Control: the user's own value is never dropped.
    let server = refusal_then_capture(refusal());
    let out = chat_cmd(&home, &server)
        .arg("--agent")
        .arg(&agent)
        .args(["--temperature", "0.2", "--allow", "echo", "-y", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err_of(&out));
    assert_eq!(server.requests().len(), 1);
    assert!(err_of(&out).contains("`temperature`"), "{}", err_of(&out));
}

fn calc_skill(home: &TestHome) {
    home.write(
        "skills/calc/SKILL.md",
        "---\nname: calc\ndescription: arithmetic\n---\nCalc.\n",
    );
    home.write(
        "skills/calc/scripts/calc.py",
        "# Multiply two numbers.\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
    );
}

/// A `--tools` answer that is the function's name in its namespace (`functions.NAME:`, as a
/// chat format leaks it) or nothing at all is no structured call: said once, and the question
/// goes again with directives only, for the rest of the session. Control: a plain answer keeps
/// the tools.
#[test]
fn a_tools_turn_without_a_structured_call_falls_back_to_directives() {
    let home = TestHome::new();
    calc_skill(&home);
    for first in [
        Reply::text(["functions.calc", "__calc:"]),
        Reply::text([""]),
    ] {
        let server = Server::start([first, Reply::text(["42"])]);
        let out = chat_cmd(&home, &server)
            .args(["--skills-dir", "skills", "--tools", "--allow-scripts", "-y"])
            .arg("6 times 7?")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", err_of(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2);
        assert!(reqs[0].get("tools").is_some());
        assert!(reqs[1].get("tools").is_none(), "{}", reqs[1]);
        assert!(!err_of(&out).contains("functions."), "{}", err_of(&out));
    }
    let server = Server::start([Reply::text(["It is 42."])]);
    let out = chat_cmd(&home, &server)
        .args(["--skills-dir", "skills", "--tools", "--allow-scripts", "-y"])
        .arg("6 times 7?")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", err_of(&out));
    assert_eq!(server.requests().len(), 1);
}

/// `doctor --online` asks the endpoint for one tool call and says whether a structured one came
/// back; text instead is a warning (chat falls back to directives), not a failure.
#[test]
fn doctor_online_tells_whether_the_endpoint_returns_tool_calls() {
    let home = TestHome::new();
    let structured = Server::start([Reply::text(Vec::<String>::new()).tool_call(
        "c1",
        "report_word",
        ["{\"word\": \"ready\"}"],
    )]);
    let as_text = Server::start([Reply::text(["functions.report_word:"])]);
    for (server, want) in [
        (&structured, "returns structured tool calls"),
        (&as_text, "WARNING no structured tool call"),
    ] {
        server.set_models(&["test-model"]);
        let out = home
            .cmd()
            .args([
                "doctor",
                "--online",
                "--base-url",
                &server.url,
                "--model",
                "test-model",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout} {}", err_of(&out));
        let row = stdout.lines().find(|l| l.contains("tools")).unwrap_or("");
        assert!(row.contains(want), "{stdout}");
        let probe: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.get("messages").is_some())
            .collect();
        assert_eq!(probe.len(), 1, "{probe:?}");
        assert_eq!(probe[0]["tools"][0]["function"]["name"], "report_word");
    }
}

/// A server that sends one event-stream line far over the bound (16 MiB, no line end): the
/// stream ends with the typed error once the bound is passed, not after reading it all into
/// memory. Control: a line under the bound, cut the same way, is a cut stream, not this error.
#[tokio::test]
async fn an_event_stream_line_over_the_bound_ends_the_stream() {
    let huge = format!("data: {}", "x".repeat(16 << 20));
    let server = Server::start([
        Reply::status(200, huge).header("content-type", "text/event-stream"),
        Reply::status(200, format!("data: {}", "x".repeat(1 << 20)))
            .header("content-type", "text/event-stream"),
    ]);
    let (events, err) = collect(&*openai(&server), request("hi")).await;
    assert!(events.is_empty(), "{events:?}");
    match err {
        Some(ModelError::EventTooLong { limit, bytes }) => {
            assert_eq!(limit, 8 << 20);
            assert!(bytes > limit as u64 && bytes < 16 << 20, "{bytes}");
        }
        other => panic!("{other:?}"),
    }
    let (_, err) = collect(&*openai(&server), request("hi")).await;
    assert!(
        err.is_some() && !matches!(err, Some(ModelError::EventTooLong { .. })),
        "{err:?}"
    );
}
