//! `confirm = "ask"` over MCP: the question goes to the client as an elicitation (form mode)
//! showing argv, skill, cwd and what the command may reach (the sandbox); without that
//! capability the call is refused with the flag that allows it. stdin is the protocol here, so
//! the terminal is never read.
//!
//! In the legacy era the elicitation is a request of ours the call waits on ([`Peer`]); in the
//! modern era it is returned in the call's `input_required` result, and the retried call brings
//! the answer ([`Asking`]), keyed by a digest of the question so that an answer counts only for
//! the very question the user was shown.

use super::jsonrpc::{RpcError, request};
use super::session::{Modern, Unanswered};
use crate::command::escape_controls as shown;
use crate::confirm::{Answer, AskError, Prompt, scope};
use crate::dispatch::AskFuture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How long a question waits for the user before it counts as "no".
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a client cannot ask its user, from the elicitation modes it declared in `initialize`
/// (`None`: no capability; `[]`: a bare `elicitation: {}`, which means form mode); `None` when
/// it can. A confirmation is a form (a choice), so only form mode will do.
pub fn elicitation_gap(declared: Option<&[String]>) -> Option<String> {
    match declared {
        None => Some("it declared no elicitation capability".into()),
        Some(modes) if modes.is_empty() || modes.iter().any(|m| m == "form") => None,
        Some(modes) => Some(format!(
            "it declared elicitation in {} mode only, and a confirmation needs `form` mode",
            modes
                .iter()
                .map(|m| format!("`{}`", crate::term::sanitize(m)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Said when the client cannot ask its user (`gap` from [`elicitation_gap`]). For a tool whose
/// tool.yaml asks (`tool_asks`), `-y` would not help: that is said instead.
pub fn no_elicitation(gap: &str, tool_asks: Option<&str>) -> String {
    if let Some(tool) = tool_asks {
        return format!(
            "tool `{tool}` asks to be confirmed before each run (execution.confirm in its \
             tool.yaml; -y does not lift that) and this MCP client cannot ask the user ({gap}): \
             use a client that supports elicitation, or remove the confirm from the tool.yaml"
        );
    }
    format!(
        "confirmation is needed (confirm = \"ask\") and this MCP client cannot ask the user \
         ({gap}); to run without asking, add -y to the `skillpipe mcp` command in the client's \
         server config, or set confirm = \"never\" in the [script_policy] of an agent in \
         your own config folder ($XDG_CONFIG_HOME/skillpipe/agents)"
    )
}

/// Why the client gave no answer to a confirmation; each counts as "no" with this reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConsentError {
    /// The client cannot ask its user (no elicitation capability, or not in form mode): the
    /// whole message, from [`no_elicitation`].
    #[error("{0}")]
    NoElicitation(String),
    /// The connection to the client is closed.
    #[error("the client is gone")]
    ClientGone,
    /// The user did not answer in time.
    #[error("no answer to the confirmation within {seconds} s")]
    NoAnswer { seconds: u64 },
    /// The client answered the request with an error.
    #[error("the client could not ask the user: {message}")]
    ClientFailed { message: String },
    /// The user closed the question without choosing.
    #[error("the user dismissed the confirmation")]
    Dismissed,
    /// The answer had no `action` of `accept`, `decline` or `cancel`.
    #[error("the client's answer to the confirmation had no valid `action`")]
    NoAction,
    /// Modern era: the question went back to the client in an `input_required` result.
    #[error(
        "the confirmation went to the MCP client (input_required): the call runs when the client \
         retries it with the user's answer"
    )]
    InputRequired,
}

tokio::task_local! {
    /// The modern call being served on this task, if any.
    static ASKING: Arc<Asking>;
}

/// One modern call's confirmation: what its request declared and brought, and the question it
/// could not have answered.
pub struct Asking {
    elicitation: Option<Vec<String>>,
    responses: serde_json::Map<String, Value>,
    unanswered: Mutex<Option<Unanswered>>,
}

impl Asking {
    pub fn new(m: &Modern) -> Arc<Asking> {
        Arc::new(Asking {
            elicitation: m.elicitation.clone(),
            responses: m.input_responses.clone(),
            unanswered: Mutex::new(None),
        })
    }

    /// Runs `f` with this call's questions answered from its request (see [`Peer::ask`]).
    pub async fn scope<F: std::future::Future>(self: &Arc<Self>, f: F) -> F::Output {
        ASKING.scope(self.clone(), f).await
    }

    /// The question the call could not have answered, if one was asked.
    pub fn unanswered(&self) -> Option<Unanswered> {
        locked(&self.unanswered).clone()
    }

    fn ask(&self, p: &Prompt<'_>) -> Result<Answer, ConsentError> {
        let set = |u: Unanswered| *locked(&self.unanswered) = Some(u);
        if let Some(gap) = elicitation_gap(self.elicitation.as_deref()) {
            let why = no_elicitation(&gap, p.tool_asks);
            set(Unanswered::CannotAsk(why.clone()));
            return Err(ConsentError::NoElicitation(why));
        }
        let params = elicitation(p);
        let key = question_key(&params);
        if let Some(answer) = self.responses.get(&key) {
            return answer_of(answer);
        }
        set(Unanswered::Ask { key, params });
        Err(ConsentError::InputRequired)
    }
}

/// The `inputRequests` key of a question: a digest of everything it shows, so that an answer
/// brought back applies only to the same command, input, folder and grants.
pub fn question_key(params: &Value) -> String {
    let hex = super::catalog::sha256_hex(params.to_string().as_bytes());
    format!("confirm-{}", &hex[..24])
}

impl From<ConsentError> for AskError {
    fn from(e: ConsentError) -> AskError {
        AskError::Other(Box::new(e))
    }
}

/// `m` locked, whether or not a panic elsewhere poisoned it (the data stays consistent).
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

type Pending = Mutex<HashMap<String, oneshot::Sender<Result<Value, RpcError>>>>;

/// Requests from the server to the client, and their answers.
pub struct Peer {
    out: mpsc::UnboundedSender<Value>,
    pending: Pending,
    next_id: AtomicU64,
    /// Why the client cannot ask (see [`elicitation_gap`]); `None` when it can.
    elicitation_gap: Mutex<Option<String>>,
    /// The client's input has ended: no answer can come any more.
    closed: AtomicBool,
}

impl Peer {
    pub fn new(out: mpsc::UnboundedSender<Value>) -> Arc<Peer> {
        Arc::new(Peer {
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            elicitation_gap: Mutex::new(elicitation_gap(None)),
            closed: AtomicBool::new(false),
        })
    }

    /// The client's input has ended: questions waiting for an answer, and any asked later,
    /// end at once as [`ConsentError::ClientGone`] (a "no") instead of waiting out their time.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        // Dropping the senders wakes their waiters.
        locked(&self.pending).clear();
    }

    /// Set from the client's `initialize`: the elicitation modes it declared.
    pub fn set_elicitation(&self, declared: Option<&[String]>) {
        *locked(&self.elicitation_gap) = elicitation_gap(declared);
    }

    /// Routes the client's answer to the request waiting for it; false if none is.
    pub fn answer(&self, id: &Value, outcome: Result<Value, RpcError>) -> bool {
        let key = id.to_string();
        let waiting = locked(&self.pending).remove(&key);
        waiting.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    /// Sends a request and waits for its answer (bounded by [`ANSWER_TIMEOUT`]).
    async fn request(&self, method: &str, params: Value) -> Result<Value, ConsentError> {
        let id = json!(format!(
            "skillpipe-{}",
            self.next_id.fetch_add(1, Ordering::SeqCst)
        ));
        let key = id.to_string();
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = locked(&self.pending);
            // Checked under the lock `close` clears, so no question slips in after it.
            if self.closed.load(Ordering::SeqCst) {
                return Err(ConsentError::ClientGone);
            }
            pending.insert(key.clone(), tx);
        }
        // A call cancelled while asking leaves no entry behind.
        let _forget = Forget { peer: self, key };
        self.out
            .send(request(&id, method, params))
            .map_err(|_| ConsentError::ClientGone)?;
        match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
            Err(_) => Err(ConsentError::NoAnswer {
                seconds: ANSWER_TIMEOUT.as_secs(),
            }),
            Ok(Err(_)) => Err(ConsentError::ClientGone),
            Ok(Ok(Err(e))) => Err(ConsentError::ClientFailed { message: e.message }),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }

    /// Asks the user through the client, or refuses when the client cannot ask.
    pub async fn ask(&self, p: &Prompt<'_>) -> Result<Answer, ConsentError> {
        if let Ok(asking) = ASKING.try_with(Arc::clone) {
            return asking.ask(p);
        }
        let gap = locked(&self.elicitation_gap).clone();
        if let Some(gap) = gap {
            return Err(ConsentError::NoElicitation(no_elicitation(
                &gap,
                p.tool_asks,
            )));
        }
        let result = self.request("elicitation/create", elicitation(p)).await?;
        answer_of(&result)
    }
}

struct Forget<'a> {
    peer: &'a Peer,
    key: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        locked(&self.peer.pending).remove(&self.key);
    }
}

