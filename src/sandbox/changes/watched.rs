//! The change report from the kernel's events: before the run only the folders are walked
//! (their listings read, no entry stat'ed) and each is watched; after it only the names the
//! events named are stat'ed, and a folder that appeared during the run is walked whole.
//!
//! An event only nominates a path; what happened to it is judged from what the listing said
//! was there before and what is there now, so a folder moved away and back, a file replaced
//! by a rename, or a name made and removed again are told as a walk would tell them.

use super::{ChangeKind, Changes, Entry, Listing, MAX_ENTRIES, Stat};
use crate::sandbox::inotify::{Event, Watches};
use crate::sandbox::is_vcs_metadata;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// What is on disk after the run (the real one stats and lists; tests give their own).
pub(super) trait Look {
    /// The entry at `path`, its link not followed.
    fn stat(&self, path: &Path) -> Option<Stat>;
    /// The names in the folder `dir`.
    fn list(&self, dir: &Path) -> Vec<OsString>;
}

/// The real file system.
struct Disk;

impl Look for Disk {
    fn stat(&self, path: &Path) -> Option<Stat> {
        std::fs::symlink_metadata(path).ok().map(|m| Stat::of(&m))
    }

    fn list(&self, dir: &Path) -> Vec<OsString> {
        std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default()
    }
}

/// The watches and listing taken before a run.
pub(crate) struct Watched {
    watches: Watches,
    listing: Listing,
}

impl Watched {
    /// Watch every folder of `listing` (taken while nothing of the run started: the launcher
    /// waits at its gate). An error means the kernel would not watch them all (no inotify, or
    /// the user's watches used up): the caller walks in full instead.
    pub(super) fn watch(mut listing: Listing) -> std::io::Result<Watched> {
        let mut watches = Watches::new()?;
        let roots = listing.roots.clone();
        let mut gone = Vec::new();
        for dir in listing.folders.keys() {
            match watches.add(dir, roots.contains(dir)) {
                Ok(()) => {}
                // Removed since it was listed: nothing of the run is in it.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::ENOENT)) => {
                    gone.push(dir.clone());
                }
                Err(e) => return Err(e),
            }
        }
        for dir in gone {
            listing.folders.remove(&dir);
        }
        wait_past(listing.start);
        Ok(Watched { watches, listing })
    }

    /// [`Listing::take`] then [`Self::watch`].
    #[cfg(test)]
    pub(super) fn take(roots: &[PathBuf], max_entries: usize) -> std::io::Result<Watched> {
        Watched::watch(Listing::take(roots, max_entries))
    }

    /// What the run did.
    pub(crate) fn since(self) -> Changes {
        let events = self.watches.drain();
        // Closing the watches waits for the kernel's grace period (up to ~15 ms) whatever their
        // number: done aside, it costs the run nothing (or here, where no thread can start).
        let watches = self.watches;
        let _ = std::thread::Builder::new()
            .name("unwatch".into())
            .spawn(move || drop(watches));
        judge(&self.listing, &events, &Disk, MAX_ENTRIES)
    }
}

/// Now on `clock`.
fn now(clock: libc::clockid_t) -> (i64, i64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    (ts.tv_sec, ts.tv_nsec)
}

/// Now, on the fine clock: no file time set before this moment is later than it.
pub(super) fn fine_now() -> (i64, i64) {
    now(libc::CLOCK_REALTIME)
}

