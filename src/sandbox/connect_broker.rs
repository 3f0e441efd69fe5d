//! Named Unix sockets, exactly: every `connect(2)` of the command and its children is handed
//! to the run's init (seccomp user notification), which makes the connection itself.
//!
//! Neither Landlock (up to ABI 7) nor a namespace governs connecting to a Unix socket bound to
//! a path, and seccomp cannot read the path a `connect` names. So when the policy names sockets
//! (`allowed_sockets`), a filter in the command's process stops at each `connect` and init:
//! - copies the address once out of the caller's memory (so nothing the caller changes later
//!   counts) and takes a duplicate of the caller's socket (`pidfd_getfd`);
//! - for a Unix address bound to a path, opens the path (relative ones from the caller's
//!   working directory) and connects only when the inode is one of the named sockets (pinned
//!   before the command started) or lies on the run's own `$TMPDIR` tmpfs (the command's own
//!   servers), and then through that descriptor (`/proc/self/fd/N`), never to what the path
//!   names by then; anything else gets EACCES (ENOENT when nothing is there);
//! - for every other address (TCP, UDP, abstract Unix names) connects as asked: the network
//!   namespace or the Landlock scope, which init shares with the command, still decide.
//!
//! init is not traceable by the command (not dumpable, and its memory belongs to the host's
//! user namespace), so the command cannot make init connect elsewhere.
//!
//! The socket is the caller's own (the same open file), so options and non-blocking mode hold,
//! and the caller's system call returns what init's `connect` returned. What is not a
//! `connect` cannot reach a path either: datagram Unix sockets (whose `sendto` names a path)
//! cannot be created, and io_uring is refused (see `unix_sockets`).

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why the broker could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// The filter that hands `connect(2)` to init was refused.
    #[error(
        "cannot hand connect(2) to the sandbox's init ({0}; seccomp user notification needs \
         Linux 5.0 or later); drop --allow-socket to run with Unix sockets closed"
    )]
    Filter(super::seccomp::SeccompError),
    /// Handing the listener from the command's process to init failed.
    #[error("cannot pass the seccomp listener to the sandbox's init: {0}")]
    Handover(std::io::Error),
    /// init could not start the thread that serves the listener.
    #[error("cannot start the thread that connects for the command: {0}")]
    Thread(std::io::Error),
    /// The command's process said why it has no listener to hand over.
    #[error("{0}")]
    InCommand(String),
}

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
    pub fn pin(paths: &[PathBuf], warnings: &mut Vec<String>) -> Named {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let mut out = Vec::new();
        for p in paths {
            let pinned = (|| {
                let c = CString::new(p.as_os_str().as_bytes()).ok()?;
                // SAFETY: O_PATH open of a valid C string; the descriptor is then owned.
                let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
                if fd < 0 {
                    return None;
                }
                // SAFETY: fresh descriptor.
                let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                let m = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
                m.file_type().is_socket().then(|| Pinned {
                    dev: m.dev(),
                    ino: m.ino(),
                    _held: fd,
                })
            })();
            match pinned {
                Some(s) => out.push(s),
                None => warnings.push(format!(
                    "allowed socket {} is not a Unix socket (or does not exist); it stays out of reach",
                    p.display()
                )),
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

/// In the command's process, just before it execs: install the filter and hand its listener
/// to init over `channel` (one end of a socket pair), keeping no copy.
pub fn install_and_hand_over(channel: &OwnedFd) -> Result<(), BrokerError> {
    let listener = super::seccomp::install_with_listener(&super::unix_sockets::program(true))
        .map_err(BrokerError::Filter)?;
    send_fd(channel, &listener).map_err(BrokerError::Handover)
}

/// In init: let the command's process go on to exec (it waits for this after the handover,
/// so that no command runs whose broker init could not start).
pub fn send_go(channel: &OwnedFd) {
    // SAFETY: sending one byte on our own socket; MSG_NOSIGNAL: no SIGPIPE if the other end
    // is gone (it exec'd without waiting, after its own failure).
    unsafe {
        libc::send(
            channel.as_raw_fd(),
            b"g".as_ptr().cast(),
            1,
            libc::MSG_NOSIGNAL,
        )
    };
}

/// In the command's process: whether init said go (else it is to exit without running).
pub fn await_go(channel: &OwnedFd) -> bool {
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: reading one byte from our own socket into our buffer.
        let n = unsafe { libc::read(channel.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
        if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return n == 1 && byte[0] == b'g';
        }
    }
}

/// In the command's process: tell init why there is no listener.
pub fn tell_failure(channel: &OwnedFd, e: &BrokerError) {
    let text = e.to_string();
    // SAFETY: sending our own buffer on our own socket (no SIGPIPE if init is gone).
    unsafe {
        libc::send(
            channel.as_raw_fd(),
            text.as_ptr().cast(),
            text.len(),
            libc::MSG_NOSIGNAL,
        )
    };
}

/// The listener, as received by init (or why the command's process has none).
pub fn receive(channel: &OwnedFd) -> Result<OwnedFd, BrokerError> {
    match recv_fd(channel).map_err(BrokerError::Handover)? {
        Ok(fd) => Ok(fd),
        Err(text) => Err(BrokerError::InCommand(text)),
    }
}

fn send_fd(channel: &OwnedFd, fd: &OwnedFd) -> std::io::Result<()> {
    let raw = fd.as_raw_fd();
    let mut byte = [0u8; 1];
    // SAFETY: a msghdr with one byte of data and a control buffer sized by CMSG_SPACE for one
    // descriptor; all buffers outlive the call.
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let mut control = vec![0u8; space];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), raw);
        if libc::sendmsg(channel.as_raw_fd(), &msg, 0) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A descriptor, or the text sent instead.
fn recv_fd(channel: &OwnedFd) -> std::io::Result<Result<OwnedFd, String>> {
    let mut data = [0u8; 1024];
    // SAFETY: as in `send_fd`; a received descriptor is then owned.
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let mut control = vec![0u8; space];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let n = loop {
            let n = libc::recvmsg(channel.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break n;
            }
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null()
            && (*cmsg).cmsg_level == libc::SOL_SOCKET
            && (*cmsg).cmsg_type == libc::SCM_RIGHTS
        {
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            return Ok(Ok(OwnedFd::from_raw_fd(fd)));
        }
        let text = String::from_utf8_lossy(&data[..n as usize]).into_owned();
        Ok(Err(if text.is_empty() {
            "the command's process ended before handing over the seccomp listener".into()
        } else {
            text
        }))
    }
}

/// Serve the listener on a thread of init, for as long as init lives. `Err` when no thread
/// can be started.
pub fn serve(listener: OwnedFd, named: Named) -> std::io::Result<()> {
    let named = std::sync::Arc::new(named);
    std::thread::Builder::new().spawn(move || {
        loop {
            // SAFETY: a zeroed seccomp_notif is what NOTIF_RECV expects.
            let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: ioctl on our listener with a buffer of the right type.
            let r = unsafe {
                libc::ioctl(
                    listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                    &mut req,
                )
            };
            if r < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    // The caller went away before we got it; or a signal.
                    Some(libc::ENOENT | libc::EINTR) => continue,
                    _ => return,
                }
            }
            let listener = listener.as_raw_fd();
            let for_thread = named.clone();
            // One thread per call: a blocking TCP connect must not hold up the others. Where
            // no thread can be had (the run's process limit counts init's threads too), the
            // call fails as a fork would.
            let spawned = std::thread::Builder::new().spawn(move || {
                let answer = connect_for(listener, &req, &for_thread);
                respond(listener, req.id, answer);
            });
            if spawned.is_err() {
                respond(listener, req.id, Err(libc::EAGAIN));
            }
        }
    })?;
    Ok(())
}

