//! Folders skillpipe reads as the user's own that do not exist yet (a new user's
//! `~/.config/skillpipe`, `~/.r9s`, `~/.codex/skills` …). A read-only mount needs something to
//! cover, so with writes allowed a script could otherwise create one — plant an agent granting
//! scripts more, add a trusted directory, a saved session pointing the API key elsewhere — and it
//! would come back as the user's own. Each missing one is made empty for the run (so the run's
//! read-only mounts cover it) and removed after it, if it is still empty, with the folders made
//! on the way to it.
//!
//! Runs overlap (two skillpipe processes, or one serving several calls): a run that finds a
//! place made by another covers it as it is, so that one must not go while any run is going.
//! Every run that could make one holds a shared lock on a file in skillpipe's state folder
//! (hidden from scripts) for as long as it goes, and writes there what it made; the last run to
//! end (the one that can then take the lock alone) removes what every run made. Without the
//! lock nothing is removed: an empty folder left is safe.

use std::fs::File;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// The places made (or found made) for one run, and its share of the lock; released when
/// dropped.
#[derive(Debug, Default)]
pub struct Placeholders {
    /// The places the run's read-only mounts must cover.
    covered: Vec<PathBuf>,
    /// The shared lock, held while the run goes; the file lists the folders runs made.
    lock: Option<File>,
}

/// A link among the user's own folders (or directly in one) that leads to nothing: no mount can
/// cover what is not there, and a script allowed to write could make it where it leads.
pub fn dangling_link(places: &[PathBuf]) -> Option<(PathBuf, PathBuf)> {
    let dangling = |p: &Path| {
        p.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
            && p.metadata().is_err()
    };
    let link = places.iter().find_map(|place| {
        let inside = std::fs::read_dir(place).into_iter().flatten().flatten();
        (place.ancestors().map(Path::to_path_buf))
            .chain(inside.map(|e| e.path()))
            .find(|p| dangling(p))
    })?;
    let target = std::fs::read_link(&link).unwrap_or_default();
    Some((link, target))
}

impl Placeholders {
    /// Makes each missing place in `places` (and the folders above it that are missing),
    /// private to the user, holding a shared lock on `lock` (made, with its folder, when
    /// missing: that folder is then covered too). A place inside another listed place is left
    /// to that one's mount. One that cannot be made (a read-only home) is left out: the
    /// command, which runs as the same user, cannot make it either.
    pub fn make(places: &[PathBuf], lock: Option<&Path>) -> Placeholders {
        let mut out = Placeholders::default();
        if let Some(lock) = lock {
            let folder = lock.parent().filter(|f| f.symlink_metadata().is_err());
            if let Some(folder) = folder
                && crate::paths::create_private_dirs(folder).is_ok()
            {
                // Kept (skillpipe's own state folder), and covered while this run goes.
                out.covered.push(folder.to_path_buf());
            }
            out.lock = open_shared(lock);
        }
        let mut made: Vec<PathBuf> = Vec::new();
        for place in places {
            let inside_another = places.iter().any(|p| p != place && place.starts_with(p));
            if inside_another || !place.is_absolute() {
                continue;
            }
            let mut missing: Vec<&Path> = place
                .ancestors()
                .take_while(|a| a.symlink_metadata().is_err())
                .collect();
            missing.reverse();
            for dir in missing {
                match std::fs::DirBuilder::new().mode(0o700).create(dir) {
                    Ok(()) => made.push(dir.to_path_buf()),
                    // Another run made it just now: covered as found.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(_) => break,
                }
            }
            // Made now, by another run, or the user's: covered either way (one made by another
            // run may not be in the mounts this run was planned with).
            if place.is_dir() {
                out.covered.push(place.clone());
            }
        }
        // Listed for the last run to remove; with no lock they stay.
        if let Some(mut file) = out.lock.as_ref() {
            use std::io::Write;
            let lines: String = made
                .iter()
                .filter_map(|d| d.to_str().filter(|d| !d.contains('\n')))
                .map(|d| format!("{d}\n"))
                .collect();
            let _ = file.write_all(lines.as_bytes());
        }
        out
    }

