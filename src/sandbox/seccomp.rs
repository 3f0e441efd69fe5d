//! A seccomp filter the launcher installs on itself, so the command and everything it starts
//! inherit it, against what Landlock and the namespaces leave open:
//! - `ioctl(TIOCSTI)` (and `TIOCLINUX`, its virtual-console twin) pushes keystrokes into the
//!   terminal's input, i.e. types a command into the user's shell, which runs it after
//!   skillpipe exits with none of the restrictions. The terminal stays writable (DESIGN §2);
//!   only the injection is refused (EPERM).
//! - the keyring calls: the user's session and user keyrings are shared with every process of
//!   the user, and namespaces do not separate them;
//! - new namespaces, as container runtimes refuse them ([`NEW_NAMESPACES`]);
//! - set-user-ID and set-group-ID bits ([`SET_ID`]) and extended attributes ([`XATTR_CALLS`]),
//!   and `io_uring`, which could set them past the filter;
//! - kernel surface a script has no use for, at least what container runtimes close by default
//!   ([`refused_calls`], [`PERSONALITIES`]), and every socket family but Unix, IPv4, IPv6 and
//!   routing netlink ([`SOCKET_FAMILIES`]): `AF_VSOCK` reaches the host's (or a VM's) vsock
//!   port space past the network namespace, `AF_PACKET`, `AF_ALG`, Bluetooth and the other
//!   netlink protocols are kernel code no script needs (EAFNOSUPPORT, as where a kernel lacks
//!   the family; EPROTONOSUPPORT for a netlink protocol);
//! - system calls made through another ABI (32-bit `int 0x80`, x32): their numbers differ.

use super::bpf::{ARCH, Op, Ret, To, arg, assemble, head, jeq, jset, ld};
use super::message::{Message, Setting};

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

/// Set-user-ID and set-group-ID mode bits. A script may not set them, even on its own files in
/// a writable path: such a file outlives the run, and whoever runs it later (root included, or
/// another user) runs it as the file's owner — with skillpipe started by root, as root.
const SET_ID: u32 = libc::S_ISUID | libc::S_ISGID;

/// The `open` flags that make a file (`O_TMPFILE` without its `O_DIRECTORY` bit, which plain
/// directory opens carry too): only then is the mode argument read by the kernel.
const CREATES: u32 = (libc::O_CREAT | (libc::O_TMPFILE & !libc::O_DIRECTORY)) as u32;

/// `fchmodat2(2)` (Linux 6.6) and `setxattrat(2)` (Linux 6.13): one number on every
/// architecture here; not in every libc yet.
const SYS_FCHMODAT2: u32 = 452;
const SYS_SETXATTRAT: u32 = 463;

/// System calls whose mode argument (at this index) sets a file's mode: refused when it holds a
/// set-id bit. `mkdir`'s is not among them: the kernel drops those bits from it.
fn mode_calls() -> Vec<(u32, u32)> {
    let mut calls = vec![
        (libc::SYS_fchmod as u32, 1),
        (libc::SYS_fchmodat as u32, 2),
        (SYS_FCHMODAT2, 2),
        (libc::SYS_mknodat as u32, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_chmod as u32, 1),
        (libc::SYS_creat as u32, 1),
        (libc::SYS_mknod as u32, 1),
    ]);
    calls
}

/// System calls that make a file when their flags (at the first index) say so, with the mode
/// at the second.
fn open_calls() -> Vec<(u32, u32, u32)> {
    let mut calls = vec![(libc::SYS_openat as u32, 2, 3)];
    #[cfg(target_arch = "x86_64")]
    calls.push((libc::SYS_open as u32, 1, 2));
    calls
}

/// Extended attributes: `security.capability` gives a file capabilities (root's, with skillpipe
/// started by root), and the attribute's name lies in memory a filter cannot read, so every
/// set is refused with `EOPNOTSUPP` — what a file system without extended attributes answers,
/// which `cp -a`, `tar` and `rsync` take in their stride. Removing one stays allowed.
const XATTR_CALLS: [u32; 4] = [
    libc::SYS_setxattr as u32,
    libc::SYS_lsetxattr as u32,
    libc::SYS_fsetxattr as u32,
    SYS_SETXATTRAT,
];

