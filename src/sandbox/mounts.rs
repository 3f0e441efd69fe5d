//! The run's private mount namespace, set up by the launcher inside its user namespace (so
//! nothing here is visible to, or propagates back to, the host):
//! - `/dev`: a small tmpfs holding only null, zero, full, random and urandom (bound from the
//!   host), the `fd`/`stdin`/`stdout`/`stderr` links and a private `/dev/shm`; no ptys, no
//!   `/dev/tty`, no disks;
//! - `$TMPDIR` and `/dev/shm`: two folders of one fresh tmpfs capped at `max_tmp_mb` (so the run
//!   gets that much RAM-backed space in all, not twice), `$TMPDIR` mode 0700; it vanishes with
//!   the run, so no `chmod` game can leave anything behind;
//! - every hidden path (see `secrets`) covered so that a write there fails, never vanishes, and
//!   nothing moves it away ([`hide`], [`read_only_except`]);
//! - `/proc`: a fresh proc for the run's PID namespace, mounted by its init ([`mount_proc`]);
//! - with writes restricted: every mount read-only but the writable ones ([`read_only_except`]):
//!   Landlock does not cover `chmod`, `chown`, `utimes` or `setxattr`; a read-only mount refuses
//!   them all (EROFS).
//! - under every policy, last: skillpipe's own policy files ([`super::SandboxSpec::protect`])
//!   bound onto themselves read-only ([`protect`]), whatever is writable.

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
    /// One of skillpipe's own policy files could not be kept read-only.
    #[error("{}", self.message())]
    Protect {
        path: PathBuf,
        source: Box<MountError>,
    },
    /// A mount could not be made read-only.
    #[error("{}", self.message())]
    ReadOnly {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The working directory could not be entered again through the new mounts.
    #[error("entering the working directory {} again: {source}", .path.display())]
    Reenter {
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
            MountError::Protect { path, source } => Message::text(format!(
                "keeping {} read-only (skillpipe reads its policy from there, so a script that \
                 wrote there would raise later runs' policy): ",
                path.display()
            ))
            .and_message(source.message()),
            MountError::ReadOnly { path, source } => Message::text(format!(
                "making the mount {} read-only: {source} (without it a script could chmod, \
                 chown or touch files outside the writable paths; ",
                path.display()
            ))
            .and_setting(Setting::BestEffort)
            .and(" runs without it, with a warning)"),
            other => Message::text(other.to_string()),
        }
    }
}

/// A file or folder at `p` could not be made.
fn io(p: &Path, source: std::io::Error) -> MountError {
    MountError::Create {
        path: p.to_path_buf(),
        source,
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
    match r {
        0 => Ok(()),
        _ => Err(refused(fstype.or(src).unwrap_or("?"), target)),
    }
}

/// The kernel refused `what` on `target` (the reason is the last error).
fn refused(what: &str, target: &Path) -> MountError {
    MountError::Mount {
        what: what.into(),
        target: target.to_path_buf(),
        source: std::io::Error::last_os_error(),
    }
}

/// A fresh tmpfs on `target` with `options` (mode, size, inodes).
fn tmpfs(target: &Path, flags: libc::c_ulong, options: &str) -> Result<(), MountError> {
    mount(Some("tmpfs"), target, Some("tmpfs"), flags, Some(options))
}

/// Remount the bind mount at `target` read-only, with `flags` too.
fn bound_read_only(target: &Path, flags: libc::c_ulong) -> Result<(), MountError> {
    let ro = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
    mount(None, target, None, ro | flags, None)
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
        bound_read_only(target, libc::MS_NOSUID)?;
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
    /// Paths kept read-only whatever is writable (skillpipe's own policy files).
    pub protect: &'a [PathBuf],
    /// With writes restricted: the paths that stay writable (besides `$TMPDIR` and
    /// `/dev/shm`); every other mount is made read-only. `None`: mounts keep their flags.
    pub writable: Option<&'a [PathBuf]>,
    /// The read view: the run's root is built from these grants (see [`enter_view`]).
    /// `None`: the host's tree, as it is.
    pub view: Option<View<'a>>,
}

/// What the run's root holds besides `/dev`, `/proc` and `$TMPDIR`.
pub struct View<'a> {
    /// Paths shown (read-only when writes are restricted).
    pub read: &'a [PathBuf],
    /// Paths shown that stay writable.
    pub writable: &'a [PathBuf],
}