    /// The places this run's read-only mounts must cover.
    pub fn covered(&self) -> &[PathBuf] {
        &self.covered
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        use std::io::{Read, Seek};
        let Some(file) = self.lock.as_mut() else {
            return;
        };
        // Alone: no other run covers these. With another run going, they stay for the last.
        if file.try_lock().is_err() {
            return;
        }
        let mut listed = String::new();
        if file.rewind().is_err() || file.read_to_string(&mut listed).is_err() {
            return;
        }
        for dir in listed.lines().rev().filter(|l| l.starts_with('/')) {
            // Still empty: made for a run, removed. Not empty: someone filled it, it stays.
            let _ = std::fs::remove_dir(dir);
        }
        let _ = file.set_len(0);
    }
}

/// Opens `path` (made when missing, private) and takes a shared lock on it, waiting for a run
/// that is removing what it made. `None` when it cannot be had: nothing made is removed then.
fn open_shared(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .ok()?;
    file.lock_shared().ok().map(|()| file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_places_exist_for_the_run_and_go_after_it() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        std::fs::create_dir(home.join(".codex")).unwrap();
        let places = [
            home.join(".config/skillpipe"),
            home.join(".codex/skills"),
            home.join(".codex/skills/.system"),
        ];
        let lock = home.join("state/lock");
        {
            let made = Placeholders::make(&places, Some(&lock));
            assert!(home.join(".config/skillpipe").is_dir());
            assert!(home.join(".codex/skills").is_dir());
            // Covered by its parent's mount: not made.
            assert!(!home.join(".codex/skills/.system").exists());
            // The lock's folder (kept) and the places.
            let mut want = vec![home.join("state")];
            want.extend_from_slice(&places[..2]);
            assert_eq!(made.covered(), &want[..]);
        }
        assert!(!home.join(".config").exists());
        assert!(!home.join(".codex/skills").exists());
        // What was there before stays, and so does the lock's folder.
        assert!(home.join(".codex").is_dir() && home.join("state").is_dir());
    }

    #[test]
    fn a_link_to_nothing_among_the_places_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        std::fs::create_dir_all(home.join("cfg")).unwrap();
        let places = [home.join("cfg"), home.join(".agents/skills")];
        assert_eq!(dangling_link(&places), None);
        // In a place, and on the way to one.
        std::os::unix::fs::symlink(home.join("gone/config.toml"), home.join("cfg/config.toml"))
            .unwrap();
        assert_eq!(
            dangling_link(&places),
            Some((home.join("cfg/config.toml"), home.join("gone/config.toml")))
        );
        std::fs::remove_file(home.join("cfg/config.toml")).unwrap();
        std::os::unix::fs::symlink(home.join("missing"), home.join(".agents")).unwrap();
        assert_eq!(
            dangling_link(&places),
            Some((home.join(".agents"), home.join("missing")))
        );
        // Once it leads somewhere, nothing.
        std::fs::create_dir(home.join("missing")).unwrap();
        assert_eq!(dangling_link(&places), None);
    }

    #[test]
    fn a_place_two_runs_use_goes_when_the_last_one_ends() {
        let tmp = tempfile::tempdir().unwrap();
        let place = tmp.path().join("shared/x");
        let lock = tmp.path().join("lock");
        let first = Placeholders::make(std::slice::from_ref(&place), Some(&lock));
        let second = Placeholders::make(std::slice::from_ref(&place), Some(&lock));
        assert_eq!(second.covered(), std::slice::from_ref(&place));
        drop(first);
        assert!(
            place.is_dir(),
            "removed while the second run still covers it"
        );
        drop(second);
        assert!(!tmp.path().join("shared").exists());
    }

    #[test]
    fn without_the_lock_nothing_goes_and_a_filled_place_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let place = tmp.path().join("a/b");
        let made = Placeholders::make(std::slice::from_ref(&place), None);
        assert_eq!(made.covered(), std::slice::from_ref(&place));
        drop(made);
        assert!(place.is_dir());
        let lock = tmp.path().join("lock");
        let other = tmp.path().join("c");
        let made = Placeholders::make(std::slice::from_ref(&other), Some(&lock));
        // Something outside the run filled it meanwhile: not removed.
        std::fs::write(other.join("x"), "").unwrap();
        drop(made);
        assert!(other.join("x").exists());
    }
}