/// `lsm_get_self_attr`, `lsm_set_self_attr`, `lsm_list_modules` (Linux 6.8) and
/// `open_tree_attr` (Linux 6.15): one number on every architecture here; not in libc yet.
const SYS_LSM_GET_SELF_ATTR: u32 = 459;
const SYS_LSM_SET_SELF_ATTR: u32 = 460;
const SYS_LSM_LIST_MODULES: u32 = 461;
const SYS_OPEN_TREE_ATTR: u32 = 467;

/// `kexec_file_load`: not in every libc for every architecture here.
#[cfg(target_arch = "x86_64")]
const SYS_KEXEC_FILE_LOAD: u32 = 320;
#[cfg(any(target_arch = "aarch64", target_arch = "riscv64"))]
const SYS_KEXEC_FILE_LOAD: u32 = 294;

/// No filter is written for other architectures (see [`ARCH`]).
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
fn refused_calls() -> Vec<u32> {
    Vec::new()
}

/// System calls refused whatever their arguments (EPERM): kernel surface a script has no use
/// for, which a container runtime's default filter also refuses. A syscall table is a closed
/// world; this is the part of it that administers the machine, not the process.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
fn refused_calls() -> Vec<u32> {
    use libc::*;
    let mut calls = vec![
        // Exploit primitives and kernel programs.
        SYS_userfaultfd,
        SYS_perf_event_open,
        SYS_bpf,
        SYS_lookup_dcookie,
        SYS_fanotify_init,
        // Mounts and namespaces (the command's own are made before this filter).
        SYS_mount,
        SYS_umount2,
        SYS_pivot_root,
        SYS_chroot,
        SYS_setns,
        SYS_fsopen,
        SYS_fsconfig,
        SYS_fsmount,
        SYS_fspick,
        SYS_move_mount,
        SYS_open_tree,
        SYS_mount_setattr,
        SYS_quotactl,
        SYS_quotactl_fd,
        // Another process's memory and descriptors (ptrace itself stays: debuggers in the run;
        // `pidfd_getfd` is refused by the command's own filter, see `unix_sockets`: the run's
        // init, which has this one too, takes the caller's socket with it).
        SYS_kcmp,
        SYS_process_madvise,
        SYS_open_by_handle_at,
        // The machine: modules, kexec, clocks, swap, names, log, accounting.
        SYS_init_module,
        SYS_finit_module,
        SYS_delete_module,
        SYS_kexec_load,
        SYS_reboot,
        SYS_settimeofday,
        SYS_clock_settime,
        SYS_clock_adjtime,
        SYS_swapon,
        SYS_swapoff,
        SYS_sethostname,
        SYS_setdomainname,
        SYS_syslog,
        SYS_vhangup,
        SYS_acct,
        // Memory placement across NUMA nodes.
        SYS_get_mempolicy,
        SYS_set_mempolicy,
        SYS_set_mempolicy_home_node,
        SYS_mbind,
        SYS_migrate_pages,
        SYS_move_pages,
        // io_uring (its setup is refused on its own, above).
        SYS_io_uring_enter,
        SYS_io_uring_register,
    ]
    .into_iter()
    .map(|nr| nr as u32)
    .collect::<Vec<u32>>();
    calls.extend([
        SYS_KEXEC_FILE_LOAD,
        SYS_LSM_GET_SELF_ATTR,
        SYS_LSM_SET_SELF_ATTR,
        SYS_LSM_LIST_MODULES,
        SYS_OPEN_TREE_ATTR,
    ]);
    #[cfg(target_arch = "x86_64")]
    calls.extend(
        [
            SYS_iopl,
            SYS_ioperm,
            SYS_uselib,
            SYS_ustat,
            SYS_sysfs,
            SYS__sysctl,
        ]
        .map(|nr| nr as u32),
    );
    calls
}

/// The `personality(2)` values a program may ask for: Linux's own (and with the 32-bit and
/// 2.6-version flags), and the query. Others change how the kernel maps memory for what the
/// process runs next (no address randomisation, executable data).
const PERSONALITIES: [u32; 5] = [0, 0x0008, 0x2_0000, 0x2_0008, 0xffff_ffff];

