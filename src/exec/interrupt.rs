//! skillpipe's own signals: a run in flight ends at once when skillpipe is told to exit, and
//! Ctrl-C read raw at a prompt is handed back as the SIGINT the terminal would have sent.

use super::{signals, sys};

/// The signal skillpipe got (0: none), and the wake-up for runs in flight.
static INTERRUPTED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static INTERRUPT: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// skillpipe got `sig` and is about to exit: every run in flight (and every later one) ends at
/// once with [`ExecError::Interrupted`], its process tree killed and its `$TMPDIR` removed.
pub(crate) fn interrupt(sig: libc::c_int) {
    INTERRUPTED.store(sig, std::sync::atomic::Ordering::SeqCst);
    INTERRUPT.notify_waiters();
}

/// The signal passed to [`interrupt`], if any.
pub(crate) fn interrupted_by() -> Option<libc::c_int> {
    Some(INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)).filter(|&s| s != 0)
}

/// [`raise_interrupt`] sent a SIGINT: the terminal echoed no `^C` for it.
static RAISED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether skillpipe sent itself SIGINT ([`raise_interrupt`]) rather than a key or `kill`.
pub(crate) fn interrupt_raised() -> bool {
    RAISED.load(std::sync::atomic::Ordering::SeqCst)
}

/// How long [`raise_interrupt`] waits for the program's SIGINT handling to take over.
const HANDOVER: std::time::Duration = std::time::Duration::from_secs(2);

/// Sends this process the SIGINT the terminal would have sent for Ctrl-C had the key not been
/// read raw (at the confirmation prompt), so that the program's one way of handling SIGINT
/// applies: `filter`, one-shot `chat` and `run` exit 130, the REPL drops the turn. Waits a
/// while for that to stop the caller; a host that ignores SIGINT gets control back then.
pub(crate) async fn raise_interrupt() {
    RAISED.store(true, std::sync::atomic::Ordering::SeqCst);
    sys::raise(libc::SIGINT);
    tokio::time::sleep(HANDOVER).await;
}

/// The name of the signal skillpipe got, once it got one.
pub(super) async fn interrupted() -> String {
    loop {
        let notified = INTERRUPT.notified();
        if let Some(sig) = interrupted_by() {
            return signals::name(sig);
        }
        notified.await;
    }
}
