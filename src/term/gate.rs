//! The terminal while a confirmation prompt is up (DESIGN §2a): the prompt holds it, and every
//! write of skillpipe's to stdout or stderr (filter output, one-shot `chat`'s answer and status
//! lines, the REPL's screen) takes it too, so nothing lands below the real prompt while it waits
//! for a key — model text drawing a fake prompt there included. Text that arrives meanwhile waits
//! in its writer (and the stream behind it waits too) until the prompt has its answer.
//!
//! One lock for all of them, re-entrant on one thread: a writer that reports a status line while
//! it writes, or a prompt asked from a thread that is writing, never waits for itself.

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};

static TERMINAL: Mutex<()> = Mutex::new(());

thread_local! {
    /// How many [`Hold`]s this thread has (only the outermost one owns the lock).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// The terminal, held until dropped: no other thread writes to it through skillpipe's writers
/// and no prompt is drawn on it meanwhile.
#[must_use = "the terminal is held only while the Hold lives"]
pub(crate) struct Hold {
    _lock: Option<MutexGuard<'static, ()>>,
}

/// Waits while another thread holds the terminal (a prompt is up, or another write is under
/// way), then holds it. A thread that holds it already gets it at once.
pub(crate) fn hold() -> Hold {
    let outer = DEPTH.with(|d| {
        let n = d.get();
        d.set(n + 1);
        n == 0
    });
    Hold {
        _lock: outer.then(|| TERMINAL.lock().unwrap_or_else(|e| e.into_inner())),
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_write_waits_while_another_thread_holds_the_terminal() {
        let (tx, rx) = mpsc::channel();
        let held = hold();
        // Re-entrant on this thread: a second hold does not wait for the first.
        drop(hold());
        let writer = std::thread::spawn(move || {
            let _h = hold();
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "wrote while the terminal was held"
        );
        drop(held);
        // Positive control: once released, the write goes through.
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        writer.join().unwrap();
    }
}
