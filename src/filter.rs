//! The Unix filter pipeline (DESIGN §9): stdin → scanner → stdout, directives run.
//!
//! A reader thread keeps reading input (bounded read-ahead) while a capture runs; text is
//! written as soon as it is scanned; side effects go to a bounded background queue that runs
//! them in order and is drained before the filter returns; captures run where they stand, in order,
//! and their stdout (trailing newlines removed) replaces them.

use crate::dispatch::{Dispatcher, Outcome};
use crate::scan::{Directive, Event, Kind, ScanOptions, Scanner};
use std::io::{self, ErrorKind, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes per read; below the allocator's mmap threshold so chunks stay cheap.
const CHUNK: usize = 64 * 1024;
/// Chunks read ahead while a capture runs (bounds memory).
const READ_AHEAD: usize = 16;
/// Side effects waiting for the one that runs. When the queue is full, scanning waits: a
/// stream of `%{…}` faster than they run must not pile up in memory (each may hold 8 KiB).
pub const SIDE_QUEUE: usize = 64;

#[derive(Debug, Clone, Copy, Default)]
pub struct FilterOptions {
    pub scan: ScanOptions,
    /// Copy side effects' stdout/stderr to stderr.
    pub show_side_effects: bool,
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
    mut output: W,
) -> io::Result<FilterReport>
where
    R: Read + Send + 'static,
    W: Write,
{
    let problems = Arc::new(AtomicBool::new(false));
    let (chunks_tx, chunks_rx) = std::sync::mpsc::sync_channel::<io::Result<Vec<u8>>>(READ_AHEAD);
    let stop_reading = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = stop_reading.clone();
        std::thread::spawn(move || read_chunks(input, chunks_tx, &stop))
    };

    let (side_tx, side_rx) = tokio::sync::mpsc::channel::<Directive>(SIDE_QUEUE);
    let worker = rt.spawn(side_effect_worker(
        dispatcher.clone(),
        side_rx,
        opts.show_side_effects,
        problems.clone(),
    ));

    let mut scanner = Scanner::new(opts.scan);
    let mut events = Vec::new();
    let mut report = FilterReport::default();
    let mut read_error = None;
    let mut ended = false;
    while !ended {
        match chunks_rx.recv() {
            Ok(Ok(chunk)) => scanner.feed(&chunk, &mut events),
            Ok(Err(e)) => {
                read_error = Some(e);
                scanner.finish(&mut events);
                ended = true;
            }
            Err(_) => {
                scanner.finish(&mut events);
                ended = true;
            }
        }
        for event in events.drain(..) {
            let step = match event {
                Event::Text(t) => output.write_all(&t),
                Event::Directive(d) if d.kind == Kind::SideEffect => {
                    // Not inside the runtime: this thread may block until there is room.
                    let _ = side_tx.blocking_send(d);
                    Ok(())
                }
                Event::Directive(d) => {
                    let text = rt.block_on(capture(&dispatcher, &d, &problems));
                    output.write_all(&text)
                }
            };
            if let Err(e) = step {
                if e.kind() != ErrorKind::BrokenPipe {
                    return Err(e);
                }
                report.output_closed = true;
                break;
            }
        }
        if report.output_closed {
            break;
        }
    }
    stop_reading.store(true, Ordering::Relaxed);
    drop(chunks_rx);
    drop(side_tx);
    let _ = rt.block_on(worker);
    if !report.output_closed {
        let _ = reader.join();
    }
    if let Some(e) = read_error {
        return Err(io::Error::new(e.kind(), format!("reading stdin: {e}")));
    }
    report.problems = problems.load(Ordering::Relaxed);
    Ok(report)
}

fn read_chunks<R: Read>(
    mut input: R,
    tx: std::sync::mpsc::SyncSender<io::Result<Vec<u8>>>,
    stop: &AtomicBool,
) {
    loop {
        let mut buf = vec![0u8; CHUNK];
        match input.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                buf.truncate(n);
                if tx.send(Ok(buf)).is_err() || stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
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

async fn side_effect_worker(
    dispatcher: Arc<Dispatcher>,
    mut rx: tokio::sync::mpsc::Receiver<Directive>,
    show: bool,
    problems: Arc<AtomicBool>,
) {
    while let Some(d) = rx.recv().await {
        let outcome = dispatcher.run_body(Kind::SideEffect, &d.body).await;
        if show && let Outcome::Ran(ran) = &outcome {
            let mut err = io::stderr().lock();
            let _ = err.write_all(&ran.result.stdout);
            let _ = err.write_all(&ran.result.stderr);
        }
        report_outcome(&d, &outcome, &problems);
    }
}

/// One stderr line for anything that did not go well.
fn report_outcome(d: &Directive, outcome: &Outcome, problems: &AtomicBool) {
    if let Outcome::Ran(ran) = outcome {
        for w in &ran.result.warnings {
            eprintln!("skillpipe: warning: {w}");
        }
    }
    if let Some(line) = notice(d, outcome) {
        problems.store(true, Ordering::Relaxed);
        eprintln!("{line}");
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
                _ => "blocked",
            };
            Some(format!("skillpipe: {what}: {shown}: {reason}"))
        }
        Outcome::Ran(ran) if !ran.result.success() => {
            let r = &ran.result;
            let how = match (&r.signal, r.timed_out) {
                (_, true) => "timed out".to_string(),
                (Some(sig), _) => format!("killed by {sig}"),
                (None, _) => format!("exited with {}", r.exit_code),
            };
            Some(format!("skillpipe: failed: {shown}: {how}"))
        }
        Outcome::Ran(_) => None,
    }
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
}
