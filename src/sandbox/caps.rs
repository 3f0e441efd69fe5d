//! What this machine can enforce, found once by trying it (in a throw-away child process), and
//! a plain-words reason for everything it cannot.

use std::fmt;
use std::sync::OnceLock;

/// Whether one mechanism works here, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// It can.
    Yes,
    /// What this machine lacks, e.g. "user namespaces are disabled
    /// (kernel.unprivileged_userns_clone=0)".
    No(String),
}

impl Support {
    /// True for [`Support::Yes`].
    pub fn is_yes(&self) -> bool {
        matches!(self, Support::Yes)
    }
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Support::Yes => f.write_str("yes"),
            Support::No(r) => write!(f, "no: {r}"),
        }
    }
}

/// The oldest Landlock ABI skillpipe accepts: ABI 3 (Linux 6.2) is the first that can stop
/// truncating a file one may not write.
pub const MIN_LANDLOCK_ABI: u32 = 3;

/// Environment variable naming mechanisms to treat as missing (comma-separated: `user`,
/// `network`, `pid`, `mount`, `landlock`), to try the required/best-effort behaviour on any machine.
pub const UNAVAILABLE_ENV: &str = "SKILLPIPE_SANDBOX_UNAVAILABLE";

/// What this machine can enforce (see [`probe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// A fresh user namespace (needed by unprivileged users for the other namespaces).
    pub user_namespace: Support,
    /// A fresh network namespace: network isolation.
    pub network_namespace: Support,
    /// A fresh PID namespace: the whole process tree dies with the command.
    pub pid_namespace: Support,
    /// Fresh mount, IPC and UTS namespaces: private /dev, /proc and $TMPDIR, hidden secrets.
    pub mount_namespace: Support,
    /// Landlock write restriction (ABI >= `MIN_LANDLOCK_ABI`).
    pub landlock: Support,
    /// The kernel's Landlock ABI version, if Landlock is enabled.
    pub landlock_abi: Option<u32>,
    /// The namespaces are created inside a fresh user namespace (otherwise directly, which only
    /// a privileged process can do).
    pub use_user_namespace: bool,
}

impl Capabilities {
    /// Nothing can be enforced, for `reason`.
    pub fn none(reason: &str) -> Capabilities {
        Capabilities::each(Support::No(reason.to_string()), None)
    }

    /// Everything can be enforced (for tests of the decision logic).
    pub fn all() -> Capabilities {
        Capabilities::each(Support::Yes, Some(MIN_LANDLOCK_ABI))
    }

    /// `support` for every mechanism (in a user namespace where they are all there).
    fn each(support: Support, landlock_abi: Option<u32>) -> Capabilities {
        Capabilities {
            user_namespace: support.clone(),
            network_namespace: support.clone(),
            pid_namespace: support.clone(),
            mount_namespace: support.clone(),
            use_user_namespace: support.is_yes(),
            landlock: support,
            landlock_abi,
        }
    }

    /// Mark the mechanisms named in `list` (see [`UNAVAILABLE_ENV`]) as missing.
    pub fn disable(&mut self, list: &str) {
        let why = || Support::No(format!("disabled by {UNAVAILABLE_ENV}"));
        for name in list.split(',').map(str::trim) {
            match name {
                "user" => {
                    self.user_namespace = why();
                    if self.use_user_namespace {
                        self.network_namespace = why();
                        self.pid_namespace = why();
                        self.mount_namespace = why();
                    }
                }
                "network" => self.network_namespace = why(),
                "pid" => self.pid_namespace = why(),
                "mount" => self.mount_namespace = why(),
                "landlock" => self.landlock = why(),
                _ => {}
            }
        }
    }
}

static CACHE: OnceLock<Capabilities> = OnceLock::new();

/// Whether this process has probed already (then [`probe`] is free).
pub fn probed() -> bool {
    CACHE.get().is_some()
}

/// What this machine can enforce: probed once per process (a fork or two), then cached.
pub fn probe() -> Capabilities {
    CACHE
        .get_or_init(|| {
            let mut caps = probe_uncached();
            if let Some(list) = std::env::var_os(UNAVAILABLE_ENV) {
                caps.disable(&list.to_string_lossy());
            }
            caps
        })
        .clone()
}

#[cfg(not(target_os = "linux"))]
fn probe_uncached() -> Capabilities {
    Capabilities::none("namespaces and Landlock exist only on Linux")
}

#[cfg(target_os = "linux")]
fn probe_uncached() -> Capabilities {
    linux::probe()
}

#[cfg(target_os = "linux")]
pub(crate) mod linux {
    use super::*;
    use crate::sandbox::ns::{
        MOUNT_FLAGS, NsError, NsStep, UserNs, try_proc_mount, unshare, wait_for,
    };
    use std::os::fd::AsRawFd;

