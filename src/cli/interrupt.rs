//! SIGINT, SIGHUP and SIGTERM for `filter`, one-shot `chat` and `run`: kill the runs in flight, let
//! each write its audit line and remove its `$TMPDIR`, then exit as killed by that signal
//! would (128 + N).

use std::time::Duration;

/// How long the runs get to write their audit lines after being killed.
const SETTLE: Duration = Duration::from_secs(2);

/// Install the handlers on `rt`. Call before any run starts.
pub fn install(rt: &tokio::runtime::Runtime) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let _guard = rt.enter();
    let mut streams = Vec::new();
    for (kind, num) in [
        (SignalKind::interrupt(), libc::SIGINT),
        (SignalKind::hangup(), libc::SIGHUP),
        (SignalKind::terminate(), libc::SIGTERM),
    ] {
        streams.push((signal(kind)?, num));
    }
    rt.spawn(async move {
        // The first of the three to arrive.
        let waits = streams.iter_mut().map(|(s, num)| {
            let num = *num;
            Box::pin(async move {
                s.recv().await;
                num
            })
        });
        let (sig, _, _) = futures::future::select_all(waits).await;
        // The key, not skillpipe (the prompt's Ctrl-C, sent on from raw mode, echoes nothing).
        if sig == libc::SIGINT && !crate::exec::interrupt_raised() {
            crate::term::line::interrupt_key_echoed();
        }
        crate::exec::interrupt(sig);
        crate::dispatch::wait_idle(SETTLE).await;
        std::process::exit(stopped(sig));
    });
    Ok(())
}

/// After the work is done: the exit code if a signal stopped it (the main thread may get
/// there before the handler's own exit).
pub fn exit_code(rt: &tokio::runtime::Runtime) -> Option<i32> {
    let sig = crate::exec::interrupted_by()?;
    rt.block_on(crate::dispatch::wait_idle(SETTLE));
    Some(stopped(sig))
}

/// What a command still prints when a signal stops it (`run --json` its one JSON object), set
/// before [`install`]. Called once, by whichever of the handler and the main thread gets there
/// first.
static LAST_WORDS: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();
static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Held while last words are printed: the other thread (handler or main) waits for them to be
/// whole before it exits.
static PRINTING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn printing() -> std::sync::MutexGuard<'static, ()> {
    PRINTING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Set what is printed when a signal stops the command (see [`LAST_WORDS`]); given the
/// signal's name.
pub fn on_stop(last_words: fn(&str)) {
    let _ = LAST_WORDS.set(last_words);
}

/// What writes the lines a screen still holds (status lines waiting for the model's open line
/// to end, which it never will), before the stop is said.
static HELD: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>> = std::sync::OnceLock::new();

/// Set what writes the held lines when a signal stops the command (see [`HELD`]).
pub fn on_stop_write_held(write: impl Fn() + Send + Sync + 'static) {
    let _ = HELD.set(Box::new(write));
}

/// The command is about to print its own last words (its result): a signal from now on prints
/// none, and its exit waits until the returned guard is dropped. `None` when a signal's were
/// printed already, so the command prints nothing more.
pub fn claim_last_words() -> Option<std::sync::MutexGuard<'static, ()>> {
    let guard = printing();
    (!SAID.swap(true, std::sync::atomic::Ordering::SeqCst)).then_some(guard)
}

/// Says so on stderr; the exit code for a stop by `sig`.
pub(super) fn stopped(sig: libc::c_int) -> i32 {
    let name = crate::exec::signal_name(sig);
    let _printing = printing();
    if let Some(write_held) = HELD.get() {
        write_held();
    }
    if let Some(last_words) = LAST_WORDS.get()
        && !SAID.swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        last_words(&name);
    }
    crate::term::line::status(&format!("skillpipe: stopped by {name}"));
    128 + sig
}
