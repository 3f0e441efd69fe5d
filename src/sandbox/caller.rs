//! The thread waiting in a call handed over to the run's init (see `connect_broker` and
//! `send_broker`): reading and writing its memory, taking its descriptors, its ids; and where
//! a socket address it names may lead ([`Named`]: the named sockets and the run's own tmpfs).

use super::message::Message;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A named socket, pinned: its inode, and an `O_PATH` descriptor on it, held so that the
/// inode number cannot go to another file while the run lasts.
#[derive(Debug)]
struct Pinned {
    dev: u64,
    ino: u64,
    _held: OwnedFd,
}

/// The named sockets, opened before anything of the command runs.
#[derive(Debug, Default)]
pub struct Named {
    pinned: Vec<Pinned>,
    /// The device of the run's private `$TMPDIR` tmpfs, where only the run itself makes
    /// sockets: its own servers stay reachable.
    own_tmp: Option<u64>,
}

impl Named {
    /// Pin the sockets at `paths`; a path that is not a socket is left out with a warning.
    pub fn pin(paths: &[PathBuf], warnings: &mut Vec<Message>) -> Named {
        let mut out = Vec::new();
        for p in paths {
            let fd = open_path(p.as_os_str().as_bytes()).ok();
            let pinned = fd.and_then(|fd| {
                let (dev, ino) = inode(&fd).ok()?;
                Some(Pinned {
                    dev,
                    ino,
                    _held: fd,
                })
            });
            match pinned {
                Some(s) => out.push(s),
                None => warnings.push(
                    format!(
                        "allowed socket {} is not a Unix socket (or does not exist); it stays out \
                         of reach",
                        p.display()
                    )
                    .into(),
                ),
            }
        }
        Named {
            pinned: out,
            own_tmp: None,
        }
    }

    /// Also let the command reach sockets on the file system at `tmpdir` (the run's private
    /// tmpfs, once mounted).
    pub fn allow_own_tmp(&mut self, tmpdir: &Path) {
        use std::os::unix::fs::MetadataExt;
        self.own_tmp = std::fs::metadata(tmpdir).ok().map(|m| m.dev());
    }