/// The Dispatcher's asker for this peer.
pub fn asker(peer: Arc<Peer>) -> impl for<'a> Fn(&'a Prompt<'a>) -> AskFuture<'a> + Send + Sync {
    move |p| {
        let peer = peer.clone();
        Box::pin(async move { peer.ask(p).await.map_err(AskError::from) })
    }
}

/// The `elicitation/create` params: what would run, where, what it may reach, and one
/// yes/no field for "always" (the words are escaped: they may come from a model).
pub fn elicitation(p: &Prompt<'_>) -> Value {
    let mut message = format!("skillpipe: run `{}`?\n", shown(&shell_words::join(p.argv)));
    if let Some(input) = crate::confirm::input_shown(p.input) {
        message.push_str(&format!("input: {input}\n"));
    }
    if let Some(skill) = p.skill {
        message.push_str(&format!("skill: {}\n", shown(skill)));
    }
    message.push_str(&format!("cwd: {}", shown(&p.cwd.display().to_string())));
    for g in p.grants {
        message.push_str(&format!("\n{}", shown(g)));
    }
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "always": {
                    "type": "boolean",
                    "title": "Always",
                    "description": format!(
                        "Also run {} without asking again this session",
                        scope(p.argv).shown(crate::confirm::Detail::ALL)
                    ),
                    "default": false,
                }
            },
            "required": [],
        },
    })
}

