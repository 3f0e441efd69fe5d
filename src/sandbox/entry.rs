//! How a process becomes the sandbox launcher, and how a program that runs commands finds one.
//!
//! Commands run under a launcher: a fresh, single-threaded process (`PROGRAM __launch … --
//! COMMAND`) that applies the restrictions to itself and then execs the command. The `skillpipe`
//! binary is one. A host program can be its own launcher by calling [`run_if_launcher`] first
//! thing in `main`; otherwise it names a skillpipe binary. Before a program is trusted as the
//! launcher it must answer a handshake, and a process started as a launcher that does not act
//! as one (it never called the hook) refuses to run commands itself, so a misconfiguration is
//! one clear error, never a process re-running itself without end.

use super::{Field, LaunchArgs, MARKER_ENV};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The first argument that makes a program the launcher.
pub const LAUNCH_ARG: &str = "__launch";
/// `PROGRAM __launch --handshake` prints [`HANDSHAKE_REPLY`] and exits 0.
const HANDSHAKE_ARG: &str = "--handshake";
const HANDSHAKE_REPLY: &str = "skillpipe-launcher 1\n";
/// How long a handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

static HOOKED: AtomicBool = AtomicBool::new(false);
/// Threads this process had when the hook ran (0: not hooked, or cannot tell).
static THREADS_AT_HOOK: AtomicUsize = AtomicUsize::new(0);

/// The launch hook. Call it first thing in `main`, before any thread starts (so before building
/// a tokio runtime: `#[tokio::main]` starts one before the body of `main` runs). When this
/// process was started as the sandbox launcher it sets the sandbox up, runs the command and
/// exits with the command's status; otherwise it returns at once and records that this program
/// can be its own launcher ([`crate::dispatch::Launcher::ThisProgram`]).
///
/// ```no_run
/// skillpipe::sandbox::run_if_launcher();
/// // … then build the runtime, and the Dispatcher with `Launcher::ThisProgram`.
/// let rt = tokio::runtime::Runtime::new().unwrap();
/// ```
pub fn run_if_launcher() {
    #[cfg(target_os = "linux")]
    THREADS_AT_HOOK.store(super::launcher::thread_count(), Ordering::SeqCst);
    HOOKED.store(true, Ordering::SeqCst);
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(LAUNCH_ARG)) {
        return;
    }
    let args: Vec<OsString> = args.collect();
    if args.len() == 1 && args[0] == HANDSHAKE_ARG {
        // A launcher that hooks too late could not set up a sandbox: no handshake, the reason
        // on stderr for the program asking.
        if let Err(e) = hooked_in_time(THREADS_AT_HOOK.load(Ordering::SeqCst)) {
            eprintln!("{e}");
            std::process::exit(super::report::EXIT_LAUNCH_FAILED);
        }
        print!("{HANDSHAKE_REPLY}");
        std::process::exit(0);
    }
    let code = match LaunchArgs::parse(&args) {
        Ok(a) => super::launch(a),
        Err(e) => {
            eprintln!("skillpipe: {LAUNCH_ARG}: {e}");
            super::report::EXIT_LAUNCH_FAILED
        }
    };
    std::process::exit(code);
}

/// True once [`run_if_launcher`] has run in this process.
pub(crate) fn hooked() -> bool {
    HOOKED.load(Ordering::SeqCst)
}

/// This program as its own launcher: it called the hook, before any thread started (a
/// launcher started from a program that hooks late could not enter the namespaces).
pub(crate) fn this_program() -> Result<PathBuf, LauncherError> {
    if !hooked() {
        return Err(LauncherError::NotHooked);
    }
    hooked_in_time(THREADS_AT_HOOK.load(Ordering::SeqCst))?;
    std::env::current_exe().map_err(|e| LauncherError::NoHandshake {
        path: PathBuf::from("(this program)"),
        why: format!("cannot find its own executable: {e}"),
    })
}

/// The launcher when none is named ([`crate::Launcher::Auto`]): this program if it called the
/// hook, else the first `skillpipe` on `PATH` that answers the handshake.
pub(crate) fn auto_launcher() -> Result<PathBuf, LauncherError> {
    check_not_in_failed_launcher()?;
    match hooked() {
        true => this_program(),
        false => find_skillpipe(&std::env::var_os("PATH").unwrap_or_default()),
    }
}

fn hooked_in_time(threads: usize) -> Result<(), LauncherError> {
    match threads {
        0 | 1 => Ok(()),
        threads => Err(LauncherError::HookedLate { threads }),
    }
}

