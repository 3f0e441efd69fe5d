//! Reading the filter's input: on the filter's own thread, except while a capture runs.
//!
//! Reading in place costs nothing per chunk, whereas handing every chunk over from a reader
//! thread costs a wake-up and a cache migration each time. But a capture may run for a while,
//! and the producer upstream should not stall meanwhile. So [`Input::lend`] (called before a
//! capture) hands the reader to a helper thread that keeps reading into a bounded queue, and
//! [`Input::next`] takes it back once the queue is drained and the filter would wait anyway.

use std::collections::VecDeque;
use std::io::{self, ErrorKind, Read};
use std::sync::mpsc::{self, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Chunks the helper reads ahead (bounds memory while a capture runs: buffers are recycled, so
/// at most `READ_AHEAD + 2` helper buffers ever exist).
const READ_AHEAD: usize = 8;

/// What [`Input::next`] produced.
pub(super) enum Next {
    /// This many bytes were read into the caller's buffer.
    Here(usize),
    /// A chunk the helper read; give `buf` back with [`Input::recycle`] once scanned.
    Chunk {
        buf: Vec<u8>,
        len: usize,
    },
    /// End of input.
    End,
    Failed(io::Error),
}

enum Msg<R> {
    Chunk {
        buf: Vec<u8>,
        len: usize,
    },
    End,
    Failed(io::Error),
    /// The reader, handed back on request; nothing follows until it is lent again.
    Returned(R),
}

/// Whether the helper should hand the reader back after its current read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HandBack {
    Keep,
    Requested,
    /// The helper has decided to return it: `Msg::Returned` is on its way, without another read.
    Returning,
}

struct Helper<R> {
    lend: mpsc::Sender<R>,
    rx: mpsc::Receiver<Msg<R>>,
    spare: mpsc::Sender<Vec<u8>>,
    hand_back: Arc<Mutex<HandBack>>,
    thread: JoinHandle<()>,
}

pub(super) struct Input<R> {
    /// The reader while it is read in place.
    here: Option<R>,
    helper: Option<Helper<R>>,
    /// Messages taken off the helper's queue early (see [`Input::lend`]), to be used in order.
    queued: VecDeque<Msg<R>>,
    chunk: usize,
    /// End of input or a read error was seen: the helper is not blocked in a read.
    done: bool,
}

impl<R: Read + Send + 'static> Input<R> {
    /// `chunk`: bytes per read of the helper (the caller sizes its own buffer).
    pub(super) fn new(reader: R, chunk: usize) -> Self {
        Input {
            here: Some(reader),
            helper: None,
            queued: VecDeque::new(),
            chunk,
            done: false,
        }
    }

    /// The next piece of input, in order. Reads into `buf` when the reader is here; blocks
    /// until something arrives.
    pub(super) fn next(&mut self, buf: &mut [u8]) -> Next {
        loop {
            let msg = if let Some(msg) = self.queued.pop_front() {
                msg
            } else if let Some(reader) = &mut self.here {
                let next = match read(reader, buf) {
                    Ok(0) => Next::End,
                    Ok(n) => Next::Here(n),
                    Err(e) => Next::Failed(e),
                };
                self.done = !matches!(next, Next::Here(_));
                return next;
            } else {
                let Some(h) = &self.helper else {
                    return Next::End;
                };
                match h.rx.try_recv() {
                    Ok(msg) => msg,
                    Err(TryRecvError::Empty) => {
                        // Caught up: have the reader back after the read under way.
                        set(&h.hand_back, HandBack::Requested);
                        h.rx.recv().unwrap_or_else(|_| helper_gone())
                    }
                    Err(TryRecvError::Disconnected) => helper_gone(),
                }
            };
            match msg {
                Msg::Chunk { buf, len } => return Next::Chunk { buf, len },
                Msg::End => {
                    self.done = true;
                    return Next::End;
                }
                Msg::Failed(e) => {
                    self.done = true;
                    return Next::Failed(e);
                }
                Msg::Returned(reader) => self.here = Some(reader),
            }
        }
    }

    /// A chunk's buffer, scanned, for the helper to read into again.
    pub(super) fn recycle(&mut self, buf: Vec<u8>) {
        if let Some(h) = &self.helper {
            let _ = h.spare.send(buf);
        }
    }

    /// A capture is about to run: make sure input keeps being read meanwhile.
    pub(super) fn lend(&mut self) {
        if self.done {
            return;
        }
        if self.here.is_none() {
            let Some(h) = &self.helper else { return };
            let mut state = h.hand_back.lock().unwrap_or_else(PoisonError::into_inner);
            if *state != HandBack::Returning {
                // Still reading: keep it that way.
                *state = HandBack::Keep;
                return;
            }
            drop(state);
            // The reader is on its way back (no read in between): take it, keep what came
            // before it for later, and lend it again.
            loop {
                match h.rx.recv().unwrap_or_else(|_| helper_gone()) {
                    Msg::Returned(reader) => {
                        self.here = Some(reader);
                        break;
                    }
                    msg => self.queued.push_back(msg),
                }
            }
        }
        let Some(reader) = self.here.take() else {
            return;
        };
        let chunk = self.chunk;
        let h = self.helper.get_or_insert_with(|| spawn(chunk));
        set(&h.hand_back, HandBack::Keep);
        if let Err(mpsc::SendError(reader)) = h.lend.send(reader) {
            // The helper is gone; read in place (input just is not read during the capture).
            self.here = Some(reader);
        }
    }

    /// Lets the helper thread go. Waits for it only when it cannot be blocked in a read.
    pub(super) fn close(self) {
        let idle = self.here.is_some() || self.done;
        if let Some(h) = self.helper {
            drop(h.lend);
            drop(h.rx);
            if idle {
                let _ = h.thread.join();
            }
        }
    }
}

