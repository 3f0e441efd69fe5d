//! Resource limits for one run (policy keys `max_processes`, `max_memory_mb`,
//! `max_file_size_mb`, `max_tmp_mb`, `max_cpu_seconds`). The launcher sets them as hard rlimits
//! on itself just before the command starts, so neither the command nor anything it starts can
//! raise them; `$TMPDIR`'s cap is the size of its private tmpfs.
//!
//! An rlimit holds each process alone, so a run's memory would be bounded only by
//! `max_processes × max_memory_mb`: the run's cgroup bounds the memory of all its processes
//! together (and the processes, for root, whom RLIMIT_NPROC does not hold). Where no memory
//! cgroup can be made (cgroup v2 without the controller delegated to skillpipe's cgroup, v1
//! as a normal user) the per-process rlimit is what remains, and the run says so.

use serde::Serialize;

/// One run's limits; `None` means unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Limits {
    /// Processes (and threads) alive at once in the run's user namespace (RLIMIT_NPROC).
    pub processes: Option<u64>,
    /// Memory of the whole run, MiB: its cgroup's limit where one can be made (see
    /// `RunCgroup`), and RLIMIT_DATA (heap and private mappings) of each process.
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

    /// Set the limits on this process (inherited by what it starts). Soft and hard are equal,
    /// except CPU, whose hard limit is a second later: SIGXCPU first (which names the cause),
    /// SIGKILL if it is ignored.
    #[cfg(target_os = "linux")]
    pub fn apply(&self) -> Result<(), LimitError> {
        const MIB: u64 = 1024 * 1024;
        let rlimits = [
            (libc::RLIMIT_NPROC, self.processes, 1, "max_processes"),
            (libc::RLIMIT_DATA, self.memory_mb, MIB, "max_memory_mb"),
            (
                libc::RLIMIT_FSIZE,
                self.file_size_mb,
                MIB,
                "max_file_size_mb",
            ),
            (libc::RLIMIT_CPU, self.cpu_seconds, 1, "max_cpu_seconds"),
        ];
        for (resource, value, unit, key) in rlimits {
            let Some(value) = value.map(|v| v.saturating_mul(unit)) else {
                continue;
            };
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

/// Why a run's cgroup could not be made or joined.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// `/proc/self/cgroup` could not be read.
    #[error("reading /proc/self/cgroup: {0}")]
    Own(std::io::Error),
    /// No such controller in a writable place.
    #[error(
        "no {0} cgroup controller is available here (cgroup v1 `{0}`, or v2 with `{0}` in \
         the cgroup.subtree_control of skillpipe's own cgroup)"
    )]
    NoController(&'static str),
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
    match RunCgroup::create(Some(1), None).1.pop() {
        None => Ok("a pids cgroup per run, as root is exempt from RLIMIT_NPROC"),
        Some((_, e)) => Err(LimitError::RootWithoutCgroup(e)),
    }
}

/// How `max_memory_mb` is enforced here: per run by a memory cgroup, or (the error says why
/// not) per process only, by RLIMIT_DATA.
pub fn memory_limit_support() -> Result<&'static str, CgroupError> {
    match RunCgroup::create(None, Some(1024)).1.pop() {
        None => Ok("a memory cgroup per run (memory of all its processes together, swap included)"),
        Some((_, e)) => Err(e),
    }
}

/// A cgroup controller a run's cgroup uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    /// `pids.max`: for root, whom RLIMIT_NPROC does not hold.
    Pids,
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1): `max_memory_mb` for the run as a
    /// whole, where RLIMIT_DATA holds each process alone.
    Memory,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Pids => "pids",
            Controller::Memory => "memory",
        }
    }
}

/// Where this process's cgroup for `controller` is, from `/proc/self/cgroup`'s text: a v1
/// hierarchy that has the controller, else the v2 cgroup when `enabled(dir)` says the
/// controller is enabled for its children. The flag is true for v2. Pure but for `enabled`.
fn own_cgroup(
    proc_self_cgroup: &str,
    controller: Controller,
    enabled: impl Fn(&std::path::Path) -> bool,
) -> Option<(std::path::PathBuf, bool)> {
    let root = std::path::Path::new("/sys/fs/cgroup");
    proc_self_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if ctl.split(',').any(|c| c == controller.name()) {
            Some((root.join(ctl).join(path), false))
        } else if ctl.is_empty() {
            let dir = root.join(path);
            enabled(&dir).then_some((dir, true))
        } else {
            None
        }
    })
}

/// The cgroup (one directory per hierarchy: two on cgroup v1, one on v2) that holds one run:
/// created by skillpipe with the run's limits, joined by the launcher before anything else
/// ([`join_cgroup`]), removed on drop (after the run, when it is empty).
#[derive(Debug, Default)]
pub struct RunCgroup {
    /// Every directory made, for the removal.
    dirs: Vec<std::path::PathBuf>,
    pids: Option<std::path::PathBuf>,
    /// The memory cgroup, and whether it is v2.
    memory: Option<(std::path::PathBuf, bool)>,
}

