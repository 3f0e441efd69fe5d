//! The Unix filter pipeline (DESIGN §9): stdin → scanner → stdout, directives run.
//!
//! A reader thread keeps reading input (bounded read-ahead) while a capture runs; text is
//! written as soon as it is scanned; side effects go to a background queue that runs them in
//! order and is drained before the filter returns; captures run where they stand, in order,
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

    let (side_tx, side_rx) = tokio::sync::mpsc::unbounded_channel::<Directive>();
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
                    let _ = side_tx.send(d);
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
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Directive>,
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

/// Keeps a notice on one line: control characters are shown escaped.
fn one_line(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_stay_on_one_line() {
        assert_eq!(one_line("%{echo \"a\nb\"}"), "%{echo \"a\\nb\"}");
    }
}
