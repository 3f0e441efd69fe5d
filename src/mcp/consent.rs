//! `confirm = "ask"` over MCP: the question goes to the client as an elicitation (form mode)
//! showing argv, skill, cwd and what the command may reach (the sandbox); without that
//! capability the call is refused with the flag that allows it. stdin is the protocol here, so
//! the terminal is never read.

use super::jsonrpc::{RpcError, request};
use crate::command::escape_controls as shown;
use crate::confirm::{Answer, Prompt, scope};
use crate::dispatch::AskFuture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// How long a question waits for the user before it counts as "no".
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// Said when the client cannot ask its user.
pub const NO_ELICITATION: &str = "confirmation is needed (confirm = \"ask\") and this MCP client \
    cannot ask the user (it declared no elicitation capability); to run without asking, add -y \
    to the `skillpipe mcp` command in the client's server config, or set confirm = \"never\" in \
    the agent's [script_policy]";

type Pending = Mutex<HashMap<String, oneshot::Sender<Result<Value, RpcError>>>>;

/// Requests from the server to the client, and their answers.
pub struct Peer {
    out: mpsc::UnboundedSender<Value>,
    pending: Pending,
    next_id: AtomicU64,
    elicitation: AtomicBool,
}

impl Peer {
    pub fn new(out: mpsc::UnboundedSender<Value>) -> Arc<Peer> {
        Arc::new(Peer {
            out,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            elicitation: AtomicBool::new(false),
        })
    }

    /// Set from the client's `initialize`.
    pub fn set_elicitation(&self, supported: bool) {
        self.elicitation.store(supported, Ordering::SeqCst);
    }

    /// Routes the client's answer to the request waiting for it; false if none is.
    pub fn answer(&self, id: &Value, outcome: Result<Value, RpcError>) -> bool {
        let key = id.to_string();
        let waiting = self.lock().remove(&key);
        waiting.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Result<Value, RpcError>>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a request and waits for its answer (bounded by [`ANSWER_TIMEOUT`]).
    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = json!(format!(
            "skillpipe-{}",
            self.next_id.fetch_add(1, Ordering::SeqCst)
        ));
        let key = id.to_string();
        let (tx, rx) = oneshot::channel();
        self.lock().insert(key.clone(), tx);
        // A call cancelled while asking leaves no entry behind.
        let _forget = Forget { peer: self, key };
        self.out
            .send(request(&id, method, params))
            .map_err(|_| "the client is gone".to_string())?;
        match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
            Err(_) => Err(format!(
                "no answer to the confirmation within {} s",
                ANSWER_TIMEOUT.as_secs()
            )),
            Ok(Err(_)) => Err("the client is gone".into()),
            Ok(Ok(Err(e))) => Err(format!("the client could not ask the user: {}", e.message)),
            Ok(Ok(Ok(v))) => Ok(v),
        }
    }

    /// Asks the user through the client, or refuses when the client cannot ask.
    pub async fn ask(&self, p: &Prompt<'_>) -> Result<Answer, String> {
        if !self.elicitation.load(Ordering::SeqCst) {
            return Err(NO_ELICITATION.into());
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
        self.peer.lock().remove(&self.key);
    }
}

/// The Dispatcher's asker for this peer.
pub fn asker(peer: Arc<Peer>) -> impl for<'a> Fn(&'a Prompt<'a>) -> AskFuture<'a> + Send + Sync {
    move |p| {
        let peer = peer.clone();
        Box::pin(async move { peer.ask(p).await })
    }
}

/// The `elicitation/create` params: what would run, where, what it may reach, and one
/// yes/no field for "always" (the words are escaped: they may come from a model).
pub fn elicitation(p: &Prompt<'_>) -> Value {
    let mut message = format!("skillpipe: run `{}`?\n", shown(&shell_words::join(p.argv)));
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
                        "Also run `{}` (any arguments) without asking again this session",
                        shown(scope(p.argv))
                    ),
                    "default": false,
                }
            },
            "required": [],
        },
    })
}

/// The user's answer: accept → once (or always), decline → no, cancel → declined with reason.
pub fn answer_of(result: &Value) -> Result<Answer, String> {
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let always = result
                .get("content")
                .and_then(|c| c.get("always"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Ok(if always { Answer::Always } else { Answer::Once })
        }
        Some("decline") => Ok(Answer::No),
        Some("cancel") => Err("the user dismissed the confirmation".into()),
        _ => Err("the client's answer to the confirmation had no valid `action`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn argv() -> Vec<String> {
        vec!["lookup/scripts/x.py".into(), "a\u{1b}[2Kb".into()]
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
        };
        let e = elicitation(&p);
        let m = e["message"].as_str().unwrap();
        assert!(
            m.contains("run `lookup/scripts/x.py 'a\\u{1b}[2Kb'`?"),
            "{m}"
        );
        assert!(
            m.contains("skill: lookup\ncwd: /s/lookup\nnetwork: none (no new sockets)"),
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
        assert!(answer_of(&json!({"action": "cancel"})).is_err());
        assert!(answer_of(&json!({})).is_err());
    }

    #[tokio::test]
    async fn without_the_capability_it_refuses_naming_the_flag() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let peer = Peer::new(tx);
        let a = argv();
        let p = Prompt {
            argv: &a,
            skill: None,
            cwd: Path::new("/"),
            grants: &[],
        };
        let err = peer.ask(&p).await.unwrap_err();
        assert!(err.contains("-y"), "{err}");
        assert!(rx.try_recv().is_err(), "nothing was sent");
    }

    #[tokio::test]
    async fn a_request_is_answered_by_its_id() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let peer = Peer::new(tx);
        peer.set_elicitation(true);
        let a = argv();
        let p = Prompt {
            argv: &a,
            skill: None,
            cwd: Path::new("/"),
            grants: &[],
        };
        let asking = peer.ask(&p);
        let answering = async {
            let sent = rx.recv().await.unwrap();
            assert_eq!(sent["method"], "elicitation/create");
            assert!(!peer.answer(&json!("other"), Ok(json!({}))));
            assert!(peer.answer(&sent["id"], Ok(json!({"action": "accept"}))));
        };
        let (answer, ()) = tokio::join!(asking, answering);
        assert_eq!(answer, Ok(Answer::Once));
        assert!(peer.lock().is_empty());
    }
}