impl RunCgroup {
    /// A fresh cgroup under this process's own, with `pids.max = pids_max` and memory bounded
    /// at `memory_mb` (swap included), for those given. What could not be had is returned
    /// beside it, per controller; the rest stands.
    pub fn create(
        pids_max: Option<u64>,
        memory_mb: Option<u64>,
    ) -> (RunCgroup, Vec<(Controller, CgroupError)>) {
        let mut cg = RunCgroup::default();
        let mut failed = Vec::new();
        if let Some(max) = pids_max {
            match cg.set_up(Controller::Pids, |_| vec![("pids.max", max, true)]) {
                Ok((dir, _)) => cg.pids = Some(dir),
                Err(e) => failed.push((Controller::Pids, e)),
            }
        }
        if let Some(mb) = memory_mb {
            let bytes = mb.saturating_mul(1024 * 1024);
            // The run as a whole, swap included; on v2 an OOM kill takes the whole run, not
            // one process the script may not even notice is gone.
            let settings = |v2| match v2 {
                true => vec![
                    ("memory.max", bytes, true),
                    ("memory.swap.max", 0, false),
                    ("memory.oom.group", 1, false),
                ],
                false => vec![
                    ("memory.limit_in_bytes", bytes, true),
                    ("memory.memsw.limit_in_bytes", bytes, false),
                ],
            };
            match cg.set_up(Controller::Memory, settings) {
                Ok(dir) => cg.memory = Some(dir),
                Err(e) => failed.push((Controller::Memory, e)),
            }
        }
        (cg, failed)
    }

    /// Make (or reuse: v2 has one directory for every controller) the run's directory in the
    /// hierarchy of `controller` and write there the `settings` for its version (v2 or not):
    /// (file, value, required — a file that is missing, like `memory.memsw.*` without swap
    /// accounting, is skipped otherwise). The directory, and whether it is v2.
    fn set_up(
        &mut self,
        controller: Controller,
        settings: impl FnOnce(bool) -> Vec<(&'static str, u64, bool)>,
    ) -> Result<(std::path::PathBuf, bool), CgroupError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNT: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| CgroupError::Own(e.kind().into()))?;
        let (base, v2) = own_cgroup(&own, controller, subtree_has(controller))
            .ok_or(CgroupError::NoController(controller.name()))?;
        let dir = match self.dirs.iter().find(|d| d.parent() == Some(&base)) {
            Some(d) => d.clone(),
            None => {
                {
                    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
                    if !swept.contains(&base) {
                        sweep(&base);
                        swept.push(base.clone());
                    }
                }
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
                self.dirs.push(dir.clone());
                dir
            }
        };
        for (file, value, required) in settings(v2) {
            let path = dir.join(file);
            match std::fs::write(&path, value.to_string()) {
                Ok(()) => {}
                Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(CgroupError::Write { path, source }),
            }
        }
        Ok((dir, v2))
    }

    /// The directory the launcher joins for the pids limit.
    pub fn pids_dir(&self) -> Option<&std::path::Path> {
        self.pids.as_deref()
    }

    /// The directory the launcher joins for the memory limit.
    pub fn memory_dir(&self) -> Option<&std::path::Path> {
        self.memory.as_ref().map(|(d, _)| d.as_path())
    }

    /// How many of the run's processes the kernel killed for going over the memory limit
    /// (`oom_kill` in `memory.events` on v2, `memory.oom_control` on v1); 0 without a memory
    /// cgroup or where the kernel does not count them.
    pub fn oom_kills(&self) -> u64 {
        let Some((dir, v2)) = &self.memory else {
            return 0;
        };
        let file = if *v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        std::fs::read_to_string(dir.join(file)).map_or(0, |t| oom_kill_count(&t))
    }
}

/// The `oom_kill` count of a `memory.events` or `memory.oom_control` file.
fn oom_kill_count(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
        .unwrap_or(0)
}

/// Whether a v2 cgroup directory hands `controller` to its children.
fn subtree_has(controller: Controller) -> impl Fn(&std::path::Path) -> bool {
    move |dir| {
        std::fs::read_to_string(dir.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == controller.name()))
    }
}

/// The name of a run's cgroup: this prefix, skillpipe's pid, a counter.
const CGROUP_PREFIX: &str = "skillpipe-run-";

/// Remove the run cgroups that skillpipe processes no longer alive left in `base`: a process
/// that exits (or is stopped by a signal) with a run in flight never gets to drop its
/// [`RunCgroup`]. Only empty ones go (the kernel refuses the rest), and none of a live
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

impl Drop for RunCgroup {
    fn drop(&mut self) {
        // Empty once the run is over; a straggler still exiting makes rmdir fail with EBUSY.
        for dir in &self.dirs {
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
}

/// Move this process (single-threaded: the launcher; what it forks from then on follows) into
/// the cgroup at `dir`. On cgroup v1 through the `tasks` file with "0": the one case in which
/// the kernel skips the thread-group lock, whose RCU grace period a `cgroup.procs` write (or a
/// move of another process) waits for. On v2 (no
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
    fn each_controller_is_found_in_its_own_hierarchy() {
        // cgroup v1 (and the hybrid layout): one hierarchy per controller.
        let v1 = "9:name=systemd:/\n8:pids:/a\n4:memory:/process_api/x\n0::/\n";
        let never = |_: &std::path::Path| false;
        assert_eq!(
            own_cgroup(v1, Controller::Memory, never),
            Some(("/sys/fs/cgroup/memory/process_api/x".into(), false))
        );
        assert_eq!(
            own_cgroup(v1, Controller::Pids, never),
            Some(("/sys/fs/cgroup/pids/a".into(), false))
        );
        // v2: one cgroup, usable only where the controller is handed to its children.
        let v2 = "0::/user.slice/run\n";
        assert_eq!(own_cgroup(v2, Controller::Memory, never), None);
        assert_eq!(
            own_cgroup(v2, Controller::Memory, |_| true),
            Some(("/sys/fs/cgroup/user.slice/run".into(), true))
        );
    }

    #[test]
    fn oom_kills_are_read_from_either_version() {
        let v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 1\n";
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!((oom_kill_count(v2), oom_kill_count(v1)), (2, 3));
        assert_eq!(oom_kill_count("oom_kill_disable 0\n"), 0);
    }
}
