//! The terminal as the REPL shares it between the answer, the spinner, status lines and the
//! confirmation prompt.
//!
//! Everything that writes takes one lock, so the spinner (its own thread), side-effect prompts
//! (asked from the dispatcher's worker thread) and the streamed answer never interleave:
//! - the spinner is drawn after the text on the current line (cursor saved and restored) and
//!   erased with "erase to end of line", so it never eats text; not on a full row, where the
//!   cursor's place after the last column differs between terminals;
//! - a status line that arrives mid-line waits for the end of that line (or of the answer);
//! - the confirmation prompt holds the lock while it asks: the spinner is erased first and
//!   cannot redraw, and streamed text waits until the user has answered (every write here also
//!   holds the terminal, [`crate::term::gate`], the one rule filter and one-shot `chat` follow).

use super::ink::{Tone, advance_column, paint};
use super::tape::{Entry, Tape, screenful};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether each stream gets colour, and whether a spinner may be drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Looks {
    pub color_out: bool,
    pub color_err: bool,
    /// Colour for the line editor, which draws on the terminal the user types on.
    pub color_tty: bool,
    pub stdout_tty: bool,
    pub stderr_tty: bool,
    pub spinner: bool,
    pub unicode: bool,
}

impl Looks {
    /// From the real environment: colour only on a terminal, never with `NO_COLOR` (non-empty)
    /// or `TERM=dumb`; the spinner only when stderr is a terminal.
    pub fn detect() -> Looks {
        use std::io::IsTerminal;
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        let no_color = !var("NO_COLOR").is_empty() || var("TERM") == "dumb";
        let out = std::io::stdout().is_terminal();
        let err = std::io::stderr().is_terminal();
        let locale = [var("LC_ALL"), var("LC_CTYPE"), var("LANG")]
            .into_iter()
            .find(|v| !v.is_empty())
            .unwrap_or_default()
            .to_ascii_lowercase();
        Looks {
            color_out: out && !no_color,
            color_err: err && !no_color,
            color_tty: std::io::stdin().is_terminal() && !no_color,
            stdout_tty: out,
            stderr_tty: err,
            spinner: err && var("TERM") != "dumb",
            unicode: locale.contains("utf-8") || locale.contains("utf8"),
        }
    }
}

/// Where the spinner goes on a terminal `width` columns wide, the text having reached column
/// `col` (past `width` where the terminal wrapped it): `None` when the row is full. Then the
/// cursor is on the last column with the wrap pending (xterm) or past it (tmux): the spinner
/// would land on the next row, and erasing it from there would take the row's last character.
pub fn spinner_column(col: usize, width: usize) -> Option<usize> {
    let width = width.max(1);
    (col == 0 || !col.is_multiple_of(width)).then_some(col % width)
}

/// The spinner's text for `label`, cut to fit `room` columns (None if nothing fits).
pub fn spinner_text(frame: &str, label: &str, room: usize) -> Option<String> {
    // Display columns, not characters: a wide label counted short would wrap the row.
    let full = format!(" {frame} {label}…");
    if unicode_width::UnicodeWidthStr::width(full.as_str()) <= room {
        return Some(full);
    }
    let bare = format!(" {frame}");
    (unicode_width::UnicodeWidthStr::width(bare.as_str()) <= room).then_some(bare)
}

const FRAMES_UNICODE: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAMES_ASCII: &[&str] = &["-", "\\", "|", "/"];
/// No spinner for waits shorter than this (most first tokens), so it does not flicker.
const SPINNER_DELAY: Duration = Duration::from_millis(150);
const FRAME_EVERY: Duration = Duration::from_millis(90);

#[derive(Debug, Default)]
struct State {
    busy: Option<(String, Instant)>,
    /// The spinner is on screen.
    drawn: bool,
    frame: usize,
    /// Column of the cursor after the last text written to stdout.
    col: usize,
    /// The first bytes of a character the last write cut off (see [`advance_column`]).
    split: Vec<u8>,
    /// Status lines (and on a plain screen a side effect's output) waiting for the current
    /// line of text to end.
    pending: Vec<Waiting>,
    quit: bool,
    /// The renderer holds back the newline that ends the current line (see
    /// [`crate::render::Display::end_open_line`]).
    owed: bool,
    /// The screen ended a line of the answer itself (for a prompt, a warning): the renderer's
    /// newline for it is no longer due.
    paid: bool,
    /// The answer is inside a code block: waiting status lines wait for its end (written at a
    /// newline, they would land among its lines).
    in_block: bool,
    /// The answer's last line break was a wrap of its row, not its line's end: waiting status
    /// lines keep waiting (written there, they would split a sentence).
    soft: bool,
    /// What a replaying screen wrote (see [`Screen::replay`]).
    buffer: Vec<u8>,
    /// The width the screen was last laid out for (0: not yet known).
    shown_width: usize,
}

