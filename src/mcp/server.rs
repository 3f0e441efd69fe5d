//! The stdio transport: a reader thread that cuts stdin into capped lines, one writer task that
//! owns stdout, and the loop that feeds the [`Session`] and runs tool calls concurrently.
//!
//! Ending: at the end of stdin (the client has sent all it will) the calls already received
//! run to their end (each bounded by its own timeout; a confirmation can no longer be answered,
//! so it is a "no") and are answered, then the server exits 0 — `printf '…' | skillpipe mcp`
//! shows its results. On SIGTERM/SIGINT/SIGHUP, new requests are refused, requests already read
//! are answered "shutting down", the runs in flight are interrupted as in `filter` (process tree
//! killed, audit line `interrupted by SIG…`) and answered as stopped tool calls; a call still
//! waiting for its turn is answered -32000 "shutting down" and never runs (no audit line: nothing
//! was decided); on stdout gone (the client went away), or for a call still waiting after a
//! signal for the user's answer, the call's future is dropped — which kills its process tree and
//! writes its audit line (`cancelled`) — and it gets an error reply in case the client still reads.

use super::call;
use super::catalog::Catalog;
use super::consent::Peer;
use super::jsonrpc::{self, RpcError, SHUTTING_DOWN};
use super::session::{self, Era, Session, Step};
use crate::audit::Decision;
use crate::dispatch::{Dispatcher, Origin};
use crate::policy::ConfirmMode;
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::task::{Id, JoinSet};

/// Longest message accepted, in bytes; a longer one is answered with an error and skipped.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;
/// Calls that run at once; more wait for a turn (a client cannot start processes without bound).
const MAX_RUNNING_CALLS: usize = 16;

/// One line of input.
#[derive(Debug, PartialEq)]
pub enum Line {
    Message(Vec<u8>),
    /// Over the limit: the first `limit` bytes, and the whole length.
    TooLong(Vec<u8>, usize),
}

/// Cuts `input` into lines of at most `limit` bytes kept (the rest of a longer line is read and
/// dropped), sending each non-empty one; returns at end of input or when nobody listens.
pub fn read_lines(mut input: impl BufRead, tx: &mpsc::Sender<Line>, limit: usize) {
    let mut kept = Vec::new();
    let mut len = 0usize;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if chunk.is_empty() {
            break;
        }
        let (part, end, used) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (&chunk[..i], true, i + 1),
            None => (chunk, false, chunk.len()),
        };
        let room = limit.saturating_sub(kept.len());
        kept.extend_from_slice(&part[..part.len().min(room)]);
        len += part.len();
        input.consume(used);
        if end && !emit(&mut kept, &mut len, limit, tx) {
            return;
        }
    }
    emit(&mut kept, &mut len, limit, tx);
}

fn emit(kept: &mut Vec<u8>, len: &mut usize, limit: usize, tx: &mpsc::Sender<Line>) -> bool {
    let mut line = std::mem::take(kept);
    let n = std::mem::take(len);
    if line.last() == Some(&b'\r') && n <= limit {
        line.pop();
    }
    if line.iter().all(u8::is_ascii_whitespace) && n <= limit {
        return true;
    }
    let msg = if n > limit {
        Line::TooLong(line, n)
    } else {
        Line::Message(line)
    };
    tx.blocking_send(msg).is_ok()
}

