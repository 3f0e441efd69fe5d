//! A real terminal screen for tests: a command runs in a detached tmux session on its own
//! socket, and the test reads what the screen shows (`capture-pane`), the window title and the
//! clipboard (tmux keeps OSC 52 in a paste buffer with `set-clipboard on`).
//!
//! tmux may be missing: [`Tmux::start`] returns `None` and prints why, and the test skips.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub struct Tmux {
    dir: tempfile::TempDir,
}

impl Tmux {
    /// Runs `argv` with exactly `env` in a 100×30 terminal, from `cwd`.
    pub fn start(argv: &[&str], env: &[(&str, String)], cwd: &std::path::Path) -> Option<Tmux> {
        Tmux::start_sized(argv, env, cwd, (100, 30))
    }

    /// [`Tmux::start`] in a terminal of (columns, rows).
    pub fn start_sized(
        argv: &[&str],
        env: &[(&str, String)],
        cwd: &std::path::Path,
        (cols, rows): (u16, u16),
    ) -> Option<Tmux> {
        if !Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            eprintln!("SKIPPED: tmux is not installed; the screen cannot be compared");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("tmux.conf");
        std::fs::write(&conf, "set -g set-clipboard on\nset -g remain-on-exit on\n").unwrap();
        let mut words: Vec<String> = vec!["env".into(), "-i".into()];
        words.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        words.extend(argv.iter().map(|s| s.to_string()));
        let t = Tmux { dir };
        let out = t
            .tmux()
            .arg("-f")
            .arg(&conf)
            .args([
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
                "-c",
            ])
            .arg(cwd)
            .arg(shell_words::join(&words))
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux: {out:?}");
        Some(t)
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(self.socket());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.tmux().args(args).output().unwrap()
    }

    /// The visible screen, one line per row, trailing blanks trimmed.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// The window title the program running in the terminal may have set (OSC 2).
    pub fn title(&self) -> String {
        let o = self.run(&["display-message", "-p", "-t", "t", "#{pane_title}"]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// The clipboard as set by OSC 52 ("" when nothing set it).
    pub fn clipboard(&self) -> String {
        let o = self.run(&["show-buffer"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Types `text` literally.
    pub fn keys(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "t", "-l", text])
                .status
                .success()
        );
    }

    /// Resizes the window to (columns, rows); the program gets SIGWINCH.
    pub fn resize(&self, (cols, rows): (u16, u16)) {
        let (x, y) = (cols.to_string(), rows.to_string());
        let out = self.run(&["resize-window", "-t", "t", "-x", &x, "-y", &y]);
        assert!(out.status.success(), "{out:?}");
    }

    pub fn enter(&self) {
        assert!(
            self.run(&["send-keys", "-t", "t", "Enter"])
                .status
                .success()
        );
    }

    /// Waits until the screen shows `needle`; returns the screen.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?}"), |s| s.contains(needle))
    }

    /// Waits until `ready` holds for the screen (`what` says what it waits for); returns it.
    pub fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(8);
        loop {
            let s = self.screen();
            if ready(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen shows:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