    /// Landlock ABI version, or the errno saying why there is none.
    pub fn landlock_abi() -> Result<u32, i32> {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: the documented version query: no attribute pointer, size 0.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        if v < 0 {
            Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::ENOSYS))
        } else {
            Ok(v as u32)
        }
    }

    /// Why Landlock cannot restrict writes here, or `None` if it can.
    pub fn landlock_problem(abi: Result<u32, i32>) -> Option<String> {
        match abi {
            Ok(v) if v >= MIN_LANDLOCK_ABI => None,
            Ok(v) => Some(format!(
                "Landlock ABI {v} cannot stop truncating files; ABI {MIN_LANDLOCK_ABI} (Linux 6.2) is needed"
            )),
            Err(libc::EOPNOTSUPP) => Some(
                "Landlock is built into the kernel but not enabled (add landlock to the lsm= boot parameter)"
                    .into(),
            ),
            Err(_) => Some("the kernel has no Landlock (needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)".into()),
        }
    }

    /// A reason in plain words for a failed namespace step.
    pub fn explain(err: NsError) -> String {
        let what = match err.step {
            NsStep::User => "creating a user namespace",
            NsStep::IdMap => "writing the user namespace's uid/gid map",
            NsStep::Network => "creating a network namespace",
            NsStep::Pid => "creating a PID namespace",
            NsStep::Mount => "creating mount, IPC and UTS namespaces",
            NsStep::Proc => {
                "mounting a fresh /proc (refused where parts of the host's /proc are covered, as container runtimes do)"
            }
        };
        // The settings that turn unprivileged user namespaces off, at the value that does.
        let sysctl_hint = || {
            [
                (
                    "kernel/unprivileged_userns_clone",
                    "0",
                    "user namespaces are disabled",
                ),
                (
                    "user/max_user_namespaces",
                    "0",
                    "user namespaces are disabled",
                ),
                (
                    "kernel/apparmor_restrict_unprivileged_userns",
                    "1",
                    "AppArmor restricts unprivileged user namespaces",
                ),
            ]
            .into_iter()
            .find(|(key, off, _)| {
                std::fs::read_to_string(format!("/proc/sys/{key}")).is_ok_and(|v| v.trim() == *off)
            })
            .map(|(key, off, what)| format!("{what} ({}={off})", key.replace('/', ".")))
        };
        match err.errno {
            libc::EPERM | libc::EACCES => sysctl_hint().unwrap_or_else(|| {
                format!(
                    "{what} is not permitted (a container's seccomp profile, a chroot or a \
                     security module may forbid it)"
                )
            }),
            libc::ENOSPC | libc::EUSERS => {
                format!("{what} failed: the namespace limit is reached (user.max_*_namespaces)")
            }
            libc::EINVAL => format!("{what} failed: the kernel does not support it"),
            e => format!("{what} failed: {}", std::io::Error::from_raw_os_error(e)),
        }
    }

    /// Marks a mount result as the /proc step's errno.
    const PROC_STEP: i32 = 1 << 16;

    /// Steps tried in a child; errno 0 means the step worked, -1 that it was not reached.
    const NOT_TRIED: i32 = -1;

    /// Fork a child that runs `steps` on a copy of `init`, and return that copy as the child
    /// left it (`None` if the child died before handing it back).
    ///
    /// # Safety
    /// `steps` must make only async-signal-safe calls, every bit pattern must be a valid `T`
    /// and `T` must have no padding bytes (plain integers): its bytes cross a pipe.
    pub(crate) unsafe fn in_child<T: Copy>(init: T, steps: impl FnOnce(&mut T)) -> Option<T> {
        use std::io::Read;
        let (mut r, w) = std::io::pipe().ok()?;
        // SAFETY: the child only runs `steps` (the caller's promise), write, _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let mut out = init;
            steps(&mut out);
            // SAFETY: writing plain data to our pipe, then leaving without running destructors.
            unsafe {
                libc::write(w.as_raw_fd(), (&raw const out).cast(), size_of::<T>());
                libc::_exit(0);
            }
        }
        drop(w);
        if pid < 0 {
            return None;
        }
        let mut out = init;
        // SAFETY: `out` is `size_of::<T>()` bytes of plain data (the caller's promise).
        let bytes =
            unsafe { std::slice::from_raw_parts_mut((&raw mut out).cast(), size_of::<T>()) };
        let read = r.read_exact(bytes);
        wait_for(pid);
        read.ok().map(|()| out)
    }

    fn step_result(errno: i32, step: NsStep) -> Result<(), NsError> {
        match errno {
            0 => Ok(()),
            e => Err(NsError { step, errno: e }),
        }
    }

    /// The probe's code for a user step that failed at the id maps (any other code: at
    /// `unshare`).
    const ID_MAP_FAILED: i32 = 2;

    fn errno_of(r: Result<(), NsError>) -> i32 {
        r.err().map_or(0, |e| e.errno)
    }

    /// Try the steps the launcher will take: user namespace, then network and PID namespaces
    /// inside it; if that fails for a privileged process, the namespaces alone.
    pub fn probe() -> Capabilities {
        let userns = UserNs::for_current_process();
        // [failed user step (0 = none), its errno, network errno, PID errno, mount errno]
        // SAFETY: the steps are raw system calls on prepared data; the result is integers.
        let res = unsafe {
            in_child([NOT_TRIED; 5], |out| {
                if let Err(e) = userns.enter() {
                    out[0] = if e.step == NsStep::IdMap {
                        ID_MAP_FAILED
                    } else {
                        1
                    };
                    out[1] = e.errno;
                    return;
                }
                out[0] = 0;
                out[1] = 0;
                out[2] = errno_of(unshare(libc::CLONE_NEWNET, NsStep::Network));
                out[3] = errno_of(unshare(libc::CLONE_NEWPID, NsStep::Pid));
                out[4] = errno_of(unshare(MOUNT_FLAGS, NsStep::Mount));
                if out[3] == 0 && out[4] == 0 {
                    // The step's code in the high bits, so the reason names /proc.
                    out[4] = try_proc_mount().err().map_or(0, |e| e.errno | PROC_STEP);
                }
            })
        };
        let (user, mut net, mut pid, mut mnt) = match res {
            Some([0, _, n, p, m]) => (
                Ok(()),
                step_result(n, NsStep::Network),
                step_result(p, NsStep::Pid),
                if m & PROC_STEP != 0 {
                    step_result(m & !PROC_STEP, NsStep::Proc)
                } else {
                    step_result(m, NsStep::Mount)
                },
            ),
            // The user step failed, or the child died before it answered (EAGAIN).
            other => {
                let (step, errno) = other.map_or((NOT_TRIED, 0), |r| (r[0], r[1]));
                let step = match step {
                    ID_MAP_FAILED => NsStep::IdMap,
                    _ => NsStep::User,
                };
                let errno = if errno > 0 { errno } else { libc::EAGAIN };
                let err = Err(NsError { step, errno });
                (err, err, err, err)
            }
        };
        let mut use_userns = true;
        // A privileged process may create the namespaces without a user namespace.
        // SAFETY: cannot fail.
        if user.is_err()
            && unsafe { libc::geteuid() } == 0
            // SAFETY: as above.
            && let Some([0, p, m]) = unsafe {
                in_child([NOT_TRIED; 3], |out| {
                    out[0] = errno_of(unshare(libc::CLONE_NEWNET, NsStep::Network));
                    out[1] = errno_of(unshare(libc::CLONE_NEWPID, NsStep::Pid));
                    out[2] = errno_of(unshare(MOUNT_FLAGS, NsStep::Mount));
                })
            }
        {
            net = Ok(());
            pid = step_result(p, NsStep::Pid);
            mnt = step_result(m, NsStep::Mount);
            use_userns = false;
        }
        let abi = landlock_abi();
        let support =
            |r: Result<(), NsError>| r.map_or_else(|e| Support::No(explain(e)), |()| Support::Yes);
        Capabilities {
            user_namespace: support(user),
            network_namespace: support(net),
            pid_namespace: support(pid),
            mount_namespace: support(mnt),
            landlock: landlock_problem(abi).map_or(Support::Yes, Support::No),
            landlock_abi: abi.ok(),
            use_user_namespace: use_userns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disable_marks_named_mechanisms_missing_and_what_needs_them() {
        let mut caps = Capabilities::all();
        caps.disable("landlock, network");
        assert!(caps.user_namespace.is_yes());
        assert!(caps.pid_namespace.is_yes());
        assert!(caps.landlock.to_string().contains(UNAVAILABLE_ENV));
        assert!(!caps.network_namespace.is_yes());
        // User namespaces take the others along when they need them.
        let mut caps = Capabilities::all();
        caps.disable("user");
        assert!(!caps.network_namespace.is_yes());
        assert!(!caps.pid_namespace.is_yes());
        assert!(caps.landlock.is_yes());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn landlock_problems_are_named() {
        use linux::landlock_problem;
        assert_eq!(landlock_problem(Ok(7)), None);
        for (abi, says) in [
            (Ok(2), "ABI 3"),
            (Err(libc::EOPNOTSUPP), "lsm="),
            (Err(libc::ENOSYS), "CONFIG_SECURITY_LANDLOCK"),
        ] {
            assert!(landlock_problem(abi).unwrap().contains(says), "{abi:?}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn probe_agrees_with_the_kernel_on_landlock() {
        let caps = probe();
        assert_eq!(caps.landlock_abi, linux::landlock_abi().ok());
    }
}