/// Returns once the coarse clock, which a file time is taken from when nobody looked at the
/// file since its last change, is past `t0` (a fine time): every file time set from then on
/// is later than `t0`. Usually at once: a listing takes longer than a tick.
pub(super) fn wait_past(t0: (i64, i64)) {
    while now(libc::CLOCK_REALTIME_COARSE) <= t0 {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// What `before` and the run's `events` say the run did, `look` telling what is there now;
/// at most `max_entries` entries are stat'ed after the run.
pub(super) fn judge(
    before: &Listing,
    events: &[Event],
    look: &dyn Look,
    max_entries: usize,
) -> Changes {
    let mut j = Judge {
        before,
        look,
        budget: max_entries,
        found: BTreeMap::new(),
        index: HashMap::new(),
        by_ino: None,
        made_tops: HashSet::new(),
        over: false,
        overflowed: events.iter().any(Event::overflowed),
        reached: HashMap::new(),
    };
    // Each named path, with every event on it; a folder's own events are on the folder.
    let mut named: BTreeMap<PathBuf, u32> = BTreeMap::new();
    for e in events {
        if e.overflowed() {
            continue;
        }
        let path = match &e.name {
            Some(n) => e.dir.join(n),
            None => e.dir.clone(),
        };
        *named.entry(path).or_default() |= e.mask;
    }
    if j.overflowed {
        // The kernel dropped events: every name listed before and every name there now is
        // judged from the disk and its times, as a walk would (within the same budget).
        for (dir, folder) in &before.folders {
            let was = folder.entries.iter().map(|e| dir.join(&e.name));
            let now: Vec<PathBuf> = match j.reached(dir) {
                true => look.list(dir).iter().map(|n| dir.join(n)).collect(),
                false => Vec::new(),
            };
            for path in was.chain(now) {
                named.entry(path).or_default();
            }
        }
    }
    for (path, mask) in &named {
        j.judge(path, *mask);
    }
    for (root, was) in &before.files {
        let now = look.stat(root);
        let kind = match now {
            None => Some(ChangeKind::Deleted),
            Some(now) => Stat::compare(*was, now),
        };
        if let Some(kind) = kind {
            j.found.insert(root.clone(), (kind, now));
        }
    }
    let found = j
        .found
        .iter()
        .map(|(path, (kind, now))| (path.as_path(), *kind, *now));
    let tops = before.tops.iter().chain(&j.made_tops);
    let capped = before.capped.or(j.over.then_some(max_entries));
    Changes::of(&before.roots, found, tops, capped, j.over)
}

/// The state of one judgement.
struct Judge<'a> {
    before: &'a Listing,
    look: &'a dyn Look,
    /// Entries that may still be stat'ed.
    budget: usize,
    found: BTreeMap<PathBuf, (ChangeKind, Option<Stat>)>,
    /// Listed folders' entries by name, made for the folders events name.
    index: HashMap<&'a Path, HashMap<&'a OsStr, &'a Entry>>,
    /// Every listed file by inode, made when a file with more than one link is looked at.
    by_ino: Option<HashMap<u64, Vec<PathBuf>>>,
    /// Folders that hold version control metadata made during the run.
    made_tops: HashSet<PathBuf>,
    /// The budget ran out.
    over: bool,
    /// The kernel dropped events: a name's events may be missing, so its times decide.
    overflowed: bool,
    /// Folders still reached from their writable path through folders only (see `reached`).
    reached: HashMap<PathBuf, bool>,
}

impl<'a> Judge<'a> {
    /// Whether `dir` is still reached from its writable path through real folders only: one
    /// the run replaced by a link (or moved a link into the way of) is not looked through, or
    /// the report would show names from outside the run's view.
    fn reached(&mut self, dir: &Path) -> bool {
        if let Some(&known) = self.reached.get(dir) {
            return known;
        }
        let ok = self.before.roots.iter().any(|r| r == dir)
            || (dir.parent().is_some_and(|p| self.reached(p))
                && self.look.stat(dir).is_some_and(Stat::is_dir));
        self.reached.insert(dir.to_path_buf(), ok);
        ok
    }

    /// What was at `path` before: `None` when it is known not to have been there, and no
    /// answer at all when its folder was not listed (past the bound, or made by the run).
    fn was(&mut self, path: &Path) -> Option<Option<&'a Entry>> {
        let parent = path.parent()?;
        let (dir, folder) = self.before.folders.get_key_value(parent)?;
        let index = self.index.entry(dir.as_path()).or_insert_with(|| {
            folder
                .entries
                .iter()
                .map(|e| (e.name.as_os_str(), e))
                .collect()
        });
        Some(path.file_name().and_then(|n| index.get(n).copied()))
    }

    fn stat(&mut self, path: &Path) -> Option<Stat> {
        if self.budget == 0 {
            self.over = true;
            return None;
        }
        self.budget -= 1;
        self.look.stat(path)
    }

    fn record(&mut self, path: &Path, kind: ChangeKind, now: Option<Stat>) {
        if path.file_name().is_some_and(is_vcs_metadata)
            && now.is_some()
            && let Some(parent) = path.parent()
        {
            self.made_tops.insert(parent.to_path_buf());
        }
        let merged = match self.found.get(path) {
            None => kind,
            Some((old, _)) if *old == kind => kind,
            Some((ChangeKind::Mode, _)) => kind,
            Some((old, _)) if kind == ChangeKind::Mode => *old,
            // Gone and made again, or made over what was there.
            Some(_) => ChangeKind::Changed,
        };
        let now = now.or_else(|| self.found.get(path).and_then(|(_, n)| *n));
        self.found.insert(path.to_path_buf(), (merged, now));
    }

    /// Judge a path events named, with the union of their bits.
    fn judge(&mut self, path: &Path, mask: u32) {
        // A writable path itself is not a change (as in a walk, which starts inside it).
        if self.before.roots.iter().any(|r| r == path) {
            return;
        }
        let Some(was) = self.was(path) else {
            // In a folder that was not listed: one made by the run is walked whole.
            return;
        };
        if !path.parent().is_some_and(|p| self.reached(p)) {
            // Its folder was replaced by a link: the folder itself is judged as changed.
            return;
        }
        let now = self.stat(path);
        match (was, now) {
            (None, None) => {}
            (None, Some(now)) => {
                self.record(path, ChangeKind::Created, Some(now));
                self.made(path, now);
            }
            (Some(was), None) => {
                self.record(path, ChangeKind::Deleted, None);
                if was.dir {
                    self.gone(path);
                }
            }
            (Some(was), Some(now)) if was.ino != now.ino => {
                self.record(path, ChangeKind::Changed, Some(now));
                if was.dir {
                    self.gone(path);
                }
                self.made(path, now);
            }
            (Some(_), Some(now)) if now.is_dir() => {
                let mode = self.before.folders.get(path).map(|f| f.mode);
                if (mask & libc::IN_ATTRIB != 0 || self.overflowed) && mode != Some(now.mode) {
                    self.record(path, ChangeKind::Mode, Some(now));
                }
            }
            (Some(_), Some(now)) => {
                if let Some(kind) = same_file(mask, now, self.before.start) {
                    self.record(path, kind, Some(now));
                    if now.nlink > 1 {
                        self.aliases(path, mask, now);
                    }
                }
            }
        }
    }

    /// Everything listed under the folder `path` before is gone.
    fn gone(&mut self, path: &Path) {
        let mut queue = VecDeque::from([path.to_path_buf()]);
        while let Some(dir) = queue.pop_front() {
            let Some(folder) = self.before.folders.get(&dir) else {
                continue;
            };
            for e in &folder.entries {
                let p = dir.join(&e.name);
                if e.dir {
                    queue.push_back(p.clone());
                }
                self.record(&p, ChangeKind::Deleted, None);
            }
        }
    }

    /// The folder `path` appeared (or was replaced): everything in it is new, except what was
    /// listed there before, which is changed. A file there with other links may be another
    /// name of one listed before, written through the new name.
    fn made(&mut self, path: &Path, now: Stat) {
        if !now.is_dir() {
            if now.nlink > 1 {
                self.aliases(path, 0, now);
            }
            return;
        }
        let mut queue = VecDeque::from([path.to_path_buf()]);
        while let Some(dir) = queue.pop_front() {
            for name in self.look.list(&dir) {
                let p = dir.join(&name);
                let Some(st) = self.stat(&p) else {
                    if self.over {
                        return;
                    }
                    continue;
                };
                if st.is_dir() {
                    queue.push_back(p.clone());
                } else if st.nlink > 1 {
                    self.aliases(&p, 0, st);
                }
                self.record(&p, ChangeKind::Created, Some(st));
            }
        }
    }

    /// Every listed name of the file `now` (at `path`, with `mask` on it) is judged as if
    /// the events had named it: a write through one name of a file is a write to all.
    fn aliases(&mut self, path: &Path, mask: u32, now: Stat) {
        let before = self.before;
        let by_ino = self.by_ino.get_or_insert_with(|| {
            let mut m: HashMap<u64, Vec<PathBuf>> = HashMap::new();
            for (dir, f) in &before.folders {
                for e in f.entries.iter().filter(|e| !e.dir) {
                    m.entry(e.ino).or_default().push(dir.join(&e.name));
                }
            }
            m
        });
        let others: Vec<PathBuf> = by_ino
            .get(&now.ino)
            .into_iter()
            .flatten()
            .filter(|p| p.as_path() != path && !self.found.contains_key(p.as_path()))
            .cloned()
            .collect();
        for other in others {
            if !other.parent().is_some_and(|p| self.reached(p)) {
                continue;
            }
            let Some(st) = self.stat(&other) else {
                continue;
            };
            if st.ino == now.ino
                && let Some(kind) = same_file(mask | libc::IN_ATTRIB, st, before.start)
            {
                self.record(&other, kind, Some(st));
            }
        }
    }
}