/// How long interrupted runs get to end and be answered before the rest are dropped.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves MCP on this process's stdin and stdout until the client goes or a signal comes;
/// returns the signal, if one stopped it.
pub async fn serve(
    dispatcher: Arc<Dispatcher>,
    catalog: Arc<Catalog>,
    peer: Arc<Peer>,
    out_rx: mpsc::UnboundedReceiver<Value>,
    out_tx: mpsc::UnboundedSender<Value>,
) -> std::io::Result<Option<libc::c_int>> {
    let (line_tx, mut lines) = mpsc::channel(64);
    // A thread, not a runtime task: a blocking read of stdin cannot be cancelled, and the
    // process must be able to exit while it waits.
    std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || read_lines(std::io::stdin().lock(), &line_tx, MAX_MESSAGE_BYTES))?;
    let (gone_tx, mut gone) = tokio::sync::watch::channel(false);
    let gone_tx = Arc::new(gone_tx);
    // A client that went away closed stdout too: known at once, not at the next reply, so that
    // calls still running after stdin ended are not left to run to their timeout.
    let watch = gone_tx.clone();
    std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            if crate::term::closed::reader_gone(libc::STDOUT_FILENO, None) {
                let _ = watch.send(true);
            }
        })?;
    let writer = tokio::spawn(write_messages(out_rx, gone_tx));

    let mut server = Server {
        session: Session::new(catalog.clone()),
        dispatcher,
        catalog,
        peer,
        out: out_tx,
        calls: JoinSet::new(),
        running: HashMap::new(),
        turns: Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING_CALLS)),
    };
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut reading = true;
    let signal = loop {
        if !reading && server.calls.is_empty() {
            break None;
        }
        tokio::select! {
            line = lines.recv(), if reading => match line {
                Some(line) => server.line(line),
                None => {
                    // The client has said all it will: what it asked for is still answered.
                    reading = false;
                    server.session.begin_shutdown();
                    server.peer.close();
                }
            },
            Some(done) = server.calls.join_next_with_id(), if !server.calls.is_empty() => {
                server.finished(done);
            }
            _ = term.recv() => break Some(libc::SIGTERM),
            _ = int.recv() => break Some(libc::SIGINT),
            _ = hup.recv() => break Some(libc::SIGHUP),
            _ = gone.changed() => break None,
        }
    };
    server.session.begin_shutdown();
    // Requests already read are answered "shutting down", not dropped.
    while let Ok(line) = lines.try_recv() {
        server.line(line);
    }
    if let Some(sig) = signal {
        // Before the interruption frees turns: what has not started stays unstarted.
        server.turns.close();
        crate::exec::interrupt(sig);
        server.settle().await;
    }
    server.shutdown().await;
    drop(server);
    // Replies already queued go out before the process exits (bounded: the client may be gone).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
    Ok(signal)
}

/// Writes each message as one line; says when stdout is gone.
async fn write_messages(
    mut rx: mpsc::UnboundedReceiver<Value>,
    gone: Arc<tokio::sync::watch::Sender<bool>>,
) {
    let mut out = tokio::io::stdout();
    while let Some(msg) = rx.recv().await {
        let mut line = msg.to_string();
        line.push('\n');
        if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
            let _ = gone.send(true);
            return;
        }
    }
}

struct Server {
    session: Session,
    dispatcher: Arc<Dispatcher>,
    catalog: Arc<Catalog>,
    peer: Arc<Peer>,
    out: mpsc::UnboundedSender<Value>,
    /// Each call's task yields its reply.
    calls: JoinSet<Value>,
    running: HashMap<Id, Running>,
    turns: Arc<tokio::sync::Semaphore>,
}

/// A call in flight.
struct Running {
    /// The request's id.
    id: Value,
    abort: tokio::task::AbortHandle,
    /// Cancelled by the client (`notifications/cancelled`): no reply is sent.
    by_client: bool,
}

impl Server {
    fn send(&self, msg: Value) {
        let _ = self.out.send(msg);
    }