/// Set up the private mounts (the process must be in a fresh mount namespace it has
/// CAP_SYS_ADMIN over). Returns warnings for paths that could not be hidden because they
/// vanished in between.
pub fn setup(s: &Setup) -> Result<Vec<String>, MountError> {
    // Taken before the root may change (`enter_view` leaves the process in `/`).
    let cwd = std::env::current_dir().map_err(|source| MountError::Reenter {
        path: PathBuf::from("."),
        source,
    })?;
    // Nothing done below may propagate to the host's mount namespace.
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;
    match &s.view {
        Some(view) => {
            // The new root is built on `$TMPDIR`'s host folder, which the run then never sees.
            build_root(view, s.tmpdir)?;
            let inside = s
                .tmpdir
                .join(s.tmpdir.strip_prefix("/").unwrap_or(s.tmpdir));
            private_dev(&inside, &s.tmpdir.join("dev"), s.tmp_mb)?;
            pivot_into(s.tmpdir)?;
            // Nothing new at the top of the tree.
            bound_read_only(Path::new("/"), libc::MS_NOSUID | libc::MS_NODEV)?;
        }
        None => private_dev(s.tmpdir, Path::new("/dev"), s.tmp_mb)?,
    }
    let mut warnings = Vec::new();
    let cover = Cover::new(s.tmpdir)?;
    for path in s.hide {
        match hide(path, &cover) {
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
    // Dropped from `$TMPDIR`: the covers bound from it keep it alive.
    detach(&cover.dir)?;
    if let Some(writable) = s.writable {
        read_only_except(writable, s.tmpdir, s.hide)?;
    }
    protect(s.protect)?;
    reenter_cwd(&cwd)?;
    Ok(warnings)
}

/// Make the run's root at `root` (the empty `$TMPDIR` folder) from the grants of `view`: an
/// empty tmpfs holding each granted path bound at its own (canonical) place, the links on the
/// way to it, mount points for `/dev`, `/proc` (the host's bound when there is no PID
/// namespace, for init mounts the run's own over it) and `$TMPDIR`. What was not granted is
/// absent, not covered: no path leads to it. A grant inside an earlier one is bound again only
/// when it is writable (nothing is ever created inside a bound host folder); a grant that does
/// not exist is left out.
fn build_root(view: &View, root: &Path) -> Result<(), MountError> {
    tmpfs(
        root,
        libc::MS_NOSUID | libc::MS_NODEV,
        "mode=0755,size=1m,nr_inodes=4096",
    )?;
    let inside = |p: &Path| root.join(p.strip_prefix("/").unwrap_or(p));
    let mut grants: Vec<(PathBuf, bool)> = view
        .read
        .iter()
        .map(|p| (p.clone(), false))
        .chain(view.writable.iter().map(|p| (p.clone(), true)))
        .collect();
    grants.sort_by_key(|(p, w)| (p.components().count(), !*w));
    let mut bound: Vec<PathBuf> = Vec::new();
    for (given, writable) in grants {
        // The links on the way (`/bin` → `usr/bin`, a linked home) are made as links.
        for link in given.ancestors().collect::<Vec<_>>().into_iter().rev() {
            let Ok(meta) = link.symlink_metadata() else {
                break;
            };
            let at = inside(link);
            if meta.file_type().is_symlink()
                && at.symlink_metadata().is_err()
                && !bound.iter().any(|b| link.starts_with(b))
                && let Ok(text) = std::fs::read_link(link)
                && let Some(parent) = at.parent()
            {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
                std::os::unix::fs::symlink(&text, &at).map_err(|e| io(&at, e))?;
            }
        }
        let Ok(real) = std::fs::canonicalize(&given) else {
            continue;
        };
        let within = bound.iter().any(|b| real.starts_with(b));
        if within && !writable {
            continue;
        }
        let at = inside(&real);
        if !within {
            let meta = std::fs::metadata(&real).map_err(|e| io(&real, e))?;
            let parent = at.parent().unwrap_or(root);
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            if meta.is_dir() {
                std::fs::create_dir_all(&at).map_err(|e| io(&at, e))?;
            } else if at.symlink_metadata().is_err() {
                std::fs::File::create(&at).map_err(|e| io(&at, e))?;
            }
        }
        bind(&real, &at, false)?;
        bound.push(real);
    }
    let proc = inside(Path::new("/proc"));
    for dir in [inside(Path::new("/dev")), inside(root), proc.clone()] {
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    // Bound with or without a PID namespace: the mounts below read `/proc/self/mountinfo`
    // before init mounts the run's own `/proc` over it.
    bind(Path::new("/proc"), &proc, false)
}

/// `pivot_root` into `root` with the old root stacked on it, then detach the old root.
fn pivot_into(root: &Path) -> Result<(), MountError> {
    let fail = |what: &str| refused(what, root);
    let (c, dot) = (cstr(root)?, c".");
    // SAFETY: valid C strings; the process is alone in a mount namespace it owns.
    unsafe {
        if libc::chdir(c.as_ptr()) != 0 {
            return Err(fail("chdir"));
        }
        if libc::syscall(libc::SYS_pivot_root, dot.as_ptr(), dot.as_ptr()) != 0 {
            return Err(fail("pivot_root"));
        }
        if libc::umount2(dot.as_ptr(), libc::MNT_DETACH) != 0 {
            return Err(fail("umount of the old root"));
        }
        if libc::chdir(c"/".as_ptr()) != 0 {
            return Err(fail("chdir /"));
        }
    }
    Ok(())
}

/// The working directory was entered before the mounts were made, so it is still the directory
/// underneath them: a writable path's own mount would not apply to relative paths, nor a hidden
/// folder's cover. Entered again by its path, it is the directory as the run sees it; when that
/// fails (the cover of a hidden folder has no such subfolder), the mounts count as not set up
/// (the run stops, unless `sandbox = "best-effort"` lets it go on with a warning).
fn reenter_cwd(cwd: &Path) -> Result<(), MountError> {
    std::env::set_current_dir(cwd).map_err(|source| MountError::Reenter {
        path: cwd.to_path_buf(),
        source,
    })
}

/// Make every mount of this namespace read-only except `$TMPDIR`, `/dev/shm` and `writable`
/// (each bound onto itself first, so that it is a mount of its own that the pass leaves
/// alone), and the [`super::KEPT_READ_ONLY`] at the top of each writable path and of the
/// folders directly in it read-only again (see [`super::vcs_metadata`]).
/// A hidden path in a writable path is a mount point, which cannot be moved or removed; the
/// folders between the two are bound onto themselves (still writable) so that they cannot be
/// either: else renaming one would carry the hidden file away and let a stand-in take its path
/// — the audit log's, say, which skillpipe appends to after the run.
/// A mount keeps the flags it has (nosuid, nodev, noexec, atime): those inherited from the
/// host are locked, and the kernel refuses a remount that drops one.
fn read_only_except(
    writable: &[PathBuf],
    tmpdir: &Path,
    hidden: &[PathBuf],
) -> Result<(), MountError> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut keep = vec![real(tmpdir), PathBuf::from("/dev/shm")];
    let mut roots = Vec::new();
    for w in writable {
        // One that cannot be opened stays read-only (Landlock's rules warn about it).
        let Ok(w) = std::fs::canonicalize(w) else {
            continue;
        };
        // Inside another writable path it needs no mount of its own, but its version control
        // metadata is looked for all the same (whatever order the paths were given in).
        if !keep.iter().any(|k| w.starts_with(k)) {
            bind(&w, &w, false)?;
            keep.push(w.clone());
        }
        roots.push(w);
    }
    let mut pinned: Vec<PathBuf> = Vec::new();
    for h in hidden.iter().filter_map(|h| std::fs::canonicalize(h).ok()) {
        // The outermost writable path holding it: a writable path inside another can be moved.
        let Some(root) = roots
            .iter()
            .filter(|r| h.starts_with(r))
            .min_by_key(|r| r.components().count())
        else {
            continue;
        };
        for folder in h.ancestors().skip(1).take_while(|a| a != root) {
            if !pinned.iter().any(|p| p == folder) {
                bind(folder, folder, false)?;
                pinned.push(folder.to_path_buf());
            }
        }
    }
    let mut again: Vec<PathBuf> = Vec::new();
    for p in super::vcs_metadata(&roots) {
        let Ok(p) = std::fs::canonicalize(&p) else {
            continue;
        };
        if !again.contains(&p) {
            bind(&p, &p, false)?;
            again.push(p);
        }
    }
    let info = read_mountinfo()?;
    let entries = parse_mountinfo(&info);
    let mut paths: Vec<&Path> = entries.iter().map(|e| e.path.as_path()).collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        let stays_writable =
            keep.iter().any(|k| path.starts_with(k)) && !again.iter().any(|a| path.starts_with(a));
        if stays_writable {
            continue;
        }
        // The mount a script reaches at this path: a path whose mount is covered, or that
        // resolves elsewhere, is not reachable (and so not made read-only here).
        if let Some(kept) = kept_flags(path, &entries) {
            remount_read_only(path, kept)?;
        }
    }
    Ok(())
}

/// Bind each of `paths` that exists onto itself read-only, last, so that no writable path
/// (`--allow-filesystem`, a forced `--writable`) reopens it: skillpipe's own policy files.
fn protect(paths: &[PathBuf]) -> Result<(), MountError> {
    let mut done: Vec<PathBuf> = Vec::new();
    for p in paths {
        // One that does not exist has nothing to keep (its folder is one of the paths too).
        let Ok(real) = std::fs::canonicalize(p) else {
            continue;
        };
        if done.iter().any(|d| real.starts_with(d)) {
            continue;
        }
        let fail = |source: MountError| MountError::Protect {
            path: real.clone(),
            source: Box::new(source),
        };
        bind(&real, &real, false).map_err(fail)?;
        let info = read_mountinfo().map_err(fail)?;
        let kept = kept_flags(&real, &parse_mountinfo(&info)).unwrap_or(libc::MS_NOSUID);
        remount_read_only(&real, kept).map_err(fail)?;
        done.push(real);
    }
    Ok(())
}

/// This process's `/proc/self/mountinfo`, as bytes: a mount point's name need not be UTF-8
/// (a project's `.env\xff`, hidden by a mount, must not stop the run).
fn read_mountinfo() -> Result<Vec<u8>, MountError> {
    std::fs::read("/proc/self/mountinfo").map_err(|source| MountError::ReadOnly {
        path: "/proc/self/mountinfo".into(),
        source,
    })
}

/// The flags a remount of the mount `path` reaches must keep, from its line of `entries`
/// (`None`: `path` reaches no mount listed there).
fn kept_flags(path: &Path, entries: &[MountEntry]) -> Option<libc::c_ulong> {
    let id = mount_id(path)?;
    let entry = entries.iter().find(|e| e.id == id && e.path == path)?;
    Some(entry.kept_flags)
}

/// Remount the mount at `path` read-only, keeping the flags `kept`.
fn remount_read_only(path: &Path, kept: libc::c_ulong) -> Result<(), MountError> {
    bound_read_only(path, kept).map_err(|e| match e {
        MountError::Mount { source, .. } => MountError::ReadOnly {
            path: path.to_path_buf(),
            source,
        },
        other => other,
    })
}

/// The id of the mount `path` resolves to (`None`: it cannot be reached).
fn mount_id(path: &Path) -> Option<u64> {
    let c = cstr(path).ok()?;
    // SAFETY: a zeroed statx buffer the kernel fills in; `c` is a valid C string.
    unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        let r = libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_STATX_DONT_SYNC | libc::AT_NO_AUTOMOUNT,
            libc::STATX_MNT_ID,
            &mut stx,
        );
        (r == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
    }
}

