//! Asking on `/dev/tty` so that only the user, now, can answer:
//! - type-ahead is discarded (`tcflush`) when the prompt appears, keys that arrive during a short
//!   guard interval after it are discarded too, and the queue is flushed again before the key
//!   that counts is read: keys typed while an answer streamed never answer the prompt;
//! - `a` ("always") takes a second key;
//! - the prompt is the only reader of the terminal while it is up: another reader of the same
//!   terminal (the filter reading typed input) goes through [`TtyInput`], which holds off.

use super::{
    Answer, AskError, FirstKey, PREPARE, Prompt, always_key, first_key, render, render_always,
};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Keys arriving this soon after the prompt appears are not taken as an answer.
pub const GUARD: Duration = Duration::from_millis(300);
/// How long to wait for the terminal's cursor position report.
const REPORT_WAIT: Duration = Duration::from_millis(100);

/// Asks on the controlling terminal. Without a terminal it returns an error (a decline with a
/// hint), so it never hangs and never silently allows.
pub fn ask_tty(p: &Prompt<'_>) -> Result<Answer, AskError> {
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| AskError::NoTerminal)?;
    let _prompting = Prompting::begin();
    let fd = tty.as_raw_fd();
    let raw = RawMode::enter(fd).map_err(AskError::Terminal)?;
    let shown = Instant::now();
    flush_input(fd);
    let _ = tty.write_all(PREPARE.as_bytes());
    let _ = tty.flush();
    // The cursor report (if the terminal sends one) says whether a line is open.
    let mut early = Vec::new();
    read_until(fd, shown + REPORT_WAIT, &mut early, |b| {
        super::reported_column(b).is_some()
    });
    let fresh = if super::reported_column(&early) == Some(1) {
        ""
    } else {
        "\r\n"
    };
    let _ = write!(tty, "{fresh}{}", render(p));
    let _ = tty.flush();
    let answer = match first_key(read_key(fd, shown).map_err(AskError::Terminal)?) {
        FirstKey::Answer(a) => a,
        FirstKey::ConfirmAlways => {
            let _ = tty.write_all(render_always(p).as_bytes());
            let _ = tty.flush();
            always_key(read_key(fd, Instant::now()).map_err(AskError::Terminal)?)
        }
    };
    let word = match answer {
        Answer::Once => "yes",
        Answer::Always => "always",
        Answer::No => "no",
    };
    let _ = write!(tty, "{word}\r\n");
    let _ = tty.flush();
    drop(raw);
    Ok(answer)
}

/// The first key pressed after the guard interval that started at `since`; everything typed
/// before is discarded. Escape sequences (arrow keys) count as their first byte (no).
fn read_key(fd: RawFd, since: Instant) -> io::Result<u8> {
    let mut junk = Vec::new();
    read_until(fd, since + GUARD, &mut junk, |_| false);
    flush_input(fd);
    loop {
        if poll_in(fd, None)? {
            let mut b = [0u8; 64];
            // SAFETY: reading into a stack buffer of the given length.
            let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
            match n {
                0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "terminal closed",
                    ));
                }
                n if n > 0 => {
                    flush_input(fd);
                    // A late answer to the cursor query is the terminal talking, not a key.
                    if b[0] == 0x1b && super::reported_column(&b[..n as usize]).is_some() {
                        continue;
                    }
                    return Ok(b[0]);
                }
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
    }
}

/// Reads whatever arrives until `deadline` or until `done(collected)`, into `into`.
fn read_until(fd: RawFd, deadline: Instant, into: &mut Vec<u8>, done: impl Fn(&[u8]) -> bool) {
    loop {
        let now = Instant::now();
        if now >= deadline || done(into) {
            return;
        }
        match poll_in(fd, Some(deadline - now)) {
            Ok(true) => {
                let mut b = [0u8; 256];
                // SAFETY: reading into a stack buffer of the given length.
                let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
                if n <= 0 {
                    return;
                }
                into.extend_from_slice(&b[..n as usize]);
            }
            Ok(false) => return,
            Err(_) => return,
        }
    }
}

/// Whether `fd` has input, waiting at most `wait` (forever with `None`).
fn poll_in(fd: RawFd, wait: Option<Duration>) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.map_or(-1, |d| d.as_millis().min(i32::MAX as u128) as i32);
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut p, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    // A hang-up counts as input: the read that follows reports it.
    Ok(rc > 0)
}

/// Discards what was typed but not yet read.
fn flush_input(fd: RawFd) {
    // SAFETY: tcflush on an open terminal descriptor.
    unsafe {
        libc::tcflush(fd, libc::TCIFLUSH);
    }
}

/// Raw input (no echo, no line editing, no signals from keys) until dropped. Output processing
/// is kept, so the rest of the program's `\n` still starts a new line while the prompt is up.
struct RawMode {
    fd: RawFd,
    saved: libc::termios,
}

impl RawMode {
    fn enter(fd: RawFd) -> io::Result<RawMode> {
        // SAFETY: termios is plain data; tcgetattr fills it for an open terminal.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut raw = saved;
        raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
        raw.c_iflag &= !(libc::IXON | libc::ICRNL | libc::INLCR | libc::IGNCR);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: as above.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(RawMode { fd, saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restoring the attributes read in `enter`.
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSANOW, &self.saved);
        }
    }
}

/// Whether a prompt is up, and the lock a second reader of the terminal reads under.
static PROMPTING: AtomicBool = AtomicBool::new(false);
static READING: Mutex<()> = Mutex::new(());

/// Marks the prompt as up until dropped. Taking the lock waits for a read under way elsewhere.
struct Prompting;

impl Prompting {
    fn begin() -> Prompting {
        let _l = READING.lock().unwrap_or_else(|e| e.into_inner());
        PROMPTING.store(true, Ordering::SeqCst);
        Prompting
    }
}

impl Drop for Prompting {
    fn drop(&mut self) {
        PROMPTING.store(false, Ordering::SeqCst);
    }
}

/// A reader of the controlling terminal that never competes with the prompt: it only reads
/// when input is waiting and no prompt is up, so the key the user presses at a prompt reaches
/// the prompt, and the text typed for the program stays the program's. Other inputs (pipes,
/// files) are read directly.
pub struct TtyInput<R> {
    inner: R,
    terminal: bool,
}

impl<R: Read + AsRawFd> TtyInput<R> {
    /// Wraps `inner`: on a terminal it is read only while no prompt is up.
    pub fn new(inner: R) -> TtyInput<R> {
        // SAFETY: isatty on an open descriptor.
        let terminal = unsafe { libc::isatty(inner.as_raw_fd()) } == 1;
        TtyInput { inner, terminal }
    }
}

impl<R: Read + AsRawFd> Read for TtyInput<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.terminal {
            return self.inner.read(buf);
        }
        let fd = self.inner.as_raw_fd();
        loop {
            if !poll_in(fd, Some(Duration::from_millis(50)))? {
                continue;
            }
            {
                let _l = READING.lock().unwrap_or_else(|e| e.into_inner());
                // With the lock held and no prompt up, no prompt can flush the queue before
                // this read: the input seen waiting is still there, so the read does not block.
                if !PROMPTING.load(Ordering::SeqCst) && poll_in(fd, Some(Duration::ZERO))? {
                    return self.inner.read(buf);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
