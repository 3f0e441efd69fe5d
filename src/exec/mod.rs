//! Runs one command without a shell: argv exec, reduced environment, closed or JSON stdin,
//! concurrent capped reads of stdout/stderr, timeout that kills the process group.

use serde::Serialize;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to start a command. Decided before, enforced here.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Program to exec (absolute path, or a bare name resolved on the spec's PATH).
    pub program: OsString,
    /// Arguments after the program (argv[1..]).
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The complete environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// Bytes for stdin; `None` means stdin is closed (empty).
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    /// Cap per stream.
    pub max_output_bytes: usize,
    /// OS restrictions to apply (none by default).
    pub sandbox: crate::sandbox::SandboxSpec,
}

/// The outcome of a run (DESIGN §3).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunResult {
    /// 124 on timeout, -SIGNUM when killed by a signal.
    pub exit_code: i32,
    /// e.g. "SIGSEGV" when killed by a signal.
    pub signal: Option<String>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub truncated_stdout: bool,
    pub truncated_stderr: bool,
    pub timed_out: bool,
    pub duration: Duration,
}

impl RunResult {
    pub fn success(&self) -> bool {
        self.exit_code == 0 && self.signal.is_none() && !self.timed_out
    }
}