/// One mount of `/proc/self/mountinfo`.
#[derive(Debug, PartialEq, Eq)]
struct MountEntry {
    id: u64,
    path: PathBuf,
    /// Its per-mount flags a remount must keep: nosuid, nodev, noexec, nosymfollow and the
    /// atime mode (strictatime when none is shown).
    kept_flags: libc::c_ulong,
}

/// The mounts listed in `mountinfo` (lines it cannot read are skipped).
fn parse_mountinfo(text: &[u8]) -> Vec<MountEntry> {
    text.split(|&b| b == b'\n')
        .filter_map(|line| {
            let mut fields = line.split(|&b| b == b' ');
            let id = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
            let path = unescape(fields.nth(3)?);
            let options = fields.next()?;
            let mut flags = 0;
            let mut atime = libc::MS_STRICTATIME;
            for o in options.split(|&b| b == b',') {
                match o {
                    b"nosuid" => flags |= libc::MS_NOSUID,
                    b"nodev" => flags |= libc::MS_NODEV,
                    b"noexec" => flags |= libc::MS_NOEXEC,
                    b"nosymfollow" => flags |= libc::MS_NOSYMFOLLOW,
                    b"nodiratime" => flags |= libc::MS_NODIRATIME,
                    b"noatime" => atime = libc::MS_NOATIME,
                    b"relatime" => atime = libc::MS_RELATIME,
                    _ => {}
                }
            }
            Some(MountEntry {
                id,
                path,
                kept_flags: flags | atime,
            })
        })
        .collect()
}

