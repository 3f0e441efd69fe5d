//! The Unix filter pipeline (DESIGN §9): stdin → scanner → stdout, directives run.
//!
//! Input is read and scanned on the calling thread, and text is written as soon as it is
//! scanned, mostly straight from the read buffer (the zero-copy path the chat loop has no need
//! for). Scanning and what happens to directives are the `Driver`'s, shared with the chat
//! loop: side effects go to its bounded queue, which runs them in order and is drained before
//! the filter returns; a capture runs where it stands once the side effects before it have
//! finished, and its capture text replaces it; every outcome becomes a typed [`Report`] for the
//! [`Reporter`], side effects' as soon as they end.
//! While a capture runs, a helper thread keeps reading input (bounded read-ahead, see `input`).

mod input;
mod output;

use crate::dispatch::Dispatcher;
use crate::pipeline::{CaptureMode, Driver, DriverOptions, Event, Flow, Listener, Report};
use crate::scan::{Kind, ScanOptions};
use input::{Input, Next};
use output::Output;
use std::io::{self, ErrorKind, Read, Write};
use std::sync::Arc;
use tokio::runtime::{Handle, RuntimeFlavor};

/// Bytes per read. A pipe read returns at most what the pipe holds, so this is also the pipe
/// buffer size `skillpipe filter` asks for.
pub(crate) const CHUNK: usize = 256 * 1024;

/// How the filter scans.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct FilterOptions {
    /// Scanner limits and whether Markdown code counts.
    pub scan: ScanOptions,
    /// Show the output inert (a terminal): every control visibly escaped. Off, it is byte-exact.
    pub sanitize: bool,
    /// Write a directive that did not run (refused or invalid) through as the bytes it was,
    /// instead of stripping it; side effects then run one at a time, before the text after them.
    pub keep_refused: bool,
}

/// What the run saw; `problems` drives `--strict`.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct FilterReport {
    /// At least one directive was blocked, invalid or failed.
    pub problems: bool,
    /// Output was closed early (e.g. `| head`).
    pub output_closed: bool,
}

/// Where the filter tells what happened besides the text (the `skillpipe` binary writes it
/// to stderr). Called from the reading thread and from the side-effect worker.
pub trait Reporter: Send + Sync {
    /// A directive ended (ran, failed, was blocked, …) or a run left a warning.
    fn report(&self, report: &Report);
    /// A side effect's own output (for `--show-side-effects`). Ignored by default.
    fn side_effect_output(&self, _stdout: &[u8], _stderr: &[u8]) {}
}

/// Runs the filter to the end of `input`, blocking this thread; `rt` runs the commands.
///
/// Any thread may call it: a plain one, a `spawn_blocking` one, or a worker of a multi-thread
/// runtime (e.g. straight from `#[tokio::main]` code), whose other tasks move to another worker
/// while this one blocks. From async code [`run_async`] is the better fit (it keeps the worker).
///
/// # Panics
/// Called from a task of a current-thread runtime (`#[tokio::main(flavor = "current_thread")]`,
/// `#[tokio::test]`), it panics with tokio's "Cannot start a runtime from within a runtime"
/// when the first directive arrives (the text before it has been written by then): that thread
/// is the runtime, so blocking it would stall the commands it is to run. Use [`run_async`] there.
pub fn run<R, W>(
    rt: &Handle,
    dispatcher: Arc<Dispatcher>,
    opts: FilterOptions,
    input: R,
    output: W,
    reporter: Arc<dyn Reporter>,
) -> io::Result<FilterReport>
where
    R: Read + Send + 'static,
    W: Write,
{
    let here = move || run_here(rt, dispatcher, opts, input, output, reporter);
    match Handle::try_current() {
        // On a worker (or a current-thread runtime's task), blocking needs the runtime's leave;
        // elsewhere (no runtime, a blocking-pool thread) it passes `here` straight through.
        Ok(current) if current.runtime_flavor() != RuntimeFlavor::CurrentThread => {
            tokio::task::block_in_place(here)
        }
        _ => here(),
    }
}

