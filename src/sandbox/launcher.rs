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
use super::connect_broker::{self, Named};
use super::message::Message;
use super::mounts;
use super::ns::{MOUNT_FLAGS, NsStep, UserNs, loopback_up, unshare, wait_for};
use super::plan::Enforced;
use super::report::{self, EXIT_LAUNCH_FAILED};
use super::writes;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;

/// Blocks until the parent writes its byte to the inherited `fd`, then closes it; `false` when
/// the parent closed it first (it failed, or died).
fn wait_at_gate(fd: i32) -> bool {
    let Some(mut gate) = inherited(fd) else {
        return false;
    };
    let mut byte = [0u8; 1];
    loop {
        match gate.read(&mut byte) {
            Ok(n) => return n == 1,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

/// The descriptor `fd` the parent passed down (above stdio, and open), now ours and
/// close-on-exec so the command never inherits it.
fn inherited(fd: i32) -> Option<File> {
    // SAFETY: F_GETFD only checks that the descriptor is open; then we own it.
    unsafe {
        if fd <= 2 || libc::fcntl(fd, libc::F_GETFD) < 0 {
            return None;
        }
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        Some(File::from_raw_fd(fd))
    }
}

/// Sets up the sandbox, runs the command, returns the exit code to exit with.
pub fn launch(args: LaunchArgs) -> i32 {
    set_up_and_run(&args).unwrap_or_else(|code| code)
}

/// Threads of this process (1 when it cannot tell): the entries of `/proc/self/task`, which
/// every start of the binary counts (listing them costs a fraction of reading `status`).
pub(super) fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .ok()
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

/// `Err` is the exit code after the launcher reported why it refused.
fn set_up_and_run(args: &LaunchArgs) -> Result<i32, i32> {
    let mut st = State {
        enforced: Enforced::default(),
        warnings: Vec::new(),
        required: !args.best_effort,
        memory_per_run: false,
        pipe: args.report_fd.and_then(inherited),
    };
    // Namespaces can only be entered by a single-threaded process.
    let threads = thread_count();
    if threads > 1 {
        return Err(st.refuse(&Message::text(format!(
            "the sandbox launch hook ran with {threads} threads already started; call \
             skillpipe::sandbox::run_if_launcher() before anything starts a thread \
             (#[tokio::main] starts its runtime before the body of main)"
        ))));
    }

    // Before the user namespace, while this process still writes the host's cgroup files as
    // itself, and before it forks anything.
    let cgroups = [
        (&args.pids_cgroup, "pids", "max_processes"),
        (&args.memory_cgroup, "memory", "max_memory_mb"),
    ];
    for (dir, cgroup, key) in cgroups {
        let what = format!("{key} (joining the run's {cgroup} cgroup)");
        match dir.as_deref().map(super::limits::join_cgroup) {
            Some(Ok(())) => st.memory_per_run |= cgroup == "memory",
            Some(Err(p)) => st.fail_or_warn(&what, p.to_string())?,
            None => {}
        }
    }
    // Before anything covers them: the named sockets, for the broker (see `connect_broker`).
    let named = Named::pin(&args.socket, &mut st.warnings);

    // Namespaces first: the user namespace gives the capabilities to create the others.
    let mut userns_problem = None;
    if args.userns && (args.net || args.pid || args.mount) {
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
    let mnt = namespace(args.mount, MOUNT_FLAGS, NsStep::Mount);
    match net {
        Some(Ok(())) => {
            st.enforced.network = true;
            if let Err(p) = loopback_up() {
                st.warnings.push(p.message());
            }
        }
        Some(Err(p)) => st.fail_or_warn("network isolation", p)?,
        None => {}
    }
    match pid {
        Some(Ok(())) => st.enforced.pids = true,
        Some(Err(p)) => st.warnings.push(
            format!(
                "no PID namespace ({p}): background processes that call setsid may outlive the \
                 command"
            )
            .into(),
        ),
        None => {}
    }
    const MOUNTS: &str = "private /dev, /proc and $TMPDIR, the read view";
    match (mnt, args.tmpdir.as_deref()) {
        (Some(Ok(())), Some(tmpdir)) => {
            let setup = mounts::Setup {
                tmpdir,
                tmp_mb: args.limits.tmp_mb.unwrap_or(DEFAULT_TMP_MB),
                hide: &args.hide,
                protect: &args.protect,
                writable: args.fs.then_some(args.writable.as_slice()),
                view: (!args.read.is_empty()).then_some(mounts::View {
                    read: &args.read,
                    writable: &args.writable,
                }),
            };
            match mounts::setup(&setup) {
                Ok(w) => {
                    st.enforced.mounts = true;
                    st.warnings.extend(w.into_iter().map(Message::from));
                }
                Err(p) => st.fail_or_warn(MOUNTS, p.message())?,
            }
        }
        (Some(Err(p)), _) => st.fail_or_warn(MOUNTS, p)?,
        _ => {}
    }

    // Everything above is set up while the parent watches the writable paths; nothing of the
    // command may run before it has.
    if let Some(fd) = args.gate_fd
        && !wait_at_gate(fd)
    {
        return Err(st.refuse(&Message::text(
            "skillpipe stopped before the run's writable paths were watched, so the command was \
             not started",
        )));
    }
    if st.enforced.pids {
        run_init(args, named, st).map_err(|e| {
            eprintln!("skillpipe: cannot start the sandbox's init: {e}");
            EXIT_LAUNCH_FAILED
        })
    } else {
        if st.enforced.mounts {
            st.warnings
                .push("no PID namespace, so /proc shows the host's processes".into());
        }
        let broker = restrict(args, &mut st, false)?;
        debug_assert!(!broker);
        st.send_report();
        drop(named);
        Ok(exec_command(args))
    }
}

/// $TMPDIR's size when no `--max-tmp` is given, MiB.
const DEFAULT_TMP_MB: u64 = 256;

/// What is in force so far, what the report will say, and where it goes.
struct State {
    enforced: Enforced,
    warnings: Vec<Message>,
    required: bool,
    /// In the run's memory cgroup.
    memory_per_run: bool,
    /// The parent's report pipe; without one, messages go to stderr.
    pipe: Option<File>,
}

impl State {
    fn send(&mut self, line: &str) {
        match &mut self.pipe {
            Some(p) => {
                let _ = p.write_all(line.as_bytes());
            }
            None => match line.trim_end().split_once(' ') {
                Some((kind, text)) => eprintln!("skillpipe: {kind}: {}", Message::decode(text)),
                None => eprint!("skillpipe: {line}"),
            },
        }
    }

    /// Report the error that stops the launch: the exit code to leave with.
    fn refuse(&mut self, m: &Message) -> i32 {
        self.send(&report::error_line(m));
        EXIT_LAUNCH_FAILED
    }

    /// The report's last lines: the warnings, then what is in force.
    fn send_report(&mut self) {
        for w in std::mem::take(&mut self.warnings) {
            self.send(&report::warning_line(&w));
        }
        if self.memory_per_run {
            self.send(report::MEMORY_PER_RUN_LINE);
        }
        let enforced = report::enforced_line(&self.enforced);
        self.send(&enforced);
    }

    /// A restriction could not be set up: refuse when required (after reporting; `Err` is the
    /// exit code), else warn.
    fn fail_or_warn(&mut self, what: &str, problem: impl Into<Message>) -> Result<(), i32> {
        let problem = problem.into();
        if self.required {
            return Err(self.refuse(&Message::text(format!("{what}: ")).and_message(problem)));
        }
        let m = Message::text(format!("sandbox not enforced: {what}: ")).and_message(problem);
        self.warnings.push(m);
        Ok(())
    }

    /// The named Unix sockets cannot be served: refuse when required (`Err` is the exit code),
    /// else warn that they stay closed.
    fn sockets_closed(&mut self, why: Message) -> Result<(), i32> {
        if self.required {
            return Err(self.refuse(&Message::text("Unix sockets: ").and_message(why)));
        }
        self.warnings
            .push(Message::text("the allowed Unix sockets stay closed: ").and_message(why));
        Ok(())
    }
}

/// The last restrictions, in the process that then starts the command (the launcher itself,
/// or the init of the PID namespace after it mounted /proc): Landlock, limits, seccomp.
/// `can_broker`: this is init, with the run's own /proc (whose pids are those the broker is
/// told), so it can serve the named sockets (see `connect_broker`); returns whether it is to,
/// i.e. the command's process must install the broker's filter.
/// `Err` is the exit code after an error was reported.
fn restrict(args: &LaunchArgs, st: &mut State, can_broker: bool) -> Result<bool, i32> {
    if args.fs {
        let mut writable = args.writable.clone();
        if st.enforced.mounts {
            writable.push("/dev/shm".into());
        }
        match writes::restrict_writes(&writable) {
            Ok(w) => {
                st.enforced.filesystem = true;
                st.warnings.extend(w.into_iter().map(Message::from));
            }
            Err(p) => st.fail_or_warn("filesystem restriction", p.message())?,
        }
    }
    if args.limits.any() {
        match args.limits.apply() {
            Ok(()) => st.enforced.limits = true,
            Err(p) => st.fail_or_warn("resource limits", p.to_string())?,
        }
    }
    // Last, so that nothing above needs a socket: Unix sockets only when some are named (and
    // then only those, through the broker), whatever the network setting.
    let broker = !args.socket.is_empty() && can_broker;
    if !args.socket.is_empty() && !broker {
        st.warnings.push(
            "the allowed Unix sockets stay closed: without a PID namespace and a /proc of its \
             own there is no init to connect to them for the command"
                .into(),
        );
    }
    if broker {
        // With the network allowed, abstract sockets are the host's: out of reach too.
        if !st.enforced.network
            && let Err(p) = writes::scope_abstract_sockets()
        {
            st.fail_or_warn("Unix sockets", p.message())?;
        }
    } else if let Err(p) = super::unix_sockets::restrict() {
        st.fail_or_warn("Unix sockets", p.message())?;
    }
    // Whatever else is restricted, the command must not type into the user's shell, reach
    // the user's keyring or make namespaces of its own.
    if let Err(p) = super::seccomp::deny_escapes() {
        st.fail_or_warn("terminal, keyring and namespace filter", p.message())?;
    }
    Ok(broker)
}

/// Replace this process with the command. Returns only on failure, with a shell-like code.
fn exec_command(launch: &LaunchArgs) -> i32 {
    drop_capabilities();
    let (program, args) = launch
        .argv
        .split_first()
        .expect("LaunchArgs::parse wants a command");
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).env_remove(super::MARKER_ENV);
    if let Some(a0) = &launch.arg0 {
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

/// The command starts with no capabilities, even when started by root (which is root in its
/// user namespace too): with CAP_SYS_ADMIN there it could unmount what covers the hidden
/// paths, or with CAP_SYS_PTRACE trace the run's init. Empties the bounding and ambient sets
/// and locks SECBIT_NOROOT, so exec grants root nothing. A process without CAP_SETPCAP cannot
/// do this, and needs not: it has no capabilities, and no_new_privs (set with the seccomp
/// filters) keeps exec from granting any.
fn drop_capabilities() {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    // SAFETY: prctl calls on this process only.
    unsafe {
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL)
            {
                break; // past the last capability this kernel knows
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        libc::prctl(
            libc::PR_SET_SECUREBITS,
            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED,
            0,
            0,
            0,
        );
    }
}

extern "C" fn ignore_signal(_: libc::c_int) {}

/// A no-op handler (not SIG_IGN, which the command would inherit): the timeout's SIGTERM to the
/// process group is for the command; the launcher and init wait for it to react.
fn survive_sigterm() {
    // SAFETY: installing a handler that does nothing (`signal` restarts interrupted calls).
    unsafe {
        libc::signal(
            libc::SIGTERM,
            ignore_signal as *const () as libc::sighandler_t,
        )
    };
}

/// Fork the init (PID 1 of the fresh namespace), wait for it and mirror the command's status.
fn run_init(launch: &LaunchArgs, named: Named, st: State) -> std::io::Result<i32> {
    let (mut status_r, status_w) = std::io::pipe()?;
    let (life_r, life_w) = std::io::pipe()?;
    survive_sigterm();
    // SAFETY: this process is single-threaded, so the child may do anything.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            drop(status_r);
            drop(life_w);
            init(status_w, life_r, launch, named, st)
        }
        init_pid => {
            drop(st);
            drop(named);
            drop(status_w);
            drop(life_r);
            let init_status = wait_for(init_pid);
            let mut buf = [0u8; 4];
            let status = match status_r.read_exact(&mut buf) {
                Ok(()) => i32::from_ne_bytes(buf),
                Err(_) => init_status,
            };
            drop(life_w);
            Ok(mirror(status))
        }
    }
}

/// A step of [`init`]: the channel over which the command's process hands init its connect
/// filter, when sockets are named; `None` (Unix sockets closed) when it cannot be had and the
/// sandbox may go without. `Err` is the exit code after the refusal was reported.
fn broker_channel(broker: bool, st: &mut State) -> Result<Option<(UnixStream, UnixStream)>, i32> {
    if !broker {
        return Ok(None);
    }
    // A stream socket pair for handing the broker's listener over (see `connect_broker`).
    let e = match UnixStream::pair() {
        Ok(pair) => return Ok(Some(pair)),
        Err(e) => e,
    };
    st.sockets_closed(e.to_string().into())?;
    // No broker: no Unix socket at all.
    if let Err(p) = super::unix_sockets::restrict() {
        return Err(st.refuse(&Message::text("Unix sockets: ").and_message(p.message())));
    }
    Ok(None)
}

/// A step of [`init`]: reap every process of the namespace until the command ends, and write
/// its status to the launcher.
fn reap(child: libc::pid_t, mut status_w: &std::io::PipeWriter) {
    loop {
        let mut status = 0;
        // SAFETY: waiting for our children.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == child {
            let _ = status_w.write_all(&status.to_ne_bytes());
            return;
        }
        if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// PID 1 of the namespace: mount its /proc, finish the set-up, start the command (with the
/// broker's filter when sockets are named, serving it from here), reap everything, report the
/// command's status.
fn init(
    status_w: std::io::PipeWriter,
    life_r: std::io::PipeReader,
    launch: &LaunchArgs,
    mut named: Named,
    mut st: State,
) -> ! {
    // SAFETY: plain system calls; `_exit` skips destructors and atexit handlers on purpose.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // Not traceable from inside: a command with capabilities in the user namespace (one
        // started by root) could otherwise make init connect for it, or read its pipes.
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        // If the launcher died before that took effect, nobody holds the pipe's write end.
        let mut pfd = libc::pollfd {
            fd: life_r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut pfd, 1, 0) > 0 {
            libc::_exit(1);
        }
    }
    // Before Landlock, which forbids mounting.
    if st.enforced.mounts
        && let Err(p) = mounts::mount_proc()
    {
        st.enforced.mounts = false;
        st.fail_or_warn("a private /proc", p.message())
            .unwrap_or_else(|c| leave(c));
    }
    if st.enforced.mounts
        && let Some(tmpdir) = &launch.tmpdir
    {
        named.allow_own_tmp(tmpdir);
    }
    let can_broker = st.enforced.mounts;
    let broker = restrict(launch, &mut st, can_broker).unwrap_or_else(|c| leave(c));
    let channel = broker_channel(broker, &mut st).unwrap_or_else(|c| leave(c));
    let required = st.required;
    // SAFETY: this process is single-threaded (the broker's thread starts below).
    let child = unsafe { libc::fork() };
    if child == 0 {
        drop(status_w);
        drop(life_r);
        if let Some((_, theirs)) = &channel {
            // The filter that hands connect(2) to init; if it cannot be had, no Unix socket
            // at all (or, when required, no command).
            let go = match connect_broker::install_and_hand_over(theirs) {
                // Held until init has taken its duplicate.
                Ok(_listener) => connect_broker::await_go(theirs),
                Err(e) => {
                    connect_broker::tell_failure(theirs, &e);
                    !required && super::unix_sockets::restrict().is_ok()
                }
            };
            if !go {
                leave(EXIT_LAUNCH_FAILED);
            }
        }
        drop(channel);
        leave(exec_command(launch));
    }
    if child < 0 {
        eprintln!(
            "skillpipe: cannot start {}: {}",
            launch.argv[0].to_string_lossy(),
            std::io::Error::last_os_error()
        );
        leave(126);
    }
    if let Some((ours, theirs)) = channel {
        drop(theirs);
        if let Some(pipe) = st.pipe.as_ref().and_then(|p| p.try_clone().ok()) {
            super::caller::report_refusals(pipe);
        }
        let served = connect_broker::receive(&ours, child).and_then(|listener| {
            connect_broker::serve(listener, named).map_err(connect_broker::BrokerError::Thread)
        });
        // Refused: no go, so the command's process exits without running the command.
        let go = served.or_else(|e| st.sockets_closed(e.message()));
        if go.is_ok() {
            connect_broker::send_go(&ours);
        }
    }
    st.send_report();
    drop(st);
    reap(child, &status_w);
    leave(0)
}

/// Leave this forked process with `code`, skipping destructors and atexit handlers.
fn leave(code: i32) -> ! {
    // SAFETY: `_exit` ends the process at once.
    unsafe { libc::_exit(code) }
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

#[cfg(test)]
mod tests {
    use super::wait_at_gate;
    use std::io::Write;
    use std::os::fd::IntoRawFd;

    #[test]
    fn the_command_starts_only_after_the_parents_byte() {
        let (read, mut write) = std::io::pipe().unwrap();
        write.write_all(&[1]).unwrap();
        assert!(wait_at_gate(read.into_raw_fd()));
        // The parent gone without its byte: the command is not started.
        let (read, write) = std::io::pipe().unwrap();
        drop(write);
        assert!(!wait_at_gate(read.into_raw_fd()));
        // Not a descriptor the launcher may own.
        assert!(!wait_at_gate(2));
    }
}