/// What waits for stderr until the answer's line has ended.
#[derive(Debug)]
enum Waiting {
    /// A status line, already styled (its newline is added).
    Line(String),
    /// A side effect's output, as it is (a plain screen's, off a terminal).
    Raw(Vec<u8>),
}

/// Which of the two streams a write goes to.
#[derive(Clone, Copy)]
enum To {
    Out,
    Err,
}

/// The shared terminal. Cheap to clone through an `Arc`.
#[derive(Default)]
pub struct Screen {
    looks: Looks,
    state: Mutex<State>,
    wake: Condvar,
    /// What has been shown, to lay it out again after a resize: kept when stdout is the
    /// terminal (what goes to stderr is laid out again only when stderr is the terminal too).
    tape: Option<Mutex<Tape>>,
    /// A screen that writes to a buffer at this width instead of the terminal: the tape
    /// replayed after a resize.
    replay_width: Option<usize>,
    /// One-shot `chat`'s screen (see [`Screen::plain`]).
    plain: bool,
}

impl Screen {
    pub fn new(looks: Looks) -> Arc<Screen> {
        let state = State {
            shown_width: crate::term::columns(libc::STDOUT_FILENO).unwrap_or(0),
            ..State::default()
        };
        Arc::new(Screen {
            looks,
            state: Mutex::new(state),
            tape: looks.stdout_tty.then(Mutex::default),
            ..Screen::default()
        })
    }

    /// One-shot `chat`'s screen: status lines wait for the answer's line as the REPL's do, but
    /// no spinner and no tape; what it writes is noted and its stderr lines start a line of
    /// their own, as all output outside the REPL ([`crate::term::line`]).
    pub fn plain(looks: Looks) -> Arc<Screen> {
        let looks = Looks {
            spinner: false,
            ..looks
        };
        Arc::new(Screen {
            looks,
            plain: true,
            ..Screen::default()
        })
    }

    /// Whether this is one-shot `chat`'s screen ([`Screen::plain`]).
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// A screen like `looks`'s terminal, `width` columns wide, that writes into a buffer: the
    /// tape is replayed through it after a resize.
    pub fn replay(looks: Looks, width: usize) -> Arc<Screen> {
        Arc::new(Screen {
            looks: Looks {
                spinner: false,
                ..looks
            },
            replay_width: Some(width.max(1)),
            ..Screen::default()
        })
    }

    /// Adds `entry` to the tape (when one is kept), in the order things reach the screen: while
    /// a confirmation prompt holds it ([`Screen::exclusive`]), an answer's text waits, and so
    /// does its entry.
    pub fn record(&self, entry: Entry) {
        if self.tape.is_some() {
            let _in_order = self.lock();
            self.record_held(entry);
        }
    }

    /// [`Screen::record`] from inside [`Screen::exclusive`], which holds the screen already.
    pub fn record_held(&self, entry: Entry) {
        if let Some(tape) = &self.tape {
            super::editor::lock(tape).push(entry);
        }
    }

    /// The tape's entries, when the width differs from the one the screen was laid out for
    /// (the width is then taken as the new one).
    pub fn resized(&self, width: usize) -> Option<Vec<Entry>> {
        let tape = self.tape.as_ref()?;
        let mut st = self.lock();
        if st.shown_width == width || width == 0 {
            return None;
        }
        st.shown_width = width;
        drop(st);
        Some(super::editor::lock(tape).entries().to_vec())
    }

    /// Makes the next [`Screen::resized`] lay the screen out again, whatever the width.
    pub fn forget_width(&self) {
        self.lock().shown_width = 0;
    }