    /// Whether the socket with this inode may be reached.
    fn allows(&self, dev: u64, ino: u64) -> bool {
        self.own_tmp == Some(dev) || self.pinned.iter().any(|s| s.dev == dev && s.ino == ino)
    }
}

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `r`, a descriptor a system call just made, now owned; the call's error when it is -1.
///
/// # Safety
/// `r` must be what a call that makes a new descriptor (or fails) returned.
pub(super) unsafe fn new_fd(r: libc::c_long) -> std::io::Result<OwnedFd> {
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns (the caller's promise).
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// A pidfd on the process (or, with `PIDFD_THREAD`, the thread) `pid`.
pub(super) fn pidfd_open(pid: libc::pid_t, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open makes a new descriptor, or fails.
    unsafe { new_fd(libc::syscall(libc::SYS_pidfd_open, pid, flags)) }
}

/// A duplicate of the descriptor `fd` of the process `pidfd` (the same open file).
pub(super) fn pidfd_getfd(pidfd: &OwnedFd, fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd makes a new descriptor, or fails.
    unsafe {
        new_fd(libc::syscall(
            libc::SYS_pidfd_getfd,
            pidfd.as_raw_fd(),
            fd,
            0,
        ))
    }
}

/// The thread waiting in a handed-over call.
pub(super) struct Caller<'a> {
    listener: RawFd,
    pub req: &'a libc::seccomp_notif,
    /// The calling thread (the notification's pid is a thread id, in init's PID namespace).
    pub tid: libc::pid_t,
    /// A pidfd on it (Linux 6.9), else on its process.
    pidfd: OwnedFd,
}

/// `PIDFD_THREAD` (linux/pidfd.h, Linux 6.9): a pidfd on a thread rather than its process.
const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

impl<'a> Caller<'a> {
    /// Find the caller (a pidfd), making sure the thread id still names it.
    pub fn of(listener: RawFd, req: &'a libc::seccomp_notif) -> Result<Caller<'a>, i32> {
        let tid = req.pid as libc::pid_t;
        let pidfd = match pidfd_open(tid, PIDFD_THREAD) {
            // Before Linux 6.9 a pidfd names a process, by its thread-group leader.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => pidfd_open(read_ids(tid)?.tgid, 0),
            other => other,
        };
        let caller = Caller {
            listener,
            req,
            tid,
            pidfd: pidfd.map_err(|_| libc::ESRCH)?,
        };
        // The thread id may have been reused between the notification and here: not if the
        // call is still waiting now (a thread that ends takes its call with it).
        caller.still_waiting()?;
        Ok(caller)
    }

    /// The caller's process id and user and group ids.
    pub fn ids(&self) -> Result<StatusIds, i32> {
        let ids = read_ids(self.tid)?;
        self.still_waiting()?;
        Ok(ids)
    }

    /// Whether the call is still waiting (so `tid` still names its caller).
    pub fn still_waiting(&self) -> Result<(), i32> {
        let id = self.req.id;
        // SAFETY: ioctl with a pointer to a u64.
        if unsafe { libc::ioctl(self.listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _, &id) } == 0
        {
            Ok(())
        } else {
            Err(libc::EINTR)
        }
    }

    /// A duplicate of the caller's descriptor `fd` (the same open file).
    pub fn descriptor(&self, fd: u64) -> Result<OwnedFd, i32> {
        // An `int`, as the kernel reads it.
        let fd = fd as u32 as i32;
        pidfd_getfd(&self.pidfd, fd).map_err(|_| errno())
    }

    /// Copy `buf.len()` bytes at `addr` out of the caller's memory.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), i32> {
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: buf.len(),
        };
        self.read_vectored(&[remote], buf)
    }

    /// The socket address of `len` bytes (an `int`, as the kernel reads it) at `addr` in the
    /// caller's memory; EINVAL when no address is that long.
    pub fn sockaddr(&self, addr: u64, len: u64) -> Result<Vec<u8>, i32> {
        let len = usize::try_from(len as u32 as i32)
            .ok()
            .filter(|&l| l <= std::mem::size_of::<libc::sockaddr_storage>())
            .ok_or(libc::EINVAL)?;
        let mut buf = vec![0u8; len];
        self.read(addr, &mut buf)?;
        Ok(buf)
    }

    /// Fill `buf` from the caller's buffers `remote`, which add up to its length; EFAULT
    /// where one cannot be read.
    pub fn read_vectored(&self, remote: &[libc::iovec], buf: &mut [u8]) -> Result<(), i32> {
        if buf.is_empty() {
            return Ok(());
        }
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: the local buffer is ours and as long as said; the remote ones are checked by
        // the kernel.
        let n = unsafe {
            libc::process_vm_readv(self.tid, &local, 1, remote.as_ptr(), remote.len() as _, 0)
        };
        if n == buf.len() as isize {
            Ok(())
        } else {
            Err(libc::EFAULT)
        }
    }

    /// Write `bytes` at `addr` in the caller's memory (a result it asked for).
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), i32> {
        let local = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        // SAFETY: as in `read_vectored`, the other way.
        let n = unsafe { libc::process_vm_writev(self.tid, &local, 1, &remote, 1, 0) };
        if n == bytes.len() as isize {
            Ok(())
        } else {
            Err(libc::EFAULT)
        }
    }

    /// Where `addr` (a socket address copied out of the caller) may be reached, or why not.
    pub fn destination(&self, addr: &[u8], named: &Named) -> Result<Destination, i32> {
        let family = addr
            .get(..2)
            .map_or(libc::AF_UNSPEC as u16, |f| u16::from_ne_bytes([f[0], f[1]]));
        let path = (family == libc::AF_UNIX as u16 && addr.len() > 2 && addr[2] != 0).then(|| {
            let p = &addr[2..];
            &p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())]
        });
        let Some(path) = path else {
            return Ok(Destination::AsGiven(addr.to_vec()));
        };
        let target = open_socket(self.tid, path)?;
        self.still_waiting()?;
        let (dev, ino) = inode(&target)?;
        if !named.allows(dev, ino) {
            tell_refused(path);
            return Err(libc::EACCES);
        }
        Ok(Destination::Pinned(target))
    }
}

/// Where init reports the sockets it refused (the launcher's report pipe), once set.
static REFUSALS: std::sync::OnceLock<std::sync::Mutex<std::fs::File>> = std::sync::OnceLock::new();

/// Report every refused socket to `pipe` (a fact for the run's result, see `report`).
pub fn report_refusals(pipe: std::fs::File) {
    let _ = REFUSALS.set(std::sync::Mutex::new(pipe));
}

fn tell_refused(path: &[u8]) {
    use std::io::Write as _;
    if let Some(Ok(mut pipe)) = REFUSALS.get().map(|m| m.lock()) {
        let _ = pipe.write_all(super::report::refused_line(path).as_bytes());
    }
}

/// The ids in a `/proc/PID/status`: the thread-group id, the real, effective and saved user
/// and group ids.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct StatusIds {
    pub tgid: libc::pid_t,
    pub uids: [u32; 3],
    pub gids: [u32; 3],
}

