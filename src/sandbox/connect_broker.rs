//! Named Unix sockets, exactly: every `connect(2)` of the command and its children is handed
//! to the run's init (seccomp user notification), which makes the connection itself.
//!
//! When the policy names sockets (`allowed_sockets`; see `unix_sockets` for why a filter alone
//! cannot check them), the command's filter stops at each `connect` and init:
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
//! The same check decides where a datagram goes: `sendto` with an address, `sendmsg` and
//! `sendmmsg` are handed over too, and init sends them itself (see `send_broker`).
//!
//! init is not traceable by the command (not dumpable, and its memory belongs to the host's
//! user namespace), so the command cannot make init connect elsewhere.
//!
//! The socket is the caller's own (the same open file), so options and non-blocking mode hold,
//! and the caller's system call returns what init's `connect` returned. The peer sees init as
//! the connecting process (`SO_PEERCRED`: init's pid; the same user and group). The caller
//! waits killably (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV` where the kernel has it, 5.19):
//! a handled signal does not interrupt a call init is already making, so no restarted call
//! makes it twice.

/// The named sockets [`serve`] lets the command reach.
pub(super) use super::caller::Named;
use super::caller::{Caller, errno, pidfd_getfd, pidfd_open};
use super::message::{Message, Setting};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

/// Why the broker could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// The filter that hands `connect(2)` to init was refused.
    #[error("{}", self.message())]
    Filter(super::seccomp::SeccompError),
    /// Handing the listener from the command's process to init failed.
    #[error("cannot pass the seccomp listener to the sandbox's init: {0}")]
    Handover(std::io::Error),
    /// init could not start the thread that serves the listener.
    #[error("cannot start the thread that connects for the command: {0}")]
    Thread(std::io::Error),
    /// The command's process said why it has no listener to hand over.
    #[error("{0}")]
    InCommand(Message),
}

impl BrokerError {
    /// The error, with the setting that lets the run go on kept typed.
    pub fn message(&self) -> Message {
        match self {
            BrokerError::Filter(e) => {
                Message::text("cannot hand connect(2) to the sandbox's init (")
                    .and_message(e.message())
                    .and("; seccomp user notification needs Linux 5.0 or later); drop ")
                    .and_setting(Setting::AllowedSockets)
                    .and(" to run with Unix sockets closed")
            }
            BrokerError::InCommand(m) => m.clone(),
            other => Message::text(other.to_string()),
        }
    }
}

/// In the command's process, just before it execs: install the filter and tell init over
/// `channel` (one end of a socket pair) the listener's number, for init to take a duplicate
/// (`pidfd_getfd`; passing it in a `sendmsg` would wait for the broker it is to start). The
/// listener is to be held until init said go (see [`await_go`]), then dropped.
pub fn install_and_hand_over(mut channel: &UnixStream) -> Result<OwnedFd, BrokerError> {
    let listener = super::seccomp::install_with_listener(&super::unix_sockets::program(true))
        .map_err(BrokerError::Filter)?;
    // This process inherited init's "not dumpable", which keeps init from taking the
    // listener; exec would make it dumpable anyway, and nothing of the command runs yet.
    // SAFETY: prctl on this process only.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1) };
    let mut msg = vec![LISTENER_TAG];
    msg.extend_from_slice(&listener.as_raw_fd().to_ne_bytes());
    channel.write_all(&msg).map_err(BrokerError::Handover)?;
    Ok(listener)
}

/// The first byte of the message that names the listener (any other message says why there
/// is none).
const LISTENER_TAG: u8 = 0;

/// In init: let the command's process go on to exec (it waits for this after the handover,
/// so that no command runs whose broker init could not start).
pub fn send_go(channel: &UnixStream) {
    send(channel, b"g");
}

/// Send `bytes` on `channel`; MSG_NOSIGNAL: no SIGPIPE if the other end is gone (the command's
/// process exec'd without waiting, after its own failure; or init is gone).
fn send(channel: &UnixStream, bytes: &[u8]) {
    // SAFETY: sending our own buffer on our own socket.
    unsafe {
        libc::send(
            channel.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL,
        )
    };
}

/// In the command's process: whether init said go (else it is to exit without running).
pub fn await_go(mut channel: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    channel.read_exact(&mut byte).is_ok() && byte[0] == b'g'
}

/// In the command's process: tell init why there is no listener.
pub fn tell_failure(channel: &UnixStream, e: &BrokerError) {
    send(channel, e.message().encode().as_bytes());
}

/// The listener, taken by init from the command's process `child` (or why it has none).
pub fn receive(mut channel: &UnixStream, child: libc::pid_t) -> Result<OwnedFd, BrokerError> {
    let mut data = [0u8; 1024];
    let n = loop {
        match channel.read(&mut data) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            other => break other.map_err(BrokerError::Handover)?,
        }
    };
    let data = &data[..n];
    if data.len() == 5 && data[0] == LISTENER_TAG {
        let fd = i32::from_ne_bytes(data[1..5].try_into().expect("4 bytes"));
        return pidfd_getfd(&pidfd_open(child, 0).map_err(BrokerError::Handover)?, fd)
            .map_err(BrokerError::Handover);
    }
    let text = String::from_utf8_lossy(data);
    Err(BrokerError::InCommand(if text.is_empty() {
        "the command's process ended before handing over the seccomp listener".into()
    } else {
        Message::decode(&text)
    }))
}

