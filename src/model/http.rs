//! The HTTP side shared by the OpenAI and Anthropic providers: building the client, sending with
//! retries, mapping statuses to actionable errors, reading SSE with an idle timeout, and telling a
//! finished answer from a cut one. The wire formats plug in as a [`Decoder`].

use super::adapt::{Adaptations, explicit_named};
use super::retry::parse_retry_after;
use super::settings::{ClientOptions, ProviderKind, Settings, SettingsError};
use super::sse::{MAX_EVENT_BYTES, SseEvent, SseParser};
use super::{ChatRequest, EventStream, ModelError, StreamEvent};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Turns one wire format into [`StreamEvent`]s. Pure: no I/O, so each format is unit-testable.
pub trait Decoder: Send + 'static {
    /// One SSE event. Returns true when the answer is complete (nothing more needs reading).
    fn event(&mut self, ev: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<bool, ModelError>;
    /// The body ended without the format's end marker. Returns true (after pushing any final
    /// events) if the answer is complete anyway, false if it was cut.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> bool;
    /// A whole non-streaming response body.
    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ModelError>;
}

/// `data` (a server's JSON) parsed; a failure quotes its start, in the one wording for
/// foreign text.
pub fn parse_json<T: serde::de::DeserializeOwned>(data: &str) -> Result<T, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        let shown = crate::command::escape_controls(&crate::command::cut_chars(data, 121));
        ModelError::Decode(format!("{e} in `{shown}`"))
    })
}

/// A prepared request: its endpoint, shared so the stream is `'static`, and its own parts.
pub struct HttpRequest {
    pub endpoint: Arc<Endpoint>,
    /// The model asked for, for error messages.
    pub model: String,
    pub body: Vec<u8>,
    pub stream: bool,
    /// Parameters the user set (the request's and the provider's): a refusal of one of them is
    /// not worked around.
    pub explicit: Vec<String>,
}

/// What every HTTP provider holds: where to send, with which key, and how patiently.
pub struct Endpoint {
    client: reqwest::Client,
    /// The wire format the server speaks.
    pub kind: ProviderKind,
    url: String,
    base_url: String,
    model: String,
    /// The key's headers, and the body's content type.
    headers: HeaderMap,
    key_sent: bool,
    /// The variable that held (or should hold) the key, for error messages.
    api_key_var: Option<String>,
    options: ClientOptions,
    /// The provider's changes to every request, grown by refusals (see [`super::adapt`]).
    adapt: Mutex<Adaptations>,
    explicit: Vec<String>,
}

impl Endpoint {
    /// The endpoint of the settings' provider; a remote one without a key is refused here.
    pub fn new(settings: &Settings) -> Result<Endpoint, SettingsError> {
        settings.check_api_key()?;
        let base_url = settings.base_url.trim_end_matches('/').to_string();
        let chat = match settings.provider {
            ProviderKind::Anthropic => "messages",
            _ => "chat/completions",
        };
        let url = super::api_url(settings.provider, &base_url, chat);
        let mut headers = super::auth_headers(settings.provider, settings.api_key.as_deref());
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(Endpoint {
            client: client(&settings.options)?,
            kind: settings.provider,
            url,
            base_url,
            model: settings.model.clone(),
            headers,
            key_sent: settings.api_key.is_some(),
            api_key_var: settings.key_var_to_set(),
            options: settings.options.clone(),
            adapt: Mutex::new(settings.adapt.clone()),
            explicit: settings.explicit.clone(),
        })
    }

    /// The HTTP request for `req` (the configured model when it names none).
    pub fn request(self: &Arc<Self>, mut req: ChatRequest) -> HttpRequest {
        if req.model.is_empty() {
            req.model = self.model.clone();
        }
        let mut body = super::request_body(self.kind, &req);
        if let Some(b) = body.as_object_mut() {
            lock(&self.adapt).apply(b);
        }
        req.explicit.extend(self.explicit.iter().cloned());
        HttpRequest {
            endpoint: self.clone(),
            model: req.model,
            body: serde_json::to_vec(&body).expect("JSON values serialize"),
            stream: req.stream,
            explicit: req.explicit,
        }
    }
}

