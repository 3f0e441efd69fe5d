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
//! name where its bytes go is handed to the run's init, which makes it itself after checking
//! the destination: `connect(2)`, `sendmsg(2)`, `sendmmsg(2)`, and `sendto(2)` with an
//! address (see `connect_broker` and `send_broker`). A `sendto` without one, `write(2)` and
//! the like go where the socket is connected, which only init can have chosen (or
//! `socketpair` did). A filter can see a `sendto`'s address pointer (a register) but not a
//! `sendmsg`'s (in memory the caller can change under it), hence every `sendmsg` goes to init.
//!
//! Also refused, because they would get around the check: `io_uring_setup(2)` (io_uring
//! can create and connect sockets without the system call), `pidfd_getfd(2)` (a duplicate of
//! another process's socket; the run's init uses it, so it is in this, the command's, filter
//! and not in the one init has too), system calls of another ABI
//! (i386 or x32 code on x86-64, where `socketcall(2)` hides the family). Programs that need a
//! Unix socket of their own (Python's multiprocessing with the `forkserver` start method, for
//! one) need `allowed_sockets` (any one).

use super::seccomp::{SeccompError, install};

/// The syscall ABI the filter is built for (`AUDIT_ARCH_*` of linux/audit.h).
#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7;

/// x32 system calls on x86-64 carry this bit in their number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Offsets in `struct seccomp_data`.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// The low 32 bits of the first argument (the socket family) and the second (the type).
#[cfg(target_endian = "little")]
const OFFSET_ARG0_LOW: u32 = 16;
#[cfg(target_endian = "big")]
const OFFSET_ARG0_LOW: u32 = 20;
const OFFSET_ARG1_LOW: u32 = OFFSET_ARG0_LOW + 8;
/// The fifth argument (`sendto`'s destination address), both halves.
const OFFSET_ARG4_LOW: u32 = OFFSET_ARG0_LOW + 4 * 8;
#[cfg(target_endian = "little")]
const OFFSET_ARG4_HIGH: u32 = OFFSET_ARG4_LOW + 4;
#[cfg(target_endian = "big")]
const OFFSET_ARG4_HIGH: u32 = OFFSET_ARG4_LOW - 4;

/// Label of the program: the `socketpair` check.
const PAIR: u8 = 0;

/// A socket type without the SOCK_NONBLOCK/SOCK_CLOEXEC flags.
const SOCK_TYPE_MASK: u32 = 0xf;

/// How the filter answers a system call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ret {
    Allow,
    /// Hand it to the broker (`SECCOMP_RET_USER_NOTIF`).
    Notify,
    Errno(i32),
}

impl Ret {
    fn value(self) -> u32 {
        match self {
            Ret::Allow => libc::SECCOMP_RET_ALLOW,
            Ret::Notify => libc::SECCOMP_RET_USER_NOTIF,
            Ret::Errno(e) => libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA),
        }
    }
}

/// Where a jump goes.
#[derive(Clone, Copy)]
enum To {
    Next,
    Label(u8),
    Ret(Ret),
}

/// One line of the program before assembly.
enum Op {
    Stmt(u32, u32),
    Jump(u32, u32, To, To),
    Label(u8),
}

/// Resolve labels and returns into jump offsets; the returns go at the end, once each.
fn assemble(code: &[Op]) -> Vec<libc::sock_filter> {
    let mut labels = std::collections::HashMap::new();
    let mut n = 0usize;
    let mut rets: Vec<Ret> = Vec::new();
    for op in code {
        match op {
            Op::Label(l) => {
                labels.insert(*l, n);
            }
            Op::Stmt(..) => n += 1,
            Op::Jump(_, _, t, f) => {
                n += 1;
                for to in [t, f] {
                    if let To::Ret(r) = to
                        && !rets.contains(r)
                    {
                        rets.push(*r);
                    }
                }
            }
        }
    }
    let target = |to: To, here: usize| -> u8 {
        let at = match to {
            To::Next => here + 1,
            To::Label(l) => labels[&l],
            To::Ret(r) => n + rets.iter().position(|x| *x == r).expect("collected above"),
        };
        u8::try_from(at - here - 1).expect("BPF jumps are short and forward")
    };
    let mut out = Vec::new();
    for op in code {
        let here = out.len();
        match *op {
            Op::Label(_) => {}
            Op::Stmt(c, k) => out.push(libc::sock_filter {
                code: c as u16,
                jt: 0,
                jf: 0,
                k,
            }),
            Op::Jump(c, k, t, f) => out.push(libc::sock_filter {
                code: c as u16,
                jt: target(t, here),
                jf: target(f, here),
                k,
            }),
        }
    }
    out.extend(rets.iter().map(|r| libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: r.value(),
    }));
    out
}

