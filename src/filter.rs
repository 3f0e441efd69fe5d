//! The Unix filter pipeline (DESIGN §9): stdin → scanner → stdout, directives run.
//!
//! Input is read and scanned on the calling thread, and text is written as soon as it is
//! scanned, mostly straight from the read buffer. Side effects go to a bounded background queue that
//! runs them in order (a bounded queue) and is drained before the filter returns; captures run where they stand,
//! in order, and their stdout (trailing newlines removed) replaces them. While a capture runs,
//! a helper thread keeps reading input (bounded read-ahead, see [`input`]).

mod input;
mod output;

use crate::dispatch::{Dispatcher, Outcome};
use crate::scan::{Directive, Kind, Piece, ScanOptions, Scanner};
use input::{Input, Next};
use output::Output;
use std::io::{self, ErrorKind, IsTerminal, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes per read. A pipe read returns at most what the pipe holds, so this is also the pipe
/// buffer size `skillpipe filter` asks for.
pub const CHUNK: usize = 256 * 1024;
/// Side effects waiting for the one that runs. When the queue is full, scanning waits: a
/// stream of `%{…}` faster than they run must not pile up in memory (each may hold 8 KiB).
pub const SIDE_QUEUE: usize = 64;

#[derive(Debug, Clone, Copy, Default)]
pub struct FilterOptions {
    pub scan: ScanOptions,
    /// Copy side effects' stdout/stderr to stderr.
    pub show_side_effects: bool,
    /// Show the output inert (a terminal): every control visibly escaped. Off, it is byte-exact.
    pub sanitize: bool,
}

/// What the run saw; `problems` drives `--strict`.
#[derive(Debug, Default)]
pub struct FilterReport {
    /// At least one directive was blocked, invalid or failed.
    pub problems: bool,
    /// Output was closed early (e.g. `| head`).
    pub output_closed: bool,
}

/// Runs the filter to the end of `input`. `rt` runs the commands.
pub fn run<R, W>(
    rt: &tokio::runtime::Runtime,
    dispatcher: Arc<Dispatcher>,
    opts: FilterOptions,
    input: R,
    output: W,
) -> io::Result<FilterReport>
where
    R: Read + Send + 'static,
    W: Write,
{
    let problems = Arc::new(AtomicBool::new(false));
    let (side_tx, side_rx) = tokio::sync::mpsc::channel::<SideJob>(SIDE_QUEUE);
    let worker = rt.spawn(side_effect_worker(
        dispatcher.clone(),
        side_rx,
        opts.show_side_effects,
        problems.clone(),
    ));

    let mut input = Input::new(input, CHUNK);
    let mut buf = vec![0u8; CHUNK];
    let mut scanner = Scanner::new(opts.scan);
    let mut out = Output::new(output, CHUNK, opts.sanitize);
    // Text goes out as it is scanned; side effects are queued and captures run in place, each
    // after the text before it has been written.
    let handle = |out: &mut Output<W>, input: &mut Input<R>, piece: Piece<'_>| {
        if out.failed() {
            return;
        }
        match piece {
            Piece::Text(t) => out.text(t),
            Piece::Directive(d) if d.kind == Kind::SideEffect => {
                out.flush();
                if !out.failed() {
                    // Not inside the runtime: this thread may block until there is room.
                    let _ = side_tx.blocking_send(SideJob::Run(d));
                }
            }
            Piece::Directive(d) => {
                out.flush();
                if !out.failed() {
                    input.lend();
                    // Program order: a capture sees every earlier side effect's result.
                    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
                    if side_tx.blocking_send(SideJob::Barrier(done_tx)).is_ok() {
                        let _ = done_rx.blocking_recv();
                    }
                    let text = rt.block_on(capture(&dispatcher, &d, &problems));
                    out.text(&text);
                }
            }
        }
    };
    let mut report = FilterReport::default();
    let mut read_error = None;
    loop {
        let ended = match input.next(&mut buf) {
            Next::Here(len) => {
                scanner.feed_with(&buf[..len], |p| handle(&mut out, &mut input, p));
                false
            }
            Next::Chunk { buf, len } => {
                scanner.feed_with(&buf[..len], |p| handle(&mut out, &mut input, p));
                input.recycle(buf);
                false
            }
            Next::End => {
                scanner.finish_with(|p| handle(&mut out, &mut input, p));
                out.finish();
                true
            }
            Next::Failed(e) => {
                read_error = Some(e);
                scanner.finish_with(|p| handle(&mut out, &mut input, p));
                out.finish();
                true
            }
        };
        out.flush();
        if let Some(e) = out.take_error() {
            if e.kind() != ErrorKind::BrokenPipe {
                return Err(e);
            }
            report.output_closed = true;
            break;
        }
        if ended {
            break;
        }
    }
    input.close();
    drop(side_tx);
    let _ = rt.block_on(worker);
    if let Some(e) = read_error {
        return Err(io::Error::new(e.kind(), format!("reading stdin: {e}")));
    }
    report.problems = problems.load(Ordering::Relaxed);
    Ok(report)
}

/// Runs a capture and returns the text that replaces it.
async fn capture(dispatcher: &Dispatcher, d: &Directive, problems: &AtomicBool) -> Vec<u8> {
    let outcome = dispatcher.run_body(Kind::Capture, &d.body).await;
    report_outcome(d, &outcome, problems);
    match outcome {
        Outcome::Ran(ran) => {
            let mut out = ran.result.stdout;
            while out.last() == Some(&b'\n') {
                out.pop();
                if out.last() == Some(&b'\r') {
                    out.pop();
                }
            }
            out
        }
        Outcome::Blocked { .. } => Vec::new(),
    }
}