/// The user's answer: accept → once (or always), decline → no, cancel → declined with reason.
pub fn answer_of(result: &Value) -> Result<Answer, ConsentError> {
    match result.get("action").and_then(Value::as_str) {
        Some("accept") if result.pointer("/content/always") == Some(&json!(true)) => {
            Ok(Answer::Always)
        }
        Some("accept") => Ok(Answer::Once),
        Some("decline") => Ok(Answer::No),
        Some("cancel") => Err(ConsentError::Dismissed),
        _ => Err(ConsentError::NoAction),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn argv() -> Vec<String> {
        vec!["lookup/scripts/x.py".into(), "a\u{1b}[2Kb".into()]
    }

    /// A question about `argv` with nothing else to show.
    fn bare(argv: &[String]) -> Prompt<'_> {
        Prompt {
            argv,
            skill: None,
            cwd: Path::new("/"),
            grants: &[],
            input: None,
            tool_asks: None,
        }
    }

    /// After the client's input ends, a question waiting for its answer and any later one
    /// are "no" at once (the client is gone), instead of waiting out ANSWER_TIMEOUT.
    #[tokio::test]
    async fn closing_answers_waiting_and_later_questions_at_once() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let peer = Peer::new(tx);
        let waiting = tokio::spawn({
            let peer = peer.clone();
            async move { peer.request("elicitation/create", json!({})).await }
        });
        // The question went out; nobody will answer it.
        assert!(rx.recv().await.is_some());
        peer.close();
        let got = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert_eq!(got.unwrap().unwrap(), Err(ConsentError::ClientGone));
        let later = peer.request("elicitation/create", json!({})).await;
        assert_eq!(later, Err(ConsentError::ClientGone));
        assert!(rx.try_recv().is_err(), "no question is sent once closed");
    }

    #[test]
    fn the_question_shows_what_runs_escaped() {
        let a = argv();
        let grants = vec!["network: none (no new sockets)".to_string()];
        let p = Prompt {
            argv: &a,
            skill: Some("lookup"),
            cwd: Path::new("/s/lookup"),
            grants: &grants,
            input: Some(b"{\"q\": \"a\x1b[2Kb\"}\n"),
            tool_asks: None,
        };
        let e = elicitation(&p);
        let m = e["message"].as_str().unwrap();
        assert!(m.contains("run `lookup/scripts/x.py 'a␛[2Kb'`?"), "{m}");
        assert!(
            m.contains("input: {\"q\": \"a␛[2Kb\"}\nskill: lookup\ncwd: /s/lookup\nnetwork: none (no new sockets)"),
            "{m}"
        );
        assert_eq!(
            e["requestedSchema"]["properties"]["always"]["type"],
            "boolean"
        );
    }

    #[test]
    fn answers_map_to_verdicts() {
        assert_eq!(answer_of(&json!({"action": "accept"})), Ok(Answer::Once));
        assert_eq!(
            answer_of(&json!({"action": "accept", "content": {"always": true}})),
            Ok(Answer::Always)
        );
        assert_eq!(answer_of(&json!({"action": "decline"})), Ok(Answer::No));
        assert_eq!(
            answer_of(&json!({"action": "cancel"})),
            Err(ConsentError::Dismissed)
        );
        assert_eq!(answer_of(&json!({})), Err(ConsentError::NoAction));
    }

    #[tokio::test]
    async fn without_the_capability_it_refuses_naming_the_flag() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let peer = Peer::new(tx);
        let a = argv();
        let p = bare(&a);
        let err = peer.ask(&p).await.unwrap_err();
        assert!(matches!(err, ConsentError::NoElicitation(_)), "{err}");
        assert!(err.to_string().contains("-y"), "{err}");
        assert!(
            err.to_string()
                .contains("(it declared no elicitation capability)"),
            "{err}"
        );
        assert!(rx.try_recv().is_err(), "nothing was sent");
    }

    #[tokio::test]
    async fn a_request_is_answered_by_its_id() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let peer = Peer::new(tx);
        peer.set_elicitation(Some(&[]));
        let a = argv();
        let p = bare(&a);
        let asking = peer.ask(&p);
        let answering = async {
            let sent = rx.recv().await.unwrap();
            assert_eq!(sent["method"], "elicitation/create");
            assert!(!peer.answer(&json!("other"), Ok(json!({}))));
            assert!(peer.answer(&sent["id"], Ok(json!({"action": "accept"}))));
        };
        let (answer, ()) = tokio::join!(asking, answering);
        assert_eq!(answer, Ok(Answer::Once));
        assert!(locked(&peer.pending).is_empty());
    }
}