/// Why no launcher could be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LauncherError {
    /// [`crate::dispatch::Launcher::ThisProgram`] without the hook.
    #[error(
        "this program is to be its own sandbox launcher but did not call \
         skillpipe::sandbox::run_if_launcher() first thing in main"
    )]
    NotHooked,
    /// The hook ran when the process already had threads: as a launcher it could not enter
    /// the namespaces (they need a single-threaded process).
    #[error(
        "skillpipe::sandbox::run_if_launcher() was called when this program already had \
         {threads} threads, too late for it to be its own sandbox launcher; call it first thing \
         in a plain `fn main`, before building a runtime (`#[tokio::main]` starts one before the \
         body of main runs), or name a skillpipe binary as the launcher"
    )]
    HookedLate {
        /// Threads at the time of the hook.
        threads: usize,
    },
    /// No launcher was named and none was found.
    #[error(
        "no sandbox launcher: this program did not call skillpipe::sandbox::run_if_launcher() \
         and there is no `skillpipe` on PATH; install skillpipe, name a launcher, or add the hook"
    )]
    NotFound,
    /// The named program is not a skillpipe launcher.
    #[error(
        "{} is not a skillpipe sandbox launcher ({why}); name the skillpipe binary, or call \
         skillpipe::sandbox::run_if_launcher() first thing in the program's main",
        .path.display()
    )]
    NoHandshake {
        /// The program tried.
        path: PathBuf,
        /// What it did instead of answering.
        why: String,
    },
    /// This process was started as a launcher but went on as a host program.
    #[error(
        "this process was started as skillpipe's sandbox launcher but did not act as one: \
         the program must call skillpipe::sandbox::run_if_launcher() first thing in main"
    )]
    Recursion,
}

/// Refuses to start anything from a process that was started as a launcher and did not act as
/// one: running the command from here would start another launcher, and so on.
pub(crate) fn check_not_in_failed_launcher() -> Result<(), LauncherError> {
    if std::env::var_os(MARKER_ENV).is_some() {
        return Err(LauncherError::Recursion);
    }
    Ok(())
}

/// `program` answers the launcher handshake (it is skillpipe, or a host with the hook).
pub(crate) fn handshake(program: &Path) -> Result<(), LauncherError> {
    check_not_in_failed_launcher()?;
    let fail = |why: String| LauncherError::NoHandshake {
        path: program.to_path_buf(),
        why,
    };
    // In a process group of its own: whatever it starts goes with it (a program that is no
    // launcher may start anything), and a leftover holding its output pipe open cannot make
    // the reading below wait.
    let mut child = Command::new(program)
        .args([LAUNCH_ARG, HANDSHAKE_ARG])
        .env(MARKER_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| fail(format!("cannot start it: {e}")))?;
    let group = child.id() as libc::pid_t;
    let kill_group = || {
        // SAFETY: signals the process group created for this child above, nothing else.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    };
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < HANDSHAKE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(None) => {
                kill_group();
                let _ = child.wait();
                return Err(fail(format!(
                    "no answer to `{LAUNCH_ARG} {HANDSHAKE_ARG}` within {} s",
                    HANDSHAKE_TIMEOUT.as_secs()
                )));
            }
            Err(e) => return Err(fail(format!("waiting for it: {e}"))),
        }
    };
    kill_group();
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if status.success() && out == HANDSHAKE_REPLY {
        return Ok(());
    }
    // What it said, if anything (a launcher that hooked too late says why).
    let mut said = String::new();
    if let Some(e) = child.stderr.take() {
        let _ = e.take(4096).read_to_string(&mut said);
    }
    let said = said.lines().map(str::trim).find(|l| !l.is_empty());
    let said = said.map(|l| format!(", saying: {l}")).unwrap_or_default();
    Err(fail(format!(
        "it exited with {status} without the handshake{said}"
    )))
}

/// The first `skillpipe` on `path` (a `PATH` value) that answers the handshake. When there are
/// some but none answers, the first one's failure (naming it and why), not "none on PATH".
fn find_skillpipe(path: &OsStr) -> Result<PathBuf, LauncherError> {
    let mut first_failure = None;
    for candidate in std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("skillpipe"))
        .filter(|p| p.is_file())
    {
        match handshake(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e @ LauncherError::Recursion) => return Err(e),
            Err(e) => {
                first_failure.get_or_insert(e);
            }
        }
    }
    Err(first_failure.unwrap_or(LauncherError::NotFound))
}

