//! The whole chat loop with your own model backend: a `Provider` that answers from a script,
//! a `Ui` that prints, and a `Session` that runs the capture `!{echo 42}`, hands its result
//! back and shows the continuation.
//!
//! The program is its own sandbox launcher, so it calls the launch hook first thing in `main`,
//! before the tokio runtime starts any thread.
//!
//! `cargo run --example own_provider`

use futures::stream;
use skillpipe::confirm::Answer;
use skillpipe::term::sanitize;
use skillpipe::{
    Busy, ChatOptions, ChatRequest, Dispatcher, EventStream, Launcher, Message, Notice, Provider,
    Report, ScriptPolicy, Session, StreamEvent, Ui,
};
use std::io::Write;
use std::sync::Arc;

/// Answers the first request with a capture, and the second (which carries the result) with
/// the number it was given.
struct Scripted;

impl Provider for Scripted {
    fn stream(&self, req: ChatRequest) -> EventStream {
        let last = match req.messages.last() {
            Some(Message::User(text)) => text.clone(),
            _ => String::new(),
        };
        // After a capture the last message is its result, e.g. `Output: 42 — continue your
        // answer.`; the first request is the user's question.
        let result = req
            .messages
            .iter()
            .any(|m| matches!(m, Message::Assistant { .. }));
        let answer = if result {
            let number: String = last.chars().filter(char::is_ascii_digit).collect();
            format!(" The answer is {number}.\n")
        } else {
            "Let me compute that: !{echo 42}".to_string()
        };
        // Token by token, as a real model would stream it, then the end of the answer (without
        // it the chat loop would say the answer may have been cut).
        let tokens: Vec<_> = answer
            .split_inclusive(' ')
            .map(|t| Ok(StreamEvent::Text(t.to_string())))
            .chain([Ok(StreamEvent::Finished {
                reason: Some("stop".into()),
            })])
            .collect();
        Box::pin(stream::iter(tokens))
    }
}

/// Prints the answer as it comes, and the rest in brackets on stderr. Model text inside a report
/// or notice (a directive, a reason) is made inert first: it may hold terminal escapes.
struct Print;

impl Ui for Print {
    fn text(&mut self, bytes: &[u8]) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    }
    fn report(&mut self, report: &Report) {
        eprintln!("[{}]", sanitize(&report.to_string()));
    }
    fn notice(&mut self, notice: &Notice) {
        eprintln!("[{}]", sanitize(&notice.to_string()));
    }
    /// No spinner here (a terminal UI would show `Busy::Thinking` / `Busy::Running`).
    fn busy(&mut self, _what: Option<Busy<'_>>) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    skillpipe::sandbox::run_if_launcher();

    let policy = ScriptPolicy::allowing(["echo"]);
    let dispatcher = Dispatcher::builder(policy)
        .launcher(Launcher::ThisProgram)
        // A real program would ask its user; this one allows what the policy allows.
        .asker(|_| Ok(Answer::Once))
        .build()?;
    let mut options = ChatOptions::new("scripted");
    // At most 4 captures per message (the policy's bound, 8 by default, would allow more).
    options.max_captures = Some(4);
    let mut session = Session::new(Box::new(Scripted), Arc::new(dispatcher), None, options);

    let rt = tokio::runtime::Runtime::new()?;
    let report = rt.block_on(session.turn("What is six times seven?", &mut Print))?;
    eprintln!(
        "captures: {}, problems: {}",
        report.captures, report.problems
    );
    Ok(())
}