fn lock(m: &Mutex<Adaptations>) -> std::sync::MutexGuard<'_, Adaptations> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// After a 400 or 422: the body to send instead, with the change made, when the refusal named
/// a parameter skillpipe may leave out (each parameter once per session, so this ends).
fn adapted_body(
    req: &HttpRequest,
    body: &[u8],
    error: &[u8],
) -> Option<(Vec<u8>, super::Adaptation)> {
    let mut sent: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body).ok()?;
    let mut state = lock(&req.endpoint.adapt);
    let change = state.on_refusal(error, &sent, &req.explicit)?;
    state.apply(&mut sent);
    Some((serde_json::to_vec(&sent).ok()?, change))
}

/// A refusal's message, saying which of the parameters it named the user set.
fn refusal_message(req: &HttpRequest, body: &[u8], error: &[u8]) -> String {
    let mut message = server_message(error);
    let sent = serde_json::from_slice(body).unwrap_or_default();
    let own = explicit_named(error, &sent, &req.explicit);
    if !own.is_empty() {
        message.push_str(&format!(
            " (`{}` is set explicitly, so skillpipe sends it as set: change or remove it)",
            own.join("`, `")
        ));
    }
    message
}

/// Build the HTTP client. rustls needs a process-wide crypto provider; install ring's once.
pub fn client(options: &ClientOptions) -> Result<reqwest::Client, SettingsError> {
    // Err means some provider is already installed, which is just as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .user_agent(concat!("skillpipe/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| SettingsError::Client(error_chain(&e)))
}

/// Send the request and stream its decoded events.
///
/// An answer that ends with nothing in it — no text, no tool call, no finish reason — is the
/// server failing, not the model: a llama.cpp-based server that is still busy with another
/// request answers a second one with its role chunk and `[DONE]` at once. Nothing of it has
/// been shown, so it is asked for again like a 503, under the same retry policy; once retries
/// are used up, the empty answer is passed on as it came.
pub fn run<D: Decoder + Default>(req: HttpRequest) -> EventStream {
    Box::pin(async_stream::stream! {
        let mut attempt = 1;
        let mut decoder = D::default();
        let mut body = req.body.clone();
        'request: loop {
            let response = loop {
                match send(&req, &mut body, attempt).await {
                    Sent::Response(r) => break r,
                    Sent::Adapted(change) => yield Ok(StreamEvent::Adapted(change)),
                    Sent::Retry(notice, delay) => {
                        yield Ok(notice);
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                    }
                    Sent::Failed(e) => {
                        yield Err(e);
                        return;
                    }
                }
            };
            let idle = req.endpoint.options.idle_timeout;
            let mut out = Vec::new();
            let (response, json) = match whole_answer(&req, response, &mut decoder).await {
                ControlFlow::Break(items) => {
                    for item in items {
                        yield item;
                    }
                    return;
                }
                ControlFlow::Continue(response) => response,
            };
            let mut body = response.bytes_stream().boxed();
            if json && let Some(items) = json_answer(&req, &mut body, &mut decoder).await {
                for item in items {
                    yield item;
                }
                return;
            }
            let mut parser = SseParser::default();
            let mut events = Vec::new();
            let mut bytes: u64 = 0;
            // Text or a tool call has been passed on: from then on the answer is the model's.
            let mut answered = false;
            loop {
                // What this read gave: whether the body ended, and whether the answer is done.
                let read = match tokio::time::timeout(idle, body.next()).await {
                    Err(_) => {
                        let what = format!("waiting for the next chunk ({bytes} bytes received)");
                        yield Err(timeout(&req, &what, idle));
                        return;
                    }
                    Ok(Some(Err(e))) => {
                        yield Err(ModelError::StreamCut { bytes, reason: root_cause(&e) });
                        return;
                    }
                    Ok(None) => at_end(&mut parser, &mut decoder, &mut out).map(|done| (true, done)),
                    Ok(Some(Ok(chunk))) => {
                        bytes += chunk.len() as u64;
                        if parser.feed(&chunk, &mut events).is_err() {
                            yield Err(ModelError::EventTooLong { limit: MAX_EVENT_BYTES, bytes });
                            return;
                        }
                        decode(&mut events, &mut decoder, &mut out).map(|done| (false, done))
                    }
                };
                answered |= out
                    .iter()
                    .any(|e| matches!(e, StreamEvent::Text(_) | StreamEvent::ToolCall(_)));
                // Ended with no finish reason, and no text or tool call in it: asked for again.
                if read.is_ok()
                    && !answered
                    && out.contains(&StreamEvent::Finished { reason: None })
                    && let Ok(delay) = req.endpoint.options.retry.delay(attempt, None)
                {
                    drop(body);
                    let why = "the server ended an answer with nothing in it (busy with another request?)";
                    yield Ok(retrying(attempt, &req, delay, why));
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                    decoder = D::default();
                    continue 'request;
                }
                for ev in out.drain(..) {
                    yield Ok(ev);
                }
                match read {
                    Err(e) => {
                        yield Err(e);
                        return;
                    }
                    Ok((true, false)) => {
                        let reason = "the connection closed before the end of the answer".into();
                        yield Err(ModelError::StreamCut { bytes, reason });
                        return;
                    }
                    Ok((true, true)) => return,
                    Ok((false, true)) => {
                        // Read the (normally empty) rest so the connection can be reused; a
                        // consumer that drops the stream after `Finished` never waits for this.
                        let drain = async { while let Some(Ok(_)) = body.next().await {} };
                        let _ = tokio::time::timeout(idle.min(Duration::from_secs(1)), drain).await;
                        return;
                    }
                    Ok((false, false)) => {}
                }
            }
        }
    })
}

