//! A seccomp filter the launcher installs on itself, so the command and everything it starts
//! inherit it. It closes a way out that Landlock and the namespaces leave open: `ioctl(TIOCSTI)`
//! (and `TIOCLINUX`, its virtual-console twin) pushes keystrokes into the terminal's input, i.e.
//! types a command into the user's shell, which runs it after skillpipe exits with none of the
//! restrictions. The terminal stays writable (DESIGN §2); only the injection is refused (EPERM).
//!
//! The same filter refuses the keyring calls (`keyctl`, `add_key`, `request_key`): the user's
//! session and user keyrings are shared with every process of the user and namespaces do not
//! separate them.
//!
//! And it refuses new namespaces (`unshare`, `clone` with a `CLONE_NEW*` flag: EPERM; `clone3`,
//! whose flags it cannot read: ENOSYS, so the C library falls back to `clone`), as container
//! runtimes do: a nested user namespace hands the command capabilities over fresh mount and
//! network namespaces, and much kernel code reachable only with them.
//!
//! System calls made through another ABI (32-bit `int 0x80`, x32) are refused too: their
//! numbers differ and the filter does not check them.

use super::message::{Message, Setting};

/// `AUDIT_ARCH_*` of the native ABI (linux/audit.h), and the x32 bit where there is one.
#[cfg(target_arch = "x86_64")]
const ARCH: Option<(u32, Option<u32>)> = Some((0xC000_003E, Some(0x4000_0000)));
#[cfg(target_arch = "aarch64")]
const ARCH: Option<(u32, Option<u32>)> = Some((0xC000_00B7, None));
#[cfg(target_arch = "riscv64")]
const ARCH: Option<(u32, Option<u32>)> = Some((0xC000_00F3, None));
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const ARCH: Option<(u32, Option<u32>)> = None;

/// Offsets in `struct seccomp_data`: nr, arch, then args[6] as u64 (low half first: these
/// architectures are little-endian; the kernel reads an ioctl request and the namespace flags
/// as 32 bits anyway).
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0_LOW: u32 = 16;
const OFF_ARG1_LOW: u32 = 16 + 8;

/// The flags that make a new namespace. Inside the run a fresh user namespace would give the
/// command every capability over namespaces of its own (mounts, network) and a kernel attack
/// surface a container runtime keeps shut; the run's own namespaces are made before this filter.
const NEW_NAMESPACES: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWTIME) as u32;

/// For `clone(2)`, whose low byte is the exit signal (`CLONE_NEWTIME`'s bit is one of it).
const NEW_NAMESPACES_CLONE: u32 = NEW_NAMESPACES & !(libc::CSIGNAL as u32);

/// Where a conditional jump goes.
#[derive(Clone, Copy)]
enum To {
    Next,
    Allow,
    Deny,
    /// `ENOSYS`: for `clone3`, whose flags sit in memory the filter cannot read; the C library
    /// then falls back to `clone`, whose flags it can.
    NoSys,
    /// The check of `unshare`'s flags.
    Unshare,
    /// The check of `clone`'s flags.
    Clone,
}

/// The filter program for the native `arch` (with its x32 bit, if any).
fn program(arch: u32, x32_bit: Option<u32>) -> Vec<libc::sock_filter> {
    let ld = |off: u32| {
        (
            libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
            off,
            To::Next,
            To::Next,
        )
    };
    let jeq = |k: u32, t: To, f: To| (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, k, t, f);
    let jset = |k: u32, t: To, f: To| (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, k, t, f);
    let mut code = vec![ld(OFF_ARCH), jeq(arch, To::Next, To::Deny), ld(OFF_NR)];
    if let Some(bit) = x32_bit {
        code.push((
            libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K,
            bit,
            To::Deny,
            To::Next,
        ));
    }
    code.extend([
        // The kernel keyring is per user, not per namespace: no reading or adding keys.
        jeq(libc::SYS_keyctl as u32, To::Deny, To::Next),
        jeq(libc::SYS_add_key as u32, To::Deny, To::Next),
        jeq(libc::SYS_request_key as u32, To::Deny, To::Next),
        // No namespace of the command's own.
        jeq(libc::SYS_unshare as u32, To::Unshare, To::Next),
        jeq(libc::SYS_clone as u32, To::Clone, To::Next),
        jeq(libc::SYS_clone3 as u32, To::NoSys, To::Next),
        jeq(libc::SYS_ioctl as u32, To::Next, To::Allow),
        ld(OFF_ARG1_LOW),
        jeq(libc::TIOCSTI as u32, To::Deny, To::Next),
        jeq(libc::TIOCLINUX as u32, To::Deny, To::Allow),
    ]);
    let unshare_at = code.len();
    code.extend([ld(OFF_ARG0_LOW), jset(NEW_NAMESPACES, To::Deny, To::Allow)]);
    let clone_at = code.len();
    code.extend([
        ld(OFF_ARG0_LOW),
        jset(NEW_NAMESPACES_CLONE, To::Deny, To::Allow),
    ]);
    // The returns close the program: ALLOW at `n`, DENY at `n + 1`, ENOSYS at `n + 2`.
    let n = code.len();
    let offset = |from: usize, to: To| -> u8 {
        let target = match to {
            To::Next => from + 1,
            To::Allow => n,
            To::Deny => n + 1,
            To::NoSys => n + 2,
            To::Unshare => unshare_at,
            To::Clone => clone_at,
        };
        (target - from - 1) as u8
    };
    let mut out: Vec<libc::sock_filter> = code
        .iter()
        .enumerate()
        .map(|(i, &(op, k, t, f))| libc::sock_filter {
            code: op as u16,
            jt: offset(i, t),
            jf: offset(i, f),
            k,
        })
        .collect();
    let ret = |k: u32| libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k,
    };
    out.push(ret(libc::SECCOMP_RET_ALLOW));
    out.push(ret(libc::SECCOMP_RET_ERRNO | libc::EPERM as u32));
    out.push(ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    out
}