/// The BPF program. `named`: some sockets are named, so Unix sockets of every type may be
/// created and every system call that can name a destination goes to the broker (`connect`,
/// `sendmsg`, `sendmmsg`, and `sendto` with an address: see `connect_broker` and
/// `send_broker`); else no Unix socket at all and no datagram socket pair (a `sendto` on one
/// names any path). Either way: no io_uring, no other system-call ABI. Built before anything
/// is applied; pure.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program(named: bool) -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_ALU, BPF_AND, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_W};
    let load = |off| Op::Stmt(BPF_LD | BPF_W | BPF_ABS, off);
    let jeq = |k, t, f| Op::Jump(BPF_JMP | BPF_JEQ | BPF_K, k, t, f);
    let refuse = Ret::Errno(libc::EACCES);
    let mut code = vec![
        load(OFFSET_ARCH),
        jeq(NATIVE_ARCH, To::Next, To::Ret(refuse)),
        load(OFFSET_NR),
        Op::Jump(
            BPF_JMP | BPF_JGE | BPF_K,
            X32_SYSCALL_BIT,
            To::Ret(refuse),
            To::Next,
        ),
        jeq(
            libc::SYS_io_uring_setup as u32,
            To::Ret(Ret::Errno(libc::EPERM)),
            To::Next,
        ),
        // A duplicate of another process's descriptor (a socket among them). Here rather than
        // in `seccomp::deny_escapes`: the run's init, which serves the named sockets, needs it.
        jeq(
            libc::SYS_pidfd_getfd as u32,
            To::Ret(Ret::Errno(libc::EPERM)),
            To::Next,
        ),
    ];
    if named {
        // The broker checks the destination and makes the call; a `sendto` without an
        // address (a register, not memory: nothing to race) goes where the socket is
        // connected, which only the broker can have set.
        let notify = To::Ret(Ret::Notify);
        code.extend([
            jeq(libc::SYS_connect as u32, notify, To::Next),
            jeq(libc::SYS_sendmsg as u32, notify, To::Next),
            jeq(libc::SYS_sendmmsg as u32, notify, To::Next),
            jeq(libc::SYS_sendto as u32, To::Next, To::Ret(Ret::Allow)),
            load(OFFSET_ARG4_LOW),
            jeq(0, To::Next, notify),
            load(OFFSET_ARG4_HIGH),
            jeq(0, To::Ret(Ret::Allow), notify),
        ]);
        return assemble(&code);
    }
    // socket(AF_UNIX, …): refused; socketpair(AF_UNIX, …): a stream or seqpacket type only.
    code.extend([
        jeq(libc::SYS_socket as u32, To::Next, To::Label(PAIR)),
        load(OFFSET_ARG0_LOW),
        jeq(libc::AF_UNIX as u32, To::Ret(refuse), To::Ret(Ret::Allow)),
        Op::Label(PAIR),
        jeq(libc::SYS_socketpair as u32, To::Next, To::Ret(Ret::Allow)),
        load(OFFSET_ARG0_LOW),
        jeq(libc::AF_UNIX as u32, To::Next, To::Ret(Ret::Allow)),
        load(OFFSET_ARG1_LOW),
        Op::Stmt(BPF_ALU | BPF_AND | BPF_K, SOCK_TYPE_MASK),
        jeq(libc::SOCK_STREAM as u32, To::Ret(Ret::Allow), To::Next),
        jeq(
            libc::SOCK_SEQPACKET as u32,
            To::Ret(Ret::Allow),
            To::Ret(refuse),
        ),
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
        let mut fds = [0; 2];
        // SAFETY: a pipe for the results; the child only makes system calls and `_exit`s.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            // Made before the filter: a datagram pair to send on.
            let mut pair = [0; 2];
            assert_eq!(
                libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM, 0, pair.as_mut_ptr()),
                0
            );
            let pid = libc::fork();
            if pid == 0 {
                let mut out = Results::default();
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
                libc::write(fds[1], (&raw const out).cast(), std::mem::size_of_val(&out));
                libc::_exit(0);
            }
            libc::close(fds[1]);
            libc::close(pair[0]);
            libc::close(pair[1]);
            let mut out = Results::default();
            let n = libc::read(fds[0], (&raw mut out).cast(), std::mem::size_of_val(&out));
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
            assert_eq!(
                n as usize,
                std::mem::size_of_val(&out),
                "child status {status}"
            );
            out
        }
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
    fn named_mode_hands_connect_and_sends_to_the_broker() {
        let p = program(true);
        let notify = p
            .iter()
            .position(|i| i.k == libc::SECCOMP_RET_USER_NOTIF)
            .expect("a USER_NOTIF return");
        for nr in [libc::SYS_connect, libc::SYS_sendmsg, libc::SYS_sendmmsg] {
            let at = p
                .iter()
                .position(|i| i.k == nr as u32 && i.code & 0x07 == libc::BPF_JMP as u16)
                .expect("a check for the call");
            assert_eq!(at + 1 + p[at].jt as usize, notify, "{nr}");
        }
        assert!(
            !program(false)
                .iter()
                .any(|i| i.k == libc::SECCOMP_RET_USER_NOTIF)
        );
    }

    #[test]
    fn the_command_cannot_take_another_process_descriptors() {
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        for named in [false, true] {
            let p = program(named);
            let at = p
                .iter()
                .position(|i| {
                    i.k == libc::SYS_pidfd_getfd as u32 && i.code & 0x07 == libc::BPF_JMP as u16
                })
                .expect("a check for pidfd_getfd");
            assert_eq!(p[at + 1 + p[at].jt as usize].k, eperm, "named: {named}");
        }
    }
}