/// What is wrong with a `__launch` command line (written by skillpipe itself, so each of these
/// means a launcher and a skillpipe of different versions, or a hand-made command line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchArgsError {
    /// A flag without its value.
    #[error("{0} needs a value")]
    MissingValue(&'static str),
    /// A numeric flag with something else.
    #[error("{flag}: not a number: {value}")]
    NotANumber {
        flag: &'static str,
        /// The value given.
        value: String,
    },
    /// An argument the launcher does not know.
    #[error(
        "unexpected argument {0}; the launcher and this skillpipe differ in version: name \
         the skillpipe binary that runs this program as its launcher"
    )]
    Unexpected(String),
    /// `--mount` without the directory its tmpfs goes on.
    #[error("--mount needs --tmpdir")]
    MountWithoutTmpdir,
    /// Nothing after `--`, or no `--`.
    #[error("no command given (expected -- PROGRAM ARGS...)")]
    NoCommand,
}

impl LaunchArgs {
    /// Parses the launcher's arguments (after `__launch`), as written by [`LaunchArgs::to_args`].
    pub fn parse(args: &[OsString]) -> Result<LaunchArgs, LaunchArgsError> {
        let mut a = LaunchArgs::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--" {
                a.argv = it.cloned().collect();
                if a.argv.is_empty() {
                    return Err(LaunchArgsError::NoCommand);
                }
                if a.mount && a.tmpdir.is_none() {
                    return Err(LaunchArgsError::MountWithoutTmpdir);
                }
                return Ok(a);
            }
            let mut fields = a.fields();
            let Some((flag, field)) = fields.iter_mut().find(|(f, _)| arg == *f) else {
                return Err(LaunchArgsError::Unexpected(
                    arg.to_string_lossy().into_owned(),
                ));
            };
            let flag: &'static str = flag;
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or(LaunchArgsError::MissingValue(flag))
            };
            let not_a_number = |value: String| LaunchArgsError::NotANumber { flag, value };
            let mut number = || -> Result<u64, LaunchArgsError> {
                let v = value()?;
                let n = v.to_str().and_then(|s| s.parse().ok());
                n.ok_or_else(|| not_a_number(v.to_string_lossy().into_owned()))
            };
            match field {
                Field::On(on) => **on = true,
                Field::Paths(v) => v.push(value()?.into()),
                Field::Path(v) => **v = Some(value()?.into()),
                Field::Number(v) => **v = Some(number()?),
                Field::Fd(v) => {
                    let n = number()?;
                    **v = Some(i32::try_from(n).map_err(|_| not_a_number(n.to_string()))?);
                }
                Field::Text(v) => **v = Some(value()?),
            }
        }
        Err(LaunchArgsError::NoCommand)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_hook_after_threads_started_is_too_late() {
        assert_eq!(
            hooked_in_time(0),
            Ok(()),
            "cannot tell: the launcher checks again"
        );
        assert_eq!(hooked_in_time(1), Ok(()));
        let err = hooked_in_time(3).unwrap_err();
        assert_eq!(err, LauncherError::HookedLate { threads: 3 });
        let text = err.to_string();
        assert!(text.contains("already had 3 threads"), "{text}");
        assert!(text.contains("#[tokio::main]"), "{text}");
    }

    #[test]
    fn a_skillpipe_on_path_that_does_not_answer_is_named_not_missing() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("skillpipe");
        std::fs::write(&fake, "#!/bin/sh\necho 'not today' >&2\nexit 3\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = find_skillpipe(dir.path().as_os_str()).unwrap_err();
        let LauncherError::NoHandshake { path, why } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(path, &fake);
        assert!(why.contains("saying: not today"), "{why}");
        assert!(!err.to_string().contains("on PATH"), "{err}");
        // The control: with no skillpipe there at all, it says so.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            find_skillpipe(empty.path().as_os_str()),
            Err(LauncherError::NotFound)
        );
    }

    /// A program that leaves something running behind it, holding its output open, neither
    /// makes the handshake wait nor keeps running after it.
    #[test]
    fn what_a_failed_handshake_started_does_not_outlive_it() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("skillpipe");
        let mark = dir.path().join("left-running");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh
(sleep 30; touch {}) &
echo no
exit 1
",
                mark.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let started = Instant::now();
        let err = handshake(&fake).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3), "{err}");
        assert!(err.to_string().contains("without the handshake"), "{err}");
        // The subshell it forked (same command line as the script) was in the group killed.
        std::thread::sleep(Duration::from_millis(50));
        let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
        let left = String::from_utf8_lossy(&ps.stdout);
        assert!(
            !left.contains(&fake.display().to_string()),
            "left running: {left}"
        );
    }
}
