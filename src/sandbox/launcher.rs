//! `skillpipe __launch`: runs in a fresh, single-threaded process (so no async-signal-safety
//! limits apply), sets up the namespaces and Landlock on itself, reports to its parent, then
//! either execs the command or — with a PID namespace — forks a tiny init that is PID 1, forks
//! the command, reaps orphans and hands back the command's real exit status.
//!
//! Status path with a PID namespace: init sends the command's raw wait status over a pipe and
//! exits (which makes the kernel kill whatever is left in the namespace); the launcher then
//! exits with the same code, or re-raises the same signal on itself (a normal process outside
//! the namespace, so the signal is not ignored as it would be for PID 1).

use super::LaunchArgs;
use super::caps::linux::explain;
use super::ns::{NsStep, UserNs, unshare};
use super::plan::Enforced;
use super::report::{self, EXIT_LAUNCH_FAILED};
use super::writes;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;

/// Where the launcher's messages go: the parent's report pipe, else stderr.
struct Reporter {
    pipe: Option<File>,
}

impl Reporter {
    fn open(fd: Option<i32>) -> Reporter {
        let pipe = fd.filter(|&fd| fd > 2).and_then(|fd| {
            // SAFETY: F_GETFD only checks that the descriptor is open; then we own it, and mark
            // it close-on-exec so the command never inherits it.
            unsafe {
                if libc::fcntl(fd, libc::F_GETFD) < 0 {
                    return None;
                }
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                Some(File::from_raw_fd(fd))
            }
        });
        Reporter { pipe }
    }

    fn send(&mut self, line: &str) {
        match &mut self.pipe {
            Some(p) => {
                let _ = p.write_all(line.as_bytes());
            }
            None => match line.split_once(' ') {
                Some((kind, text)) => eprint!("skillpipe: {kind}: {text}"),
                None => eprint!("skillpipe: {line}"),
            },
        }
    }
}

/// Sets up the sandbox, runs the command, returns the exit code to exit with.
pub fn launch(args: LaunchArgs) -> i32 {
    let Some((program, rest)) = args.argv.split_first() else {
        eprintln!("skillpipe: __launch: no command given after --");
        return EXIT_LAUNCH_FAILED;
    };
    let mut reporter = Reporter::open(args.report_fd);
    // Namespaces can only be entered by a single-threaded process.
    let threads = thread_count();
    if threads > 1 {
        reporter.send(&report::error_line(&format!(
            "the sandbox launch hook ran with {threads} threads already started; call \
             skillpipe::sandbox::run_if_launcher() before anything starts a thread \
             (#[tokio::main] starts its runtime before the body of main)"
        )));
        return EXIT_LAUNCH_FAILED;
    }
    let required = !args.best_effort;
    let mut enforced = Enforced::default();
    let mut warnings = Vec::new();

    // Namespaces first: the user namespace gives the capabilities to create the others.
    let mut userns_problem = None;
    if args.userns && (args.net || args.pid) {
        userns_problem = UserNs::for_current_process().enter().err().map(explain);
    }
    let namespace = |wanted: bool, flag, step| -> Option<Result<(), String>> {
        wanted.then(|| match &userns_problem {
            Some(p) => Err(p.clone()),
            None => unshare(flag, step).map_err(explain),
        })
    };
    let net = namespace(args.net, libc::CLONE_NEWNET, NsStep::Network);
    let pid = namespace(args.pid, libc::CLONE_NEWPID, NsStep::Pid);
    match net {
        Some(Ok(())) => enforced.network = true,
        Some(Err(p)) if required => {
            reporter.send(&report::error_line(&format!("network isolation: {p}")));
            return EXIT_LAUNCH_FAILED;
        }
        Some(Err(p)) => warnings.push(format!("sandbox not enforced: network isolation: {p}")),
        None => {}
    }
    match pid {
        Some(Ok(())) => enforced.pids = true,
        Some(Err(p)) => warnings.push(format!(
            "no PID namespace ({p}): background processes that call setsid may outlive the command"
        )),
        None => {}
    }
    if args.fs {
        match writes::restrict_writes(&args.writable) {
            Ok(w) => {
                enforced.filesystem = true;
                warnings.extend(w);
            }
            Err(p) if required => {
                reporter.send(&report::error_line(&format!("filesystem restriction: {p}")));
                return EXIT_LAUNCH_FAILED;
            }
            Err(p) => warnings.push(format!("sandbox not enforced: filesystem restriction: {p}")),
        }
    }
    // Last, so that nothing above needs a socket: no Unix sockets under network isolation.
    if enforced.network
        && let Err(p) = super::unix_sockets::restrict()
    {
        if required {
            reporter.send(&report::error_line(&format!("network isolation: {p}")));
            return EXIT_LAUNCH_FAILED;
        }
        warnings.push(format!("sandbox not complete: network isolation: {p}"));
    }
    // Whatever else is restricted, the command must not type into the user's shell.
    match super::seccomp::deny_terminal_injection() {
        Ok(()) => {}
        Err(p) if required => {
            reporter.send(&report::error_line(&p));
            return EXIT_LAUNCH_FAILED;
        }
        Err(p) => warnings.push(format!("sandbox not enforced: {p}")),
    }
    for w in &warnings {
        reporter.send(&report::warning_line(w));
    }
    reporter.send(&report::enforced_line(&enforced));
    drop(reporter);

    let arg0 = args.arg0.as_deref();
    if enforced.pids {
        run_init(program, arg0, rest).unwrap_or_else(|e| {
            eprintln!("skillpipe: cannot start the sandbox's init: {e}");
            EXIT_LAUNCH_FAILED
        })
    } else {
        exec_command(program, arg0, rest)
    }
}

