//! A tiny pseudo-terminal driver for REPL tests: the child gets the pty as stdin, stdout, stderr
//! and controlling terminal (so `/dev/tty` and Ctrl-C → SIGINT work as for a user).
//!
//! Output is collected by a reader thread; [`Pty::expect`] polls it, with ANSI escapes and
//! carriage returns removed, for text that appears after the previous match. Every wait has a
//! deadline; on timeout the child is killed and the test fails showing the screen text.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any one expected thing may take to show up.
pub const TIMEOUT: Duration = Duration::from_secs(8);

pub struct Pty {
    master: std::fs::File,
    child: Child,
    output: Arc<Mutex<Vec<u8>>>,
    /// What the child wrote to stdout when that is a pipe ([`Pty::spawn_piped`]).
    piped: Option<Arc<Mutex<Vec<u8>>>>,
    /// Byte offset into the cleaned text up to the end of the last match.
    seen: usize,
    /// Set when the reader thread saw the terminal close: all output is in `output`.
    drained: Arc<AtomicBool>,
}

fn cloexec(fd: i32) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
}

impl Pty {
    pub fn spawn(cmd: Command) -> Pty {
        Pty::spawn_sized(cmd, 120)
    }

    /// A terminal `cols` columns wide.
    pub fn spawn_sized(cmd: Command, cols: u16) -> Pty {
        Pty::spawn_with(cmd, cols, false)
    }

    /// A terminal as stdin, stderr and controlling terminal, stdout a pipe (`… | tee log`).
    pub fn spawn_piped(cmd: Command, cols: u16) -> Pty {
        Pty::spawn_with(cmd, cols, true)
    }

    fn spawn_with(mut cmd: Command, cols: u16, pipe_stdout: bool) -> Pty {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: valid out-pointers; no name buffer; default termios.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // Other tests spawn children concurrently; they must not inherit this pty.
        cloexec(master);
        cloexec(slave);
        // SAFETY: fresh descriptors from openpty, owned from here on.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(match pipe_stdout {
                true => Stdio::piped(),
                false => Stdio::from(slave.try_clone().unwrap()),
            })
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("spawn skillpipe on a pty");
        let piped = child.stdout.take().map(|mut out| {
            let sink = Arc::new(Mutex::new(Vec::new()));
            let keep = sink.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = out.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    keep.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            });
            sink
        });
        drop(cmd); // closes our copies of the slave side
        let master = std::fs::File::from(master);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = output.clone();
        let drained = Arc::new(AtomicBool::new(false));
        let done = drained.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the child and its descendants closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            done.store(true, Ordering::Release);
        });
        Pty {
            master,
            child,
            output,
            piped,
            seen: 0,
            drained,
        }
    }

    /// Changes the window's width (the child gets SIGWINCH).
    pub fn resize(&mut self, cols: u16) {
        use std::os::fd::AsRawFd;
        let size = libc::winsize {
            ws_row: 40,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads the winsize it is given; the master is open.
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// What the child wrote to its piped stdout so far.
    pub fn piped(&self) -> Vec<u8> {
        self.piped
            .as_ref()
            .expect("spawned with spawn_piped")
            .lock()
            .unwrap()
            .clone()
    }

    /// Everything the child wrote, escapes included.
    pub fn raw(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }

    /// Everything the child wrote, as text without escapes or carriage returns.
    pub fn text(&self) -> String {
        clean(&String::from_utf8_lossy(&self.raw()))
    }

    /// Types bytes into the terminal.
    pub fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits until `needle` appears after the previous match; returns the text between.
    pub fn expect(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let text = self.text();
            if let Some(i) = text.get(self.seen..).and_then(|t| t.find(needle)) {
                let between = text[self.seen..self.seen + i].to_string();
                self.seen += i + needle.len();
                return between;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "timed out waiting for {needle:?}; after the last match the screen shows:\n{}",
                    text.get(self.seen..).unwrap_or(&text)
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for the REPL's prompt (`> ` unless an agent names it).
    pub fn prompt(&mut self) {
        self.expect("> ");
    }

    /// Waits for the child to exit.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // What the child wrote last may still be in the terminal: wait for the reader
                // to drain it, so `text()` after exit shows everything.
                while !self.drained.load(Ordering::Acquire) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the REPL did not exit; screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Removes ANSI escape sequences (CSI, OSC, two-byte ESC) and carriage returns.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {}
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            c => out.push(c),
        }
    }
    out
}
