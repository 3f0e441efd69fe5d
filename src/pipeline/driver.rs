//! The one directive pipeline (DESIGN §7, §9): bytes in, typed [`Event`]s out.
//!
//! The filter and the chat loop feed their streams through a [`Driver`]: text comes out as it is
//! scanned, side effects go to the one ordered, bounded queue, a capture either runs where it
//! stands (the filter: its capture text takes its place) or is handed back (the chat loop stops
//! the model's stream there and continues after the result), at most `max_captures` of them,
//! and every outcome becomes typed [`Report`]s through one path that also keeps the problems
//! flag (`--strict`). A directive the stream's writer was not told about ([`Announced`]) is
//! text: routed out as the bytes it was, before any report or audit.

use super::queue::{SideDone, SideQueue, side_effect_queue};
use super::report::{Report, capture_text};
use crate::audit::Decision;
use crate::dispatch::{Dispatcher, InFlight, Origin, Outcome};
use crate::scan::{self, Announced, Directive, Kind, Piece, ScanOptions, Scanner};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// What a sink tells the driver after an event: go on, or stop acting on this stream (the
/// output is gone, or the caller stops at a capture). Stopped, the driver drops what follows
/// until [`Driver::restart`].
pub type Flow = ControlFlow<()>;

/// What the driver makes of the stream, in program order.
#[derive(Debug)]
pub enum Event<'a> {
    /// Text to show as it is; for a capture run in place, its capture text.
    Text(&'a [u8]),
    /// A directive is about to be acted on: the text before it is complete (write it out now,
    /// so that what the directive does comes after it).
    Directive(&'a Directive),
    /// A capture is about to run (the side effects before it have finished).
    Running(&'a Directive),
    /// How a directive ended, or why it was refused.
    Report(Report),
    /// A directive was refused where it was found (over a per-answer bound), after its report:
    /// it will not run, and the stream goes on.
    Refused,
    /// What a finished side effect wrote (for `--show-side-effects`), unsanitized.
    Output {
        /// Its stdout.
        stdout: &'a [u8],
        /// Its stderr.
        stderr: &'a [u8],
    },
    /// A capture for the caller to run ([`CaptureMode::HandBack`]); the driver stops here.
    Capture(Directive),
}

/// What the driver does at a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureMode {
    /// Run it where it stands and put its capture text in its place (the filter).
    InPlace,
    /// Hand it back as [`Event::Capture`] and stop: the caller runs it with
    /// [`Driver::run_capture`] and feeds what follows in a new stream (the chat loop).
    HandBack,
}

/// Takes the events of finished side effects on the side-effect worker, as they finish (for a
/// caller that cannot poll, like the filter blocked on its input).
pub type Listener = Arc<dyn Fn(Event<'_>) + Send + Sync>;

/// How a [`Driver`] scans and what it does at a capture.
#[derive(Debug, Clone, Copy)]
pub struct DriverOptions {
    /// Scanner limits and whether Markdown code counts.
    pub scan: ScanOptions,
    /// Run captures in place or hand them back.
    pub captures: CaptureMode,
    /// Captures (and counted tool calls) allowed before further ones are refused.
    pub max_captures: Option<usize>,
    /// The directives acted on; the others are text ([`Announced::Nothing`]: no scanning).
    pub announced: Announced,
    /// A directive that did not run (refused by the policy or the user, or invalid) is
    /// written through as the bytes it was, in place: side effects then run one at a time, each
    /// decided before the text after it goes out (`filter --keep-refused`).
    pub keep_refused: bool,
    /// Side effects allowed before further ones are refused.
    pub max_side_effects: Option<usize>,
}

/// One stream's pipeline (a filter run, a chat turn). Dropping it stops its side-effect worker.
pub struct Driver {
    /// `None` only while a chunk is being scanned (the scanner's sink needs the rest of `self`).
    scanner: Option<Scanner>,
    /// Scanned events waiting to be routed (the async path).
    events: Vec<scan::Event>,
    opts: DriverOptions,
    dispatcher: Arc<Dispatcher>,
    queue: SideQueue,
    /// Finished side effects for [`Driver::finished`]; `None` when a [`Listener`] takes them.
    finished: Option<mpsc::UnboundedReceiver<SideDone>>,
    worker: JoinHandle<()>,
    captures: usize,
    side_effects: usize,
    problems: Arc<AtomicBool>,
    stopped: bool,
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.worker.abort();
    }
}

impl Driver {
    /// A driver whose side effects run on `rt`. With a `listener`, finished side effects go to
    /// it as they finish; without, the caller collects them ([`Driver::finished`],
    /// [`Driver::settle`]).
    pub fn new(
        dispatcher: Arc<Dispatcher>,
        opts: DriverOptions,
        rt: &Handle,
        listener: Option<Listener>,
    ) -> Driver {
        let problems = Arc::new(AtomicBool::new(false));
        let (queue, finished, worker) = match listener {
            Some(listener) => {
                let problems = problems.clone();
                let (queue, worker) =
                    side_effect_queue(dispatcher.clone(), move |(d, o, _reporting)| {
                        emit_outcome(&d.raw, &o, true, &problems, &mut |e| {
                            listener(e);
                            Flow::Continue(())
                        })
                    });
                (queue, None, rt.spawn(worker))
            }
            None => {
                let (tx, rx) = mpsc::unbounded_channel();
                let (queue, worker) = side_effect_queue(dispatcher.clone(), move |done| {
                    let _ = tx.send(done);
                });
                (queue, Some(rx), rt.spawn(worker))
            }
        };
        Driver {
            scanner: scanner(&opts),
            events: Vec::new(),
            opts,
            dispatcher,
            queue,
            finished,
            worker,
            captures: 0,
            side_effects: 0,
            problems,
            stopped: false,
        }
    }

    /// A new stream (after a capture was handed back): fresh scanner, no longer stopped.
    /// Side effects, the capture count and the problems flag carry on.
    pub fn restart(&mut self) {
        self.scanner = scanner(&self.opts);
        self.events.clear();
        self.stopped = false;
    }

    /// Scans `chunk` on a thread outside the runtime (the filter), text straight from `chunk`;
    /// directives are acted on through `rt`, blocking this thread.
    pub fn feed_blocking<S>(&mut self, rt: &Handle, chunk: &[u8], sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow,
    {
        let Some(mut scanner) = self.scanner.take() else {
            // Nothing announced: no scanner, the chunk is text.
            return self.piece_blocking(rt, Piece::Text(chunk), sink);
        };
        scanner.feed_with(chunk, |p| self.piece_blocking(rt, p, sink));
        self.scanner = Some(scanner);
    }

    /// The end of the stream, for [`Driver::feed_blocking`]: what the scanner held back.
    pub fn finish_blocking<S>(&mut self, rt: &Handle, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow,
    {
        let Some(mut scanner) = self.scanner.take() else {
            return;
        };
        scanner.finish_with(|p| self.piece_blocking(rt, p, sink));
        self.scanner = Some(scanner);
    }

    /// Text is the hot path (called per run of text); a directive goes out of line.
    #[inline(always)]
    fn piece_blocking<S>(&mut self, rt: &Handle, piece: Piece<'_>, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow,
    {
        match piece {
            Piece::Text(t) => {
                if !self.stopped && sink(Event::Text(t)).is_break() {
                    self.stopped = true;
                }
            }
            Piece::Directive(d) => self.directive_blocking(rt, d, sink),
        }
    }

    #[inline(never)]
    fn directive_blocking<S>(&mut self, rt: &Handle, d: Directive, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow,
    {
        if !self.stopped {
            rt.block_on(self.directive(d, sink));
        }
    }

    /// Scans `chunk` from async code (the chat loop).
    pub async fn feed(&mut self, chunk: &[u8], sink: &mut (dyn FnMut(Event<'_>) -> Flow + Send)) {
        let mut events = std::mem::take(&mut self.events);
        match &mut self.scanner {
            Some(scanner) => scanner.feed(chunk, &mut events),
            None => events.push(scan::Event::Text(chunk.to_vec())),
        }
        self.route(&mut events, sink).await;
        self.events = events;
    }

    /// The end of the stream, for [`Driver::feed`].
    pub async fn finish(&mut self, sink: &mut (dyn FnMut(Event<'_>) -> Flow + Send)) {
        let mut events = std::mem::take(&mut self.events);
        if let Some(scanner) = &mut self.scanner {
            scanner.finish(&mut events);
        }
        self.route(&mut events, sink).await;
        self.events = events;
    }

    /// The stream broke off: what the scanner held back comes out as text, nothing runs.
    pub fn abandon(&mut self, sink: &mut (dyn FnMut(Event<'_>) -> Flow + Send)) {
        let mut events = std::mem::take(&mut self.events);
        if let Some(scanner) = &mut self.scanner {
            scanner.finish(&mut events);
        }
        for ev in events.drain(..) {
            if let scan::Event::Text(t) = ev
                && !self.stopped
            {
                self.stopped = sink(Event::Text(&t)).is_break();
            }
        }
        self.events = events;
    }

    async fn route(
        &mut self,
        events: &mut Vec<scan::Event>,
        sink: &mut (dyn FnMut(Event<'_>) -> Flow + Send),
    ) {
        for ev in events.drain(..) {
            if self.stopped {
                continue;
            }
            match ev {
                scan::Event::Text(t) => self.stopped = sink(Event::Text(&t)).is_break(),
                scan::Event::Directive(d) => self.directive(d, sink).await,
            }
        }
    }

    /// The one routing of a directive: one not announced is text; a side effect to the queue
    /// (or, keeping refused ones, run before what follows), a capture run in place or handed
    /// back; refused when over a per-answer bound.
    async fn directive<S>(&mut self, d: Directive, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        if !self.opts.announced.covers(&d) {
            self.stopped = sink(Event::Text(&d.raw)).is_break();
            return;
        }
        if sink(Event::Directive(&d)).is_break() {
            self.stopped = true;
            return;
        }
        match d.kind {
            Kind::SideEffect => {
                if let Some(max) = self.opts.max_side_effects
                    && self.side_effects >= max
                {
                    let why = format!("max_side_effects_per_turn = {max} reached");
                    return self.refuse_over(&d, "max_side_effects_per_turn", why, sink);
                }
                self.side_effects += 1;
                if self.opts.keep_refused {
                    // In program order: every earlier side effect has finished.
                    self.settle(sink).await;
                    let _reporting = InFlight::enter();
                    let outcome = self.dispatcher.run_body(Kind::SideEffect, &d.body).await;
                    emit_outcome(&d.raw, &outcome, true, &self.problems, sink);
                    if !ran(&outcome) {
                        self.stopped = sink(Event::Text(&d.raw)).is_break();
                    }
                } else {
                    self.queue.push(d).await
                }
            }
            Kind::Capture => {
                if let Some(why) = self.limit_reached() {
                    return self.refuse_over(&d, "max_captures_per_turn", why, sink);
                }
                match self.opts.captures {
                    CaptureMode::HandBack => {
                        let _ = sink(Event::Capture(d));
                        self.stopped = true;
                    }
                    CaptureMode::InPlace => {
                        let text = match self.run_capture(&d, sink).await {
                            o if ran(&o) || !self.opts.keep_refused => capture_text(&o).to_vec(),
                            _ => d.raw.clone(),
                        };
                        self.stopped = sink(Event::Text(&text)).is_break();
                    }
                }
            }
        }
    }

    /// Runs a capture (counted toward the limit): every earlier side effect to its end
    /// (program order), then the dispatcher; its report goes to `sink`.
    pub async fn run_capture<S>(&mut self, d: &Directive, sink: &mut S) -> Outcome
    where
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        self.captures += 1;
        self.settle(sink).await;
        let _ = sink(Event::Running(d));
        // A signal's exit waits for the report as well as for the run.
        let _reporting = InFlight::enter();
        let outcome = self.dispatcher.run_body(Kind::Capture, &d.body).await;
        self.report(&d.raw, &outcome, sink);
        outcome
    }

    /// Why no further capture may run, once `max_captures` have.
    pub fn limit_reached(&self) -> Option<String> {
        let max = self.opts.max_captures?;
        (self.captures >= max).then(|| format!("max_captures_per_turn = {max} reached"))
    }

    /// Counts a capture that runs outside [`Driver::run_capture`] (a native tool call).
    pub fn count_capture(&mut self) {
        self.captures += 1;
    }

    /// Captures (and counted tool calls) so far.
    pub fn captures(&self) -> usize {
        self.captures
    }

    /// A directive, tool call or report was a problem (blocked, declined, invalid, failed).
    pub fn problems(&self) -> bool {
        self.problems.load(Ordering::Relaxed)
    }

    /// Waits until every side effect queued so far has finished; with no [`Listener`], their
    /// events go to `sink`.
    pub async fn settle<S>(&mut self, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        self.queue.settled().await;
        self.finished(sink);
    }

    /// [`Driver::settle`] from a thread outside the runtime.
    pub fn settle_blocking<S>(&mut self, rt: &Handle, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow,
    {
        rt.block_on(self.settle(sink));
    }

    /// The events of side effects that have finished by now (with no [`Listener`]).
    pub fn finished<S>(&mut self, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        let Some(rx) = &mut self.finished else { return };
        while let Ok((d, outcome, _reporting)) = rx.try_recv() {
            emit_outcome(&d.raw, &outcome, true, &self.problems, sink);
        }
    }

    /// Awaits `fut`, giving `sink` the events of each side effect as it finishes meanwhile (with
    /// no [`Listener`]): a caller waiting for its input (the chat for the model) reports them at
    /// once, so a signal's exit does not wait for the next input to get them out.
    pub async fn meanwhile<F, S>(&mut self, fut: F, sink: &mut S) -> F::Output
    where
        F: std::future::Future,
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        let Some(rx) = &mut self.finished else {
            return fut.await;
        };
        tokio::pin!(fut);
        loop {
            tokio::select! {
                biased;
                out = &mut fut => return out,
                Some((d, outcome, _reporting)) = rx.recv() => {
                    emit_outcome(&d.raw, &outcome, true, &self.problems, sink);
                }
            }
        }
    }

    /// The reports for an outcome of `what` (a directive as written, or `tool NAME`).
    pub fn report<S>(&self, what: &[u8], outcome: &Outcome, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        emit_outcome(what, outcome, false, &self.problems, sink);
    }

    /// Refuses a run without asking the dispatcher's policy: audited with `decision`, and a
    /// problem. The caller reports the returned outcome, or says so its own way.
    pub fn refuse(
        &self,
        origin: Origin,
        argv: &[String],
        decision: Decision,
        why: String,
    ) -> Outcome {
        self.problems.store(true, Ordering::Relaxed);
        self.dispatcher.refuse(origin, argv, decision, why)
    }

    /// A directive past the per-answer bound `key`: refused where found, its audit line naming
    /// the bound (`limit`).
    fn refuse_over<S>(&self, d: &Directive, key: &'static str, why: String, sink: &mut S)
    where
        S: FnMut(Event<'_>) -> Flow + ?Sized,
    {
        self.problems.store(true, Ordering::Relaxed);
        let argv = std::slice::from_ref(&d.body);
        let outcome = self
            .dispatcher
            .refuse_over_limit(Origin::from(d.kind), argv, key, why);
        self.report(&d.raw, &outcome, sink);
        let _ = sink(Event::Refused);
    }
}

/// A new scanner for `opts`; none when nothing is announced (the stream is text).
fn scanner(opts: &DriverOptions) -> Option<Scanner> {
    (opts.announced != Announced::Nothing).then(|| Scanner::new(opts.scan))
}

/// The directive was acted on: it ran (whatever its exit), rather than being refused or invalid.
fn ran(outcome: &Outcome) -> bool {
    match outcome {
        Outcome::Ran(_) => true,
        Outcome::Blocked { decision, .. } => *decision == Decision::Ran,
    }
}

/// The one path from an outcome to events: a side effect's output (when `output`), then its
/// reports; a problem marks the run.
fn emit_outcome<S>(
    what: &[u8],
    outcome: &Outcome,
    output: bool,
    problems: &AtomicBool,
    sink: &mut S,
) where
    S: FnMut(Event<'_>) -> Flow + ?Sized,
{
    if let (true, Outcome::Ran(ran)) = (output, outcome) {
        let _ = sink(Event::Output {
            stdout: &ran.result.stdout,
            stderr: &ran.result.stderr,
        });
    }
    for r in Report::for_outcome(what, outcome) {
        if r.is_problem() {
            problems.store(true, Ordering::Relaxed);
        }
        let _ = sink(Event::Report(r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Scripts off: every directive is refused by the policy, which is all these tests need.
    fn dispatcher() -> Arc<Dispatcher> {
        Arc::new(Dispatcher::new(
            crate::policy::ScriptPolicy::default(),
            Arc::default(),
            crate::audit::AuditLog::new(None),
        ))
    }

    fn opts(captures: CaptureMode, max_captures: Option<usize>) -> DriverOptions {
        DriverOptions {
            scan: ScanOptions::default(),
            captures,
            max_captures,
            announced: Announced::Full,
            keep_refused: false,
            max_side_effects: None,
        }
    }

    /// Each event as one line, for comparing.
    fn line(ev: Event<'_>) -> String {
        match ev {
            Event::Text(t) => format!("text {}", String::from_utf8_lossy(t)),
            Event::Directive(d) => format!("directive {}", String::from_utf8_lossy(&d.raw)),
            Event::Running(d) => format!("running {}", d.body),
            Event::Report(r) => format!("report {r}"),
            Event::Refused => "refused".into(),
            Event::Output { .. } => "output".into(),
            Event::Capture(d) => format!("capture {}", d.body),
        }
    }

    /// A sink that keeps each event's [`line`] in `seen`.
    fn record(seen: &mut Vec<String>, ev: Event<'_>) -> Flow {
        seen.push(line(ev));
        Flow::Continue(())
    }

    #[tokio::test]
    async fn a_capture_handed_back_stops_the_stream() {
        let rt = Handle::current();
        let mut driver = Driver::new(dispatcher(), opts(CaptureMode::HandBack, None), &rt, None);
        let mut seen = Vec::new();
        let sink = &mut |ev: Event<'_>| record(&mut seen, ev);
        driver.feed(b"a %{x} b !{y} c", sink).await;
        driver.finish(sink).await;
        driver.settle(sink).await;
        assert_eq!(
            seen,
            [
                "text a ",
                "directive %{x}",
                "text  b ",
                "directive !{y}",
                "capture y",
                "report blocked: %{x}: scripts are not allowed (allow_scripts is off)",
            ]
        );
        assert!(driver.problems());
        // A new stream goes on where the capture was.
        driver.restart();
        seen.clear();
        let sink = &mut |ev: Event<'_>| record(&mut seen, ev);
        driver.feed(b" c", sink).await;
        driver.finish(sink).await;
        assert_eq!(seen, ["text  c"]);
    }

    #[tokio::test]
    async fn captures_over_the_limit_are_refused_where_found() {
        let rt = Handle::current();
        let mut driver = Driver::new(
            dispatcher(),
            opts(CaptureMode::HandBack, Some(1)),
            &rt,
            None,
        );
        let mut seen = Vec::new();
        let sink = &mut |ev: Event<'_>| record(&mut seen, ev);
        driver.feed(b"!{one}", sink).await;
        driver.restart();
        let d = Directive {
            kind: Kind::Capture,
            body: "one".into(),
            raw: b"!{one}".to_vec(),
        };
        driver.run_capture(&d, sink).await;
        assert_eq!(driver.captures(), 1);
        driver.feed(b"!{late} after", sink).await;
        driver.finish(sink).await;
        assert_eq!(
            seen,
            [
                "directive !{one}",
                "capture one",
                "running one",
                "report blocked: !{one}: scripts are not allowed (allow_scripts is off)",
                "directive !{late}",
                "report blocked: !{late}: max_captures_per_turn = 1 reached",
                "refused",
                "text  after",
            ]
        );
        assert_eq!(
            driver.limit_reached().as_deref(),
            Some("max_captures_per_turn = 1 reached")
        );
        assert!(driver.problems());
    }

    /// The filter's way: blocking, from a plain thread, a capture run in place (its capture text,
    /// empty when refused, takes its place), side effects reported to the listener before a
    /// later capture runs.
    #[test]
    fn in_place_from_a_thread_with_a_listener() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let listener: Listener = {
            let heard = heard.clone();
            Arc::new(move |ev| heard.lock().unwrap().push(line(ev)))
        };
        let handle = rt.handle().clone();
        let mut driver = Driver::new(
            dispatcher(),
            opts(CaptureMode::InPlace, None),
            &handle,
            Some(listener),
        );
        let mut seen = Vec::new();
        let sink = &mut |ev: Event<'_>| {
            let l = line(ev);
            if l.starts_with("running") {
                // By now the side effect before the capture has been reported.
                assert_eq!(heard.lock().unwrap().len(), 1);
            }
            seen.push(l);
            Flow::Continue(())
        };
        driver.feed_blocking(&handle, b"a %{x} b !{y} c", sink);
        driver.finish_blocking(&handle, sink);
        driver.settle_blocking(&handle, sink);
        assert_eq!(
            seen,
            [
                "text a ",
                "directive %{x}",
                "text  b ",
                "directive !{y}",
                "running y",
                "report blocked: !{y}: scripts are not allowed (allow_scripts is off)",
                "text ",
                "text  c",
            ]
        );
        assert_eq!(
            *heard.lock().unwrap(),
            ["report blocked: %{x}: scripts are not allowed (allow_scripts is off)"]
        );
        assert!(driver.problems());
    }

    /// What was not announced is text, as the bytes it was: no report, no audit, no problem.
    #[tokio::test]
    async fn directives_not_announced_are_text() {
        let rt = Handle::current();
        let input: &[u8] = b"a %{x} b !{skill calc} c %{count} d";
        for (announced, want) in [
            (
                Announced::Nothing,
                vec!["text a %{x} b !{skill calc} c %{count} d"],
            ),
            (
                Announced::SkillReads,
                vec![
                    "text a ",
                    "text %{x}",
                    "text  b ",
                    "directive !{skill calc}",
                    "capture skill calc",
                ],
            ),
        ] {
            let mut o = opts(CaptureMode::HandBack, None);
            o.announced = announced;
            let mut driver = Driver::new(dispatcher(), o, &rt, None);
            let mut seen = Vec::new();
            let sink = &mut |ev: Event<'_>| record(&mut seen, ev);
            driver.feed(input, sink).await;
            driver.finish(sink).await;
            driver.settle(sink).await;
            assert_eq!(seen, want, "{announced:?}");
            assert!(!driver.problems());
        }
    }

    /// Keeping refused directives: each is written through where it stood, after its report.
    #[test]
    fn refused_directives_are_kept_in_place() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let handle = rt.handle().clone();
        let mut o = opts(CaptureMode::InPlace, None);
        o.keep_refused = true;
        let mut driver = Driver::new(dispatcher(), o, &handle, None);
        let mut seen = Vec::new();
        let sink = &mut |ev: Event<'_>| record(&mut seen, ev);
        driver.feed_blocking(&handle, b"a %{x} b !{y} c", sink);
        driver.finish_blocking(&handle, sink);
        let text: String = (seen.iter())
            .filter_map(|l| l.strip_prefix("text "))
            .collect();
        assert_eq!(text, "a %{x} b !{y} c");
        assert!(driver.problems());
    }

    /// A sink that stops (the output is gone) stops everything after it: nothing more is shown
    /// and no later directive is acted on.
    #[test]
    fn a_stopped_sink_stops_the_pipeline() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let handle = rt.handle().clone();
        let mut driver = Driver::new(
            dispatcher(),
            opts(CaptureMode::InPlace, None),
            &handle,
            None,
        );
        let mut seen = Vec::new();
        let sink = &mut |ev: Event<'_>| {
            seen.push(line(ev));
            Flow::Break(())
        };
        driver.feed_blocking(&handle, b"a %{x} b", sink);
        driver.finish_blocking(&handle, sink);
        driver.settle_blocking(&handle, sink);
        assert_eq!(seen, ["text a "]);
        assert!(!driver.problems());
    }
}