/// What happened to a file that is the same inode before and after, from the events on it
/// (`mask`) and its times now (`start`: the clock before the run began). The events
/// decide first: a content write is `IN_MODIFY`, a metadata change alone `IN_ATTRIB`. Times
/// decide only without them (another name of a linked file), and then only a time after the
/// start counts: file times may be coarse or fine, so a file written just before the run is
/// never taken for one written in it.
fn same_file(mask: u32, now: Stat, start: (i64, i64)) -> Option<ChangeKind> {
    if mask & libc::IN_MODIFY != 0 {
        Some(ChangeKind::Changed)
    } else if mask & libc::IN_ATTRIB != 0 {
        match now.mtime > start {
            true => Some(ChangeKind::Changed),
            false => Some(ChangeKind::Mode),
        }
    } else if now.mtime > start {
        Some(ChangeKind::Changed)
    } else if now.ctime < start {
        // Opened for writing and closed, nothing written.
        None
    } else {
        Some(ChangeKind::Changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::changes::{Folder, Why};
    use std::os::unix::fs::PermissionsExt;

    /// A file system after the run, given as paths and their stats.
    #[derive(Default)]
    struct Fake(BTreeMap<PathBuf, Stat>);

    impl Look for Fake {
        fn stat(&self, path: &Path) -> Option<Stat> {
            self.0.get(path).copied()
        }
        fn list(&self, dir: &Path) -> Vec<OsString> {
            self.0
                .keys()
                .filter(|p| p.parent() == Some(dir))
                .filter_map(|p| p.file_name().map(OsStr::to_os_string))
                .collect()
        }
    }

    const START: (i64, i64) = (1000, 0);

    fn file(ino: u64, mode: u32, times: (i64, i64)) -> Stat {
        Stat {
            ino,
            mode: libc::S_IFREG | mode,
            size: 1,
            mtime: (times.0, 0),
            ctime: (times.1, 0),
            nlink: 1,
        }
    }

    fn dir(ino: u64) -> Stat {
        Stat {
            ino,
            mode: libc::S_IFDIR | 0o755,
            size: 0,
            mtime: (START.0 + 5, 0),
            ctime: (START.0 + 5, 0),
            nlink: 2,
        }
    }

    fn ev(dir: &str, name: &str, mask: u32) -> Event {
        Event {
            dir: PathBuf::from(dir),
            name: (!name.is_empty()).then(|| name.into()),
            mask,
        }
    }

    fn entry(name: &str, ino: u64, dir: bool) -> Entry {
        Entry {
            name: name.into(),
            ino,
            dir,
        }
    }

    /// `/p` with `a.txt` (1), `run.sh` (2), `gone.txt` (3), `same.txt` (4), `.git/` (5) holding
    /// `config` (6), `old/` (7) holding `x.csv` (8).
    fn listing() -> Listing {
        let folder = |entries| Folder {
            mode: libc::S_IFDIR | 0o755,
            entries,
        };
        Listing {
            roots: vec!["/p".into()],
            folders: HashMap::from([
                (
                    PathBuf::from("/p"),
                    folder(vec![
                        entry("a.txt", 1, false),
                        entry("run.sh", 2, false),
                        entry("gone.txt", 3, false),
                        entry("same.txt", 4, false),
                        entry(".git", 5, true),
                        entry("old", 7, true),
                    ]),
                ),
                (
                    PathBuf::from("/p/.git"),
                    folder(vec![entry("config", 6, false)]),
                ),
                (
                    PathBuf::from("/p/old"),
                    folder(vec![entry("x.csv", 8, false)]),
                ),
            ]),
            tops: HashSet::from(["/p".into()]),
            start: START,
            ..Listing::default()
        }
    }

    fn kinds(c: &Changes) -> Vec<(String, ChangeKind, Option<Why>)> {
        c.list
            .iter()
            .map(|c| (c.path.display().to_string(), c.kind, c.why))
            .collect()
    }

    #[test]
    fn events_map_to_changes_judged_by_what_is_there() {
        use libc::*;
        let before = listing();
        let old = START.0 - 50;
        let now = START.0 + 1;
        let disk = Fake(BTreeMap::from([
            ("/p".into(), dir(100)),
            ("/p/a.txt".into(), file(1, 0o644, (now, now))),
            ("/p/run.sh".into(), file(2, 0o755, (old, now))),
            ("/p/same.txt".into(), file(4, 0o644, (old, old))),
            ("/p/.git".into(), dir(5)),
            // Replaced by a rename over it.
            ("/p/.git/config".into(), file(60, 0o644, (now, now))),
            ("/p/new".into(), dir(9)),
            ("/p/new/deep".into(), dir(10)),
            ("/p/new/deep/n.csv".into(), file(11, 0o644, (now, now))),
        ]));
        let events = [
            ev("/p", "a.txt", IN_MODIFY),
            ev("/p", "a.txt", IN_CLOSE_WRITE),
            ev("/p", "run.sh", IN_ATTRIB),
            ev("/p", "gone.txt", IN_DELETE),
            // Opened for writing, nothing written.
            ev("/p", "same.txt", IN_CLOSE_WRITE),
            ev("/p/.git", "config.tmp", IN_CREATE),
            ev("/p/.git", "config.tmp", IN_MOVED_FROM),
            ev("/p/.git", "config", IN_MOVED_TO),
            ev("/p", "old", IN_DELETE | IN_ISDIR),
            ev("/p/old", "", IN_DELETE_SELF),
            ev("/p/old", "x.csv", IN_DELETE),
            ev("/p", "new", IN_CREATE | IN_ISDIR),
            // Made and removed during the run.
            ev("/p", "tmp", IN_CREATE),
            ev("/p", "tmp", IN_DELETE),
            // The writable path itself.
            ev("/p", "", IN_ATTRIB),
        ];
        let c = judge(&before, &events, &disk, MAX_ENTRIES);
        assert_eq!(
            kinds(&c),
            vec![
                (
                    "/p/.git/config".into(),
                    ChangeKind::Changed,
                    Some(Why::VersionControl)
                ),
                (
                    "/p/a.txt".into(),
                    ChangeKind::Changed,
                    Some(Why::ProjectTop)
                ),
                (
                    "/p/gone.txt".into(),
                    ChangeKind::Deleted,
                    Some(Why::ProjectTop)
                ),
                // Gone, so not known to have been a folder (as in a walk).
                ("/p/old".into(), ChangeKind::Deleted, Some(Why::ProjectTop)),
                ("/p/run.sh".into(), ChangeKind::Mode, Some(Why::Executable)),
                ("/p/new".into(), ChangeKind::Created, None),
                ("/p/new/deep".into(), ChangeKind::Created, None),
                ("/p/new/deep/n.csv".into(), ChangeKind::Created, None),
                ("/p/old/x.csv".into(), ChangeKind::Deleted, None),
            ]
        );
        assert_eq!(c.capped, None);
    }

    #[test]
    fn a_write_through_a_new_name_of_a_listed_file_is_told_on_the_old_name() {
        use libc::*;
        let before = listing();
        let now = START.0 + 1;
        let mut linked = file(6, 0o644, (now, now));
        linked.nlink = 2;
        let disk = Fake(BTreeMap::from([
            ("/p/.git".into(), dir(5)),
            ("/p/.git/config".into(), linked),
            ("/p/made".into(), dir(20)),
            ("/p/made/x".into(), linked),
        ]));
        let events = [ev("/p", "made", IN_CREATE | IN_ISDIR)];
        let c = judge(&before, &events, &disk, MAX_ENTRIES);
        let config = c
            .list
            .iter()
            .find(|c| c.path == Path::new("/p/.git/config"))
            .unwrap_or_else(|| panic!("{:?}", c.list));
        assert_eq!(
            (config.kind, config.why),
            (ChangeKind::Changed, Some(Why::VersionControl))
        );
    }

    fn paths_and_kinds(c: &Changes) -> Vec<(&str, ChangeKind)> {
        (c.list.iter())
            .map(|c| (c.path.to_str().unwrap(), c.kind))
            .collect()
    }

    /// What the listing and the disk tell when the kernel dropped every event.
    fn judge_after_overflow(before: &Listing, disk: &Fake) -> Changes {
        let over = [Event {
            dir: PathBuf::new(),
            name: None,
            mask: libc::IN_Q_OVERFLOW,
        }];
        judge(before, &over, disk, MAX_ENTRIES)
    }

    #[test]
    fn after_an_overflow_every_name_is_judged_from_the_disk() {
        let before = listing();
        let old = (START.0 - 5, START.0 - 5);
        let disk = Fake(BTreeMap::from([
            (
                "/p/a.txt".into(),
                file(1, 0o644, (START.0 + 1, START.0 + 1)),
            ),
            (
                "/p/run.sh".into(),
                file(2, 0o755, (START.0 - 5, START.0 + 1)),
            ),
            ("/p/same.txt".into(), file(4, 0o644, old)),
            (
                "/p/new.txt".into(),
                file(9, 0o644, (START.0 + 1, START.0 + 1)),
            ),
            ("/p/.git".into(), dir(5)),
            ("/p/.git/config".into(), file(6, 0o644, old)),
            ("/p/old".into(), dir(7)),
            ("/p/old/x.csv".into(), file(8, 0o644, old)),
        ]));
        let c = judge_after_overflow(&before, &disk);
        assert_eq!(
            paths_and_kinds(&c),
            [
                ("/p/a.txt", ChangeKind::Changed),
                ("/p/gone.txt", ChangeKind::Deleted),
                ("/p/new.txt", ChangeKind::Created),
                ("/p/run.sh", ChangeKind::Changed),
            ]
        );
        assert_eq!(c.capped, None);
    }

    /// After an overflow, a folder the run replaced by a link (to a folder out of its view) is
    /// told as changed and its old content as gone, and nothing is listed through the link;
    /// a folder's new mode is told without its event.
    #[test]
    fn after_an_overflow_no_link_is_followed_and_modes_are_told() {
        let before = listing();
        let old = (START.0 - 5, START.0 - 5);
        let link = Stat {
            ino: 70,
            mode: libc::S_IFLNK | 0o777,
            ..file(70, 0, (START.0 + 1, START.0 + 1))
        };
        let mut git = dir(5);
        git.mode = libc::S_IFDIR | 0o777;
        let disk = Fake(BTreeMap::from([
            ("/p/a.txt".into(), file(1, 0o644, old)),
            ("/p/run.sh".into(), file(2, 0o755, old)),
            ("/p/gone.txt".into(), file(3, 0o644, old)),
            ("/p/same.txt".into(), file(4, 0o644, old)),
            ("/p/.git".into(), git),
            ("/p/.git/config".into(), file(6, 0o644, old)),
            // `old` is now a link; what the link leads to answers through it.
            ("/p/old".into(), link),
            ("/p/old/x.csv".into(), file(8, 0o644, old)),
            ("/p/old/id_ed25519".into(), file(90, 0o600, old)),
        ]));
        let c = judge_after_overflow(&before, &disk);
        assert_eq!(
            paths_and_kinds(&c),
            [
                ("/p/.git", ChangeKind::Mode),
                ("/p/old", ChangeKind::Changed),
                ("/p/old/x.csv", ChangeKind::Deleted),
            ]
        );
    }

    #[test]
    fn a_spent_budget_is_the_bound_hit() {
        let before = listing();
        let disk = Fake(BTreeMap::from([
            ("/p/new".into(), dir(9)),
            ("/p/new/a".into(), file(11, 0o644, (START.0, START.0))),
            ("/p/new/b".into(), file(12, 0o644, (START.0, START.0))),
        ]));
        let made = [ev("/p", "new", libc::IN_CREATE | libc::IN_ISDIR)];
        let c = judge(&before, &made, &disk, 2);
        assert_eq!(c.capped, Some(2));
        assert!(c.run_filled);
    }

    /// More writes than the kernel's event queue holds (16,384 events by default): each is
    /// still told, none is lost to the overflow.
    #[test]
    fn more_writes_than_the_queue_holds_are_all_told() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for i in 0..100 {
            std::fs::write(r.join(format!("old{i}")), "x").unwrap();
        }
        let w = Watched::take(&[r.to_path_buf()], MAX_ENTRIES).unwrap();
        for i in 0..6000 {
            std::fs::write(r.join(format!("f{i}")), "x").unwrap();
        }
        std::fs::write(r.join("old7"), "changed").unwrap();
        let c = w.since();
        assert_eq!(c.capped, None);
        assert_eq!(c.list.len(), 6001, "{:?}", &c.list[..3]);
        let old7 = c.list.iter().find(|c| c.path == r.join("old7")).unwrap();
        assert_eq!(old7.kind, ChangeKind::Changed);
    }

    /// A folder made during the run, deep, on the real file system: everything in it is told
    /// as created, and a dot-folder in it is flagged.
    #[test]
    fn a_folder_made_during_the_run_is_walked_whole() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir(r.join("src")).unwrap();
        std::fs::write(r.join("src/keep.rs"), "x").unwrap();
        let w = Watched::take(&[r.to_path_buf()], MAX_ENTRIES).unwrap();
        std::fs::create_dir_all(r.join("src/gen/a/b/.hooks")).unwrap();
        std::fs::write(r.join("src/gen/a/b/x.rs"), "x").unwrap();
        std::fs::write(r.join("src/gen/a/b/.hooks/pre"), "x").unwrap();
        let p = r.join("src/gen/a/b/.hooks/pre");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let c = w.since();
        let got: Vec<(PathBuf, ChangeKind, Option<Why>)> = c
            .list
            .iter()
            .map(|c| (c.path.strip_prefix(r).unwrap().to_path_buf(), c.kind, c.why))
            .collect();
        let created = |p: &str, why| (PathBuf::from(p), ChangeKind::Created, why);
        assert_eq!(
            got,
            vec![
                created("src/gen/a/b/.hooks", Some(Why::DotName)),
                created("src/gen/a/b/.hooks/pre", Some(Why::DotName)),
                created("src/gen", None),
                created("src/gen/a", None),
                created("src/gen/a/b", None),
                created("src/gen/a/b/x.rs", None),
            ]
        );
    }
}