/// Why a seccomp filter could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// No filter is written for this CPU architecture.
    #[error("{}", self.message())]
    Architecture(&'static str),
    /// `prctl(PR_SET_NO_NEW_PRIVS)` failed.
    #[error("cannot set no_new_privs, which a seccomp filter needs: {0}")]
    NoNewPrivs(std::io::Error),
    /// The kernel refused the filter.
    #[error(
        "the kernel refused the seccomp filter: {0} (is seccomp compiled in? \
         see `skillpipe doctor`)"
    )]
    Install(std::io::Error),
}

impl SeccompError {
    /// The error, with the setting that lets the run go on kept typed.
    pub fn message(&self) -> Message {
        match self {
            SeccompError::Architecture(arch) => Message::text(format!(
                "no seccomp filter is written for the {arch} architecture; run with "
            ))
            .and_setting(Setting::BestEffort)
            .and(" to go without it (with a warning)"),
            other => Message::text(other.to_string()),
        }
    }
}

/// Install the filter against terminal input injection, keyring calls and new namespaces on
/// this process (single-threaded launcher).
pub fn deny_escapes() -> Result<(), SeccompError> {
    let (arch, x32) = ARCH.ok_or(SeccompError::Architecture(std::env::consts::ARCH))?;
    install(&program(arch, x32))
}

/// Install `filter` on this process (and so on everything it starts). Sets no_new_privs,
/// which an unprivileged filter needs. Only system calls: the program is built beforehand.
pub fn install(filter: &[libc::sock_filter]) -> Result<(), SeccompError> {
    install_with_flags(filter, 0).map(drop)
}

/// [`install`], returning the listener of the filter's `SECCOMP_RET_USER_NOTIF` calls. Once
/// the listener has a call, the caller waits for the answer killably (only a fatal signal
/// ends the wait), where the kernel can (5.19): else a handled signal would let the caller
/// restart a call the listener is making, and make it twice.
pub fn install_with_listener(
    filter: &[libc::sock_filter],
) -> Result<std::os::fd::OwnedFd, SeccompError> {
    let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    let fd = match install_with_flags(filter, flags | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    {
        Err(SeccompError::Install(e)) if e.raw_os_error() == Some(libc::EINVAL) => {
            install_with_flags(filter, flags)?
        }
        other => other?,
    };
    // SAFETY: the kernel returned a new descriptor, which we own.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd as std::os::fd::RawFd) })
}

fn install_with_flags(
    filter: &[libc::sock_filter],
    flags: libc::c_ulong,
) -> Result<i64, SeccompError> {
    let prog = libc::sock_fprog {
        len: filter.len() as libc::c_ushort,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `prog` points at `filter`, which outlives the calls; the kernel copies it.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(SeccompError::NoNewPrivs(std::io::Error::last_os_error()));
        }
        let r = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &prog as *const libc::sock_fprog,
        );
        if r < 0 {
            return Err(SeccompError::Install(std::io::Error::last_os_error()));
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_on_the_returns() {
        let p = program(0xC000_003E, Some(0x4000_0000));
        let n = p.len();
        let ret = (libc::BPF_RET | libc::BPF_K) as u16;
        assert_eq!((p[n - 3].code, p[n - 3].k), (ret, libc::SECCOMP_RET_ALLOW));
        assert_eq!(p[n - 2].k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        assert_eq!(p[n - 1].k, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        for (i, insn) in p.iter().enumerate() {
            if insn.code & 0x07 == libc::BPF_JMP as u16 {
                assert!(i + 1 + (insn.jt as usize) < n && i + 1 + (insn.jf as usize) < n);
            }
        }
        // A wrong architecture goes straight to DENY.
        assert_eq!(1 + 1 + p[1].jf as usize, n - 2);
    }

    #[test]
    fn clone_keeps_its_exit_signal_and_unshare_checks_every_namespace() {
        assert_eq!(NEW_NAMESPACES_CLONE & libc::SIGCHLD as u32, 0);
        assert_eq!(NEW_NAMESPACES_CLONE & libc::CLONE_NEWTIME as u32, 0);
        assert_ne!(NEW_NAMESPACES & libc::CLONE_NEWTIME as u32, 0);
        assert_ne!(NEW_NAMESPACES_CLONE & libc::CLONE_NEWUSER as u32, 0);
    }
}