/// A mountinfo path: space, tab, newline and backslash are written as `\ooo`.
fn unescape(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Build the new `/dev` on a tmpfs at `staging` (the empty `$TMPDIR`), with the run's space —
/// one tmpfs of `tmp_mb` holding `tmp` and `shm` — mounted on its `run` folder; move it over
/// `dev` (`/dev`, or the new root's); bind `tmp` onto `staging` and `shm` onto `dev/shm`; then
/// drop `dev/run`. The devices are bound from the host's `/dev`.
fn private_dev(staging: &Path, dev: &Path, tmp_mb: u64) -> Result<(), MountError> {
    tmpfs(
        staging,
        libc::MS_NOSUID | libc::MS_NOEXEC,
        "mode=0755,size=64k,nr_inodes=64",
    )?;
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
    let mkdir = |p: &Path, mode: u32| {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .mode(mode)
            .create(p)
            .and_then(|()| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)))
            .map_err(|e| io(p, e))
    };
    let (shm, run) = (staging.join("shm"), staging.join("run"));
    mkdir(&shm, 0o755)?;
    mkdir(&run, 0o700)?;
    tmpfs(
        &run,
        libc::MS_NOSUID | libc::MS_NODEV,
        &format!("mode=0700,size={}m", tmp_mb.max(1)),
    )?;
    mkdir(&run.join("tmp"), 0o700)?;
    mkdir(&run.join("shm"), 0o1777)?;
    bind(&run.join("shm"), &shm, false)?;
    let staging_s = staging.to_string_lossy();
    mount(Some(&staging_s), dev, None, libc::MS_MOVE, None)?;
    let run = &dev.join("run");
    bind(&run.join("tmp"), staging, false)?;
    // The binds hold the tmpfs; its own mount point goes.
    detach(run)?;
    // The tmpfs itself read-only: nothing new appears in /dev.
    bound_read_only(dev, libc::MS_NOSUID | libc::MS_NOEXEC)
}

