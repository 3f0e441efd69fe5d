//! Runs one command without a shell: argv exec, reduced environment, closed or JSON stdin,
//! concurrent capped reads of stdout/stderr, timeout that kills the process group.
//!
//! Two ways to start the command:
//! - the fast path (nothing requested, or only `contain_processes` on a machine without PID
//!   namespaces): a direct spawn in its own session (no controlling terminal, no inherited
//!   descriptors) with a parent-death signal;
//! - the sandbox path: a re-exec of skillpipe as `__launch` (see [`crate::sandbox`]), which
//!   sets up namespaces and Landlock in a fresh single-threaded process and runs the command
//!   under a PID-1 init, so the whole tree (even processes that called `setsid`) dies with it.
//!
//! Every system call Rust cannot check is made in `sys`, behind safe functions (the crate
//! root denies the rest of the module such code).

use crate::sandbox::{self, Capabilities, Enforced, LaunchArgs};
use serde::Serialize;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

mod capture;
mod facts;
pub(crate) mod git_config;
mod interrupt;
mod resolve;
mod run_tmp;
mod setup;
mod signals;
mod sys;

pub use facts::{Advice, LimitHit, RunFacts, Stopped};

use interrupt::interrupted;
pub(crate) use interrupt::{interrupt, interrupt_raised, interrupted_by, raise_interrupt};
use setup::{Setup, set_up};
pub(crate) use signals::name as signal_name;

/// Time between SIGTERM and SIGKILL on timeout.
const GRACE: Duration = Duration::from_millis(200);
/// How long to keep reading output after the command exited, in case something that escaped
/// the process group still holds the pipes.
const DRAIN: Duration = Duration::from_millis(250);

/// Everything needed to start a command. Decided before, enforced here.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunSpec {
    /// Program to exec (absolute path, or a bare name resolved on the spec's PATH).
    pub program: OsString,
    /// Arguments after the program (argv[1..]).
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The complete environment of the child (`TMPDIR` is replaced by the per-run directory).
    pub env: Vec<(OsString, OsString)>,
    /// Bytes for stdin; `None` means stdin is closed (empty).
    pub stdin: Option<Vec<u8>>,
    /// Wall-clock limit; on expiry the whole process group is killed.
    pub timeout: Duration,
    /// Cap per stream.
    pub max_output_bytes: usize,
    /// OS restrictions to apply (none by default).
    pub sandbox: crate::sandbox::SandboxSpec,
    /// Who runs, for the run's warnings (`skill \`s\`, script \`x\``); none by default.
    pub label: Option<String>,
    /// How the run's warnings name the settings they point at: policy keys by default, flags
    /// when the `skillpipe` binary's dispatcher runs it.
    pub settings: fn(&sandbox::Setting) -> String,
}

impl RunSpec {
    /// `program` with `args`, in the current directory, with an empty environment, stdin
    /// closed, a 30 s timeout, 10 MiB per output stream and no restrictions; set the fields to
    /// change any of it.
    pub fn new<I, S>(program: impl Into<OsString>, args: I) -> RunSpec
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        RunSpec {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            env: Vec::new(),
            stdin: None,
            timeout: Duration::from_secs(30),
            max_output_bytes: 10 << 20,
            sandbox: crate::sandbox::SandboxSpec::default(),
            label: None,
            settings: sandbox::Setting::to_string,
        }
    }
}

/// The outcome of a run (DESIGN §3).
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct RunResult {
    /// 124 on timeout, -SIGNUM when killed by a signal.
    pub exit_code: i32,
    /// e.g. "SIGSEGV" when killed by a signal.
    pub signal: Option<String>,
    /// Standard output (at most `max_output_bytes`).
    pub stdout: Vec<u8>,
    /// Standard error (at most `max_output_bytes`).
    pub stderr: Vec<u8>,
    /// Standard output was cut.
    pub truncated_stdout: bool,
    /// Standard error was cut.
    pub truncated_stderr: bool,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// How long it ran.
    pub duration: Duration,
    /// Restrictions that were requested but are not in force (best-effort), and similar notes,
    /// naming settings as [`RunSpec::settings`] does.
    pub warnings: Vec<String>,
    /// The restrictions that were in force.
    pub enforced: Enforced,
    /// How `max_memory_mb` held, and whether the run went over it.
    pub memory: MemoryBound,
    /// What the run created, changed, deleted or re-moded in its writable paths, flagged where
    /// another program may run or load it later.
    pub changes: crate::sandbox::changes::Changes,
    /// When a run failed: what the front end's advisor said it likely ran into, typed, and
    /// what lifts it in its user's words and the model's. Nothing without an advisor (see
    /// `crate::advice`).
    pub advice: Option<Advice>,
    /// What is known for certain about the run, for the advisor.
    #[serde(skip)]
    pub facts: RunFacts,
}

