//! Folders skillpipe reads as the user's own that do not exist yet (a new user's
//! `~/.config/skillpipe`, `~/.r9s`, `~/.codex/skills` …). A read-only mount needs something to
//! cover, so with writes allowed a script could otherwise create one — plant an agent granting
//! scripts more, add a trusted directory, a saved session pointing the API key elsewhere — and it
//! would come back as the user's own. Each missing one is made empty for the run (so the run's
//! read-only mounts cover it) and removed after it, if it is still empty, with the folders made
//! on the way to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A place made for runs still going in this process: how many use it, and the folders made
/// for it (outermost first). One run's end must not remove a folder another run's mounts still
/// cover (the removal would take that mount away in the other run, and its command could then
/// make the folder): the last run using it removes it.
struct InUse {
    users: usize,
    made: Vec<PathBuf>,
}

static IN_USE: Mutex<Option<HashMap<PathBuf, InUse>>> = Mutex::new(None);

/// The places made (or shared) for one run; released when dropped.
#[derive(Debug, Default)]
pub struct Placeholders {
    /// The places that exist now thanks to this run or another going on: to be covered by its
    /// read-only mounts.
    covered: Vec<PathBuf>,
}

impl Placeholders {
    /// Makes each missing place in `places` (and the folders above it that are missing),
    /// private to the user. A place inside another listed place is left to that one's mount.
    /// One that cannot be made (a read-only home) is left out: the command, which runs as the
    /// same user, cannot make it either.
    pub fn make(places: &[PathBuf]) -> Placeholders {
        let mut out = Placeholders::default();
        let mut guard = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        let in_use = guard.get_or_insert_with(HashMap::new);
        for place in places {
            let inside_another = places.iter().any(|p| p != place && place.starts_with(p));
            if inside_another || !place.is_absolute() {
                continue;
            }
            if let Some(entry) = in_use.get_mut(place) {
                entry.users += 1;
                out.covered.push(place.clone());
                continue;
            }
            if place.symlink_metadata().is_ok() {
                continue;
            }
            let mut missing: Vec<&Path> = place
                .ancestors()
                .take_while(|a| a.symlink_metadata().is_err())
                .collect();
            missing.reverse();
            let mut made = Vec::new();
            for dir in missing {
                if make_private_dir(dir).is_err() {
                    break;
                }
                made.push(dir.to_path_buf());
            }
            if made.last() != Some(place) {
                // Not all of it: what was made on the way goes again.
                made.iter().rev().for_each(|d| {
                    let _ = std::fs::remove_dir(d);
                });
                continue;
            }
            out.covered.push(place.clone());
            in_use.insert(place.clone(), InUse { users: 1, made });
        }
        out
    }

    /// The places made for this run: each needs a read-only mount over it.
    pub fn covered(&self) -> &[PathBuf] {
        &self.covered
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        let mut guard = IN_USE.lock().unwrap_or_else(|e| e.into_inner());
        let in_use = guard.get_or_insert_with(HashMap::new);
        for place in &self.covered {
            let Some(entry) = in_use.get_mut(place) else {
                continue;
            };
            entry.users -= 1;
            if entry.users > 0 {
                continue;
            }
            let Some(entry) = in_use.remove(place) else {
                continue;
            };
            for dir in entry.made.iter().rev() {
                // Still empty: ours to remove. Not empty: someone outside the run filled it.
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
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
        {
            let made = Placeholders::make(&places);
            assert!(home.join(".config/skillpipe").is_dir());
            assert!(home.join(".codex/skills").is_dir());
            // Covered by its parent's mount: not made.
            assert!(!home.join(".codex/skills/.system").exists());
            assert_eq!(made.covered(), &places[..2]);
        }
        assert!(!home.join(".config").exists());
        assert!(!home.join(".codex/skills").exists());
        // What was there before stays.
        assert!(home.join(".codex").is_dir());
    }

    #[test]
    fn a_place_two_runs_use_goes_when_the_last_one_ends() {
        let tmp = tempfile::tempdir().unwrap();
        let place = tmp.path().join("shared/x");
        let first = Placeholders::make(std::slice::from_ref(&place));
        let second = Placeholders::make(std::slice::from_ref(&place));
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
    fn an_existing_place_is_left_and_a_filled_one_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let place = tmp.path().join("a/b");
        let kept = tmp.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        let made = Placeholders::make(&[place.clone(), kept.clone()]);
        assert_eq!(made.covered(), std::slice::from_ref(&place));
        // Something outside the run filled it meanwhile: not removed.
        std::fs::write(place.join("x"), "").unwrap();
        drop(made);
        assert!(place.join("x").exists() && kept.is_dir());
    }
}