/// Serve the listener on threads of init, for as long as init lives. `Err` when no thread
/// can be started.
pub fn serve(listener: OwnedFd, named: Named) -> std::io::Result<()> {
    Workers {
        named: std::sync::Arc::new(named),
        listener: std::sync::Arc::new(listener),
        idle: std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0)),
    }
    .add()
}

/// The threads that take the calls and make them: each waits for a call, makes it itself (no
/// hand-off to wake), and first starts another when it was the last one waiting, so that a
/// blocking TCP connect or send holds up no other call.
#[derive(Clone)]
struct Workers {
    named: std::sync::Arc<Named>,
    listener: std::sync::Arc<OwnedFd>,
    /// Threads waiting for a call.
    idle: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Workers {
    /// Start one more worker.
    fn add(&self) -> std::io::Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        let me = self.clone();
        self.idle.fetch_add(1, SeqCst);
        let started = std::thread::Builder::new().spawn(move || me.work());
        if started.is_err() {
            self.idle.fetch_sub(1, SeqCst);
        }
        started.map(drop)
    }

    fn work(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        let listener = self.listener.as_raw_fd();
        loop {
            // SAFETY: a zeroed seccomp_notif is what NOTIF_RECV expects.
            let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: ioctl on our listener with a buffer of the right type.
            let r = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV as _, &mut req) };
            if r < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    // The caller went away before we got it; or a signal.
                    Some(libc::ENOENT | libc::EINTR) => continue,
                    _ => return,
                }
            }
            // Where no thread can be had (the run's process limit counts init's threads too),
            // the next calls wait in the kernel until this one is made.
            if self.idle.fetch_sub(1, SeqCst) == 1 {
                let _ = self.add();
            }
            respond(listener, req.id, call_for(listener, &req, &self.named));
            self.idle.fetch_add(1, SeqCst);
        }
    }
}

/// The call the caller asked for, made by init: its return value, or the errno.
fn call_for(listener: RawFd, req: &libc::seccomp_notif, named: &Named) -> Result<i64, i32> {
    let caller = Caller::of(listener, req)?;
    match i64::from(req.data.nr) {
        libc::SYS_connect => connect_for(&caller, named).map(|()| 0),
        libc::SYS_sendto | libc::SYS_sendmsg | libc::SYS_sendmmsg => {
            super::send_broker::send_for(&caller, named)
        }
        // The filter hands over nothing else.
        _ => Err(libc::ENOSYS),
    }
}

/// Tell the caller its result: `Ok(n)` is n, `Err(errno)` is -1 with that errno.
fn respond(listener: RawFd, id: u64, answer: Result<i64, i32>) {
    let resp = libc::seccomp_notif_resp {
        id,
        val: *answer.as_ref().unwrap_or(&0),
        error: answer.err().map_or(0, |e| -e),
        flags: 0,
    };
    // SAFETY: ioctl on the listener with a response of the right type. ENOENT (the caller
    // is gone) needs nothing done.
    unsafe {
        libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND as _, &resp);
    }
}

/// The connect the caller asked for, made by init; `Err` is the errno for the caller.
fn connect_for(caller: &Caller, named: &Named) -> Result<(), i32> {
    let [fd, addr, len, ..] = caller.req.data.args;
    let addr = caller.sockaddr(addr, len)?;
    // What was read is the caller's only if the call still waits (its thread id not reused).
    caller.still_waiting()?;
    let sock = caller.descriptor(fd)?;
    let dest = caller.destination(&addr, named)?;
    connect(&sock, &dest.address())
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
    use super::super::caller::inode;
    use super::*;

    fn pair() -> (UnixStream, UnixStream) {
        UnixStream::pair().unwrap()
    }

    #[test]
    fn a_descriptor_or_the_reason_crosses_the_channel() {
        let (mut a, b) = pair();
        let file = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        let mut msg = vec![LISTENER_TAG];
        msg.extend_from_slice(&file.as_raw_fd().to_ne_bytes());
        a.write_all(&msg).unwrap();
        // SAFETY: getpid cannot fail.
        let got = receive(&b, unsafe { libc::getpid() }).unwrap();
        assert!(inode(&got).is_err(), "/dev/null is no socket");
        assert_ne!(got.as_raw_fd(), file.as_raw_fd(), "a duplicate");
        let (a, b) = pair();
        tell_failure(&a, &BrokerError::InCommand("no filter here".into()));
        let err = receive(&b, 0).unwrap_err();
        assert_eq!(err.to_string(), "no filter here");
        let (a, b) = pair();
        drop(a);
        assert!(
            receive(&b, 0)
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
}