    /// Draws the last screenful of what `replayed` wrote over the terminal and takes its state
    /// (the column, lines waiting for the end of a line), as if the terminal had always had
    /// `replayed`'s width.
    pub fn repaint(&self, replayed: &Screen) {
        let Some(width) = replayed.replay_width else {
            return;
        };
        let mut st = self.lock();
        let mut from = replayed.lock();
        let height = crate::term::rows(libc::STDOUT_FILENO).unwrap_or(24);
        let bytes = screenful(&from.buffer, width, height);
        self.put(&mut st, To::Out, &bytes);
        st.drawn = false;
        st.col = from.col;
        st.split = std::mem::take(&mut from.split);
        st.pending = std::mem::take(&mut from.pending);
        st.owed = from.owed;
        st.paid = from.paid;
        st.in_block = from.in_block;
        st.soft = from.soft;
    }

    /// What a replaying screen wrote, taken out of it.
    pub fn take_buffer(&self) -> Vec<u8> {
        std::mem::take(&mut self.lock().buffer)
    }

    /// Writes to the terminal (holding it, see [`crate::term::gate`]), or to the buffer of a
    /// replaying screen.
    fn put(&self, st: &mut State, to: To, bytes: &[u8]) {
        if self.replay_width.is_some() {
            // Stderr away from the screen (`2>/dev/null`): its lines were never on it.
            if matches!(to, To::Out) || self.looks.stderr_tty {
                st.buffer.extend_from_slice(bytes);
            }
            return;
        }
        use crate::term::line::{Noted, Stream};
        let _terminal = crate::term::gate::hold();
        let (out, err) = (std::io::stdout(), std::io::stderr());
        let mut w: Box<dyn Write> = match (to, self.plain) {
            (To::Out, false) => Box::new(out.lock()),
            (To::Err, false) => Box::new(err.lock()),
            (To::Out, true) => Box::new(Noted::new(out.lock(), Stream::Stdout)),
            (To::Err, true) => Box::new(Noted::new(err.lock(), Stream::Stderr)),
        };
        let _ = w.write_all(bytes).and_then(|()| w.flush());
    }

    /// Columns of the terminal on `fd` (the replay's width on a replaying screen), read for
    /// every piece so a resize applies at once; `unknown` off a terminal.
    fn width(&self, fd: i32, unknown: usize) -> usize {
        self.replay_width
            .unwrap_or_else(|| crate::term::columns(fd).unwrap_or(unknown))
    }

    /// Columns of the terminal on stdout; 80 if unknown.
    pub fn out_width(&self) -> usize {
        self.width(libc::STDOUT_FILENO, 80)
    }

    pub fn looks(&self) -> Looks {
        self.looks
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        super::editor::lock(&self.state)
    }

    /// Starts the spinner thread (if spinners are on); it stops when the handle is dropped.
    pub fn start_spinner(self: &Arc<Screen>) -> SpinnerThread {
        let handle = self.looks.spinner.then(|| {
            let screen = self.clone();
            std::thread::Builder::new()
                .name("skillpipe-spinner".into())
                .spawn(move || screen.spin())
                .ok()
        });
        SpinnerThread {
            screen: self.clone(),
            handle: handle.flatten(),
        }
    }