impl RunResult {
    /// Exited 0 (not killed, not timed out).
    pub fn success(&self) -> bool {
        self.exit_code == 0 && self.signal.is_none() && !self.timed_out
    }

    /// What it said: its stderr, then the end of its stdout (some scripts print their errors
    /// there).
    pub fn said(&self) -> String {
        let tail = &self.stdout[self.stdout.len().saturating_sub(2048)..];
        let (err, out) = (
            String::from_utf8_lossy(&self.stderr),
            String::from_utf8_lossy(tail),
        );
        format!("{err}\n{out}")
    }
}

/// How a run's memory was bounded (`max_memory_mb`), and whether it ran into the bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MemoryBound {
    /// All the run's processes together (its memory cgroup); else each process alone
    /// (RLIMIT_DATA), when a limit is set.
    pub per_run: bool,
    /// The kernel killed some of the run's processes for going over it (as its cgroup counts
    /// them).
    pub oom_killed: bool,
}

/// The sentence of [`ExecError::SafePathRefused`], with `lift` saying how to run it anyway
/// (a policy key for the library, a flag for the command line).
pub fn safe_path_refused(command: &str, program: &str, lift: &str) -> String {
    format!(
        "`{command}` with workdir = caller needs Python 3.11 or later: its -P keeps your folder \
         off sys.path, so that the module is the skill's, not a file of yours with its name; \
         `{program} -P` fails here: {lift}, or install a newer Python"
    )
}

/// Why a command could not be run (as opposed to ran and failed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    #[error("command not found: {program}")]
    /// The program was not found on the PATH given.
    NotFound {
        /// The program as asked for.
        program: String,
    },
    /// What the machine lacks, e.g. "network isolation: user namespaces are disabled
    /// (kernel.unprivileged_userns_clone=0)"; the settings it names stay typed (the launcher
    /// says it from another process).
    #[error(
        "cannot sandbox the command: {0} (sandbox = \"best-effort\" runs it anyway, with a warning)"
    )]
    Sandbox(crate::sandbox::Message),
    /// `python -P -m …` (`workdir = "caller"`) on a Python older than 3.11, which refuses `-P`:
    /// the module would otherwise be looked for in the user's folder first.
    #[error("{}", safe_path_refused(command, program, "set workdir = \"skill\""))]
    SafePathRefused {
        /// The command as written.
        command: String,
        /// The interpreter that refused `-P`.
        program: String,
    },
    /// What was being done, and the OS error.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// The program got this signal (skillpipe's own signal handling): the command was killed.
    #[error("interrupted by {signal}: the command was killed")]
    Interrupted {
        /// The signal skillpipe got (`SIGTERM` …).
        signal: String,
        /// The restrictions the command ran under, when it had started.
        enforced: Option<Enforced>,
    },
}

/// The value of `name` in `env`: the last one, as the child sees it.
pub(crate) fn env_value<'a>(
    env: &'a [(OsString, OsString)],
    name: &str,
) -> Option<&'a std::ffi::OsStr> {
    env.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

/// Run one command as `spec` says. Dropping the returned future kills the whole process tree.
///
/// On Linux the parent-death signal is tied to the thread that spawns the child: call this
/// from a runtime whose threads live as long as the commands should (not from a short-lived
/// blocking-pool thread).
pub async fn run(spec: RunSpec) -> Result<RunResult, ExecError> {
    run_with_launcher(spec, None).await
}

/// [`run`] with `launcher` (a skillpipe binary, or a program with the launch hook) as the
/// sandbox launcher; `None` means [`sandbox::launcher_path`].
pub(crate) async fn run_with_launcher(
    spec: RunSpec,
    launcher: Option<&Path>,
) -> Result<RunResult, ExecError> {
    // What the command runs under, once it started: the audit says it of an interrupted run too.
    let started = Mutex::new(None);
    tokio::select! {
        // Dropping the run kills its tree and removes its $TMPDIR.
        sig = interrupted() => Err(ExecError::Interrupted {
            signal: sig,
            enforced: *started.lock().unwrap_or_else(|e| e.into_inner()),
        }),
        r = run_uninterrupted(spec, launcher, &started) => r,
    }
}