/// The ids of thread `tid`, from the run's own /proc.
fn read_ids(tid: libc::pid_t) -> Result<StatusIds, i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    parse_status(&status).ok_or(libc::ESRCH)
}

fn parse_status(status: &str) -> Option<StatusIds> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|rest| rest.split_whitespace().collect::<Vec<_>>())
    };
    let ids = |name: &str| -> Option<[u32; 3]> {
        let f = field(name)?;
        Some([
            f.first()?.parse().ok()?,
            f.get(1)?.parse().ok()?,
            f.get(2)?.parse().ok()?,
        ])
    };
    Some(StatusIds {
        tgid: field("Tgid:")?.first()?.parse().ok()?,
        uids: ids("Uid:")?,
        gids: ids("Gid:")?,
    })
}

/// A checked destination.
pub(super) enum Destination {
    /// Not a Unix socket bound to a path (TCP, UDP, abstract, unspecified): as the caller
    /// gave it; the network namespace or the Landlock scope, which init shares with the
    /// command, decide.
    AsGiven(Vec<u8>),
    /// A named socket (or one on the run's own tmpfs), opened and checked: reached through
    /// this descriptor, never through what its path names by then.
    Pinned(OwnedFd),
}

impl Destination {
    /// The address to give the kernel.
    pub fn address(&self) -> Vec<u8> {
        match self {
            Destination::AsGiven(a) => a.clone(),
            Destination::Pinned(fd) => unix_address(&format!("/proc/self/fd/{}", fd.as_raw_fd())),
        }
    }
}

/// An `O_PATH` descriptor on the socket at `path`: relative to the caller's working directory,
/// absolute from init's root. A caller that made a mount namespace or root of its own may see
/// another file there; that only changes what it is refused, as the connection goes to the
/// inode checked or nowhere.
fn open_socket(pid: libc::pid_t, path: &[u8]) -> Result<OwnedFd, i32> {
    let full = if path.starts_with(b"/") {
        path.to_vec()
    } else {
        let mut full = format!("/proc/{pid}/cwd/").into_bytes();
        full.extend_from_slice(path);
        full
    };
    open_path(&full)
}

/// An `O_PATH` descriptor on what `path` names (its last link followed).
fn open_path(path: &[u8]) -> Result<OwnedFd, i32> {
    let c = CString::new(path).map_err(|_| libc::EINVAL)?;
    // SAFETY: O_PATH open of a valid C string, which makes a new descriptor or fails.
    let fd = unsafe { new_fd(libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC).into()) };
    fd.map_err(|_| errno())
}

/// (device, inode) of a socket; ECONNREFUSED for anything else, as `connect` says.
pub(super) fn inode(fd: &OwnedFd) -> Result<(u64, u64), i32> {
    // SAFETY: fstat into a zeroed struct on our descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(errno());
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(libc::ECONNREFUSED);
    }
    Ok((st.st_dev, st.st_ino))
}

pub(super) fn unix_address(path: &str) -> Vec<u8> {
    let mut out = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    out.extend_from_slice(path.as_bytes());
    out.push(0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ids_of_a_caller_are_read_from_its_status() {
        let status =
            "Name:\tx\nTgid:\t42\nPid:\t43\nUid:\t1000\t1001\t1002\t1003\nGid:\t7\t8\t9\t10\n";
        assert_eq!(
            parse_status(status),
            Some(StatusIds {
                tgid: 42,
                uids: [1000, 1001, 1002],
                gids: [7, 8, 9]
            })
        );
        assert_eq!(parse_status("Tgid:\t1\n"), None);
    }

    #[test]
    fn only_named_sockets_and_the_runs_own_tmpfs_are_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let named_path = dir.path().join("named.sock");
        let _named = std::os::unix::net::UnixListener::bind(&named_path).unwrap();
        let other_path = dir.path().join("other.sock");
        let _other = std::os::unix::net::UnixListener::bind(&other_path).unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let mut warnings = Vec::new();
        let mut named = Named::pin(&[named_path.clone(), plain.clone()], &mut warnings);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].to_string().contains("plain"), "{warnings:?}");
        let id = |p: &Path| inode(&open_socket(0, p.as_os_str().as_bytes()).unwrap()).unwrap();
        let (dev, ino) = id(&named_path);
        assert!(named.allows(dev, ino));
        let (dev, ino) = id(&other_path);
        assert!(!named.allows(dev, ino));
        // Sockets on the run's own $TMPDIR file system are its own.
        named.allow_own_tmp(dir.path());
        assert!(named.allows(dev, ino));
        assert_eq!(
            open_socket(0, b"/nonexistent/x.sock").unwrap_err(),
            libc::ENOENT
        );
    }
}