/// Detach the mount this process made at `dir` (binds from it keep it alive), and remove `dir`.
fn detach(dir: &Path) -> Result<(), MountError> {
    let c = cstr(dir)?;
    // SAFETY: a valid C string; detaching a mount this process made.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(refused("umount", dir));
    }
    std::fs::remove_dir(dir).map_err(|e| io(dir, e))
}

/// The stand-in for a hidden file: an empty regular file on a tiny read-only tmpfs of its own.
/// Not `/dev/null`: a device stays writable on a read-only mount, so a write to a hidden file in
/// a writable path would "succeed" and its data vanish; on this one, opening it for writing
/// fails (EROFS, or Landlock's EACCES). The tmpfs is mounted in `$TMPDIR` and detached once
/// the covers are bound (they hold it), so the run never sees it there.
struct Cover {
    dir: PathBuf,
    file: PathBuf,
}

impl Cover {
    fn new(tmpdir: &Path) -> Result<Cover, MountError> {
        let dir = tmpdir.join(".skillpipe-cover");
        std::fs::create_dir(&dir).map_err(|e| io(&dir, e))?;
        tmpfs(
            &dir,
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            "mode=0555,size=4k,nr_inodes=2",
        )?;
        let file = dir.join("empty");
        {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o444)
                .open(&file)
                .map_err(|e| io(&file, e))?;
        }
        mount(
            None,
            &dir,
            None,
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            None,
        )?;
        Ok(Cover { dir, file })
    }
}

/// Cover one path: an empty read-only tmpfs for a directory, the read-only empty file of
/// `cover` otherwise. Either way a write there fails (never vanishes), and the path stays a
/// mount point, which cannot be removed or renamed (EBUSY).
fn hide(path: &Path, cover: &Cover) -> Result<(), MountError> {
    let meta = std::fs::metadata(path).map_err(|source| MountError::Stat {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() {
        tmpfs(
            path,
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            "mode=0500,size=4k,nr_inodes=1",
        )
    } else {
        bind(&cover.file, path, true)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_give_the_path_and_the_flags_to_keep() {
        let text = b"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
                    28 27 0:25 / /mnt/my\\040dir ro,nosuid,nodev,noatime master:1 - tmpfs x ro\n\
                    29 27 0:26 / /media/a\\134b rw,noexec,nodiratime - tmpfs x rw\n\
                    30 27 0:27 / /p/.env\xff ro - tmpfs x ro\n\
                    garbage\n";
        let e = parse_mountinfo(text);
        assert_eq!(e.len(), 4);
        // A name that is not UTF-8 is a path like any other.
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(e[3].path.as_os_str().as_bytes(), b"/p/.env\xff");
        assert_eq!((e[0].id, e[0].path.as_path()), (27, Path::new("/")));
        assert_eq!(e[0].kept_flags, libc::MS_RELATIME);
        assert_eq!(e[1].path, Path::new("/mnt/my dir"));
        assert_eq!(
            e[1].kept_flags,
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOATIME
        );
        assert_eq!(e[2].path, Path::new("/media/a\\b"));
        assert_eq!(
            e[2].kept_flags,
            libc::MS_NOEXEC | libc::MS_NODIRATIME | libc::MS_STRICTATIME
        );
    }
}
