//! Linux namespaces: a fresh user namespace (so an unprivileged user may create the others), a
//! network namespace (no route out) and a PID namespace (the tree dies with its first process).
//!
//! [`UserNs::enter`] and [`unshare`] only make raw system calls on buffers prepared beforehand,
//! so the capability probe may call them in a child forked from a multi-threaded process.

use std::ffi::CStr;

/// The step of namespace set-up that failed, with the errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NsError {
    pub step: NsStep,
    pub errno: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NsStep {
    /// `unshare(CLONE_NEWUSER)`.
    User,
    /// Writing `/proc/self/{setgroups,uid_map,gid_map}`.
    IdMap,
    /// `unshare(CLONE_NEWNET)`.
    Network,
    /// `unshare(CLONE_NEWPID)`.
    Pid,
    /// `unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)`.
    Mount,
    /// Mounting a fresh /proc for the PID namespace.
    Proc,
}

/// The namespaces that come with a private mount namespace: System V IPC (no shared-memory
/// segment outlives the run or is seen by the host) and the host name.
pub const MOUNT_FLAGS: libc::c_int = libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `unshare(2)` that reports which step failed. Async-signal-safe.
pub fn unshare(flags: libc::c_int, step: NsStep) -> Result<(), NsError> {
    // SAFETY: plain system call without pointers.
    if unsafe { libc::unshare(flags) } == 0 {
        Ok(())
    } else {
        Err(NsError {
            step,
            errno: errno(),
        })
    }
}

/// Write `data` to an existing file with one `write(2)`. Async-signal-safe.
fn write_proc_file(path: &CStr, data: &[u8]) -> Result<(), i32> {
    // SAFETY: `path` is a valid C string; the fd is closed on every path.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(errno());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let result = if n == data.len() as isize {
            Ok(())
        } else if n < 0 {
            Err(errno())
        } else {
            Err(libc::EIO)
        };
        libc::close(fd);
        result
    }
}

/// The id maps for a fresh user namespace, prepared before any fork.
///
/// The process maps only its own uid/gid, to the same numbers (so `id -u` and file ownership
/// look unchanged) — the one mapping the kernel lets a process write for itself, which
/// requires denying `setgroups(2)` first. This holds for root too: it keeps full access to
/// files owned by root, sees other users' files with the "other" permission bits only, and has
/// no capabilities over the host's namespaces (so it cannot `setns` back into the host network).
#[derive(Debug, Clone)]
pub struct UserNs {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl UserNs {
    pub fn for_current_process() -> UserNs {
        // SAFETY: these calls cannot fail.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        UserNs {
            uid_map: format!("{euid} {euid} 1\n").into_bytes(),
            gid_map: format!("{egid} {egid} 1\n").into_bytes(),
        }
    }

    /// Create the user namespace and write the maps. Async-signal-safe.
    pub fn enter(&self) -> Result<(), NsError> {
        unshare(libc::CLONE_NEWUSER, NsStep::User)?;
        let map_err = |errno| NsError {
            step: NsStep::IdMap,
            errno,
        };
        // Missing before Linux 3.19, where it is not needed.
        match write_proc_file(c"/proc/self/setgroups", b"deny") {
            Ok(()) | Err(libc::ENOENT) => {}
            Err(e) => return Err(map_err(e)),
        }
        write_proc_file(c"/proc/self/uid_map", &self.uid_map).map_err(map_err)?;
        write_proc_file(c"/proc/self/gid_map", &self.gid_map).map_err(map_err)?;
        Ok(())
    }
}

/// The status of our child `pid` once it ended.
pub(super) fn wait_for(pid: libc::pid_t) -> i32 {
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

/// In a fresh mount namespace, from a process that has just unshared its PID namespace: can a
/// child (PID 1 there) mount a fresh /proc? The kernel refuses when parts of the host's /proc
/// are covered (as container runtimes do). Async-signal-safe (for the capability probe).
pub fn try_proc_mount() -> Result<(), NsError> {
    let err = |errno| NsError {
        step: NsStep::Proc,
        errno,
    };
    // SAFETY: raw system calls on C string literals; the child only mounts and `_exit`s.
    unsafe {
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(err(errno()));
        }
        let pid = libc::fork();
        if pid == 0 {
            let r = libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            );
            libc::_exit(if r == 0 { 0 } else { errno().clamp(1, 255) });
        }
        if pid < 0 {
            return Err(err(errno()));
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if errno() != libc::EINTR {
                return Err(err(libc::ECHILD));
            }
        }
        match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
            Some(0) => Ok(()),
            Some(e) => Err(err(e)),
            None => Err(err(libc::EIO)),
        }
    }
}

/// Why loopback stayed down in the fresh network namespace.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.message())]
pub struct LoopbackError {
    /// The call that failed.
    pub step: &'static str,
    pub source: std::io::Error,
}

impl LoopbackError {
    /// The warning, with the setting that lifts it kept typed.
    pub fn message(&self) -> super::message::Message {
        super::message::Message::text(format!(
            "bringing loopback up failed at {}: {}; 127.0.0.1 stays unreachable in the sandbox (",
            self.step, self.source
        ))
        .and_setting(super::message::Setting::AllowNetwork)
        .and(" runs in the host's network instead)")
    }
}

/// Bring the loopback interface of a fresh network namespace up, so that a command's own local
/// server (127.0.0.1, ::1) works while nothing outside the namespace is reachable.
pub fn loopback_up() -> Result<(), LoopbackError> {
    let fail = |step| LoopbackError {
        step,
        source: std::io::Error::last_os_error(),
    };
    // SAFETY: a datagram socket only for the interface ioctls, on a zeroed ifreq we fill in.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(fail("socket"));
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let result = if libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req) < 0 {
            Err(fail("SIOCGIFFLAGS"))
        } else {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            if libc::ioctl(s, libc::SIOCSIFFLAGS, &req) < 0 {
                Err(fail("SIOCSIFFLAGS"))
            } else {
                Ok(())
            }
        };
        libc::close(s);
        result
    }
}
