//! `/copy`: the terminal's clipboard escape (OSC 52) plus whichever clipboard tool is present.
//!
//! OSC 52 reaches the user's clipboard even over SSH, but a terminal may ignore it and there is no
//! way to know; a local tool (wl-copy, xclip, xsel, pbcopy) is certain when it exits 0. Both are
//! tried and the user is told which.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The escape sequence that asks the terminal to put `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{encoded}\x07")
}

/// Clipboard tools worth trying in this environment, as argv.
fn tools() -> Vec<&'static [&'static str]> {
    let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    let mut t: Vec<&'static [&'static str]> = Vec::new();
    if set("WAYLAND_DISPLAY") {
        t.push(&["wl-copy"]);
    }
    if set("DISPLAY") {
        t.push(&["xclip", "-selection", "clipboard"]);
        t.push(&["xsel", "--clipboard", "--input"]);
    }
    if cfg!(target_os = "macos") {
        t.push(&["pbcopy"]);
    }
    t
}

/// Feeds `text` to a tool; true when it took it (exit 0 within a couple of seconds).
fn run_tool(argv: &[&str], text: &str) -> bool {
    let Ok(mut child) = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(text.as_bytes());
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Nothing could take the text: no terminal for OSC 52 and no clipboard tool worked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "could not copy: no terminal for OSC 52 and no clipboard tool (wl-copy, xclip, xsel, pbcopy) \
     worked; install one of them, or use a terminal that allows clipboard access"
)]
pub struct CopyError;

/// Copies `text`; returns a sentence saying how, or why it could not.
pub fn copy(text: &str) -> Result<String, CopyError> {
    let chars = text.chars().count();
    let tool = tools().into_iter().find(|argv| run_tool(argv, text));
    let sent_osc = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/tty")
        .and_then(|mut tty| {
            tty.write_all(osc52(text).as_bytes())?;
            tty.flush()
        })
        .is_ok();
    match (tool.map(|argv| argv[0]), sent_osc) {
        (Some(tool), true) => Ok(format!(
            "copied the last answer ({chars} characters) with {tool} and the terminal (OSC 52)"
        )),
        (Some(tool), false) => Ok(format!(
            "copied the last answer ({chars} characters) with {tool}"
        )),
        (None, true) => Ok(format!(
            "sent the last answer ({chars} characters) to the terminal's clipboard (OSC 52; \
             works when the terminal allows clipboard access)"
        )),
        (None, false) => Err(CopyError),
    }
}
