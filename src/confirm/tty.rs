//! Asking on `/dev/tty` so that only the user, now, can answer:
//! - type-ahead is discarded (`tcflush`) when the prompt appears, keys that arrive during a short
//!   guard interval after it are discarded too, and the queue is flushed again before the key
//!   that counts is read: keys typed while an answer streamed never answer the prompt;
//! - `a` ("always") takes a second key;
//! - the prompt is the only reader of the terminal while it is up: another reader of the same
//!   terminal (the filter reading typed input) goes through [`TtyInput`], which holds off;
//! - when that reader shares the prompt's terminal, what was typed for it is not discarded but
//!   kept for it (nothing lost): the line half typed when the prompt appears (already edited by
//!   the line discipline) and keys that arrive during the guard interval (edited here: erase and
//!   kill applied, Enter as a newline, signal keys and escape sequences dropped). Only the key
//!   that answers and what arrives in the same read are the prompt's.

use super::{Answer, AskError, PREPARE, Prompt, key, layout};
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
/// hint), so it never hangs and never silently allows. While it asks it holds the terminal
/// ([`crate::term::gate`]): skillpipe's other output waits for the answer.
pub fn ask_tty(p: &Prompt<'_>) -> Result<Answer, AskError> {
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| AskError::NoTerminal)?;
    let _prompting = Prompting::begin();
    // Writes under way finish first; later ones wait until the answer is written.
    let _terminal = crate::term::gate::hold();
    let fd = tty.as_raw_fd();
    let raw = RawMode::enter(fd).map_err(AskError::Terminal)?;
    let asked = Instant::now();
    // Typed for the filter's input on this same terminal: kept for it, not discarded.
    let keep = shares_input(fd).then(|| LineKeys::of(&raw.saved));
    let keep = keep.as_ref();
    take_pending(fd, keep);
    let _ = tty.write_all(PREPARE.as_bytes());
    let _ = tty.flush();
    // Raw mode turned the interrupt key (Ctrl-C) into a byte: it stops, at any time.
    let intr = raw.saved.c_cc[libc::VINTR];
    let interrupt = |b: &[u8]| intr != 0 && b.contains(&intr);
    // The cursor report (if the terminal sends one) says whether a line is open.
    let mut early = Vec::new();
    read_until(fd, asked + REPORT_WAIT, &mut early, |b| {
        super::reported_column(b).is_some() || interrupt(b)
    });
    stash(&early, keep);
    let fresh = if super::reported_column(&early) == Some(1) {
        ""
    } else {
        "\r\n"
    };
    let width = crate::term::columns(fd).unwrap_or(80);
    let height = crate::term::rows(fd).unwrap_or(24);
    let shown = layout(p, width, height);
    let _ = write!(tty, "{fresh}{}", shown.main);
    let _ = tty.flush();
    // The guard runs from when the prompt is on screen, not from before the cursor query.
    let drawn = Instant::now();
    let first = if interrupt(&early) {
        intr
    } else {
        read_key(fd, drawn, keep, intr).map_err(key_error)?
    };
    let mut answer = key(first, intr, false);
    // "Always" is the widest answer: it takes a second key.
    if matches!(answer, Ok(Answer::Always)) {
        let _ = tty.write_all(shown.always.as_bytes());
        let _ = tty.flush();
        let second = read_key(fd, Instant::now(), keep, intr).map_err(key_error)?;
        answer = key(second, intr, true);
    }
    let _ = write!(tty, "{}\r\n", super::answer_word(&answer));
    let _ = tty.flush();
    crate::term::line::at_line_start();
    drop(raw);
    answer
}