/// Tell the caller its result: `Ok(())` is 0, `Err(errno)` is -1 with that errno.
fn respond(listener: RawFd, id: u64, answer: Result<(), i32>) {
    let resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: answer.err().map_or(0, |e| -e),
        flags: 0,
    };
    // SAFETY: ioctl on the listener with a response of the right type. ENOENT (the caller
    // is gone) needs nothing done.
    unsafe {
        libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND as _, &resp);
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Whether the call `id` is still waiting (so `pid` still names its caller).
fn still_waiting(listener: RawFd, id: u64) -> Result<(), i32> {
    // SAFETY: ioctl with a pointer to a u64.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _, &id) } == 0 {
        Ok(())
    } else {
        Err(libc::EINTR)
    }
}

/// The connect the caller asked for, made by init; `Err` is the errno for the caller.
fn connect_for(listener: RawFd, req: &libc::seccomp_notif, named: &Named) -> Result<(), i32> {
    let pid = req.pid as libc::pid_t;
    let [fd, addr, len, ..] = req.data.args;
    let mut buf = [0u8; std::mem::size_of::<libc::sockaddr_storage>()];
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= buf.len())
        .ok_or(libc::EINVAL)?;
    read_memory(pid, addr, &mut buf[..len])?;
    // SAFETY: pidfd_open and pidfd_getfd return new descriptors we own, or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return Err(libc::ESRCH);
    }
    // SAFETY: fresh descriptor.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) };
    // The pid may have been reused between the notification and pidfd_open: not if the call
    // is still waiting now.
    still_waiting(listener, req.id)?;
    // SAFETY: as above.
    let sock = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd as i32, 0) };
    if sock < 0 {
        return Err(errno());
    }
    // SAFETY: fresh descriptor.
    let sock = unsafe { OwnedFd::from_raw_fd(sock as RawFd) };
    let family = u16::from_ne_bytes([buf[0], buf[1]]);
    let path = (family == libc::AF_UNIX as u16 && len > 2 && buf[2] != 0).then(|| {
        let p = &buf[2..len];
        &p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())]
    });
    match path {
        None => connect(&sock, &buf[..len]),
        Some(path) => {
            let target = open_socket(pid, path)?;
            still_waiting(listener, req.id)?;
            let (dev, ino) = inode(&target)?;
            if !named.allows(dev, ino) {
                return Err(libc::EACCES);
            }
            // Through the descriptor: exactly the inode checked, whatever the path names now.
            connect(
                &sock,
                &unix_address(&format!("/proc/self/fd/{}", target.as_raw_fd())),
            )
        }
    }
}

