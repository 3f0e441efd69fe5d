//! Resource limits for one run (policy keys `max_processes`, `max_memory_mb`,
//! `max_file_size_mb`, `max_tmp_mb`, `max_cpu_seconds`). The launcher sets them as hard rlimits
//! on itself just before the command starts, so neither the command nor anything it starts can
//! raise them; `$TMPDIR`'s cap is the size of its private tmpfs.

use serde::Serialize;

/// One run's limits; `None` means unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
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
    pub fn apply(&self) -> Result<(), String> {
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
                return Err(format!(
                    "cannot set {key} = {value}: {}",
                    std::io::Error::last_os_error()
                ));
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

/// Whether RLIMIT_NPROC holds for this process: the kernel exempts uid 0 of the host (even inside
/// a user namespace that maps it), so for root `max_processes` cannot be enforced this way.
pub fn process_limit_problem() -> Option<String> {
    // SAFETY: cannot fail.
    (unsafe { libc::getuid() } == 0).then(|| {
        "the kernel exempts root (uid 0) from RLIMIT_NPROC, so max_processes is not enforced; \
         run skillpipe as a normal user"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