fn set(hand_back: &Mutex<HandBack>, to: HandBack) {
    *hand_back.lock().unwrap_or_else(PoisonError::into_inner) = to;
}

fn helper_gone<R>() -> Msg<R> {
    Msg::Failed(io::Error::other("the input reader thread stopped"))
}

fn read<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

fn spawn<R: Read + Send + 'static>(chunk: usize) -> Helper<R> {
    let (lend, lent) = mpsc::channel::<R>();
    let (tx, rx) = mpsc::sync_channel(READ_AHEAD);
    let (spare, spares) = mpsc::channel::<Vec<u8>>();
    let hand_back = Arc::new(Mutex::new(HandBack::Keep));
    let thread = {
        let hand_back = hand_back.clone();
        std::thread::spawn(move || helper(lent, tx, spares, &hand_back, chunk))
    };
    Helper {
        lend,
        rx,
        spare,
        hand_back,
        thread,
    }
}

/// Reads whatever reader it is lent until asked to hand it back, the input ends, or the filter
/// goes away.
fn helper<R: Read>(
    lent: mpsc::Receiver<R>,
    tx: mpsc::SyncSender<Msg<R>>,
    spares: mpsc::Receiver<Vec<u8>>,
    hand_back: &Mutex<HandBack>,
    chunk: usize,
) {
    while let Ok(mut reader) = lent.recv() {
        loop {
            let mut buf = spares.try_recv().unwrap_or_else(|_| vec![0u8; chunk]);
            let msg = match read(&mut reader, &mut buf) {
                Ok(0) => Msg::End,
                Ok(len) => Msg::Chunk { buf, len },
                Err(e) => Msg::Failed(e),
            };
            let last = !matches!(msg, Msg::Chunk { .. });
            if tx.send(msg).is_err() || last {
                return;
            }
            let mut state = hand_back.lock().unwrap_or_else(PoisonError::into_inner);
            if *state == HandBack::Requested {
                *state = HandBack::Returning;
                drop(state);
                if tx.send(Msg::Returned(reader)).is_err() {
                    return;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Hands out `data` at most `step` bytes per read, counting the bytes read.
    struct Trickle {
        data: Arc<Vec<u8>>,
        pos: usize,
        step: usize,
        read: Arc<AtomicUsize>,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            self.read.fetch_add(n, Ordering::SeqCst);
            Ok(n)
        }
    }

    fn trickle(len: usize, step: usize) -> (Trickle, Arc<Vec<u8>>, Arc<AtomicUsize>) {
        let data = Arc::new((0..len).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
        let read = Arc::new(AtomicUsize::new(0));
        let t = Trickle {
            data: data.clone(),
            pos: 0,
            step,
            read: read.clone(),
        };
        (t, data, read)
    }

    #[test]
    fn lending_keeps_input_in_order_and_comes_back() {
        for lend_every in [1, 2, 3, 7, 50] {
            let (reader, data, _) = trickle(200_000, 1000);
            let mut input = Input::new(reader, 4096);
            let mut buf = vec![0u8; 4096];
            let (mut got, mut here, mut lent) = (Vec::new(), 0, 0);
            for k in 1.. {
                match input.next(&mut buf) {
                    Next::Here(n) => {
                        got.extend_from_slice(&buf[..n]);
                        here += 1;
                    }
                    Next::Chunk { buf, len } => {
                        got.extend_from_slice(&buf[..len]);
                        input.recycle(buf);
                        lent += 1;
                    }
                    Next::End => break,
                    Next::Failed(e) => panic!("{e}"),
                }
                if k % lend_every == 0 {
                    input.lend();
                }
            }
            assert!(got == *data, "lend every {lend_every}: input changed");
            assert!(lent > 0, "lend every {lend_every}: the helper never read");
            if lend_every > 1 {
                assert!(
                    here > 1,
                    "lend every {lend_every}: the reader never came back"
                );
            }
            input.close();
        }
    }

    #[test]
    fn input_is_read_ahead_while_lent() {
        let (reader, _, read) = trickle(1_000_000, 1000);
        let mut input = Input::new(reader, 4096);
        let mut buf = vec![0u8; 4096];
        assert!(matches!(input.next(&mut buf), Next::Here(1000)));
        input.lend();
        // Nobody consumes now (a capture runs); the helper fills its queue meanwhile.
        let want = 1000 + READ_AHEAD * 1000;
        let deadline = Instant::now() + Duration::from_secs(10);
        while read.load(Ordering::SeqCst) < want && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(read.load(Ordering::SeqCst) >= want, "no read-ahead");
        // And no further than the bound.
        std::thread::sleep(Duration::from_millis(20));
        assert!(read.load(Ordering::SeqCst) <= 1000 + (READ_AHEAD + 1) * 1000);
        input.close();
    }
}
