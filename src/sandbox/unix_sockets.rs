//! No new Unix-domain sockets unless some are named (seccomp).
//!
//! A fresh network namespace cuts TCP/UDP and abstract Unix sockets, but not Unix sockets
//! bound to a path: those are files, and Landlock (up to ABI 7) does not govern `connect(2)`
//! on them. Through one a sandboxed command could reach the user's D-Bus session bus
//! (`systemd-run --user` runs anything, unsandboxed), the Docker socket or an ssh agent. So
//! unless the policy names sockets (`allowed_sockets`, bound in by `mounts`), `socket(AF_UNIX,
//! …)` fails with EACCES, with the network allowed too. `socketpair(2)` stays
//! allowed (it connects nothing new), and so do pipes.
//!
//! Also refused, because they would get around the check: `io_uring_setup(2)` (io_uring can
//! create and connect sockets without the system call), system calls of another ABI (i386 or
//! x32 code on x86-64, where `socketcall(2)` hides the family). Programs that need a Unix
//! socket of their own (Python's multiprocessing with the `forkserver` start method, for one)
//! need `allowed_sockets` (any one).

use super::seccomp::install;

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
/// The low 32 bits of the first argument (the socket family).
#[cfg(target_endian = "little")]
const OFFSET_ARG0_LOW: u32 = 16;
#[cfg(target_endian = "big")]
const OFFSET_ARG0_LOW: u32 = 20;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

/// The BPF program. Built before anything is applied; pure.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let load = BPF_LD | BPF_W | BPF_ABS;
    let ret = BPF_RET | BPF_K;
    vec![
        /* 0 */ stmt(load, OFFSET_ARCH),
        /* 1 */ jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
        /* 2 */ stmt(ret, errno(libc::EACCES)),
        /* 3 */ stmt(load, OFFSET_NR),
        /* 4 */ jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
        /* 5 */ stmt(ret, errno(libc::EACCES)),
        /* 6 */
        jump(
            BPF_JMP | BPF_JEQ | BPF_K,
            libc::SYS_io_uring_setup as u32,
            0,
            1,
        ),
        /* 7 */ stmt(ret, errno(libc::EPERM)),
        /* 8 */ jump(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_socket as u32, 1, 0),
        /* 9 */ stmt(ret, libc::SECCOMP_RET_ALLOW),
        /* 10 */ stmt(load, OFFSET_ARG0_LOW),
        /* 11 */ jump(BPF_JMP | BPF_JEQ | BPF_K, libc::AF_UNIX as u32, 0, 1),
        /* 12 */ stmt(ret, errno(libc::EACCES)),
        /* 13 */ stmt(ret, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Refuse new Unix sockets from here on (see the module docs).
pub fn restrict() -> Result<(), String> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        install(&program()).map_err(|e| format!("seccomp filter against Unix sockets: {e}"))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err("no seccomp filter for this CPU architecture, so Unix sockets stay open".into())
    }
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::super::seccomp::install;
    use super::*;

    /// In a forked child (the filter is for ever): which socket families can be created.
    fn child_results() -> [i32; 4] {
        let filter = program();
        let mut fds = [0; 2];
        // SAFETY: a pipe for the results; the child only makes system calls and `_exit`s.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let pid = libc::fork();
            if pid == 0 {
                let mut out = [0i32; 4];
                if install(&filter).is_err() {
                    libc::_exit(2);
                }
                let errno = || *libc::__errno_location();
                let try_socket = |family| {
                    let s = libc::socket(family, libc::SOCK_STREAM, 0);
                    if s >= 0 {
                        libc::close(s);
                        0
                    } else {
                        errno()
                    }
                };
                out[0] = try_socket(libc::AF_UNIX);
                out[1] = try_socket(libc::AF_INET);
                let mut pair = [0; 2];
                out[2] = if libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr())
                    == 0
                {
                    0
                } else {
                    errno()
                };
                out[3] =
                    if libc::syscall(libc::SYS_io_uring_setup, 1, std::ptr::null_mut::<u8>()) < 0 {
                        errno()
                    } else {
                        0
                    };
                libc::write(fds[1], out.as_ptr().cast(), std::mem::size_of_val(&out));
                libc::_exit(0);
            }
            libc::close(fds[1]);
            let mut out = [0i32; 4];
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
        let [unix, inet, pair, uring] = child_results();
        assert_eq!(unix, libc::EACCES, "socket(AF_UNIX)");
        assert_eq!(inet, 0, "socket(AF_INET)");
        assert_eq!(pair, 0, "socketpair(AF_UNIX)");
        assert_eq!(uring, libc::EPERM, "io_uring_setup");
    }
}