    fn line(&mut self, line: Line) {
        let parsed = match line {
            Line::Message(bytes) => jsonrpc::parse(&bytes),
            Line::TooLong(prefix, len) => Err(jsonrpc::too_long(&prefix, len, MAX_MESSAGE_BYTES)),
        };
        let msg = match parsed {
            Ok(m) => m,
            Err(r) => return self.send(jsonrpc::error_response(&r.id, &r.error)),
        };
        let was_initialized = self.session.client().is_some();
        let step = self.session.handle(msg);
        if !was_initialized && let Some(c) = self.session.client() {
            self.peer.set_elicitation(c.elicitation.as_deref());
            let gap = super::consent::elicitation_gap(c.elicitation.as_deref());
            if let Some(gap) = gap
                && self.dispatcher.policy().confirm == ConfirmMode::Ask
                && self.catalog.offers_runs()
            {
                // The client's log is where its user will look for why every call is refused;
                // with nothing runnable offered, the start-up line already says why.
                eprintln!(
                    "skillpipe mcp: warning: {}",
                    super::consent::no_elicitation(&gap, None)
                );
            }
        }
        match step {
            Step::Reply(v) => self.send(v),
            Step::Nothing => {}
            Step::Answer { id, outcome } => {
                self.peer.answer(&id, outcome);
            }
            Step::UnknownTool { name, reply } => {
                // The name comes from the client's model: the refusal is audited like any other.
                self.dispatcher.refuse(
                    Origin::Mcp,
                    &[name],
                    Decision::Invalid,
                    "unknown tool".into(),
                );
                self.send(reply);
            }
            Step::ReadResource {
                id,
                skill,
                file,
                era,
            } => {
                let served = self.dispatcher.serve_skill_file(
                    Origin::Mcp,
                    &skill,
                    &file.rel,
                    file.bytes.len(),
                );
                self.send(match served {
                    Ok(()) => jsonrpc::response(
                        &id,
                        session::finish(&era, Catalog::read_json(&file), true),
                    ),
                    Err(why) => {
                        jsonrpc::error_response(&id, &RpcError::new(jsonrpc::INVALID_REQUEST, why))
                    }
                });
            }
            Step::Cancel(id) => {
                for r in self.running.values_mut().filter(|r| r.id == id) {
                    r.by_client = true;
                    r.abort.abort();
                }
            }
            Step::Call(c) => {
                let (dispatcher, catalog) = (self.dispatcher.clone(), self.catalog.clone());
                let turns = self.turns.clone();
                let id = c.id.clone();
                let abort = self.calls.spawn(async move {
                    // Closed at a signal: a call still waiting for its turn never starts.
                    let Ok(_turn) = turns.acquire_owned().await else {
                        let why = "the server is shutting down: the call was not started";
                        return jsonrpc::error_response(&c.id, &RpcError::new(SHUTTING_DOWN, why));
                    };
                    match &c.era {
                        Era::Legacy => {
                            let result = call::run(&dispatcher, &catalog, &c).await;
                            session::call_reply(&c, result, None)
                        }
                        Era::Modern(m) => {
                            let asking = super::consent::Asking::new(m);
                            let result = asking.scope(call::run(&dispatcher, &catalog, &c)).await;
                            session::call_reply(&c, result, asking.unanswered())
                        }
                    }
                });
                let running = Running {
                    id,
                    abort,
                    by_client: false,
                };
                self.running.insert(running.abort.id(), running);
            }
        }
    }

    fn finished(&mut self, done: Result<(Id, Value), tokio::task::JoinError>) {
        match done {
            Ok((tid, reply)) => {
                self.running.remove(&tid);
                self.send(reply);
            }
            Err(e) => {
                // A call the client cancelled gets no reply (MCP); any other one does.
                if let Some(r) = self.running.remove(&e.id())
                    && !r.by_client
                {
                    let why = if e.is_panic() {
                        "internal error while running the tool"
                    } else {
                        "cancelled: the server is shutting down"
                    };
                    let err = RpcError::new(SHUTTING_DOWN, why);
                    self.send(jsonrpc::error_response(&r.id, &err));
                }
            }
        }
    }

    /// Lets interrupted runs end and be answered, for at most [`SETTLE`].
    async fn settle(&mut self) {
        let deadline = tokio::time::Instant::now() + SETTLE;
        while !self.calls.is_empty() {
            match tokio::time::timeout_at(deadline, self.calls.join_next_with_id()).await {
                Ok(Some(done)) => self.finished(done),
                _ => break,
            }
        }
    }

    /// Drops every call still running (each is answered, unless its client cancelled it).
    async fn shutdown(&mut self) {
        self.calls.abort_all();
        while let Some(done) = self.calls.join_next_with_id().await {
            self.finished(done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<Line> {
        let (tx, mut rx) = mpsc::channel(100);
        read_lines(input, &tx, limit);
        drop(tx);
        let mut out = Vec::new();
        while let Ok(l) = rx.try_recv() {
            out.push(l);
        }
        out
    }

    #[test]
    fn lines_are_cut_capped_and_blank_ones_skipped() {
        let got = lines(b"{\"a\":1}\r\n\n  \n0123456789abc\nlast", 10);
        assert_eq!(
            got,
            vec![
                Line::Message(b"{\"a\":1}".to_vec()),
                Line::TooLong(b"0123456789".to_vec(), 13),
                Line::Message(b"last".to_vec()),
            ]
        );
    }
}
