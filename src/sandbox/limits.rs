//! Resource limits for one run (policy keys `max_processes`, `max_memory_mb`,
//! `max_file_size_mb`, `max_tmp_mb`, `max_cpu_seconds`). The launcher sets them as hard rlimits
//! on itself just before the command starts, so neither the command nor anything it starts can
//! raise them; `$TMPDIR`'s cap is the size of its private tmpfs.

use serde::Serialize;

/// One run's limits; `None` means unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Limits {
    /// Processes (and threads) alive at once in the run's user namespace (RLIMIT_NPROC).
    pub processes: Option<u64>,
    /// Writable memory per process, MiB (RLIMIT_DATA: heap and private mappings).
    pub memory_mb: Option<u64>,
    /// Largest file a process may write, MiB (RLIMIT_FSIZE; SIGXFSZ beyond).
    pub file_size_mb: Option<u64>,
    /// Size of the private tmpfs that holds `$TMPDIR` (and `/dev/shm`), MiB.
    pub tmp_mb: Option<u64>,
    /// CPU time per process, seconds (RLIMIT_CPU; SIGXCPU, then SIGKILL a second later).
    pub cpu_seconds: Option<u64>,
}

impl Limits {
    /// True when any limit is set.
    pub fn any(&self) -> bool {
        *self != Limits::default()
    }

    /// The rlimits to set: (resource, value).
    #[cfg(target_os = "linux")]
    fn rlimits(&self) -> Vec<(libc::__rlimit_resource_t, u64, &'static str)> {
        const MIB: u64 = 1024 * 1024;
        let mut out = Vec::new();
        if let Some(n) = self.processes {
            out.push((libc::RLIMIT_NPROC, n, "max_processes"));
        }
        if let Some(m) = self.memory_mb {
            out.push((libc::RLIMIT_DATA, m.saturating_mul(MIB), "max_memory_mb"));
        }
        if let Some(m) = self.file_size_mb {
            out.push((
                libc::RLIMIT_FSIZE,
                m.saturating_mul(MIB),
                "max_file_size_mb",
            ));
        }
        if let Some(s) = self.cpu_seconds {
            out.push((libc::RLIMIT_CPU, s, "max_cpu_seconds"));
        }
        out
    }

    /// Set the limits on this process (inherited by what it starts). Soft and hard are equal,
    /// except CPU, whose hard limit is a second later: SIGXCPU first (which names the cause),
    /// SIGKILL if it is ignored.
    #[cfg(target_os = "linux")]
    pub fn apply(&self) -> Result<(), LimitError> {
        for (resource, value, key) in self.rlimits() {
            let hard = if resource == libc::RLIMIT_CPU {
                value.saturating_add(1)
            } else {
                value
            };
            let lim = libc::rlimit {
                rlim_cur: value as libc::rlim_t,
                rlim_max: hard as libc::rlim_t,
            };
            // SAFETY: setrlimit on this process with a valid struct.
            if unsafe { libc::setrlimit(resource, &lim) } != 0 {
                return Err(LimitError::Set {
                    key,
                    value,
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        Ok(())
    }

    /// Launcher arguments for these limits.
    pub fn to_args(&self) -> Vec<std::ffi::OsString> {
        let mut out = Vec::new();
        for (flag, v) in [
            ("--max-processes", self.processes),
            ("--max-memory", self.memory_mb),
            ("--max-file-size", self.file_size_mb),
            ("--max-tmp", self.tmp_mb),
            ("--max-cpu", self.cpu_seconds),
        ] {
            if let Some(v) = v {
                out.push(flag.into());
                out.push(v.to_string().into());
            }
        }
        out
    }
}

/// Whether RLIMIT_NPROC holds for this process: the kernel exempts uid 0 of the host (even
/// inside a user namespace that maps it).
pub fn nproc_exempt() -> bool {
    // SAFETY: cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// Why a limit could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// `setrlimit` refused.
    #[error(
        "cannot set {key} = {value}: {source} (a hard limit already lower than that? raise it, \
         or lower {key} in the policy)"
    )]
    Set {
        /// The policy key.
        key: &'static str,
        /// The value asked for.
        value: u64,
        /// What `setrlimit` said.
        source: std::io::Error,
    },
    /// Root is exempt from RLIMIT_NPROC and no pids cgroup could be made.
    #[error(
        "the kernel exempts root (uid 0) from RLIMIT_NPROC and no pids cgroup can be made \
         ({0}), so max_processes is not enforced; run skillpipe as a normal user"
    )]
    RootWithoutCgroup(CgroupError),
}

/// Why a pids cgroup could not be made or joined.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// `/proc/self/cgroup` could not be read.
    #[error("reading /proc/self/cgroup: {0}")]
    Own(std::io::Error),
    /// No pids controller in a writable place.
    #[error(
        "no pids cgroup controller is available (cgroup v1 `pids`, or v2 with `pids` in \
         cgroup.subtree_control)"
    )]
    NoController,
    /// A cgroup file could not be written.
    #[error("{}: {source}", .path.display())]
    Write {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What the kernel said.
        source: std::io::Error,
    },
}