/// Where a run notes the restrictions its command started under.
type Started = Mutex<Option<Enforced>>;

async fn run_uninterrupted(
    spec: RunSpec,
    launcher: Option<&Path>,
    started: &Started,
) -> Result<RunResult, ExecError> {
    let s = &spec.sandbox;
    let sandboxed = s.isolate_network
        || s.restrict_filesystem
        || s.contain_processes
        || s.private_mounts
        || s.limits.any();
    if !sandboxed {
        let none = Capabilities::none("not probed");
        return run_planned(spec, &none, launcher, &mut false, started).await;
    }
    if sandbox::caps::probed() || std::env::var_os(sandbox::caps::UNAVAILABLE_ENV).is_some() {
        return run_planned(spec, &sandbox::probe(), launcher, &mut false, started).await;
    }
    // The probe costs a fork and three unshares. The launcher checks every step itself and
    // reports a failure before the command starts, so until something fails this process
    // assumes the machine can do everything, each restriction required; only when set-up
    // fails does it probe and decide as the spec says (required or best-effort). (One difference: the launcher treats a missing PID namespace as a warning,
    // so a privileged process without user namespaces runs such a command uncontained.)
    let mut optimistic = spec.clone();
    optimistic.sandbox.required = true;
    let mut setup_failed = false;
    match run_planned(
        optimistic,
        &Capabilities::all(),
        launcher,
        &mut setup_failed,
        started,
    )
    .await
    {
        Err(_) if setup_failed => {
            run_planned(spec, &sandbox::probe(), launcher, &mut false, started).await
        }
        other => other,
    }
}

/// [`run`], deciding the sandbox against `caps` instead of this machine's probe (for tests of
/// the required/best-effort behaviour; not part of the API).
#[doc(hidden)]
pub async fn run_with_capabilities(
    spec: RunSpec,
    caps: &Capabilities,
) -> Result<RunResult, ExecError> {
    run_planned(spec, caps, None, &mut false, &Mutex::new(None)).await
}

/// The run itself, in steps: [`set_up`] (nothing started), [`command`], [`spawn_and_wait`],
/// [`finish`] (the result and its facts). `setup_failed` is set when the launcher refused
/// before starting the command (so running it again, differently, cannot run it twice).
async fn run_planned(
    spec: RunSpec,
    caps: &Capabilities,
    launcher: Option<&Path>,
    setup_failed: &mut bool,
    started: &Started,
) -> Result<RunResult, ExecError> {
    let mut setup = set_up(&spec, caps, launcher, setup_failed)?;
    let cmd = command(&spec, &setup);
    let ended = spawn_and_wait(&spec, cmd, &mut setup, started).await?;
    finish(&spec, setup, ended, setup_failed)
}

