//! Every system call of the executor that Rust cannot check, each behind a safe function: the
//! child's setup between fork and exec, the report pipe, signals to a run's process group, and
//! the few lookups the rest of `exec` needs. No `unsafe` elsewhere in `exec`.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use tokio::process::Command;

/// Sends `sig` to the process group `pgid` (none for 0): the group a run leads. A group that
/// is gone already (ESRCH) is no error.
pub(super) fn kill_group(pgid: libc::pid_t, sig: libc::c_int) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a group; it touches no memory.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// Sends this process `sig`.
pub(super) fn raise(sig: libc::c_int) {
    // SAFETY: kill(2) with this process's own id; it touches no memory.
    unsafe {
        libc::kill(libc::getpid(), sig);
    }
}

/// This process's effective user id.
pub(super) fn euid() -> libc::uid_t {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Whether this process may execute `path` (access(2) with X_OK).
pub(super) fn executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid C string that outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// A pipe, both ends close-on-exec so that concurrent spawns never inherit it, and both
/// non-blocking if asked (on Linux; elsewhere the read end): `(read, write)`.
pub(super) fn pipe(nonblocking: bool) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors, which are then owned here alone.
    unsafe {
        #[cfg(target_os = "linux")]
        let failed = {
            let flags = libc::O_CLOEXEC | if nonblocking { libc::O_NONBLOCK } else { 0 };
            libc::pipe2(fds.as_mut_ptr(), flags) != 0
        };
        // Elsewhere the launcher is never used; this only has to compile and be correct.
        #[cfg(not(target_os = "linux"))]
        let failed = libc::pipe(fds.as_mut_ptr()) != 0
            || fds
                .iter()
                .any(|&fd| libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0)
            || (nonblocking && libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK) != 0);
        if failed {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// A close-on-exec copy of `fd` numbered `min` or above.
pub(super) fn dup_at_least(fd: &impl AsRawFd, min: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl(2) duplicating a descriptor this process holds open.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// Clears close-on-exec on `fd`: a program this process execs inherits it. Async-signal-safe.
pub(super) fn inheritable(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl(2) setting a descriptor's flags; it touches no memory.
    match unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } {
        0.. => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Has `cmd`'s child set itself up between fork and exec (async-signal-safe calls only, no
/// allocation):
///
/// - A new session: the command has no controlling terminal, so it cannot open `/dev/tty` and
///   push keystrokes into the user's shell with `TIOCSTI` (they would run after skillpipe
///   exits, outside every sandbox), and it leads its own process group for the timeout kill.
/// - Every inherited descriptor above stderr is closed on exec (except the launcher's report
///   pipe and gate, `keep`): whatever started skillpipe may have left some open, and an open
///   file or socket would let the command write past Landlock or talk past the network
///   namespace.
/// - The parent-death signal (Linux), so the command dies with skillpipe.
pub(super) fn set_up_child(cmd: &mut Command, keep: [Option<RawFd>; 2]) {
    #[cfg(target_os = "linux")]
    let parent = std::process::id() as libc::pid_t;
    let setup = move || {
        // SAFETY: plain system calls.
        if unsafe { libc::setsid() } < 0 {
            return Err(io::Error::last_os_error());
        }
        close_inherited_on_exec();
        #[cfg(target_os = "linux")]
        // SAFETY: plain system calls.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // skillpipe died before the death signal was armed.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
        keep.into_iter().flatten().try_for_each(inheritable)
    };
    // SAFETY: `setup` only makes async-signal-safe system calls and allocates nothing.
    unsafe {
        cmd.pre_exec(setup);
    }
}

/// Marks every descriptor from 3 up close-on-exec. Async-signal-safe.
fn close_inherited_on_exec() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11) only sets flags.
        let done = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        } == 0;
        if done {
            return;
        }
    }
    // Older kernels and other systems: one fcntl per possible descriptor (EBADF is fine).
    // SAFETY: getrlimit and fcntl are plain system calls on our own descriptors.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur.min(1 << 16) as libc::c_int
        } else {
            1024
        };
        for fd in 3..max {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}
