//! Unix-domain sockets: none unless some are named, and then only those (seccomp).
//!
//! A fresh network namespace cuts TCP/UDP and abstract Unix sockets, but not Unix sockets
//! bound to a path: those are files, and Landlock (up to ABI 7) does not govern `connect(2)`
//! on them. Through one a sandboxed command could reach the user's D-Bus session bus
//! (`systemd-run --user` runs anything, unsandboxed), the Docker socket or an ssh agent. So
//! unless the policy names sockets (`allowed_sockets`), `socket(AF_UNIX, …)` fails with
//! EACCES, with the network allowed too. When it names some, Unix stream sockets may be made
//! and every `connect(2)` is handed to the run's init, which connects only to the named ones
//! (see `connect_broker`).
//!
//! Either way `socketpair(2)` stays allowed for stream and seqpacket pairs (they connect
//! nothing new), not for datagram ones, whose `sendto(2)` or `connect(2)` can name any socket
//! path. Also refused, because they would get around the check: `io_uring_setup(2)` (io_uring
//! can create and connect sockets without the system call), system calls of another ABI
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

/// Labels of the program.
const SOCKET: u8 = 0;
const TYPE_CHECK: u8 = 1;

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

/// The BPF program. `named`: some sockets are named, so Unix stream sockets may be created and
/// every `connect` goes to the broker (see `connect_broker`); else no Unix socket at all.
/// Either way: no datagram Unix socket pairs (a `sendto` on one names any path), no io_uring,
/// no other system-call ABI. Built before anything is applied; pure.
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
    ];
    if named {
        code.push(jeq(
            libc::SYS_connect as u32,
            To::Ret(Ret::Notify),
            To::Next,
        ));
    }
    // socket(AF_UNIX, …): refused, or (named) a stream or seqpacket type only;
    // socketpair(AF_UNIX, …): a stream or seqpacket type only.
    code.extend([
        jeq(libc::SYS_socket as u32, To::Label(SOCKET), To::Next),
        jeq(
            libc::SYS_socketpair as u32,
            To::Label(TYPE_CHECK),
            To::Ret(Ret::Allow),
        ),
        Op::Label(SOCKET),
    ]);
    if !named {
        code.extend([
            load(OFFSET_ARG0_LOW),
            jeq(libc::AF_UNIX as u32, To::Ret(refuse), To::Ret(Ret::Allow)),
        ]);
    }
    code.extend([
        Op::Label(TYPE_CHECK),
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

    /// In a forked child (the filter is for ever): what each attempt returns (0 or the errno).
    fn child_results(named: bool) -> [i32; 6] {
        let filter = program(named);
        let mut fds = [0; 2];
        // SAFETY: a pipe for the results; the child only makes system calls and `_exit`s.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let pid = libc::fork();
            if pid == 0 {
                let mut out = [0i32; 6];
                if install(&filter).is_err() {
                    libc::_exit(2);
                }
                let errno = || *libc::__errno_location();
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
                    if libc::socketpair(libc::AF_UNIX, kind, 0, pair.as_mut_ptr()) == 0 {
                        0
                    } else {
                        errno()
                    }
                };
                out[0] = try_socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC);
                out[1] = try_socket(libc::AF_INET, libc::SOCK_STREAM);
                out[2] = try_pair(libc::SOCK_STREAM);
                out[3] = try_pair(libc::SOCK_DGRAM | libc::SOCK_NONBLOCK);
                out[4] = try_socket(libc::AF_UNIX, libc::SOCK_DGRAM);
                out[5] =
                    if libc::syscall(libc::SYS_io_uring_setup, 1, std::ptr::null_mut::<u8>()) < 0 {
                        errno()
                    } else {
                        0
                    };
                libc::write(fds[1], out.as_ptr().cast(), std::mem::size_of_val(&out));
                libc::_exit(0);
            }
            libc::close(fds[1]);
            let mut out = [0i32; 6];
            let n = libc::read(fds[0], out.as_mut_ptr().cast(), std::mem::size_of_val(&out));
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
        let [unix, inet, pair, dgram_pair, dgram, uring] = child_results(false);
        assert_eq!(unix, libc::EACCES, "socket(AF_UNIX)");
        assert_eq!(inet, 0, "socket(AF_INET)");
        assert_eq!(pair, 0, "socketpair(AF_UNIX, SOCK_STREAM)");
        assert_eq!(dgram_pair, libc::EACCES, "socketpair(AF_UNIX, SOCK_DGRAM)");
        assert_eq!(dgram, libc::EACCES, "socket(AF_UNIX, SOCK_DGRAM)");
        assert_eq!(uring, libc::EPERM, "io_uring_setup");
    }

    #[test]
    fn with_named_sockets_only_stream_unix_sockets_are_made() {
        let [unix, inet, pair, dgram_pair, dgram, uring] = child_results(true);
        assert_eq!(unix, 0, "socket(AF_UNIX, SOCK_STREAM)");
        assert_eq!(inet, 0, "socket(AF_INET)");
        assert_eq!(pair, 0, "socketpair(AF_UNIX, SOCK_STREAM)");
        assert_eq!(dgram_pair, libc::EACCES, "socketpair(AF_UNIX, SOCK_DGRAM)");
        assert_eq!(dgram, libc::EACCES, "socket(AF_UNIX, SOCK_DGRAM)");
        assert_eq!(uring, libc::EPERM, "io_uring_setup");
    }

    #[test]
    fn named_mode_hands_connect_to_the_broker() {
        let p = program(true);
        let notify = p
            .iter()
            .position(|i| i.k == libc::SECCOMP_RET_USER_NOTIF)
            .expect("a USER_NOTIF return");
        let connect = p
            .iter()
            .position(|i| i.k == libc::SYS_connect as u32)
            .expect("a check for connect");
        assert_eq!(connect + 1 + p[connect].jt as usize, notify);
        assert!(
            !program(false)
                .iter()
                .any(|i| i.k == libc::SECCOMP_RET_USER_NOTIF)
        );
    }
}