/// Step: the command to spawn: the program itself (the fast path), or the launcher with the
/// plan's restrictions as its arguments; its environment, stdio and child set-up.
fn command(spec: &RunSpec, setup: &Setup) -> Command {
    let (plan, view, gate) = (&setup.plan, &setup.view, setup.gate.as_ref());
    let mut cmd = match &setup.report {
        Some(report) => {
            let mut la = LaunchArgs::for_plan(plan, spec.sandbox.required);
            la.writable = std::iter::once(setup.tmp.path().to_path_buf())
                .chain(spec.sandbox.writable.iter().cloned())
                .collect();
            la.report_fd = Some(report.theirs.as_raw_fd());
            la.gate_fd = gate.map(|g| g.theirs.as_raw_fd());
            if plan.enforce.mounts {
                la.tmpdir = Some(setup.tmp.path().to_path_buf());
                la.read = (view.iter())
                    .filter(|g| g.why != sandbox::view::Why::Writable)
                    .map(|g| g.path.clone())
                    .collect();
                // What is out of view needs no cover.
                la.hide = (spec.sandbox.hide.iter())
                    .filter(|h| view.is_empty() || sandbox::view::shows(view, h))
                    .cloned()
                    .collect();
                la.protect = spec.sandbox.protect.clone();
                la.protect
                    .extend(setup.placeholders.covered().iter().cloned());
                la.socket = spec.sandbox.sockets.clone();
            }
            la.limits = spec.sandbox.limits;
            #[cfg(target_os = "linux")]
            {
                la.pids_cgroup = setup.cgroup.pids_dir().map(Path::to_path_buf);
                la.memory_cgroup = setup.cgroup.memory_dir().map(Path::to_path_buf);
            }
            // Root's command could write itself out of that cgroup where writes are allowed
            // (`--allow-filesystem`): the cgroup file system is covered in its mount namespace.
            if (la.pids_cgroup.is_some() || la.memory_cgroup.is_some())
                && plan.enforce.mounts
                && (view.is_empty() || sandbox::view::shows(view, Path::new("/sys/fs/cgroup")))
            {
                la.hide.push(PathBuf::from("/sys/fs/cgroup"));
            }
            la.arg0 = Some(spec.program.clone());
            la.argv = std::iter::once(setup.program.clone().into_os_string())
                .chain(spec.args.iter().cloned())
                .collect();
            let launcher = setup.launcher.as_deref().unwrap_or(Path::new("skillpipe"));
            let mut cmd = Command::new(launcher);
            cmd.args(la.to_args());
            cmd
        }
        None => {
            let mut cmd = Command::new(&setup.program);
            cmd.arg0(&spec.program).args(&spec.args);
            cmd
        }
    };
    cmd.env_clear().envs(setup.env.iter().map(|(k, v)| (k, v)));
    if setup.launcher.is_some() {
        // The launcher removes it before the command runs; see `sandbox::run_if_launcher`.
        cmd.env(sandbox::MARKER_ENV, "1");
    }
    let stdin = match spec.stdin.is_some() {
        true => Stdio::piped(),
        false => Stdio::null(),
    };
    cmd.current_dir(&spec.cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // The child starts its own session (see `sys::set_up_child`), which also makes it the
    // leader of a fresh process group: its pid is the group's.
    let report = setup.report.as_ref();
    let keep = [
        report.map(|r| r.theirs.as_raw_fd()),
        gate.map(|g| g.theirs.as_raw_fd()),
    ];
    sys::set_up_child(&mut cmd, keep);
    cmd
}

/// A command that ended: how, what it wrote, and what was taken before it started.
struct Ended {
    status: ExitStatus,
    timed_out: bool,
    duration: Duration,
    out: capture::Capture,
    err: capture::Capture,
    before: Option<sandbox::changes::Before>,
    /// Our end of the report pipe (the launcher's closed).
    report: Option<OwnedFd>,
}

/// Step: the command started, fed its input and read while it runs, then waited for (killed
/// with its process group on the timeout, or when this future is dropped).
async fn spawn_and_wait(
    spec: &RunSpec,
    mut cmd: Command,
    setup: &mut Setup,
    started: &Started,
) -> Result<Ended, ExecError> {
    let writable = &spec.sandbox.writable;
    let (report, gate) = (setup.report.take(), setup.gate.take());
    let mut before =
        (setup.watch && gate.is_none()).then(|| sandbox::changes::Before::take(writable));
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        if report.is_none() && e.kind() == std::io::ErrorKind::NotFound {
            ExecError::NotFound {
                program: spec.program.to_string_lossy().into_owned(),
            }
        } else {
            ExecError::Io(format!("cannot start {}", setup.program.display()), e)
        }
    })?;
    if let Some(gate) = gate {
        before = Some(sandbox::changes::Before::take(writable));
        gate.open();
    }
    *started.lock().unwrap_or_else(|e| e.into_inner()) = Some(setup.plan.enforce);
    let report = report.map(|r| r.ours);
    let pgid = child.id().map_or(0, |id| id as libc::pid_t);
    let mut group = GroupGuard { pgid, armed: true };

    let mut out = capture::Capture::new(spec.max_output_bytes);
    let mut err = capture::Capture::new(spec.max_output_bytes);
    let (stdout, stderr, stdin) = (child.stdout.take(), child.stderr.take(), child.stdin.take());
    let (waited, duration) = {
        let io = async {
            let feed = async {
                if let (Some(mut w), Some(data)) = (stdin, spec.stdin.as_deref()) {
                    // A command that does not read its input is not an error.
                    let _ = w.write_all(data).await;
                    let _ = w.shutdown().await;
                }
            };
            futures::join!(out.fill(stdout), err.fill(stderr), feed);
        };
        let mut io = std::pin::pin!(io);
        let mut wait = std::pin::pin!(wait_or_kill(&mut child, pgid, spec.timeout));
        let mut io_done = false;
        let waited = loop {
            tokio::select! {
                _ = io.as_mut(), if !io_done => io_done = true,
                w = wait.as_mut() => break w,
            }
        };
        let duration = start.elapsed();
        // The command's own background jobs go with it.
        sys::kill_group(pgid, libc::SIGKILL);
        if !io_done {
            let _ = tokio::time::timeout(DRAIN, io).await;
        }
        (waited, duration)
    };
    group.armed = false;
    let waiting = |e| ExecError::Io(format!("waiting for {}", setup.program.display()), e);
    let (status, timed_out) = waited.map_err(waiting)?;
    Ok(Ended {
        status,
        timed_out,
        duration,
        out,
        err,
        before,
        report,
    })
}

