//! Unix-domain sockets: none unless some are named, and then only those (seccomp).
//!
//! A fresh network namespace cuts TCP/UDP and abstract Unix sockets, but not Unix sockets
//! bound to a path: those are files, and Landlock (up to ABI 7) does not govern `connect(2)`
//! or a datagram's `sendto(2)` on them. Through one a sandboxed command could reach the user's
//! D-Bus session bus (`systemd-run --user` runs anything, unsandboxed), the Docker socket, an
//! ssh agent, or write the system log as anyone. So unless the policy names sockets
//! (`allowed_sockets`), `socket(AF_UNIX, …)` fails with EACCES, with the network allowed too,
//! and `socketpair(2)` is allowed for stream and seqpacket pairs only (they connect nothing
//! new), not for datagram ones, whose `sendto(2)` can name any socket path.
//!
//! When it names some, Unix sockets of every type may be made, and every system call that can
//! name where its bytes go is handed to the run's init, which checks the destination and makes
//! the call itself (see [`program`], `connect_broker` and `send_broker`).
//!
//! Also refused, because they would get around the check: `io_uring_setup(2)` (io_uring
//! can create and connect sockets without the system call), `pidfd_getfd(2)` (a duplicate of
//! another process's socket; the run's init uses it, so it is in this, the command's, filter
//! and not in the one init has too), system calls of another ABI
//! (i386 or x32 code on x86-64, where `socketcall(2)` hides the family). Programs that need a
//! Unix socket of their own (Python's multiprocessing with the `forkserver` start method, for
//! one) need `allowed_sockets` (any one).

use super::bpf::{ARCH, Op, Ret, To, arg, arg_high, assemble, head, jeq, ld};
use super::seccomp::{SeccompError, install};

/// A socket type without the SOCK_NONBLOCK/SOCK_CLOEXEC flags.
const SOCK_TYPE_MASK: u32 = 0xf;

/// The BPF program (see the module docs), for runs that name sockets (`named`) or none. Built
/// before anything is applied; pure.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program(named: bool) -> Vec<libc::sock_filter> {
    let (arch, x32_bit) = ARCH.expect("a filter is written for this architecture");
    let refuse = To::Ret(Ret::Errno(libc::EACCES));
    let (allow, eperm) = (To::Ret(Ret::Allow), To::Ret(Ret::Errno(libc::EPERM)));
    let mut code = head(arch, x32_bit, Ret::Errno(libc::EACCES));
    code.extend([
        jeq(libc::SYS_io_uring_setup as u32, eperm, To::Next),
        // A duplicate of another process's descriptor (a socket among them). Here rather than
        // in `seccomp::deny_escapes`: the run's init, which serves the named sockets, needs it.
        jeq(libc::SYS_pidfd_getfd as u32, eperm, To::Next),
    ]);
    if named {
        // The broker checks the destination and makes the call; a `sendto` without an
        // address (a register, not memory: nothing to race) goes where the socket is
        // connected, which only the broker can have set.
        let notify = To::Ret(Ret::Notify);
        code.extend([
            jeq(libc::SYS_connect as u32, notify, To::Next),
            jeq(libc::SYS_sendmsg as u32, notify, To::Next),
            jeq(libc::SYS_sendmmsg as u32, notify, To::Next),
            jeq(libc::SYS_sendto as u32, To::Next, allow),
            ld(arg(4)),
            jeq(0, To::Next, notify),
            ld(arg_high(4)),
            jeq(0, allow, notify),
        ]);
        return assemble(&code);
    }
    // socket(AF_UNIX, …): refused; socketpair(AF_UNIX, …): a stream or seqpacket type only.
    const PAIR: usize = 0;
    code.extend([
        jeq(libc::SYS_socket as u32, To::Next, To::Label(PAIR)),
        ld(arg(0)),
        jeq(libc::AF_UNIX as u32, refuse, allow),
        Op::Label(PAIR),
        jeq(libc::SYS_socketpair as u32, To::Next, allow),
        ld(arg(0)),
        jeq(libc::AF_UNIX as u32, To::Next, allow),
        ld(arg(1)),
        Op::Stmt(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, SOCK_TYPE_MASK),
        jeq(libc::SOCK_STREAM as u32, allow, To::Next),
        jeq(libc::SOCK_SEQPACKET as u32, allow, refuse),
    ]);
    assemble(&code)
}