/// The socket families a script may make: Unix (governed by `unix_sockets`), IPv4, IPv6 (cut by
/// the network namespace when the network is off), and netlink for routing only (what address
/// look-ups ask for the machine's interfaces).
const SOCKET_FAMILIES: [u32; 3] = [
    libc::AF_UNIX as u32,
    libc::AF_INET as u32,
    libc::AF_INET6 as u32,
];

/// Allow when the first argument is one of `values`, else go to `otherwise`.
fn one_of(values: &[u32], otherwise: To) -> Vec<Op> {
    let mut ops = vec![ld(arg(0))];
    ops.extend(values.iter().enumerate().map(|(i, &v)| {
        let last = i + 1 == values.len();
        jeq(
            v,
            To::Ret(Ret::Allow),
            if last { otherwise } else { To::Next },
        )
    }));
    ops
}

/// The filter program for the native `arch` (with its x32 bit, if any).
fn program(arch: u32, x32_bit: Option<u32>) -> Vec<libc::sock_filter> {
    let (allow, deny) = (To::Ret(Ret::Allow), To::Ret(Ret::Errno(libc::EPERM)));
    // `ENOSYS` for `clone3`, whose flags sit in memory the filter cannot read (the C library
    // then falls back to `clone`, whose flags it can), and for `openat2`, whose flags and
    // mode do too.
    let no_sys = To::Ret(Ret::Errno(libc::ENOSYS));
    let no_family = To::Ret(Ret::Errno(libc::EAFNOSUPPORT));
    let mut code = head(arch, x32_bit, Ret::Errno(libc::EPERM));
    code.extend([
        // The kernel keyring is per user, not per namespace: no reading or adding keys.
        jeq(libc::SYS_keyctl as u32, deny, To::Next),
        jeq(libc::SYS_add_key as u32, deny, To::Next),
        jeq(libc::SYS_request_key as u32, deny, To::Next),
        // io_uring opens and sets attributes past this filter.
        jeq(libc::SYS_io_uring_setup as u32, deny, To::Next),
        jeq(libc::SYS_openat2 as u32, no_sys, To::Next),
        jeq(libc::SYS_clone3 as u32, no_sys, To::Next),
    ]);
    let not_sup = To::Ret(Ret::Errno(libc::EOPNOTSUPP));
    code.extend(XATTR_CALLS.map(|nr| jeq(nr, not_sup, To::Next)));
    code.extend(
        refused_calls()
            .into_iter()
            .map(|nr| jeq(nr, deny, To::Next)),
    );
    // The calls whose arguments decide, each with its check (laid out after the dispatch).
    let mut families = one_of(&SOCKET_FAMILIES, To::Next);
    families.extend([
        jeq(libc::AF_NETLINK as u32, To::Next, no_family),
        ld(arg(2)),
        jeq(
            libc::NETLINK_ROUTE as u32,
            allow,
            To::Ret(Ret::Errno(libc::EPROTONOSUPPORT)),
        ),
    ]);
    let mut checks: Vec<(u32, Vec<Op>)> = vec![
        // No namespace of the command's own.
        (
            libc::SYS_unshare as u32,
            vec![ld(arg(0)), jset(NEW_NAMESPACES, deny, allow)],
        ),
        (
            libc::SYS_clone as u32,
            vec![ld(arg(0)), jset(NEW_NAMESPACES_CLONE, deny, allow)],
        ),
        // Linux's own personality only.
        (libc::SYS_personality as u32, one_of(&PERSONALITIES, deny)),
        // The socket families a script needs, and netlink for routing only.
        (libc::SYS_socket as u32, families),
        // A pair is Unix or nothing (another family's pair is kernel code no script needs).
        (
            libc::SYS_socketpair as u32,
            vec![ld(arg(0)), jeq(libc::AF_UNIX as u32, allow, no_family)],
        ),
        // No typing into the terminal.
        (
            libc::SYS_ioctl as u32,
            vec![
                ld(arg(1)),
                jeq(libc::TIOCSTI as u32, deny, To::Next),
                jeq(libc::TIOCLINUX as u32, deny, allow),
            ],
        ),
    ];
    // No set-id bits.
    checks.extend(
        mode_calls()
            .into_iter()
            .map(|(nr, mode)| (nr, vec![ld(arg(mode)), jset(SET_ID, deny, allow)])),
    );
    checks.extend(open_calls().into_iter().map(|(nr, flags, mode)| {
        let check = vec![
            ld(arg(flags)),
            jset(CREATES, To::Next, allow),
            ld(arg(mode)),
            jset(SET_ID, deny, allow),
        ];
        (nr, check)
    }));
    let last = checks.len() - 1;
    for (i, (nr, _)) in checks.iter().enumerate() {
        code.push(jeq(
            *nr,
            To::Label(i),
            if i == last { allow } else { To::Next },
        ));
    }
    for (i, (_, check)) in checks.into_iter().enumerate() {
        code.push(Op::Label(i));
        code.extend(check);
    }
    assemble(&code)
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

/// Install the filter against terminal input injection, keyring calls, new namespaces, set-id
/// bits, file capabilities, the refused kernel surface and socket families on this process
/// (single-threaded launcher).
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

    /// Runs the x86-64 filter on one native call (number `nr`, arguments `args`): the return.
    fn verdict(p: &[libc::sock_filter], nr: u32, args: [u64; 6]) -> u32 {
        super::super::bpf::verdict(p, 0xC000_003E, nr, args)
    }

    #[test]
    fn other_abis_are_refused() {
        let p = program(0xC000_003E, Some(0x4000_0000));
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let write = libc::SYS_write as u32;
        assert_eq!(
            super::super::bpf::verdict(&p, 0x4000_0003, write, [0; 6]),
            eperm
        );
        assert_eq!(verdict(&p, write | 0x4000_0000, [0; 6]), eperm);
        assert_eq!(verdict(&p, write, [0; 6]), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn set_id_bits_and_extended_attributes_are_refused() {
        use libc::*;
        let p = program(0xC000_003E, Some(0x4000_0000));
        let allow = SECCOMP_RET_ALLOW;
        let eperm = SECCOMP_RET_ERRNO | EPERM as u32;
        let nosys = SECCOMP_RET_ERRNO | ENOSYS as u32;
        let nosup = SECCOMP_RET_ERRNO | EOPNOTSUPP as u32;
        let creat = O_CREAT as u64 | O_WRONLY as u64;
        let tmpfile = O_TMPFILE as u64 | O_RDWR as u64;
        let (dir, newuser) = (O_DIRECTORY as u64, CLONE_NEWUSER as u64);
        let calls: [(c_long, [u64; 6], u32); 24] = [
            // chmod family: the mode decides.
            (SYS_chmod, [0, 0o4755, 0, 0, 0, 0], eperm),
            (SYS_chmod, [0, 0o755, 0, 0, 0, 0], allow),
            (SYS_fchmod, [3, 0o2755, 0, 0, 0, 0], eperm),
            (SYS_fchmodat, [3, 0, 0o6755, 0, 0, 0], eperm),
            (SYS_fchmodat, [3, 0, 0o1777, 0, 0, 0], allow),
            (SYS_FCHMODAT2 as c_long, [3, 0, 0o4700, 0, 0, 0], eperm),
            (SYS_creat, [0, 0o4755, 0, 0, 0, 0], eperm),
            (SYS_mknodat, [3, 0, 0o104755, 0, 0, 0], eperm),
            // open: the mode only counts when the call makes a file.
            (SYS_openat, [3, 0, creat, 0o4755, 0, 0], eperm),
            (SYS_openat, [3, 0, creat, 0o644, 0, 0], allow),
            (SYS_openat, [3, 0, tmpfile, 0o2755, 0, 0], eperm),
            (SYS_openat, [3, 0, dir, 0o4755, 0, 0], allow),
            (SYS_open, [0, creat, 0o6755, 0, 0, 0], eperm),
            (SYS_open, [0, 0, 0o4755, 0, 0, 0], allow),
            (SYS_mkdir, [0, 0o4777, 0, 0, 0, 0], allow),
            // Attributes and what would get past the filter.
            (SYS_removexattr, [0; 6], allow),
            (SYS_io_uring_setup, [0; 6], eperm),
            (SYS_openat2, [0; 6], nosys),
            // What was there before still holds.
            (SYS_ioctl, [0, TIOCSTI, 0, 0, 0, 0], eperm),
            (SYS_ioctl, [0, TIOCGWINSZ, 0, 0, 0, 0], allow),
            (SYS_unshare, [newuser, 0, 0, 0, 0, 0], eperm),
            (SYS_clone, [SIGCHLD as u64, 0, 0, 0, 0, 0], allow),
            (SYS_clone3, [0; 6], nosys),
            (SYS_write, [1, 0, 0o4755, 0, 0, 0], allow),
        ];
        for (nr, args, want) in calls {
            assert_eq!(verdict(&p, nr as u32, args), want, "{nr} {args:?}");
        }
        for nr in XATTR_CALLS {
            assert_eq!(verdict(&p, nr, [0; 6]), nosup);
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn kernel_surface_and_socket_families_are_refused() {
        let p = program(0xC000_003E, Some(0x4000_0000));
        let allow = libc::SECCOMP_RET_ALLOW;
        let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
        let call = |nr: libc::c_long, args: [u64; 6]| verdict(&p, nr as u32, args);
        for nr in [
            libc::SYS_userfaultfd,
            libc::SYS_perf_event_open,
            libc::SYS_bpf,
            libc::SYS_mount,
            libc::SYS_kexec_load,
            libc::SYS_iopl,
        ] {
            assert_eq!(call(nr, [0; 6]), errno(libc::EPERM), "{nr}");
        }
        for nr in refused_calls() {
            assert_eq!(verdict(&p, nr, [0; 6]), errno(libc::EPERM), "{nr}");
        }
        // What a script needs stays.
        for nr in [libc::SYS_ptrace, libc::SYS_mmap, libc::SYS_execve] {
            assert_eq!(call(nr, [0; 6]), allow, "{nr}");
        }
        // personality: Linux's own and the query, not the rest (ADDR_NO_RANDOMIZE).
        for (persona, want) in [
            (0xffff_ffff, allow),
            (0, allow),
            (0x0040000, errno(libc::EPERM)),
        ] {
            assert_eq!(call(libc::SYS_personality, [persona, 0, 0, 0, 0, 0]), want);
        }
        // Sockets: four families, netlink for routing only.
        let stream = libc::SOCK_STREAM as u64;
        let socket = |family: i32, protocol: i32| {
            call(
                libc::SYS_socket,
                [family as u64, stream, protocol as u64, 0, 0, 0],
            )
        };
        for f in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6] {
            assert_eq!(socket(f, 0), allow, "{f}");
        }
        assert_eq!(socket(libc::AF_NETLINK, libc::NETLINK_ROUTE), allow);
        assert_eq!(
            socket(libc::AF_NETLINK, libc::NETLINK_KOBJECT_UEVENT),
            errno(libc::EPROTONOSUPPORT)
        );
        for f in [
            libc::AF_VSOCK,
            libc::AF_PACKET,
            libc::AF_ALG,
            libc::AF_BLUETOOTH,
        ] {
            assert_eq!(socket(f, 0), errno(libc::EAFNOSUPPORT), "{f}");
        }
        let pair = |family: i32| call(libc::SYS_socketpair, [family as u64, 1, 0, 0, 0, 0]);
        assert_eq!(pair(libc::AF_UNIX), allow);
        assert_eq!(pair(libc::AF_TIPC), errno(libc::EAFNOSUPPORT));
    }

    #[test]
    fn clone_keeps_its_exit_signal_and_unshare_checks_every_namespace() {
        assert_eq!(NEW_NAMESPACES_CLONE & libc::SIGCHLD as u32, 0);
        assert_eq!(NEW_NAMESPACES_CLONE & libc::CLONE_NEWTIME as u32, 0);
        assert_ne!(NEW_NAMESPACES & libc::CLONE_NEWTIME as u32, 0);
        assert_ne!(NEW_NAMESPACES_CLONE & libc::CLONE_NEWUSER as u32, 0);
    }
}