/// Step: the run's result: what the launcher reported (a set-up that failed ends the run
/// here), what changed, every warning, and the facts of the run.
fn finish(
    spec: &RunSpec,
    setup: Setup,
    ended: Ended,
    setup_failed: &mut bool,
) -> Result<RunResult, ExecError> {
    let mut warnings: Vec<sandbox::Message> = (setup.plan.warnings.iter().cloned())
        .chain(setup.warnings)
        .map(Into::into)
        .collect();
    let mut enforced = Enforced::default();
    let mut memory = MemoryBound::default();
    let mut refused = Vec::new();
    if let Some(reader) = ended.report {
        let report = sandbox::report::parse(&read_available(reader));
        memory.per_run = report.memory_per_run;
        if let Some(e) = report.error {
            *setup_failed = true;
            return Err(ExecError::Sandbox(e));
        }
        enforced = match report.enforced {
            Some(e) => e,
            None if ended.timed_out => setup.plan.enforce,
            None => {
                let launcher = setup.launcher.as_deref().unwrap_or(Path::new("?"));
                return Err(ExecError::Sandbox(
                    format!(
                        "the launcher {} did not report; it must be a skillpipe binary or a \
                         program that calls skillpipe::sandbox::run_if_launcher() first thing in \
                         main",
                        launcher.display()
                    )
                    .into(),
                ));
            }
        };
        refused = report.refused;
        warnings.extend(report.warnings);
    }
    let changes = match ended.before {
        Some(before) if enforced.filesystem => before.since(),
        _ => Default::default(),
    };
    warnings.extend(changes.capped_message());
    // Once per process: every run from the same folder would repeat it.
    static HIDE_TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if enforced.mounts
        && let Some(notice) = &spec.sandbox.hide_notice
        && !HIDE_TOLD.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        warnings.push(sandbox::Message::text(notice.clone()));
    }
    #[cfg(target_os = "linux")]
    if memory.per_run {
        let kills = setup.cgroup.oom_kills();
        memory.oom_killed = kills > 0;
        if memory.oom_killed {
            warnings.push(
                format!(
                    "the run went over max_memory_mb = {} MiB (all its processes together): the \
                     kernel killed {} of its processes",
                    spec.sandbox.limits.memory_mb.unwrap_or(0),
                    kills
                )
                .into(),
            );
        }
    }
    let tmp_path = setup.tmp.path().to_path_buf();
    drop(setup.tmp);
    let mut r = result(
        (ended.status, ended.timed_out, ended.duration),
        spec,
        ended.out,
        ended.err,
        warnings,
        enforced,
    );
    r.memory = memory;
    r.changes = changes;
    r.facts = run_facts(spec, &r, enforced, refused);
    // A path its messages name that exists, but not in its view: a fact, read after a failure.
    let view = &setup.view;
    if !r.success() && enforced.mounts && !view.is_empty() {
        let own = [Path::new("/dev"), Path::new("/proc"), tmp_path.as_path()];
        r.facts.outside_view = sandbox::view::named_outside(&r.said(), view, &own, &spec.cwd);
    }
    Ok(r)
}