/// Work for the side-effect queue: a directive to run, or a barrier a capture waits on until
/// every side effect queued before it has finished.
enum SideJob {
    Run(Directive),
    Barrier(tokio::sync::oneshot::Sender<()>),
}

async fn side_effect_worker(
    dispatcher: Arc<Dispatcher>,
    mut rx: tokio::sync::mpsc::Receiver<SideJob>,
    show: bool,
    problems: Arc<AtomicBool>,
) {
    while let Some(job) = rx.recv().await {
        let d = match job {
            SideJob::Run(d) => d,
            SideJob::Barrier(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let outcome = dispatcher.run_body(Kind::SideEffect, &d.body).await;
        if show && let Outcome::Ran(ran) = &outcome {
            let mut err = io::stderr().lock();
            for bytes in [&ran.result.stdout, &ran.result.stderr] {
                let _ = err.write_all(&crate::term::for_terminal(
                    bytes,
                    io::stderr().is_terminal(),
                ));
            }
        }
        report_outcome(&d, &outcome, &problems);
    }
}

/// One stderr line for anything that did not go well.
fn report_outcome(d: &Directive, outcome: &Outcome, problems: &AtomicBool) {
    // Reasons and warnings may quote foreign text (a path, a program's name): shown inert.
    if let Outcome::Ran(ran) = outcome {
        for w in &ran.result.warnings {
            eprintln!("skillpipe: warning: {}", crate::term::sanitize(w));
        }
    }
    if let Some(line) = notice(d, outcome) {
        problems.store(true, Ordering::Relaxed);
        eprintln!("{}", crate::term::sanitize(&line));
    }
}

/// The notice for a directive, if it deserves one (blocked, or ran and failed).
pub fn notice(d: &Directive, outcome: &Outcome) -> Option<String> {
    let shown = one_line(&String::from_utf8_lossy(&d.raw));
    match outcome {
        Outcome::Blocked { decision, reason } => {
            let what = match decision {
                crate::audit::Decision::Invalid => "invalid",
                crate::audit::Decision::Declined => "declined",
                // It ran, and skillpipe was stopped under it (SIGINT, SIGHUP, SIGTERM).
                crate::audit::Decision::Ran => "stopped",
                _ => "blocked",
            };
            Some(format!("skillpipe: {what}: {shown}: {reason}"))
        }
        Outcome::Ran(ran) if !ran.result.success() => {
            let r = &ran.result;
            let how = match (&r.signal, r.timed_out) {
                (_, true) => "timed out".to_string(),
                (Some(sig), _) => format!("killed by {sig}"),
                // Say why: the last line of its stderr is usually the reason.
                (None, _) => match last_line(&r.stderr) {
                    Some(why) => format!("exited with {}: {why}", r.exit_code),
                    None => format!("exited with {}", r.exit_code),
                },
            };
            let hint = r
                .hint
                .as_ref()
                .map_or(String::new(), |h| format!("\n  {h}"));
            Some(format!("skillpipe: failed: {shown}: {how}{hint}"))
        }
        Outcome::Ran(_) => None,
    }
}

/// The last non-blank line of a command's stderr, sanitized and cut to 200 characters.
fn last_line(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    let mut line = crate::term::sanitize(line).into_owned();
    if let Some((cut, _)) = line.char_indices().nth(200) {
        line.truncate(cut);
        line.push('…');
    }
    Some(line)
}

/// Keeps a notice on one line, showing control and invisible characters escaped.
fn one_line(s: &str) -> String {
    crate::command::escape_controls(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what the filter writes, for a test to look at while it runs.
    #[derive(Clone, Default)]
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// While a slow side effect runs, scanning stops once SIDE_QUEUE more are waiting: the
    /// text after them is not written yet (were the queue unbounded, all of it would be).
    #[test]
    fn side_effect_queue_is_bounded() {
        let policy = crate::policy::ScriptPolicy {
            allow_scripts: true,
            allowed_commands: vec!["slow".into()],
            ..Default::default()
        };
        let audit = crate::audit::AuditLog::new(None);
        // The slow side effect is a confirmation that takes its time (and then says no).
        let dispatcher = Dispatcher::new(policy, Arc::default(), audit).with_asker(|_| {
            std::thread::sleep(std::time::Duration::from_millis(400));
            Ok(crate::confirm::Answer::No)
        });
        let dispatcher = Arc::new(dispatcher);
        let mut input = b"%{slow}".to_vec();
        for _ in 0..1000 {
            input.extend_from_slice(b"%{nope}t");
        }
        let out = Shared::default();
        let seen = out.clone();
        let rt = crate::cli::setup::runtime().unwrap();
        let filter = std::thread::spawn(move || {
            run(
                &rt,
                dispatcher,
                FilterOptions::default(),
                io::Cursor::new(input),
                out,
            )
            .unwrap()
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        let early = seen.0.lock().unwrap().len();
        let report = filter.join().unwrap();
        assert!(
            early <= SIDE_QUEUE + 1,
            "{early} texts written while the queue was full"
        );
        assert_eq!(seen.0.lock().unwrap().len(), 1000);
        assert!(report.problems);
    }

    #[test]
    fn notices_stay_on_one_line() {
        assert_eq!(one_line("%{echo \"a\nb\"}"), "%{echo \"a\\nb\"}");
    }

    #[test]
    fn a_failure_says_why_with_its_last_stderr_line() {
        assert_eq!(
            last_line(b"warming up\nno speech engine found\n\n").as_deref(),
            Some("no speech engine found")
        );
        assert_eq!(
            last_line(b"bad \x1b]0;title\x07\n").as_deref(),
            Some("bad ␛]0;title␇")
        );
        assert_eq!(last_line(b" \n"), None);
        assert_eq!(
            last_line("x".repeat(300).as_bytes())
                .unwrap()
                .chars()
                .count(),
            201
        );
    }
}