/// A step of `run`: a web page, or the answer to a request not streamed, read and decoded
/// whole (`Break`); otherwise the response, and whether it is labelled JSON (`Continue`).
async fn whole_answer<D: Decoder>(
    req: &HttpRequest,
    response: reqwest::Response,
    decoder: &mut D,
) -> ControlFlow<Vec<Result<StreamEvent, ModelError>>, (reqwest::Response, bool)> {
    let idle = req.endpoint.options.idle_timeout;
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/html") {
        let page = server_message(&error_body(idle, response).await);
        return ControlFlow::Break(vec![Err(ModelError::WebPage {
            url: req.endpoint.url.clone(),
            page,
        })]);
    }
    if !req.stream {
        let whole = match tokio::time::timeout(idle, response.bytes()).await {
            Err(_) => Err(timeout(req, "reading the response", idle)),
            Ok(Err(e)) => Err(ModelError::StreamCut {
                bytes: 0,
                reason: error_chain(&e),
            }),
            Ok(Ok(b)) => Ok(b),
        };
        return ControlFlow::Break(decode_whole(decoder, whole));
    }
    ControlFlow::Continue((response, content_type.starts_with("application/json")))
}

/// A step of `run`: a server that ignores `stream: true` sends the whole answer as one JSON
/// object (labelled JSON; some label their event stream so too): told apart by its first byte,
/// and read as the answer (decoded whole), not as a stream that never came.
async fn json_answer<B, D>(
    req: &HttpRequest,
    body: &mut BoxStream<'static, reqwest::Result<B>>,
    decoder: &mut D,
) -> Option<Vec<Result<StreamEvent, ModelError>>>
where
    B: std::ops::Deref<Target = [u8]> + Send + 'static,
    D: Decoder,
{
    let idle = req.endpoint.options.idle_timeout;
    let first = tokio::time::timeout(idle, body.next()).await.ok().flatten();
    if let Some(Ok(b)) = &first
        && b.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{')
    {
        // The rest of it, each piece within the idle timeout.
        let mut whole = b.to_vec();
        let whole = loop {
            match tokio::time::timeout(idle, body.next()).await {
                Ok(Some(Ok(chunk))) => whole.extend_from_slice(&chunk),
                Ok(None) => break Ok(whole),
                Ok(Some(Err(e))) => {
                    let bytes = whole.len() as u64;
                    break Err(ModelError::StreamCut {
                        bytes,
                        reason: root_cause(&e),
                    });
                }
                Err(_) => break Err(timeout(req, "reading the response", idle)),
            }
        };
        return Some(decode_whole(decoder, whole));
    }
    // An event stream after all: the first piece goes back in front.
    let rest = std::mem::replace(body, futures::stream::empty().boxed());
    *body = futures::stream::iter(first).chain(rest).boxed();
    None
}

/// What one send came to, for `run` to say and act on.
enum Sent {
    Response(reqwest::Response),
    /// Refused for a parameter skillpipe may leave out: the body is changed; send it again.
    Adapted(super::Adaptation),
    /// Send again after the delay (the event says so).
    Retry(StreamEvent, Duration),
    Failed(ModelError),
}

/// A step of `run`: one send of `body`, a refusal worked around where it can be, and a retry
/// asked for while the retry policy allows one.
async fn send(req: &HttpRequest, body: &mut Vec<u8>, attempt: u32) -> Sent {
    let ep = &req.endpoint;
    let send = ep.client.post(&ep.url).headers(ep.headers.clone());
    let idle = ep.options.idle_timeout;
    let send = send.body(body.clone()).send();
    let response = match tokio::time::timeout(idle, send).await {
        Err(_) => return Sent::Failed(timeout(req, "waiting for the response", idle)),
        Ok(Err(e)) => return Sent::Failed(send_error(req, &e)),
        Ok(Ok(r)) => r,
    };
    let status = response.status().as_u16();
    if response.status().is_success() {
        return Sent::Response(response);
    }
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let error = error_body(idle, response).await;
    // 400 or 422: the request itself was refused.
    if matches!(status, 400 | 422)
        && let Some((adapted, change)) = adapted_body(req, body, &error)
    {
        *body = adapted;
        return Sent::Adapted(change);
    }
    let message = match status {
        400 | 422 => refusal_message(req, body, &error),
        _ => server_message(&error),
    };
    let failed = |gave_up| ModelError::Http {
        status,
        url: ep.url.clone(),
        message: message.clone(),
        gave_up,
    };
    Sent::Failed(match status {
        401 | 403 => ModelError::Auth {
            status,
            var: ep.api_key_var.clone(),
            key_sent: ep.key_sent,
            message,
        },
        404 => ModelError::ModelNotFound {
            model: req.model.clone(),
            base_url: ep.base_url.clone(),
            message,
        },
        // 501 (not implemented) and 505 (version not supported) will not change on a retry.
        408 | 429 | 500 | 502..=504 | 506..=599 => {
            match ep.options.retry.delay(attempt, retry_after) {
                Ok(delay) => {
                    let notice = retrying(attempt, req, delay, &format!("HTTP {status}"));
                    return Sent::Retry(notice, delay);
                }
                Err(give_up) => failed(Some(give_up)),
            }
        }
        _ => failed(None),
    })
}

/// A step of `run`: a whole answer decoded, as the stream's items in order.
fn decode_whole<D: Decoder>(
    decoder: &mut D,
    whole: Result<impl AsRef<[u8]>, ModelError>,
) -> Vec<Result<StreamEvent, ModelError>> {
    let mut out = Vec::new();
    let result = whole.and_then(|body| decoder.whole(body.as_ref(), &mut out));
    let mut items: Vec<_> = out.into_iter().map(Ok).collect();
    items.extend(result.err().map(Err));
    items
}

/// A step of `run`: the events of one chunk decoded until the answer is complete (true).
fn decode<D: Decoder>(
    events: &mut Vec<SseEvent>,
    decoder: &mut D,
    out: &mut Vec<StreamEvent>,
) -> Result<bool, ModelError> {
    let mut results = events.iter().map(|ev| decoder.event(ev, out));
    let result = results
        .find(|r| !matches!(r, Ok(false)))
        .unwrap_or(Ok(false));
    events.clear();
    result
}

/// A step of `run`: the body ended; its last event and the format's end decide whether the
/// answer is complete (true) or was cut.
fn at_end<D: Decoder>(
    parser: &mut SseParser,
    decoder: &mut D,
    out: &mut Vec<StreamEvent>,
) -> Result<bool, ModelError> {
    let finished = match parser.finish() {
        Some(ev) => decoder.event(&ev, out)?,
        None => false,
    };
    Ok(finished || decoder.end(out))
}

/// The notice for asking again after `delay`, saying why.
fn retrying(attempt: u32, req: &HttpRequest, delay: Duration, reason: &str) -> StreamEvent {
    StreamEvent::Retrying {
        attempt,
        max_attempts: req.endpoint.options.retry.max_attempts,
        delay,
        reason: reason.into(),
    }
}

/// The body of a response that is no answer (an error, a web page), as far as it comes within
/// `idle`.
async fn error_body(idle: Duration, response: reqwest::Response) -> Vec<u8> {
    let read = tokio::time::timeout(idle, response.bytes()).await;
    read.ok().and_then(Result::ok).unwrap_or_default().to_vec()
}

fn timeout(req: &HttpRequest, what: &str, after: Duration) -> ModelError {
    ModelError::Timeout {
        url: req.endpoint.url.clone(),
        what: what.to_string(),
        after,
    }
}

fn send_error(req: &HttpRequest, e: &reqwest::Error) -> ModelError {
    if e.is_timeout() {
        return timeout(req, "connecting", req.endpoint.options.connect_timeout);
    }
    ModelError::Unreachable {
        url: req.endpoint.url.clone(),
        reason: root_cause(e),
    }
}

/// The innermost cause, which is the one that says what happened ("Connection refused").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The whole chain of causes, de-duplicated, for errors whose outer layers add context.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    parts.join(": ")
}