/// Step (of [`finish`]): what skillpipe knows of a run for certain, for the advice after it.
fn run_facts(spec: &RunSpec, r: &RunResult, enforced: Enforced, refused: Vec<PathBuf>) -> RunFacts {
    // Outside every writable path while the user's own folder is in one: a relative path
    // meant for the user's folder wrote into the folder the command ran in.
    let writable = &spec.sandbox.writable;
    let under = |d: &Path| writable.iter().any(|w| d.starts_with(w));
    let ran_elsewhere = std::env::current_dir()
        .ok()
        .filter(|here| !writable.is_empty() && under(here) && !under(&spec.cwd))
        .map(|_| spec.cwd.clone());
    let limits = spec.sandbox.limits;
    RunFacts {
        limit: (enforced.limits)
            .then(|| facts::limit_hit(r.signal.as_deref(), r.exit_code, &limits))
            .flatten()
            .or_else(|| {
                r.memory.oom_killed.then_some(LimitHit {
                    key: "max_memory_mb",
                    value: limits.memory_mb,
                })
            }),
        cwd: spec.cwd.clone(),
        ran_elsewhere,
        sandbox: spec.sandbox.clone(),
        refused_sockets: refused,
        dropped: facts::dropped(&spec.env, |v| std::env::var_os(v)),
        home: std::env::var_os("HOME").map(PathBuf::from),
        skill_dir: env_value(&spec.env, "SKILL_BASE_DIR").map(PathBuf::from),
        ..RunFacts::default()
    }
}

fn result(
    (status, timed_out, duration): (ExitStatus, bool, Duration),
    spec: &RunSpec,
    out: capture::Capture,
    err: capture::Capture,
    mut warned: Vec<sandbox::Message>,
    enforced: Enforced,
) -> RunResult {
    let whose = (spec.label.as_ref()).map_or(String::new(), |l| format!("{l}: "));
    for (name, capture) in [("stdout", &out), ("stderr", &err)] {
        if capture.truncated {
            warned.push(
                format!(
                    "{whose}{name} was {} bytes, over max_output_bytes ({} bytes); the rest \
                     was dropped",
                    capture.seen,
                    capture.bytes.len()
                )
                .into(),
            );
        }
    }
    let mut r = RunResult {
        stdout: out.bytes,
        truncated_stdout: out.truncated,
        stderr: err.bytes,
        truncated_stderr: err.truncated,
        timed_out,
        duration,
        warnings: warned.iter().map(|w| w.word(spec.settings)).collect(),
        enforced,
        ..RunResult::default()
    };
    if timed_out {
        r.exit_code = 124;
        append_line(&mut r.stderr, "Timeout");
    } else if let Some(code) = status.code() {
        r.exit_code = code;
    } else if let Some(sig) = status.signal() {
        let name = signals::name(sig);
        r.exit_code = -sig;
        append_line(&mut r.stderr, &format!("Signal: {name}"));
        r.signal = Some(name);
    } else {
        r.exit_code = 1;
    }
    r
}

/// Append `line` to `buf`, on a line of its own.
fn append_line(buf: &mut Vec<u8>, line: &str) {
    if !buf.is_empty() && !buf.ends_with(b"\n") {
        buf.push(b'\n');
    }
    buf.extend_from_slice(line.as_bytes());
}

/// Wait for the child; on timeout SIGTERM the group, then SIGKILL after [`GRACE`].
/// Returns the status and whether the timeout fired.
async fn wait_or_kill(
    child: &mut Child,
    pgid: libc::pid_t,
    limit: Duration,
) -> std::io::Result<(ExitStatus, bool)> {
    if let Ok(status) = tokio::time::timeout(limit, child.wait()).await {
        return Ok((status?, false));
    }
    sys::kill_group(pgid, libc::SIGTERM);
    if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
        return Ok((status?, true));
    }
    sys::kill_group(pgid, libc::SIGKILL);
    Ok((child.wait().await?, true))
}

/// Kills the process group if the run is abandoned (its future dropped) before it finished.
struct GroupGuard {
    pgid: libc::pid_t,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            sys::kill_group(self.pgid, libc::SIGKILL);
        }
    }
}