/// [`run`] on a thread that may block.
fn run_here<R, W>(
    rt: &Handle,
    dispatcher: Arc<Dispatcher>,
    opts: FilterOptions,
    input: R,
    output: W,
    reporter: Arc<dyn Reporter>,
) -> io::Result<FilterReport>
where
    R: Read + Send + 'static,
    W: Write,
{
    // Side effects finish while this thread may be blocked reading: they report as they end.
    let listener: Listener = {
        let reporter = reporter.clone();
        Arc::new(move |ev| tell(&*reporter, ev))
    };
    let driver_opts = DriverOptions {
        scan: opts.scan,
        captures: CaptureMode::InPlace,
        max_captures: None,
        announced: crate::scan::Announced::Full,
        keep_refused: opts.keep_refused,
        max_side_effects: None,
    };
    let mut driver = Driver::new(dispatcher, driver_opts, rt, Some(listener));
    let mut input = Input::new(input, CHUNK);
    let mut buf = vec![0u8; CHUNK];
    let mut out = Output::new(output, CHUNK, opts.sanitize);
    let mut report = FilterReport::default();
    let mut read_error = None;
    loop {
        // A signal is stopping skillpipe: what is still to come is not read, nor run.
        if crate::exec::interrupted_by().is_some() {
            out.finish();
            out.flush();
            break;
        }
        let next = input.next(&mut buf);
        let ended = matches!(next, Next::End | Next::Failed(_));
        let sink = &mut |ev: Event<'_>| on_event(&mut out, &mut input, &*reporter, ev);
        let lent = match next {
            Next::Here(len) => {
                driver.feed_blocking(rt, &buf[..len], sink);
                None
            }
            Next::Chunk { buf, len } => {
                driver.feed_blocking(rt, &buf[..len], sink);
                Some(buf)
            }
            Next::End => {
                driver.finish_blocking(rt, sink);
                None
            }
            Next::Failed(e) => {
                read_error = Some(e);
                driver.finish_blocking(rt, sink);
                None
            }
        };
        if let Some(buf) = lent {
            input.recycle(buf);
        }
        if ended {
            out.finish();
        }
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
    driver.settle_blocking(rt, &mut |ev| {
        tell(&*reporter, ev);
        Flow::Continue(())
    });
    if let Some(e) = read_error {
        return Err(io::Error::new(e.kind(), format!("reading stdin: {e}")));
    }
    report.problems = driver.problems();
    Ok(report)
}

/// The filter's side of the pipeline: text goes out as it is scanned; before a directive acts,
/// the text before it is written (and for a capture, input keeps being read meanwhile).
/// Stops the pipeline once the output has failed.
#[inline(always)]
fn on_event<R, W>(
    out: &mut Output<W>,
    input: &mut Input<R>,
    reporter: &dyn Reporter,
    ev: Event<'_>,
) -> Flow
where
    R: Read + Send + 'static,
    W: Write,
{
    match ev {
        Event::Text(t) => out.text(t),
        ev => on_other(out, input, reporter, ev),
    }
    if out.failed() {
        Flow::Break(())
    } else {
        Flow::Continue(())
    }
}

/// [`on_event`] for all but text, out of the hot path.
#[inline(never)]
fn on_other<R, W>(out: &mut Output<W>, input: &mut Input<R>, reporter: &dyn Reporter, ev: Event<'_>)
where
    R: Read + Send + 'static,
    W: Write,
{
    match ev {
        Event::Directive(d) => {
            out.flush();
            if d.kind == Kind::Capture && !out.failed() {
                input.lend();
            }
        }
        ev => tell(reporter, ev),
    }
}

/// Reports and side-effect output go to the [`Reporter`].
fn tell(reporter: &dyn Reporter, ev: Event<'_>) {
    match ev {
        Event::Report(r) => reporter.report(&r),
        Event::Output { stdout, stderr } => reporter.side_effect_output(stdout, stderr),
        Event::Text(_)
        | Event::Directive(_)
        | Event::Refused { .. }
        | Event::Running(_)
        | Event::Capture(_) => {}
    }
}

/// [`run`] for async code: runs it on the runtime's blocking pool and waits for it there.
pub async fn run_async<R, W>(
    dispatcher: Arc<Dispatcher>,
    opts: FilterOptions,
    input: R,
    output: W,
    reporter: Arc<dyn Reporter>,
) -> io::Result<FilterReport>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let rt = Handle::current();
    tokio::task::spawn_blocking(move || run(&rt, dispatcher, opts, input, output, reporter))
        .await
        .map_err(io::Error::other)?
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
        let rt = tokio::runtime::Runtime::new().unwrap();
        let filter = std::thread::spawn(move || {
            run(
                rt.handle(),
                dispatcher,
                FilterOptions::default(),
                io::Cursor::new(input),
                out,
                Arc::new(Quiet),
            )
            .unwrap()
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        let early = seen.0.lock().unwrap().len();
        let report = filter.join().unwrap();
        assert!(
            early <= crate::pipeline::SIDE_QUEUE + 1,
            "{early} texts written while the queue was full"
        );
        assert_eq!(seen.0.lock().unwrap().len(), 1000);
        assert!(report.problems);
    }

    struct Quiet;
    impl Reporter for Quiet {
        fn report(&self, _: &Report) {}
    }

    /// From async code, `run_async` works too (without taking a worker).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_from_async_code() {
        let dispatcher = Arc::new(Dispatcher::new(
            crate::policy::ScriptPolicy::default(),
            Arc::default(),
            crate::audit::AuditLog::new(None),
        ));
        let out = Shared::default();
        let input = io::Cursor::new(b"a %{x} b !{y} c".to_vec());
        let report = run_async(
            dispatcher,
            FilterOptions::default(),
            input,
            out.clone(),
            Arc::new(Quiet),
        )
        .await
        .unwrap();
        assert_eq!(&*out.0.lock().unwrap(), b"a  b  c");
        assert!(report.problems, "scripts are off: both were blocked");
    }
}