/// Copy `buf.len()` bytes at `addr` out of process `pid`.
fn read_memory(pid: libc::pid_t, addr: u64, buf: &mut [u8]) -> Result<(), i32> {
    if buf.is_empty() {
        return Ok(());
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the local buffer is ours and as long as said; the remote one is checked by the
    // kernel.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n == buf.len() as isize {
        Ok(())
    } else {
        Err(libc::EFAULT)
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
    let c = CString::new(full).map_err(|_| libc::EINVAL)?;
    // SAFETY: O_PATH open of a valid C string; the descriptor is then owned.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// (device, inode) of a socket; ECONNREFUSED for anything else, as `connect` says.
fn inode(fd: &OwnedFd) -> Result<(u64, u64), i32> {
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

fn unix_address(path: &str) -> Vec<u8> {
    let mut out = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    out.extend_from_slice(path.as_bytes());
    out.push(0);
    out
}

fn connect(sock: &OwnedFd, addr: &[u8]) -> Result<(), i32> {
    // SAFETY: `addr` is a sockaddr of `addr.len()` bytes, alive for the call.
    let r = unsafe {
        libc::connect(
            sock.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors, which we then own.
        unsafe {
            assert_eq!(
                libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()),
                0
            );
            (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
        }
    }

    #[test]
    fn a_descriptor_or_the_reason_crosses_the_channel() {
        let (a, b) = pair();
        let file = std::fs::File::open("/dev/null").unwrap();
        send_fd(&a, &OwnedFd::from(file)).unwrap();
        let got = receive(&b).unwrap();
        assert!(inode(&got).is_err(), "/dev/null is no socket");
        let (a, b) = pair();
        tell_failure(&a, &BrokerError::InCommand("no filter here".into()));
        let err = receive(&b).unwrap_err();
        assert_eq!(err.to_string(), "no filter here");
        let (a, b) = pair();
        drop(a);
        assert!(
            receive(&b)
                .unwrap_err()
                .to_string()
                .contains("ended before")
        );
        let (a, b) = pair();
        send_go(&a);
        assert!(await_go(&b));
        drop(a);
        assert!(!await_go(&b), "no go when init is gone");
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
        assert!(warnings[0].contains("plain"), "{warnings:?}");
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