/// Everything in the report pipe `ours` now (non-blocking; the launcher writes before it runs
/// anything).
fn read_available(ours: OwnedFd) -> Vec<u8> {
    use std::io::Read;
    let mut buf = Vec::new();
    // Ends at the pipe's end or, with nothing more written yet, at `WouldBlock`: what was read
    // before the error is kept.
    let _ = std::fs::File::from(ours).read_to_end(&mut buf);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(program: &str, args: &[&str]) -> RunSpec {
        let mut s = RunSpec::new(program, args);
        s.cwd = std::env::temp_dir();
        s.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
        s.timeout = Duration::from_secs(10);
        s
    }

    #[test]
    fn markers_go_on_their_own_line() {
        for (before, line, after) in [
            ("oops", "Timeout", "oops\nTimeout"),
            ("ok\n", "Timeout", "ok\nTimeout"),
            ("", "Signal: SIGSEGV", "Signal: SIGSEGV"),
        ] {
            let mut b = before.as_bytes().to_vec();
            append_line(&mut b, line);
            assert_eq!(b, after.as_bytes());
        }
    }

    /// The fast path (nothing enforced) runs it, and its TMPDIR goes even after chmod games.
    #[tokio::test]
    async fn fast_path_runs_without_a_launcher_and_its_tmpdir_goes() {
        let r = run(spec(
            "sh",
            &[
                "-c",
                "mkdir \"$TMPDIR/d\"; touch \"$TMPDIR/d/f\"; chmod 500 \"$TMPDIR/d\"; chmod 500 \"$TMPDIR\"; echo \"$TMPDIR\"; test -d \"$TMPDIR/d\"",
            ],
        ))
        .await
        .unwrap();
        assert_eq!(r.exit_code, 0, "{}", String::from_utf8_lossy(&r.stderr));
        assert_eq!(r.enforced, Enforced::default());
        let tmp = String::from_utf8(r.stdout).unwrap();
        assert!(tmp.contains("skillpipe-run-"), "{tmp}");
        assert!(
            !std::path::Path::new(tmp.trim()).exists(),
            "{tmp} left behind"
        );
    }

    #[tokio::test]
    async fn a_launcher_that_is_not_skillpipe_fails_closed() {
        // Unit tests run inside the test harness: it is not a launcher.
        let mut s = spec("true", &[]);
        s.sandbox.restrict_filesystem = true;
        s.sandbox.required = true;
        sandbox::set_launcher("/bin/true");
        let err = run_with_capabilities(s, &Capabilities::all())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("did not report"), "{err}");
    }

    #[tokio::test]
    async fn commands_get_no_terminal_and_no_inherited_descriptors() {
        // An inheritable descriptor, as a careless parent of skillpipe might leave one.
        let copy = sys::dup_at_least(&std::io::stdin(), 200).unwrap();
        sys::inheritable(copy.as_raw_fd()).unwrap();
        let fd = copy.as_raw_fd();
        let r = run(spec(
            "sh",
            &[
                "-c",
                "ls /proc/self/fd; read a b c d e sid rest < /proc/$$/stat; echo \"$sid $$\"",
            ],
        ))
        .await
        .unwrap();
        drop(copy);
        let out = String::from_utf8(r.stdout).unwrap();
        let mut lines: Vec<&str> = out.lines().collect();
        let ids = lines.pop().unwrap();
        assert!(
            !lines.contains(&fd.to_string().as_str()),
            "fd {fd} leaked: {lines:?}"
        );
        // A session of its own: the session id is the command's pid.
        let (sid, pid) = ids.split_once(' ').unwrap();
        assert_eq!(sid, pid, "{out}");
    }

    #[tokio::test]
    async fn output_over_the_cap_is_flagged_with_a_warning() {
        let mut s = spec("sh", &["-c", "echo 0123456789; echo abcdef >&2"]);
        s.max_output_bytes = 4;
        let r = run(s).await.unwrap();
        assert_eq!(r.stdout, b"0123");
        assert!(r.truncated_stdout && r.truncated_stderr);
        assert_eq!(
            r.warnings,
            [
                "stdout was 11 bytes, over max_output_bytes (4 bytes); the rest was dropped",
                "stderr was 7 bytes, over max_output_bytes (4 bytes); the rest was dropped",
            ]
        );
    }

    #[tokio::test]
    async fn missing_working_directory_is_an_io_error() {
        let mut s = spec("true", &[]);
        s.cwd = "/nonexistent/dir".into();
        assert!(matches!(run(s).await, Err(ExecError::Io(..))));
    }
}
