//! The run's private mount namespace, set up by the launcher inside its user namespace (so
//! nothing here is visible to, or propagates back to, the host):
//! - `/dev`: a small tmpfs holding only null, zero, full, random and urandom (bound from the
//!   host), the `fd`/`stdin`/`stdout`/`stderr` links and a private `/dev/shm`; no ptys, no
//!   `/dev/tty`, no disks;
//! - `$TMPDIR`: a fresh tmpfs, mode 0700, capped at `max_tmp_mb` (it vanishes with the run, so
//!   no `chmod` game can leave anything behind);
//! - every hidden path (see `secrets`): an empty read-only tmpfs over a directory, a read-only
//!   `/dev/null` over a file;
//! - `/proc`: a fresh proc for the run's PID namespace, mounted by its init ([`mount_proc`]).

use super::message::{Message, Setting};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The devices kept in the private `/dev`.
const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

/// Why a private mount could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// A path with a NUL byte cannot be passed to the kernel.
    #[error("{}: the path has a NUL byte; rename it, or leave it out of the policy", .0.display())]
    NulInPath(PathBuf),
    /// The kernel refused a mount.
    #[error("{}", self.message())]
    Mount {
        /// The file system type or source.
        what: String,
        target: PathBuf,
        source: std::io::Error,
    },
    /// A file or directory of the private `/dev` (or a bind target) could not be made.
    #[error("creating {}: {source}", .path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A path to hide could not be looked at or covered.
    #[error("{}", self.message())]
    Hide {
        path: PathBuf,
        source: Box<MountError>,
    },
    /// A path to hide could not be looked at.
    #[error("{}: {source}", .path.display())]
    Stat {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl MountError {
    /// The error, with the setting that lets the run go on kept typed.
    pub fn message(&self) -> Message {
        match self {
            MountError::Mount {
                what,
                target,
                source,
            } => Message::text(format!(
                "mounting {what} on {}: {source} (`skillpipe doctor` shows whether private \
                 mounts work here; ",
                target.display()
            ))
            .and_setting(Setting::BestEffort)
            .and(" runs without them, with a warning)"),
            MountError::Hide { path, source } => {
                Message::text(format!("hiding {}: ", path.display()))
                    .and_message(source.message())
                    .and("; lift it with ")
                    .and_setting(Setting::AllowRead(path.display().to_string()))
                    .and(" if it need not be hidden")
            }
            other => Message::text(other.to_string()),
        }
    }
}

fn cstr(p: &Path) -> Result<CString, MountError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| MountError::NulInPath(p.to_path_buf()))
}

fn mount(
    src: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), MountError> {
    let c = |s: Option<&str>| s.map(|s| CString::new(s).expect("no NUL in constants"));
    let (src_c, fs_c, data_c) = (c(src), c(fstype), c(data));
    let target_c = cstr(target)?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is a valid C string or null, alive for the call.
    let r = unsafe {
        libc::mount(
            ptr(&src_c),
            target_c.as_ptr(),
            ptr(&fs_c),
            flags,
            ptr(&data_c).cast(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(MountError::Mount {
            what: fstype.or(src).unwrap_or("?").to_string(),
            target: target.to_path_buf(),
            source: std::io::Error::last_os_error(),
        })
    }
}

fn bind(src: &Path, target: &Path, read_only: bool) -> Result<(), MountError> {
    let src_s = src.to_string_lossy();
    mount(
        Some(&src_s),
        target,
        None,
        libc::MS_BIND | libc::MS_REC,
        None,
    )?;
    if read_only {
        // Not nodev: the source may be /dev/null, which must stay readable (and empty).
        mount(
            None,
            target,
            None,
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID,
            None,
        )?;
    }
    Ok(())
}

/// What to set up.
pub struct Setup<'a> {
    /// The per-run `$TMPDIR` (an existing, empty directory); also the staging place of `/dev`.
    pub tmpdir: &'a Path,
    pub tmp_mb: u64,
    /// Paths to hide, existing ones only.
    pub hide: &'a [PathBuf],
}

/// Set up the private mounts (the process must be in a fresh mount namespace it has
/// CAP_SYS_ADMIN over). Returns warnings for paths that could not be hidden because they
/// vanished in between.
pub fn setup(s: &Setup) -> Result<Vec<String>, MountError> {
    // Nothing done below may propagate to the host's mount namespace.
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;
    private_dev(s.tmpdir, s.tmp_mb)?;
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    mount(
        Some("tmpfs"),
        s.tmpdir,
        Some("tmpfs"),
        nosuid_nodev,
        Some(&format!("mode=0700,size={}m", s.tmp_mb.max(1))),
    )?;
    let mut warnings = Vec::new();
    for path in s.hide {
        match hide(path) {
            Ok(()) => {}
            Err(e) if !path.exists() => warnings.push(format!("{e} (it vanished)")),
            Err(e) => {
                return Err(MountError::Hide {
                    path: path.clone(),
                    source: Box::new(e),
                });
            }
        }
    }
    Ok(warnings)
}

/// Build the new `/dev` on a tmpfs at `staging`, then move it over `/dev`.
fn private_dev(staging: &Path, shm_mb: u64) -> Result<(), MountError> {
    mount(
        Some("tmpfs"),
        staging,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("mode=0755,size=64k,nr_inodes=64"),
    )?;
    let io = |p: &Path, source: std::io::Error| MountError::Create {
        path: p.to_path_buf(),
        source,
    };
    for dev in DEVICES {
        let node = staging.join(dev);
        std::fs::File::create(&node).map_err(|e| io(&node, e))?;
        bind(&Path::new("/dev").join(dev), &node, false)?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let l = staging.join(link);
        std::os::unix::fs::symlink(target, &l).map_err(|e| io(&l, e))?;
    }
    let shm = staging.join("shm");
    std::fs::create_dir(&shm).map_err(|e| io(&shm, e))?;
    let staging_s = staging.to_string_lossy();
    mount(
        Some(&staging_s),
        Path::new("/dev"),
        None,
        libc::MS_MOVE,
        None,
    )?;
    mount(
        Some("tmpfs"),
        Path::new("/dev/shm"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&format!("mode=1777,size={}m", shm_mb.max(1))),
    )?;
    // The tmpfs itself read-only: nothing new appears in /dev.
    mount(
        None,
        Path::new("/dev"),
        None,
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
        None,
    )
}

/// Cover one path: an empty read-only tmpfs for a directory, read-only `/dev/null` otherwise.
fn hide(path: &Path) -> Result<(), MountError> {
    let meta = std::fs::metadata(path).map_err(|source| MountError::Stat {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() {
        mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            Some("mode=0500,size=4k,nr_inodes=1"),
        )
    } else {
        bind(Path::new("/dev/null"), path, true)
    }
}

/// Mount a fresh `/proc` for the PID namespace this process is init of: the run sees only its
/// own processes, not the host's (nor their command lines).
pub fn mount_proc() -> Result<(), MountError> {
    mount(
        Some("proc"),
        Path::new("/proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )
}