    fn spin(&self) {
        let mut st = self.lock();
        loop {
            if st.quit {
                self.erase(&mut st);
                return;
            }
            let wait = match &st.busy {
                None => None,
                Some((label, since)) => {
                    let age = since.elapsed();
                    if age < SPINNER_DELAY {
                        Some(SPINNER_DELAY - age)
                    } else {
                        let label = label.clone();
                        self.draw(&mut st, &label);
                        Some(FRAME_EVERY)
                    }
                }
            };
            st = match wait {
                None => self.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    self.wake
                        .wait_timeout(st, d)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    fn draw(&self, st: &mut State, label: &str) {
        let frames = if self.looks.unicode {
            FRAMES_UNICODE
        } else {
            FRAMES_ASCII
        };
        let frame = frames[st.frame % frames.len()];
        st.frame += 1;
        let width = crate::term::columns(libc::STDERR_FILENO).unwrap_or(80);
        let col = if self.looks.stdout_tty {
            spinner_column(st.col, width)
        } else {
            Some(0)
        };
        let Some(col) = col else { return };
        let Some(text) = spinner_text(frame, label, width.saturating_sub(col + 1)) else {
            return;
        };
        let text = paint(&text, Tone::Dim, self.looks.color_err);
        // Save the cursor, draw after the text, clear the rest, go back.
        self.put(st, To::Err, format!("\x1b7{text}\x1b[K\x1b8").as_bytes());
        st.drawn = true;
    }

    fn erase(&self, st: &mut State) {
        if st.drawn {
            self.put(st, To::Err, b"\x1b[K");
            st.drawn = false;
        }
    }

    /// Shows (`Some`) or ends (`None`) a wait.
    pub fn set_busy(&self, what: Option<&str>) {
        let mut st = self.lock();
        match what {
            Some(label) => st.busy = Some((label.to_string(), Instant::now())),
            None => {
                st.busy = None;
                self.erase(&mut st);
            }
        }
        drop(st);
        self.wake.notify_all();
    }

    /// A piece of the rendered answer, after which the renderer does (`owed`) or does not hold
    /// back the newline ending the line.
    /// `soft`: the last line break in `bytes` (or before) was a wrap of the answer's row, not
    /// its line's end; status lines waiting for that keep waiting.
    pub fn answer_text(&self, bytes: &[u8], owed: bool, soft: bool) {
        let mut st = self.lock();
        st.soft = soft;
        self.write_text(&mut st, bytes);
        st.owed = owed;
    }

    /// Whether the answer's text is inside a code block: going in holds waiting status lines,
    /// coming out (at the start of a line) shows them.
    pub fn in_code_block(&self, inside: bool) {
        let mut st = self.lock();
        let left = st.in_block && !inside;
        st.in_block = inside;
        if left && st.col == 0 {
            self.flush_pending(&mut st);
        }
    }

    /// Whether the screen ended the answer's open line itself (then the renderer's newline for
    /// it must not be written); clears the mark.
    pub fn take_paid(&self) -> bool {
        std::mem::take(&mut self.lock().paid)
    }

    /// Text on stdout. Status lines that waited for the line to end come after its first
    /// newline.
    fn write_text(&self, st: &mut State, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.erase(st);
        let split = if st.pending.is_empty() || st.in_block || st.soft {
            None
        } else {
            // The first newline ends the open line; a later one may be inside the next block.
            memchr::memchr(b'\n', bytes).map(|i| i + 1)
        };
        match split {
            Some(at) => {
                self.put(st, To::Out, &bytes[..at]);
                st.col = 0;
                self.flush_pending(st);
                self.put(st, To::Out, &bytes[at..]);
                st.split.clear();
                st.col = advance_column(0, &mut st.split, &bytes[at..]);
            }
            None => {
                self.put(st, To::Out, bytes);
                st.col = advance_column(st.col, &mut st.split, bytes);
            }
        }
    }

    /// A status line (already styled) on stderr; waits for the end of the line if text is open.
    pub fn status(&self, styled: String) {
        self.after_line(Waiting::Line(styled));
    }

    /// A side effect's output on stderr as it is, when [`Screen::status`] lines would show.
    pub fn status_raw(&self, bytes: &[u8]) {
        self.after_line(Waiting::Raw(bytes.to_vec()));
    }

    fn after_line(&self, what: Waiting) {
        let mut st = self.lock();
        st.pending.push(what);
        if (st.col == 0 && !st.in_block && !st.soft) || !self.looks.stdout_tty {
            self.flush_pending(&mut st);
        }
    }

    /// Writes the status lines still waiting for the open line to end, each on a line of its
    /// own: for a signal's exit, after which nothing will end it.
    pub fn write_held(&self) {
        self.flush_pending(&mut self.lock());
    }

    fn flush_pending(&self, st: &mut State) {
        if st.pending.is_empty() {
            return;
        }
        self.erase(st);
        for what in std::mem::take(&mut st.pending) {
            let bytes = match what {
                // Outside the REPL, on a line of its own (see `crate::term::line`).
                Waiting::Line(line) if self.plain => {
                    crate::term::line::status(&line);
                    continue;
                }
                Waiting::Line(line) => (line + "\n").into_bytes(),
                Waiting::Raw(bytes) => bytes,
            };
            self.put(st, To::Err, &bytes);
        }
    }

    /// Ends the answer: a final newline if the text did not end with one, then any status lines
    /// that were waiting.
    pub fn end_answer(&self) {
        let mut st = self.lock();
        st.busy = None;
        st.in_block = false;
        self.erase(&mut st);
        if st.col != 0 {
            self.break_row(&mut st);
        }
        self.flush_pending(&mut st);
    }

    /// Ends the answer's open row on screen: the renderer's newline for it is no longer due.
    fn break_row(&self, st: &mut State) {
        self.put(st, To::Out, b"\n");
        st.col = 0;
        st.paid = true;
        st.owed = false;
        st.soft = false;
    }

    /// Ends the answer's open row where its text stopped (a capture or tool runs there), so
    /// that status lines come at this point; the answer goes on from a fresh row (see
    /// [`Screen::take_paid`]), if `ends` says so when asked (text shown as written may go on
    /// in its row, the status lines waiting for its end). Inside a code block the block's own
    /// lines decide.
    pub fn end_row(&self, ends: impl FnOnce() -> bool) {
        let mut st = self.lock();
        if st.in_block {
            return;
        }
        if st.col != 0 && self.looks.stdout_tty && ends() {
            self.erase(&mut st);
            self.break_row(&mut st);
        }
        // At the start of a row, wrapped or not, this is where the script runs.
        st.soft = false;
        if st.col == 0 {
            self.flush_pending(&mut st);
        }
    }

    /// Output of the REPL's own (a command's listing, a resumed transcript): on stdout when it
    /// is the terminal, else on stderr, so that a pipe on stdout gets answers only.
    pub fn chrome(&self, bytes: &[u8]) {
        self.end_answer();
        let mut st = self.lock();
        match self.looks.stdout_tty {
            true => self.write_text(&mut st, bytes),
            false => self.put(&mut st, To::Err, bytes),
        }
    }

    /// Whether [`Screen::chrome`] writes to a terminal, and its colour.
    pub fn chrome_looks(&self) -> (bool, bool) {
        match self.looks.stdout_tty {
            true => (true, self.looks.color_out),
            false => (self.looks.stderr_tty, self.looks.color_err),
        }
    }

    /// How wide [`Screen::chrome`]'s lines may be: its terminal's width, unbounded off one.
    pub fn chrome_width(&self) -> usize {
        match self.looks.stdout_tty {
            true => self.width(libc::STDOUT_FILENO, usize::MAX),
            false => self.err_width(),
        }
    }

    /// How wide a line on stderr may be: the terminal's width, unbounded off one.
    pub fn err_width(&self) -> usize {
        self.width(libc::STDERR_FILENO, usize::MAX)
    }

    /// A whole line (already styled) on stderr, after ending any open line of text.
    pub fn line_err(&self, styled: &str) {
        self.end_answer();
        let mut st = self.lock();
        self.put(&mut st, To::Err, format!("{styled}\n").as_bytes());
    }

    /// Bytes of the REPL's own on the terminal, after ending any open line: the prompt and
    /// entry, a confirmation, as a replay draws them again.
    pub fn raw_line(&self, bytes: &[u8]) {
        self.end_answer();
        let mut st = self.lock();
        self.put(&mut st, To::Out, bytes);
    }

    /// Runs `ask` (a prompt on the terminal) with the screen to itself: the spinner erased and
    /// held, the prompt on a line of its own, streamed text waiting until it returns.
    pub fn exclusive<T>(&self, ask: impl FnOnce() -> T) -> T {
        let mut st = self.lock();
        self.erase(&mut st);
        if st.col != 0 && self.looks.stdout_tty {
            self.break_row(&mut st);
        }
        self.flush_pending(&mut st);
        let answer = ask();
        // The prompt ends its line; a spinner may come back once the lock is released.
        if let Some((_, since)) = &mut st.busy {
            *since = Instant::now();
        }
        drop(st);
        self.wake.notify_all();
        answer
    }
}

/// Owns the spinner thread; dropping it erases the spinner and joins the thread.
pub struct SpinnerThread {
    screen: Arc<Screen>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for SpinnerThread {
    fn drop(&mut self) {
        self.screen.lock().quit = true;
        self.screen.wake.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_spinner_on_a_full_row() {
        assert_eq!(spinner_column(0, 30), Some(0));
        assert_eq!(spinner_column(12, 30), Some(12));
        assert_eq!(spinner_column(30, 30), None);
        assert_eq!(spinner_column(60, 30), None);
        // Text the terminal wrapped: the spinner goes after it on its last row.
        assert_eq!(spinner_column(35, 30), Some(5));
    }

    #[test]
    fn spinner_text_fits_the_room_left_on_the_line() {
        assert_eq!(spinner_text("-", "thinking", 80).unwrap(), " - thinking…");
        assert_eq!(spinner_text("-", "thinking", 5).unwrap(), " -");
        assert!(spinner_text("-", "thinking", 1).is_none());
        // Wide characters count two columns each: 6 of them do not fit in 12.
        assert_eq!(spinner_text("-", "漢字漢字漢字", 12).unwrap(), " -");
    }
}