/// Threads of this process (1 when it cannot tell).
fn thread_count() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(1)
}

/// Replace this process with the command. Returns only on failure, with a shell-like code.
fn exec_command(program: &OsStr, arg0: Option<&OsStr>, args: &[OsString]) -> i32 {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).env_remove(super::MARKER_ENV);
    if let Some(a0) = arg0 {
        cmd.arg0(a0);
    }
    let err = cmd.exec();
    eprintln!("skillpipe: cannot run {}: {err}", program.to_string_lossy());
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors, which we then own.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

extern "C" fn ignore_signal(_: libc::c_int) {}

/// A no-op handler (not SIG_IGN, which the command would inherit): the timeout's SIGTERM to the
/// process group is for the command; the launcher and init wait for it to react.
fn survive_sigterm() {
    // SAFETY: installing a handler that does nothing.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ignore_signal as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

fn wait_for(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // Cannot happen for our own child; report "killed by SIGKILL" rather than success.
            return libc::SIGKILL;
        }
    }
    status
}

/// Fork the init (PID 1 of the fresh namespace), wait for it and mirror the command's status.
fn run_init(program: &OsStr, arg0: Option<&OsStr>, args: &[OsString]) -> std::io::Result<i32> {
    let (status_r, status_w) = pipe()?;
    let (life_r, life_w) = pipe()?;
    survive_sigterm();
    // SAFETY: this process is single-threaded, so the child may do anything.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            drop(status_r);
            drop(life_w);
            init(status_w, life_r, program, arg0, args)
        }
        init_pid => {
            drop(status_w);
            drop(life_r);
            let init_status = wait_for(init_pid);
            let mut buf = [0u8; 4];
            let reported = File::from(status_r).read_exact(&mut buf).is_ok();
            drop(life_w);
            let status = if reported {
                i32::from_ne_bytes(buf)
            } else {
                init_status
            };
            Ok(mirror(status))
        }
    }
}

/// PID 1 of the namespace: start the command, reap everything, report the command's status.
fn init(
    status_w: OwnedFd,
    life_r: OwnedFd,
    program: &OsStr,
    arg0: Option<&OsStr>,
    args: &[OsString],
) -> ! {
    // SAFETY: plain system calls; `_exit` skips destructors and atexit handlers on purpose.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // If the launcher died before that took effect, nobody holds the pipe's write end.
        let mut pfd = libc::pollfd {
            fd: life_r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut pfd, 1, 0) > 0 {
            libc::_exit(1);
        }
        let child = libc::fork();
        if child == 0 {
            drop(status_w);
            drop(life_r);
            libc::_exit(exec_command(program, arg0, args));
        }
        if child < 0 {
            eprintln!(
                "skillpipe: cannot start {}: {}",
                program.to_string_lossy(),
                std::io::Error::last_os_error()
            );
            libc::_exit(126);
        }
        let mut command_status = None;
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == child {
                command_status = Some(status);
                break;
            }
            if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        if let Some(status) = command_status {
            let bytes = status.to_ne_bytes();
            libc::write(status_w.as_raw_fd(), bytes.as_ptr().cast(), bytes.len());
        }
        libc::_exit(0)
    }
}

/// Exit like a process with wait status `status`: the same code, or killed by the same signal.
fn mirror(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        return libc::WEXITSTATUS(status);
    }
    if !libc::WIFSIGNALED(status) {
        return 1;
    }
    let sig = libc::WTERMSIG(status);
    // SAFETY: resetting this process's handling of `sig` and sending it to ourselves.
    unsafe {
        // The command may already have dumped core; the launcher should not add its own.
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
    }
    128 + sig
}