/// Refuse new Unix sockets from here on (see the module docs): the filter for runs that name
/// no socket.
pub fn restrict() -> Result<(), SeccompError> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        install(&program(false))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err(SeccompError::Architecture(std::env::consts::ARCH))
    }
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::super::caps::linux::in_child;
    use super::super::seccomp::install;
    use super::*;

    /// What each attempt returned (0 or the errno), in a forked child (the filter is for ever).
    /// Installed without a listener, a call handed to the broker fails with ENOSYS.
    #[derive(Debug, Default, Clone, Copy)]
    #[repr(C)]
    struct Results {
        unix: i32,
        inet: i32,
        pair: i32,
        dgram_pair: i32,
        dgram: i32,
        uring: i32,
        /// `send` (a `sendto` without an address) on a datagram socket pair.
        send: i32,
        /// `sendto` with an address, `sendmsg` without one, `connect`.
        sendto: i32,
        sendmsg: i32,
        connect: i32,
    }

    fn child_results(named: bool) -> Results {
        let filter = program(named);
        // Made before the filter: a datagram pair to send on.
        let mut pair = [0; 2];
        // SAFETY: a plain system call filling `pair`.
        let made =
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, pair.as_mut_ptr()) };
        assert_eq!(made, 0);
        // SAFETY: the child only makes system calls on its own data; `Results` is integers.
        let out = unsafe {
            in_child(Results::default(), |out| {
                if install(&filter).is_err() {
                    libc::_exit(2);
                }
                let errno = || *libc::__errno_location();
                let ret = |r: isize| if r >= 0 { 0 } else { errno() };
                let try_socket = |family, kind| {
                    let s = libc::socket(family, kind, 0);
                    if s >= 0 {
                        libc::close(s);
                        0
                    } else {
                        errno()
                    }
                };
                let try_pair = |kind| {
                    let mut pair = [0; 2];
                    ret(libc::socketpair(libc::AF_UNIX, kind, 0, pair.as_mut_ptr()) as isize)
                };
                out.unix = try_socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC);
                out.inet = try_socket(libc::AF_INET, libc::SOCK_STREAM);
                out.pair = try_pair(libc::SOCK_STREAM);
                out.dgram_pair = try_pair(libc::SOCK_DGRAM | libc::SOCK_NONBLOCK);
                out.dgram = try_socket(libc::AF_UNIX, libc::SOCK_DGRAM);
                out.uring = ret(libc::syscall(
                    libc::SYS_io_uring_setup,
                    1,
                    std::ptr::null_mut::<u8>(),
                ) as isize);
                let byte = [0u8; 1];
                out.send = ret(libc::send(pair[0], byte.as_ptr().cast(), 1, 0));
                let mut addr: libc::sockaddr_un = std::mem::zeroed();
                addr.sun_family = libc::AF_UNIX as u16;
                addr.sun_path[0] = b'/' as libc::c_char;
                let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                let a = (&raw const addr).cast::<libc::sockaddr>();
                out.sendto = ret(libc::sendto(pair[0], byte.as_ptr().cast(), 1, 0, a, len));
                let mut iov = libc::iovec {
                    iov_base: byte.as_ptr() as *mut libc::c_void,
                    iov_len: 1,
                };
                let mut msg: libc::msghdr = std::mem::zeroed();
                msg.msg_iov = &mut iov;
                msg.msg_iovlen = 1;
                out.sendmsg = ret(libc::sendmsg(pair[0], &msg, 0));
                let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                out.connect = ret(libc::connect(s, a, len) as isize);
            })
        };
        // SAFETY: closing our own descriptors.
        pair.iter().for_each(|&fd| unsafe { _ = libc::close(fd) });
        out.expect("the child handed its results back")
    }

    #[test]
    fn unix_sockets_are_refused_and_the_rest_is_not() {
        let r = child_results(false);
        assert_eq!(r.unix, libc::EACCES, "socket(AF_UNIX) {r:?}");
        assert_eq!(r.inet, 0, "socket(AF_INET) {r:?}");
        assert_eq!(r.pair, 0, "socketpair(AF_UNIX, SOCK_STREAM) {r:?}");
        assert_eq!(r.dgram_pair, libc::EACCES, "datagram socketpair {r:?}");
        assert_eq!(r.dgram, libc::EACCES, "socket(AF_UNIX, SOCK_DGRAM) {r:?}");
        assert_eq!(r.uring, libc::EPERM, "io_uring_setup {r:?}");
        // No broker: sends and connects are the kernel's (no datagram socket can be made).
        assert_eq!((r.send, r.sendmsg), (0, 0), "{r:?}");
        assert_ne!(r.connect, libc::ENOSYS, "{r:?}");
    }

    #[test]
    fn with_named_sockets_every_destination_goes_to_the_broker() {
        let r = child_results(true);
        assert_eq!(r.unix, 0, "socket(AF_UNIX, SOCK_STREAM) {r:?}");
        assert_eq!(r.inet, 0, "socket(AF_INET) {r:?}");
        assert_eq!(r.pair, 0, "socketpair(AF_UNIX, SOCK_STREAM) {r:?}");
        assert_eq!(r.dgram_pair, 0, "datagram socketpair {r:?}");
        assert_eq!(r.dgram, 0, "socket(AF_UNIX, SOCK_DGRAM) {r:?}");
        assert_eq!(r.uring, libc::EPERM, "io_uring_setup {r:?}");
        assert_eq!(r.send, 0, "send without an address is the kernel's {r:?}");
        // Handed to the broker (ENOSYS: this test has none).
        assert_eq!(r.sendto, libc::ENOSYS, "sendto with an address {r:?}");
        assert_eq!(r.sendmsg, libc::ENOSYS, "sendmsg {r:?}");
        assert_eq!(r.connect, libc::ENOSYS, "connect {r:?}");
    }

    #[test]
    fn connect_and_sends_go_to_the_broker_and_descriptors_stay_the_callers() {
        let (arch, _) = ARCH.unwrap();
        let call = |p: &[libc::sock_filter], nr: libc::c_long| {
            super::super::bpf::verdict(p, arch, nr as u32, [0, 0, 0, 0, 1, 0])
        };
        let (named, closed) = (program(true), program(false));
        for nr in [
            libc::SYS_connect,
            libc::SYS_sendmsg,
            libc::SYS_sendmmsg,
            libc::SYS_sendto,
        ] {
            assert_eq!(call(&named, nr), libc::SECCOMP_RET_USER_NOTIF, "{nr}");
            assert_ne!(call(&closed, nr), libc::SECCOMP_RET_USER_NOTIF, "{nr}");
        }
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        for p in [&named, &closed] {
            assert_eq!(call(p, libc::SYS_pidfd_getfd), eperm);
        }
    }
}