/// How `max_processes` is enforced here, or why it is not: RLIMIT_NPROC for a normal user; for
/// root, a pids cgroup per run where the pids controller is writable.
pub fn process_limit_support() -> Result<&'static str, LimitError> {
    if !nproc_exempt() {
        return Ok("RLIMIT_NPROC in the run's user namespace");
    }
    match PidsCgroup::create(1) {
        Ok(_) => Ok("a pids cgroup per run, as root is exempt from RLIMIT_NPROC"),
        Err(e) => Err(LimitError::RootWithoutCgroup(e)),
    }
}

/// A pids cgroup holding one run (for root, whom RLIMIT_NPROC does not hold): created by
/// skillpipe with `pids.max`, joined by the launcher before anything else ([`join_cgroup`]),
/// removed on drop (after the run, when it is empty).
#[derive(Debug)]
pub struct PidsCgroup {
    dir: std::path::PathBuf,
}

impl PidsCgroup {
    /// A fresh cgroup under this process's own pids cgroup (v1, or v2 where the controller is
    /// enabled for children), with `pids.max = max`.
    pub fn create(max: u64) -> Result<PidsCgroup, CgroupError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(CgroupError::Own)?;
        let base = own
            .lines()
            .find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, ctl, path) = (parts.next()?, parts.next()?, parts.next()?);
                if ctl.split(',').any(|c| c == "pids") {
                    Some(
                        std::path::Path::new("/sys/fs/cgroup/pids")
                            .join(path.trim_start_matches('/')),
                    )
                } else if ctl.is_empty() {
                    let dir =
                        std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
                    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                        .is_ok_and(|c| c.split_whitespace().any(|w| w == "pids"));
                    enabled.then_some(dir)
                } else {
                    None
                }
            })
            .ok_or(CgroupError::NoController)?;
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(&base));
        let name = format!(
            "{CGROUP_PREFIX}{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = base.join(name);
        std::fs::create_dir(&dir).map_err(|source| CgroupError::Write {
            path: dir.clone(),
            source,
        })?;
        let cg = PidsCgroup { dir };
        let max_file = cg.dir.join("pids.max");
        std::fs::write(&max_file, max.to_string()).map_err(|source| CgroupError::Write {
            path: max_file,
            source,
        })?;
        Ok(cg)
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &std::path::Path {
        &self.dir
    }
}

/// The name of a run's cgroup: this prefix, skillpipe's pid, a counter.
const CGROUP_PREFIX: &str = "skillpipe-run-";

/// Remove the run cgroups that skillpipe processes no longer alive left in `base`: a process
/// that exits (or is stopped by a signal) with a run in flight never gets to drop its
/// [`PidsCgroup`]. Only empty ones go (the kernel refuses the rest), and none of a live
/// skillpipe, whose launcher may be about to join one.
fn sweep(base: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(CGROUP_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let gone = unsafe { libc::kill(owner, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once the run is over; a straggler still exiting makes rmdir fail with EBUSY.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// Move this process (single-threaded: the launcher; what it forks from then on follows) into
/// the cgroup at `dir`. On cgroup v1 through the `tasks` file with "0": the one case in which
/// the kernel skips the thread-group lock, whose RCU grace period a `cgroup.procs` write (or a
/// move of another process) waits for: 0.06 ms against 5–13 ms, measured here. On v2 (no
/// `tasks` file) through `cgroup.procs`, which may take that long.
pub fn join_cgroup(dir: &std::path::Path) -> Result<(), CgroupError> {
    let tasks = dir.join("tasks");
    let file = if tasks.exists() {
        tasks
    } else {
        dir.join("cgroup.procs")
    };
    std::fs::write(&file, "0").map_err(|source| CgroupError::Write { path: file, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_removes_only_what_dead_skillpipes_left() {
        let base = tempfile::tempdir().unwrap();
        let dead = {
            let mut c = std::process::Command::new("true").spawn().unwrap();
            c.wait().unwrap();
            c.id()
        };
        let mine = std::process::id();
        for name in [
            format!("{CGROUP_PREFIX}{dead}-0"),
            format!("{CGROUP_PREFIX}{mine}-0"),
            format!("{CGROUP_PREFIX}{dead}-1"),
            "unrelated".to_string(),
        ] {
            std::fs::create_dir(base.path().join(name)).unwrap();
        }
        // Not empty: the kernel's rmdir refuses it, as it refuses a cgroup with processes.
        std::fs::write(base.path().join(format!("{CGROUP_PREFIX}{dead}-1/x")), "").unwrap();
        sweep(base.path());
        let mut left: Vec<String> = std::fs::read_dir(base.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            format!("{CGROUP_PREFIX}{dead}-1"),
            format!("{CGROUP_PREFIX}{mine}-0"),
            "unrelated".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn only_set_limits_become_arguments() {
        let l = Limits {
            processes: Some(64),
            cpu_seconds: Some(5),
            ..Limits::default()
        };
        assert!(l.any() && !Limits::default().any());
        let args: Vec<String> = l
            .to_args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, ["--max-processes", "64", "--max-cpu", "5"]);
    }
}
