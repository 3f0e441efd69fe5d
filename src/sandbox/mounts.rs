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

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The devices kept in the private `/dev`.
const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

fn cstr(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{}: NUL in path", p.display()))
}

fn mount(
    src: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), String> {
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
        Err(format!(
            "mounting {} on {}: {}",
            fstype.or(src).unwrap_or("?"),
            target.display(),
            std::io::Error::last_os_error()
        ))
    }
}

fn bind(src: &Path, target: &Path, read_only: bool) -> Result<(), String> {
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
    /// Unix sockets the command may reach; when there are any, the usual places of the others
    /// are covered (see [`expose_only`]).
    pub sockets: &'a [PathBuf],
}

/// Set up the private mounts (the process must be in a fresh mount namespace it has
/// CAP_SYS_ADMIN over). Returns warnings for paths that could not be hidden because they
/// vanished in between.
pub fn setup(s: &Setup) -> Result<Vec<String>, String> {
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
            Err(e) => return Err(format!("hiding {}: {e}", path.display())),
        }
    }
    if !s.sockets.is_empty() {
        expose_only(s.sockets, &mut warnings)?;
    }
    Ok(warnings)
}

/// Most directory entries looked at for sockets, so a huge /tmp cannot stall the start.
const SCAN_BUDGET: usize = 20_000;

/// Socket files (and the usual socket directories) in `dir`, `depth` levels down, without
/// following symlinks.
fn scan_sockets(dir: &Path, depth: u32, budget: &mut usize, out: &mut Vec<PathBuf>) {
    use std::os::unix::fs::FileTypeExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(t) = e.file_type() else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        if t.is_socket() || (t.is_dir() && is_socket_dir_name(&name)) {
            out.push(e.path());
        } else if t.is_dir() && depth > 1 {
            scan_sockets(&e.path(), depth - 1, budget, out);
        }
    }
}

/// Directories under /tmp where programs keep their sockets (X11, ssh-agent, tmux, D-Bus…).
fn is_socket_dir_name(name: &str) -> bool {
    [".X11-unix", ".ICE-unix", ".font-unix", ".XIM-unix"].contains(&name)
        || [
            "ssh-", "tmux-", "dbus-", "pulse-", "screen", "vscode-", "mpv",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// With named sockets allowed the command may create Unix sockets, so every other socket must
/// be out of its reach: `/run` (and a separate `/var/run`), which hold the D-Bus buses, the
/// Docker and containerd sockets and `$XDG_RUNTIME_DIR`, become empty tmpfs; in `/tmp` and
/// `$HOME`, two levels deep, socket files and the usual socket directories are covered;
/// `$SSH_AUTH_SOCK` too. A socket deeper elsewhere stays reachable: this is a list of places,
/// not a rule on `connect(2)` (which Landlock cannot express up to ABI 7). Then the named
/// sockets (and `/run/systemd/resolve`, for name lookups) are bound back at their own paths.
fn expose_only(named: &[PathBuf], warnings: &mut Vec<String>) -> Result<(), String> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // Keep hold of what is bound back before covering it.
    let open_path = |p: &Path| -> Option<OwnedFd> {
        let c = cstr(p).ok()?;
        // SAFETY: O_PATH open of a valid C string; the descriptor is then owned.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let mut keep: Vec<(PathBuf, OwnedFd)> = Vec::new();
    for p in named {
        match open_path(p) {
            Some(fd) => keep.push((p.clone(), fd)),
            None => warnings.push(format!("allowed socket {} does not exist", p.display())),
        }
    }
    let resolve = Path::new("/run/systemd/resolve");
    if let Some(fd) = open_path(resolve) {
        keep.push((resolve.to_path_buf(), fd));
    }
    let mut covered: Vec<PathBuf> = Vec::new();
    let run_dirs = ["/run", "/var/run"].map(Path::new);
    for dir in run_dirs {
        let real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
        if real_dir {
            mount(
                Some("tmpfs"),
                dir,
                Some("tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                Some("mode=0755,size=1m"),
            )?;
            covered.push(dir.to_path_buf());
        }
    }
    let mut others: Vec<PathBuf> = std::env::var_os("SSH_AUTH_SOCK")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    let mut budget = SCAN_BUDGET;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for top in [Some(PathBuf::from("/tmp")), home].into_iter().flatten() {
        scan_sockets(&top, 2, &mut budget, &mut others);
    }
    for p in others {
        if named.iter().any(|n| n == &p) || !p.exists() {
            continue;
        }
        hide(&p).map_err(|e| format!("covering the socket place {}: {e}", p.display()))?;
    }
    for (path, fd) in &keep {
        if !covered.iter().any(|c| path.starts_with(c)) {
            continue; // still in place
        }
        let is_dir = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .is_ok_and(|m| m.is_dir());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("re-creating {}: {e}", parent.display()))?;
        }
        if is_dir {
            std::fs::create_dir_all(path)
        } else {
            std::fs::File::create(path).map(drop)
        }
        .map_err(|e| format!("re-creating {}: {e}", path.display()))?;
        bind(
            Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())),
            path,
            false,
        )?;
    }
    for dir in covered {
        mount(
            None,
            &dir,
            None,
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            Some("mode=0755,size=1m"),
        )?;
    }
    Ok(())
}

/// Build the new `/dev` on a tmpfs at `staging`, then move it over `/dev`.
fn private_dev(staging: &Path, shm_mb: u64) -> Result<(), String> {
    mount(
        Some("tmpfs"),
        staging,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("mode=0755,size=64k,nr_inodes=64"),
    )?;
    let io = |what: &str, p: &Path, e: std::io::Error| format!("{what} {}: {e}", p.display());
    for dev in DEVICES {
        let node = staging.join(dev);
        std::fs::File::create(&node).map_err(|e| io("creating", &node, e))?;
        bind(&Path::new("/dev").join(dev), &node, false)?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let l = staging.join(link);
        std::os::unix::fs::symlink(target, &l).map_err(|e| io("creating", &l, e))?;
    }
    let shm = staging.join("shm");
    std::fs::create_dir(&shm).map_err(|e| io("creating", &shm, e))?;
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
fn hide(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
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
pub fn mount_proc() -> Result<(), String> {
    mount(
        Some("proc"),
        Path::new("/proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )
}