/// How often a prompt waiting for a key looks whether a signal is stopping skillpipe.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// The first key pressed after the guard interval that started at `since`; everything typed
/// before is discarded (or kept for the filter's input, see [`take_pending`]) except the
/// interrupt key `intr`, which counts at once: stopping runs nothing, so it needs no guard.
/// Escape sequences (arrow keys) count as their first byte (no).
fn read_key(fd: RawFd, since: Instant, keep: Option<&LineKeys>, intr: u8) -> io::Result<u8> {
    let mut early = Vec::new();
    let interrupt = |b: &[u8]| intr != 0 && b.contains(&intr);
    read_until(fd, since + GUARD, &mut early, interrupt);
    stash(&early, keep);
    if interrupt(&early) {
        return Ok(intr);
    }
    take_pending(fd, keep);
    loop {
        // Woken now and then to see whether a signal is stopping skillpipe: the prompt then
        // gives way (it holds the terminal, which the exit needs for its last line).
        if !poll_in(fd, Some(SIGNAL_CHECK))? {
            if crate::exec::interrupted_by().is_some() {
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "stopped by a signal",
                ));
            }
            continue;
        }
        let mut key = Vec::new();
        match read_into(fd, &mut key) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "terminal closed",
                ));
            }
            Ok(_) => {
                flush_input(fd);
                // A late answer to the cursor query is the terminal talking, not a key.
                if key[0] != 0x1b || super::reported_column(&key).is_none() {
                    return Ok(key[0]);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A failed key read: a signal stopping skillpipe is an interruption, anything else the
/// terminal's failure.
fn key_error(e: io::Error) -> AskError {
    match e.kind() {
        io::ErrorKind::Interrupted => AskError::Interrupted,
        _ => AskError::Terminal(e),
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
            Ok(true) if read_into(fd, into).is_ok_and(|n| n > 0) => {}
            _ => return,
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

/// What was typed but not yet read: kept for the filter's input when `keep` says how to edit
/// it, else discarded.
fn take_pending(fd: RawFd, keep: Option<&LineKeys>) {
    if keep.is_none() {
        return flush_input(fd);
    }
    let mut pending = Vec::new();
    while let Ok(true) = poll_in(fd, Some(Duration::ZERO)) {
        if !read_into(fd, &mut pending).is_ok_and(|n| n > 0) {
            break;
        }
    }
    stash(&pending, keep);
}

/// Appends what one read of `fd` gives to `into`: how many bytes (0 at its end).
fn read_into(fd: RawFd, into: &mut Vec<u8>) -> io::Result<usize> {
    let mut b = [0u8; 256];
    // SAFETY: reading into a stack buffer of the given length.
    let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    into.extend_from_slice(&b[..n]);
    Ok(n)
}

/// Keeps `typed` for the filter's input (edited as the line discipline would), when `keep`.
fn stash(typed: &[u8], keep: Option<&LineKeys>) {
    if let Some(keys) = keep
        && !typed.is_empty()
    {
        let mut kept = STASH.lock().unwrap_or_else(|e| e.into_inner());
        keys.edit_into(&mut kept, typed);
    }
}

/// The line-editing keys of the terminal's own (cooked) mode, to apply to keys read raw.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineKeys {
    erase: u8,
    kill: u8,
    /// Enter (`\r`) becomes `\n` (ICRNL), or is dropped (IGNCR).
    cr: Option<u8>,
}

impl LineKeys {
    fn of(t: &libc::termios) -> LineKeys {
        let cr = if t.c_iflag & libc::IGNCR != 0 {
            None
        } else if t.c_iflag & libc::ICRNL != 0 {
            Some(b'\n')
        } else {
            Some(b'\r')
        };
        LineKeys {
            erase: t.c_cc[libc::VERASE],
            kill: t.c_cc[libc::VKILL],
            cr,
        }
    }

    /// Appends `typed` to `line` as cooked input would read: erase removes the last character
    /// of the unfinished line, kill the whole unfinished line, Enter is a newline, other control
    /// keys (Ctrl-C, Ctrl-D, …) and escape sequences (arrows, a cursor report) are dropped. Pure.
    fn edit_into(&self, line: &mut Vec<u8>, typed: &[u8]) {
        let open_line = |line: &Vec<u8>| {
            line.len() - line.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)
        };
        let mut i = 0;
        while i < typed.len() {
            let b = typed[i];
            i += 1;
            match b {
                0x1b => {
                    // ESC [ params final, or ESC and one byte.
                    if typed.get(i) == Some(&b'[') {
                        i += 1;
                        while i < typed.len() && !(0x40..=0x7e).contains(&typed[i]) {
                            i += 1;
                        }
                    }
                    i += 1;
                }
                b if b == self.erase && b != 0 => {
                    if open_line(line) > 0 {
                        // A whole UTF-8 character.
                        while let Some(last) = line.pop() {
                            if last & 0xC0 != 0x80 {
                                break;
                            }
                        }
                    }
                }
                b if b == self.kill && b != 0 => {
                    let n = open_line(line);
                    line.truncate(line.len() - n);
                }
                b'\r' => line.extend(self.cr),
                b'\n' | b'\t' => line.push(b),
                b if b < 0x20 || b == 0x7f => {}
                b => line.push(b),
            }
        }
    }
}

/// Bytes typed for the reader of this terminal (see [`TtyInput`]) while the prompt was up.
static STASH: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// A [`TtyInput`] reads the controlling terminal, the one the prompt opens as `/dev/tty`.
static INPUT_IS_TTY: AtomicBool = AtomicBool::new(false);

/// Whether `fd` is this process's controlling terminal (`/dev/tty` has an inode of its own,
/// so devices are not compared: the terminal's session is).
fn is_controlling(fd: RawFd) -> bool {
    // SAFETY: tcgetsid and getsid only read.
    let (tty_sid, own_sid) = unsafe { (libc::tcgetsid(fd), libc::getsid(0)) };
    tty_sid != -1 && tty_sid == own_sid
}

/// Whether a [`TtyInput`] reads the terminal the prompt is on.
fn shares_input(fd: RawFd) -> bool {
    INPUT_IS_TTY.load(Ordering::SeqCst) && is_controlling(fd)
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

/// Whether a prompt is up; a second reader of the terminal reads under this lock.
static PROMPTING: Mutex<bool> = Mutex::new(false);

/// Marks the prompt as up until dropped. Taking the lock waits for a read under way elsewhere.
struct Prompting;

impl Prompting {
    fn begin() -> Prompting {
        *PROMPTING.lock().unwrap_or_else(|e| e.into_inner()) = true;
        Prompting
    }
}

impl Drop for Prompting {
    fn drop(&mut self) {
        *PROMPTING.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }
}

/// A reader of the controlling terminal that never competes with the prompt: it only reads
/// when input is waiting and no prompt is up, so the key the user presses at a prompt reaches
/// the prompt, and the text typed for the program stays the program's. Other inputs (pipes,
/// files) are read directly.
pub(crate) struct TtyInput<R> {
    inner: R,
    terminal: bool,
}

impl<R: Read + AsRawFd> TtyInput<R> {
    /// Wraps `inner`: on a terminal it is read only while no prompt is up.
    pub fn new(inner: R) -> TtyInput<R> {
        // SAFETY: isatty on an open descriptor.
        let terminal = unsafe { libc::isatty(inner.as_raw_fd()) } == 1;
        if terminal && is_controlling(inner.as_raw_fd()) {
            INPUT_IS_TTY.store(true, Ordering::SeqCst);
        }
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
            {
                let prompting = PROMPTING.lock().unwrap_or_else(|e| e.into_inner());
                if !*prompting {
                    // What was typed while a prompt was up comes first.
                    let mut kept = STASH.lock().unwrap_or_else(|e| e.into_inner());
                    if !kept.is_empty() {
                        let n = kept.len().min(buf.len());
                        buf[..n].copy_from_slice(&kept[..n]);
                        kept.drain(..n);
                        return Ok(n);
                    }
                    drop(kept);
                    // With the lock held and no prompt up, no prompt can take the queue before
                    // this read: the input seen waiting is still there, so the read does not
                    // block.
                    if poll_in(fd, Some(Duration::ZERO))? {
                        return self.inner.read(buf);
                    }
                }
            }
            if poll_in(fd, Some(Duration::from_millis(50)))? {
                // Input is waiting but a prompt is up: let it finish.
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> LineKeys {
        LineKeys {
            erase: 0x7f,
            kill: 0x15,
            cr: Some(b'\n'),
        }
    }

    fn edit(before: &str, typed: &[u8]) -> String {
        let mut line = before.as_bytes().to_vec();
        keys().edit_into(&mut line, typed);
        String::from_utf8(line).unwrap()
    }

    #[test]
    fn keys_read_raw_are_edited_as_the_cooked_line_would_be() {
        assert_eq!(edit("half a l", b"x\x7fine\r"), "half a line\n");
        // Erase stops at the line's start and takes a whole character.
        assert_eq!(edit("done\n", b"\x7f\x7fok"), "done\nok");
        assert_eq!(edit("caf\u{e9}", b"\x7fe"), "cafe");
        // Kill drops the unfinished line only.
        assert_eq!(edit("a\nbcd", b"\x15x"), "a\nx");
        // Signal keys, Ctrl-D, arrows and a cursor report are not text.
        assert_eq!(edit("", b"a\x03\x04\x1b[A\x1b[12;1Rb\tc"), "ab\tc");
        let ignore_cr = LineKeys { cr: None, ..keys() };
        let mut line = Vec::new();
        ignore_cr.edit_into(&mut line, b"x\r\n");
        assert_eq!(line, b"x\n");
    }
}