/// The human part of an error body: `error.message` (OpenAI, Anthropic), `error` as a string
/// (Ollama, llama.cpp), `message`, else the text itself, shortened.
pub fn server_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
        let found = v
            .pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str());
        if let Some(m) = found {
            return shorten(m.trim());
        }
    }
    let text = String::from_utf8_lossy(body);
    if let Some(page) = html_text(&text) {
        return shorten(&page);
    }
    shorten(text.trim())
}

/// An HTML error page (a web server's or a proxy's) as one line: the text of its `<body>`
/// without tags (it says most), else its `<title>`. `None` when `text` is no HTML page.
fn html_text(text: &str) -> Option<String> {
    let lower = text.trim_start().to_ascii_lowercase();
    if !(lower.starts_with("<!doctype html") || lower.starts_with("<html")) {
        return None;
    }
    let between = |open: &str, close: &str| {
        let start = lower.find(open)? + open.len();
        let start = start + lower[start..].find('>')? + 1;
        let end = start + lower[start..].find(close)?;
        Some(text.trim_start()[start..end].to_string())
    };
    let body = between("<body", "</body>");
    let title = between("<title", "</title>");
    let raw = strip_tags(body.or(title).as_deref().unwrap_or(text));
    let line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty()).then_some(line)
}

/// `text` with every `<…>` tag made a space.
fn strip_tags(text: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn shorten(s: &str) -> String {
    const MAX: usize = 300;
    if s.len() <= MAX {
        return s.to_string();
    }
    format!("{}…", &s[..s.floor_char_boundary(MAX)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages_are_extracted() {
        assert_eq!(
            server_message(br#"{"error":{"message":"bad key","type":"x"}}"#),
            "bad key"
        );
        assert_eq!(
            server_message(br#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(server_message(b"  plain text\n"), "plain text");
        assert_eq!(server_message(&[b'a'; 400]).chars().count(), 301);
        // A web server's HTML page: its title, on one line.
        assert_eq!(
            server_message(
                b"<!DOCTYPE HTML>\n<html><head><title>Error response</title></head>\n<body><h1>Error</h1><p>Code: 501</p></body></html>\n"
            ),
            "Error Code: 501"
        );
        assert_eq!(
            server_message(b"<html><body><h1>Not  Found</h1>\n<p>x</p></body></html>"),
            "Not Found x"
        );
    }
}
