//! A throw-away home for running the built binary: its own HOME, XDG dirs and audit log, and
//! an environment without the user's API keys or config.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub struct TestHome {
    pub dir: tempfile::TempDir,
}

impl TestHome {
    pub fn new() -> TestHome {
        TestHome {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn audit_path(&self) -> PathBuf {
        self.path().join("state/skillpipe/audit.jsonl")
    }

    /// The audit log's lines, parsed, without the `"phase": "started"` line each run writes
    /// before it starts: one line per decision.
    pub fn audit(&self) -> Vec<Value> {
        self.audit_all()
            .into_iter()
            .filter(|v| v["phase"] != "started")
            .collect()
    }

    /// Every audit line, parsed.
    pub fn audit_all(&self) -> Vec<Value> {
        std::fs::read_to_string(self.audit_path())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
            .collect()
    }

    /// `skillpipe` with a clean environment rooted in this home, run from this home.
    pub fn cmd(&self) -> Command {
        let mut c = super::spawn::skillpipe_cmd();
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .env("LANG", "C.UTF-8")
            .env("XDG_STATE_HOME", self.path().join("state"))
            .env("XDG_CONFIG_HOME", self.path().join("config"))
            .current_dir(self.path());
        c
    }

    /// Runs `skillpipe ARGS` (environment as [`TestHome::cmd`]) with `stdin`, sends it SIGTERM
    /// once a run of `program` has started (its audit line), and returns how it ended.
    pub fn stop_once_started(
        &self,
        args: &[&str],
        stdin: &[u8],
        program: &str,
    ) -> std::process::Output {
        use std::io::Write as _;
        use std::process::Stdio;
        let mut child = super::spawn::skillpipe()
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .env("LANG", "C.UTF-8")
            .env("XDG_STATE_HOME", self.path().join("state"))
            .env("XDG_CONFIG_HOME", self.path().join("config"))
            .current_dir(self.path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("skillpipe starts");
        // Kept open: input that has not ended is still to come when the signal arrives.
        let mut input = child.stdin.take().expect("stdin piped");
        input.write_all(stdin).expect("stdin written");
        let started = std::time::Instant::now();
        while !self
            .audit_all()
            .iter()
            .any(|r| r["argv"][0] == program && r["phase"] == "started")
        {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "{program} never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        let out = child.wait_with_output().expect("skillpipe ends");
        drop(input);
        out
    }

    /// Writes a file under this home (parents created) and returns its path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A `calc` skill in `skills` (a folder under this home) whose script multiplies two
    /// numbers and whose worked example asks for 8 times 9: the tests of copied examples.
    pub fn calc_with_example(&self, skills: &str) {
        self.write(
            &format!("{skills}/calc/SKILL.md"),
            "---\nname: calc\ndescription: arithmetic\n---\n# calc\n\n## Example\n\nUser: What is 8 times 9?\nYou: !{scripts/calc.py 8 9}\nOutput: 72\nYou: 8 times 9 is 72.\n",
        );
        self.write(
            &format!("{skills}/calc/scripts/calc.py"),
            "# Multiply two numbers.\nimport sys\nprint(int(sys.argv[1]) * int(sys.argv[2]))\n",
        );
    }
}
