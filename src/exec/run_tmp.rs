//! The per-run `$TMPDIR`: made private, removed when the run is over, and swept when the process
//! that made it died without removing it.
//!
//! A skillpipe killed with SIGKILL (or an embedding program that exits mid-run) never runs its
//! clean-up, so each run directory is locked (`flock`) by the process that owns it for as long
//! as it exists; the kernel drops the lock when that process dies, however it dies. The first
//! run of every later process removes the run directories it can lock. A lock, unlike a pid in
//! the name, also holds across PID namespaces that share `/tmp`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Run directories are named with this prefix in the temporary folder.
const PREFIX: &str = "skillpipe-run-";

/// A directory younger than this is left alone by the sweep: its owner may have made it and not
/// yet locked it.
const GRACE: Duration = Duration::from_secs(60);

/// The per-run TMPDIR, removed with everything in it when dropped (the run finished, or was
/// abandoned or interrupted) — even what the command made unreadable or unwritable (`chmod 500`
/// on a subfolder): permissions are restored on the way down. (With a private mount namespace
/// the files lived on the run's own tmpfs and the directory is empty.)
pub(super) struct RunTmp {
    path: PathBuf,
    /// Held open and locked for the directory's life: the sign that its owner is alive.
    _lock: File,
}

impl RunTmp {
    /// Makes a fresh run directory (mode 0700: only the command's user may look inside the
    /// shared /tmp) and locks it. Once per process, first removes those that dead processes left.
    pub(super) fn create() -> std::io::Result<RunTmp> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        SWEPT.call_once(|| sweep(&base));
        let path = tempfile::Builder::new()
            .prefix(PREFIX)
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(&base)?
            .keep();
        let lock = File::open(&path).and_then(|f| f.try_lock().map(|()| f).map_err(Into::into));
        match lock {
            Ok(lock) => Ok(RunTmp { path, _lock: lock }),
            Err(e) => {
                remove(&path);
                Err(e)
            }
        }
    }

    /// The directory.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunTmp {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Removes `dir` and everything in it, opening up what a command closed (`chmod 500`) first.
fn remove(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() {
        return;
    }
    fn open_up(dir: &Path) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                // Not following symlinks: only real directories of the tree.
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    open_up(&e.path());
                }
            }
        }
    }
    open_up(dir);
    let _ = std::fs::remove_dir_all(dir);
}

/// Removes the run directories in `base` that no live process holds: ours (same owner), real
/// directories (not symlinks), older than [`GRACE`], and unlocked.
fn sweep(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let uid = super::sys::euid();
    for e in entries.flatten() {
        if !e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(PREFIX))
        {
            continue;
        }
        // DirEntry metadata does not follow symlinks.
        let Ok(meta) = e.metadata() else { continue };
        let young = meta.modified().ok().and_then(|m| m.elapsed().ok()) < Some(GRACE);
        if !meta.is_dir() || meta.uid() != uid || young {
            continue;
        }
        let path = e.path();
        // Locked while we remove it, so two sweeping processes do not race each other.
        if let Ok(f) = File::open(&path)
            && f.try_lock().is_ok()
        {
            remove(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aged(dir: &Path) {
        let old = std::time::SystemTime::now() - GRACE - Duration::from_secs(5);
        File::open(dir).unwrap().set_modified(old).unwrap();
    }

    #[test]
    fn sweep_removes_only_unlocked_old_run_directories() {
        let base = tempfile::tempdir().unwrap();
        let mk = |name: &str| {
            let d = base.path().join(name);
            std::fs::create_dir_all(d.join("sub")).unwrap();
            std::fs::write(d.join("sub/f"), "x").unwrap();
            d
        };
        let abandoned = mk("skillpipe-run-dead");
        // A command's `chmod 500` on a subfolder does not keep it.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            abandoned.join("sub"),
            std::fs::Permissions::from_mode(0o500),
        )
        .unwrap();
        let live = mk("skillpipe-run-live");
        let young = mk("skillpipe-run-young");
        let other = mk("not-a-run");
        for d in [&abandoned, &live, &other] {
            aged(d);
        }
        let held = File::open(&live).unwrap();
        held.try_lock().unwrap();
        sweep(base.path());
        assert!(!abandoned.exists(), "an abandoned run directory stays");
        // Positive controls: each of the others is still there.
        assert!(live.exists() && young.exists() && other.exists());
        drop(held);
        // A process another test forks holds a copy of the descriptor until it execs.
        for _ in 0..200 {
            sweep(base.path());
            if !live.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!live.exists(), "unlocked once its owner is gone");
    }

    #[test]
    fn a_run_directory_is_private_locked_and_removed_on_drop() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = RunTmp::create().unwrap();
        let path = tmp.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            File::open(&path).unwrap().try_lock().is_err(),
            "not locked while in use"
        );
        drop(tmp);
        assert!(!path.exists());
    }
}
