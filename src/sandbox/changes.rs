//! What a run created, changed, deleted or re-moded in its writable paths. The kernel's events
//! on every folder name what the run touched, and only those names are looked at after it
//! (`watched`); where the kernel will not watch every folder, one walk before the run and one
//! after are compared path by path on each entry's inode, mode, size, mtime and ctime (ctime,
//! which a script cannot set back, catches a write that restored the mtime).
//!
//! A change is flagged when another program may later execute or load what changed, outside
//! the sandbox, by the path's shape and the file's mode (see [`Why`]): the files some tool runs
//! are too many to name, so the run is not stopped from writing them (nothing can be mounted
//! over what does not exist yet); it is told of them instead.
//!
//! The walk is bounded (`MAX_ENTRIES`) and breadth first, so what is near the top of a
//! writable path (a project's settings) is looked at before the bound is reached; when it is
//! reached the report says so.

use super::{Message, is_vcs_metadata};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::io::ErrorKind;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
mod watched;

/// Directory entries looked at per walk, over all writable paths.
pub(crate) const MAX_ENTRIES: usize = 20_000;

/// Writable paths with fewer entries than this are walked with a stat each, before and after
/// the run: cheaper than watching them, whose inotify descriptor's close waits for a kernel
/// grace period (a one-shot `run` pays it at exit).
#[cfg(target_os = "linux")]
const WALKED_UNDER: usize = 256;

/// Changes listed one by one on the status line; the rest are counted (`run --json` lists all).
pub(crate) const LISTED: usize = 10;

/// What happened to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It was not there before the run.
    Created,
    /// Its content (or, for a folder, its identity) changed.
    Changed,
    /// It is gone.
    Deleted,
    /// Only its permission bits changed.
    Mode,
}

/// Why a change is flagged: what it is by shape that another program executes or loads later.
/// Declared most serious first: the status line lists them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// A folder the run left unreadable or unsearchable to skillpipe: what it holds could not
    /// be looked at.
    Unlisted,
    /// In version control metadata (`.git`, `.hg`, `.jj`, `.svn`) at any depth, submodules'
    /// `.git/modules` included: its settings and hooks run commands.
    VersionControl,
    /// In a project's skill or agent folder (skillpipe's own search path): the next session
    /// that trusts the project loads it.
    SkillFolder,
    /// A dot-file or in a dot-folder: where tools keep their settings, hooks and environments.
    DotName,
    /// A `.pth` file: Python runs its `import` lines at every start.
    Pth,
    /// A regular file with an executable bit set.
    Executable,
    /// A file directly at the top of a project (a writable path, or a folder holding version
    /// control metadata): where tools read their project settings.
    ProjectTop,
}

impl Why {
    /// What it is, in words.
    pub fn words(self) -> &'static str {
        match self {
            Why::Unlisted => "a folder left unreadable, whose contents could not be looked at",
            Why::VersionControl => {
                "version control metadata, whose settings and hooks run commands"
            }
            Why::SkillFolder => "a project's skill or agent folder, which skillpipe loads",
            Why::DotName => "a dot-file or dot-folder, where tools keep settings and hooks",
            Why::Pth => "a .pth file, which Python runs at start",
            Why::Executable => "an executable file",
            Why::ProjectTop => "a file at the top of a project, where tools read settings",
        }
    }
}

/// One thing the run did in a writable path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Where (absolute).
    pub path: PathBuf,
    /// What happened.
    pub kind: ChangeKind,
    /// Another program may execute or load it later, outside the sandbox.
    pub flagged: bool,
    /// Why it is flagged.
    pub why: Option<Why>,
}

impl Change {
    /// The change in one line: `created /p/x.pth (a .pth file, …)`.
    pub fn line(&self) -> String {
        let kind = match self.kind {
            ChangeKind::Created => "created",
            ChangeKind::Changed => "changed",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Mode => "changed the mode of",
        };
        let path = crate::command::escape_controls(&self.path.display().to_string());
        match self.why {
            Some(why) => format!(
                "the run {kind} {path} ({}): another program may run or load it outside the \
                 sandbox; look at it before you do",
                why.words()
            ),
            None => format!("{kind} {path}"),
        }
    }
}

/// The changes of one run, and whether the walk stopped at its bound.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Flagged ones first, then in path order.
    pub list: Vec<Change>,
    /// The walk stopped at this many entries: changes further down were not looked for.
    pub capped: Option<usize>,
    /// The walk before the run did not stop: the run itself filled the tree past the bound.
    #[serde(skip)]
    run_filled: bool,
}

impl Changes {
    /// These changes, the walk not cut short.
    pub fn new(list: Vec<Change>) -> Changes {
        Changes {
            list,
            ..Changes::default()
        }
    }

    /// The lines a front end shows: the first `LISTED` flagged changes as warnings, most
    /// serious first, and how many more; then the others in one line (the first `LISTED`, and
    /// how many more). `run --json`, MCP and the audit record list them all.
    pub fn report(&self) -> (Vec<String>, Option<String>) {
        let mut flagged: Vec<&Change> = self.list.iter().filter(|c| c.flagged).collect();
        flagged.sort_by_key(|c| c.why);
        let mut warnings: Vec<String> = flagged.iter().take(LISTED).map(|c| c.line()).collect();
        if flagged.len() > LISTED {
            warnings.push(format!(
                "and {} more changes like these: another program may run or load them outside \
                 the sandbox (`run --json` and the audit log list them all)",
                flagged.len() - LISTED
            ));
        }
        let plain: Vec<String> = self
            .list
            .iter()
            .filter(|c| !c.flagged)
            .map(Change::line)
            .collect();
        let note = (!plain.is_empty()).then(|| {
            let shown = plain.len().min(LISTED);
            let more = match plain.len() - shown {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            format!("the run {}{more}", plain[..shown].join(", "))
        });
        (warnings, note)
    }

    /// The warning that the walk stopped at its bound: said once per process for a tree over
    /// it before the run (every run there would repeat it), but always when the run itself
    /// pushed it over (a script could fill the top of the tree to hide what it wrote below).
    pub fn capped_message(&self) -> Option<Message> {
        static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let say = self.run_filled || !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed);
        self.capped.filter(|_| say).map(|max| {
            Message::text(format!(
                "looked for what the run wrote in the first {max} entries of the writable \
                 paths only; changes further down were not looked for"
            ))
        })
    }

    /// What was `found` in the writable paths `roots`, each flagged or not (`tops`: the folders
    /// that are the top of a project), flagged ones first, then in path order.
    fn of<'a>(
        roots: &'a [PathBuf],
        found: impl IntoIterator<Item = (&'a Path, ChangeKind, Option<Stat>)>,
        tops: impl Iterator<Item = &'a PathBuf>,
        capped: Option<usize>,
        run_filled: bool,
    ) -> Changes {
        let tops: HashSet<&Path> = tops.chain(roots).map(PathBuf::as_path).collect();
        let mut list: Vec<Change> = (found.into_iter())
            .map(|(path, kind, now)| {
                let root = (roots.iter().filter(|r| path.starts_with(r)))
                    .max_by_key(|r| r.as_os_str().len())
                    .map_or(path, PathBuf::as_path);
                let why = why(root, path, now, &tops);
                Change {
                    path: path.to_path_buf(),
                    kind,
                    flagged: why.is_some(),
                    why,
                }
            })
            .collect();
        list.sort_by(|a, b| (!a.flagged, &a.path).cmp(&(!b.flagged, &b.path)));
        Changes {
            list,
            capped,
            run_filled,
        }
    }
}

/// The writable paths before a run, taken so that what the run does there can be told after.
pub(crate) enum Before {
    /// Every folder watched, listed without a stat per entry.
    #[cfg(target_os = "linux")]
    Watched(watched::Watched),
    /// Walked in full: every entry stat'ed.
    Walked(Snapshot),
}

impl Before {
    /// Walk `roots` in full when they are small, else watch their folders (walking them in
    /// full where watches are refused).
    pub(crate) fn take(roots: &[PathBuf]) -> Before {
        #[cfg(target_os = "linux")]
        {
            let listing = Listing::take(roots, MAX_ENTRIES);
            let start = listing.start;
            let walked = match listing.seen < WALKED_UNDER {
                true => Snapshot::of(listing),
                false => match watched::Watched::watch(listing) {
                    Ok(w) => return Before::Watched(w),
                    Err(_) => Snapshot::take(roots),
                },
            };
            // A file rewritten within the tick it was walked in must still get a later time.
            watched::wait_past(start);
            Before::Walked(walked)
        }
        #[cfg(not(target_os = "linux"))]
        Before::Walked(Snapshot::take(roots))
    }

    /// What the run did.
    pub(crate) fn since(self) -> Changes {
        match self {
            #[cfg(target_os = "linux")]
            Before::Watched(w) => w.since(),
            Before::Walked(s) => Snapshot::take(&s.listing.roots).since(&s),
        }
    }
}

/// The writable paths without those inside another (walked with it).
fn outermost(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
        .cloned()
        .collect()
}

/// One entry of a folder's listing: what `readdir` tells without a stat.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: OsString,
    ino: u64,
    dir: bool,
}

/// A folder read before the run.
#[derive(Debug, Clone, Default)]
struct Folder {
    /// Its own mode (one stat per folder).
    mode: u32,
    entries: Vec<Entry>,
}

/// The writable paths before the run, as far as their folders' listings tell.
#[derive(Debug, Clone, Default)]
struct Listing {
    roots: Vec<PathBuf>,
    /// Folders whose listing was read whole.
    folders: HashMap<PathBuf, Folder>,
    /// Writable paths that are files, stat'ed (there is no folder to watch).
    files: HashMap<PathBuf, Stat>,
    /// Folders that hold version control metadata: the tops of projects.
    tops: HashSet<PathBuf>,
    /// The walk stopped at this many entries.
    capped: Option<usize>,
    /// The folder the walk stopped in, as far as it was read.
    cut: Option<(PathBuf, Folder)>,
    /// Entries listed.
    seen: usize,
    /// The fine clock when the listing began, which the coarse clock passes before the run
    /// starts: a time after it on a file was set during the run (or while it was listed).
    start: (i64, i64),
}

impl Listing {
    /// List the folders of `roots`, breadth first (links below a root not followed), up to
    /// `max_entries` entries: their names and types, no entry stat'ed.
    fn take(roots: &[PathBuf], max_entries: usize) -> Listing {
        let mut listing = Listing {
            roots: outermost(roots),
            #[cfg(target_os = "linux")]
            start: watched::fine_now(),
            ..Listing::default()
        };
        let mut queue: VecDeque<PathBuf> = VecDeque::new();
        for root in &listing.roots {
            // A writable path given as a link is where it leads (as Landlock takes it).
            match std::fs::metadata(root) {
                Ok(m) if m.is_dir() => queue.push_back(root.clone()),
                Ok(m) => _ = listing.files.insert(root.clone(), Stat::of(&m)),
                Err(_) => {}
            }
        }
        while let Some(dir) = queue.pop_front() {
            let meta = match listing.roots.contains(&dir) {
                true => std::fs::metadata(&dir),
                false => std::fs::symlink_metadata(&dir),
            };
            let (Ok(meta), Ok(rd)) = (meta, std::fs::read_dir(&dir)) else {
                continue;
            };
            let mut folder = Folder {
                mode: meta.mode(),
                entries: Vec::new(),
            };
            for entry in rd {
                let Ok(entry) = entry else { continue };
                listing.seen += 1;
                if listing.seen > max_entries {
                    listing.capped = Some(max_entries);
                    listing.cut = Some((dir, folder));
                    return listing;
                }
                // The type `readdir` reports (a stat only where the file system gives none).
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let name = entry.file_name();
                if is_vcs_metadata(&name) {
                    listing.tops.insert(dir.clone());
                }
                if kind.is_dir() {
                    queue.push_back(dir.join(&name));
                }
                folder.entries.push(Entry {
                    ino: entry.ino(),
                    dir: kind.is_dir(),
                    name,
                });
            }
            listing.folders.insert(dir, folder);
        }
        listing
    }
}

/// What the walk keeps of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    ino: u64,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    nlink: u64,
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Stat {
        Stat {
            ino: m.ino(),
            mode: m.mode(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            nlink: m.nlink(),
        }
    }

    /// What happened to an entry that is the same inode before (`was`) and after (`now`).
    fn compare(was: Stat, now: Stat) -> Option<ChangeKind> {
        match () {
            _ if was.ino != now.ino => Some(ChangeKind::Changed),
            _ if now.is_dir() => (was.mode != now.mode).then_some(ChangeKind::Mode),
            _ if was.size != now.size || was.mtime != now.mtime => Some(ChangeKind::Changed),
            _ if was.mode != now.mode => Some(ChangeKind::Mode),
            _ if was.ctime != now.ctime => Some(ChangeKind::Changed),
            _ => None,
        }
    }

    fn is_dir(self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }

    fn is_executable_file(self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFREG && self.mode & 0o111 != 0
    }
}

/// The writable paths at one moment: their listing, every entry stat'ed.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    listing: Listing,
    entries: HashMap<PathBuf, Stat>,
}

impl Snapshot {
    /// Walk `roots` (not following links), breadth first.
    pub(crate) fn take(roots: &[PathBuf]) -> Snapshot {
        Snapshot::of(Listing::take(roots, MAX_ENTRIES))
    }

    /// `listing` with every entry stat'ed (no link followed).
    fn of(listing: Listing) -> Snapshot {
        let cut = listing.cut.as_ref().map(|(d, f)| (d, f));
        let entries = (listing.folders.iter().chain(cut))
            .flat_map(|(dir, f)| f.entries.iter().map(|e| dir.join(&e.name)))
            .filter_map(|path| {
                std::fs::symlink_metadata(&path)
                    .ok()
                    .map(|m| (path, Stat::of(&m)))
            })
            .chain(listing.files.clone())
            .collect();
        Snapshot { listing, entries }
    }

    /// What the run did, this snapshot taken after it and `before` before it.
    pub(crate) fn since(&self, before: &Snapshot) -> Changes {
        // A path missing from one walk is new (or gone) only where that walk read its folder
        // whole, or where its folder is itself new.
        let mut made_dirs: HashSet<&Path> = HashSet::new();
        let mut found = Vec::new();
        let mut after: Vec<(&PathBuf, &Stat)> = self.entries.iter().collect();
        after.sort_by_key(|(p, _)| p.components().count());
        for (path, now) in after {
            let kind = match before.entries.get(path) {
                None => {
                    let parent = path.parent().unwrap_or(path);
                    if !(before.listing.folders.contains_key(parent) || made_dirs.contains(parent))
                    {
                        continue;
                    }
                    if now.is_dir() {
                        made_dirs.insert(path);
                    }
                    ChangeKind::Created
                }
                Some(was) => match Stat::compare(*was, *now) {
                    Some(kind) => kind,
                    None => continue,
                },
            };
            found.push((path.as_path(), kind, Some(*now)));
        }
        for path in before.entries.keys() {
            let parent = path.parent().unwrap_or(path);
            if !self.entries.contains_key(path) && self.listing.folders.contains_key(parent) {
                found.push((path.as_path(), ChangeKind::Deleted, None));
            }
        }
        let (now, was) = (self.listing.capped, before.listing.capped);
        let tops = self.listing.tops.iter().chain(&before.listing.tops);
        let run_filled = now.is_some() && was.is_none();
        Changes::of(&self.listing.roots, found, tops, now.or(was), run_filled)
    }
}

/// Why a change at `path` (in the writable path `root`; `now` its metadata after the run, if
/// it is there) is flagged. `tops` are the folders that are the top of a project.
fn why(root: &Path, path: &Path, now: Option<Stat>, tops: &HashSet<&Path>) -> Option<Why> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let names = || rel.components().map(|c| c.as_os_str());
    // Its names cannot be read, or its entries cannot be looked at (no search permission).
    let denied = |r: std::io::Result<()>| r.is_err_and(|e| e.kind() == ErrorKind::PermissionDenied);
    let unlisted = || {
        denied(std::fs::read_dir(path).map(drop))
            || denied(std::fs::symlink_metadata(path.join(".")).map(drop))
    };
    if now.is_some_and(Stat::is_dir) && unlisted() {
        return Some(Why::Unlisted);
    }
    if names().any(is_vcs_metadata) {
        return Some(Why::VersionControl);
    }
    // skillpipe's own project folders, below any project top (or the writable path itself).
    let in_skill_folder = path.ancestors().filter(|a| a.starts_with(root)).any(|a| {
        tops.contains(a)
            && path.strip_prefix(a).is_ok_and(|inner| {
                crate::paths::project_places()
                    .iter()
                    .any(|p| inner.starts_with(p))
            })
    });
    if in_skill_folder {
        return Some(Why::SkillFolder);
    }
    if names().any(|n| n.as_encoded_bytes().first() == Some(&b'.')) {
        return Some(Why::DotName);
    }
    if path.extension().is_some_and(|e| e == "pth") {
        return Some(Why::Pth);
    }
    if now.is_some_and(Stat::is_executable_file) {
        return Some(Why::Executable);
    }
    let is_dir = now.is_some_and(Stat::is_dir);
    if !is_dir && path.parent().is_some_and(|p| tops.contains(p)) {
        return Some(Why::ProjectTop);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// What `act` did in `r`, told by the kernel's events and by two walks, which must agree.
    fn run(r: &Path, act: impl FnOnce(&Path)) -> Changes {
        let roots = [r.to_path_buf()];
        let watched = watched::Watched::take(&roots, MAX_ENTRIES).unwrap();
        let walked = Snapshot::take(&roots);
        act(r);
        let by_walks = Snapshot::take(&roots).since(&walked);
        let by_events = watched.since();
        assert_eq!(by_events, by_walks);
        by_events
    }

    fn find<'a>(c: &'a Changes, r: &Path, rel: &str) -> &'a Change {
        let p = r.join(rel);
        c.list
            .iter()
            .find(|c| c.path == p)
            .unwrap_or_else(|| panic!("{rel} not in {:?}", c.list))
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_small_tree_is_walked_and_a_large_one_watched() {
        let dir = tempfile::tempdir().unwrap();
        let r = [dir.path().to_path_buf()];
        for i in 0..WALKED_UNDER - 1 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        assert!(matches!(Before::take(&r), Before::Walked(_)));
        std::fs::write(dir.path().join("one-more"), "").unwrap();
        let large = Before::take(&r);
        assert!(matches!(large, Before::Watched(_)));
        std::fs::write(dir.path().join("f7"), "changed").unwrap();
        assert_eq!(large.since().list.len(), 1);
    }

    #[test]
    fn nothing_done_is_nothing_reported() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("a/b/.git/hooks")).unwrap();
        std::fs::write(r.join("a/b/x.txt"), "x").unwrap();
        let c = run(r, |r| {
            // Reading is no change.
            std::fs::read(r.join("a/b/x.txt")).unwrap();
        });
        assert_eq!(c, Changes::default());
    }

    #[test]
    fn each_kind_is_told_and_data_is_not_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("data/old")).unwrap();
        std::fs::write(r.join("data/a.csv"), "1").unwrap();
        std::fs::write(r.join("data/gone.csv"), "1").unwrap();
        std::fs::write(r.join("data/run.sh"), "1").unwrap();
        let c = run(r, |r| {
            std::fs::write(r.join("data/a.csv"), "22").unwrap();
            std::fs::remove_file(r.join("data/gone.csv")).unwrap();
            std::fs::write(r.join("data/old/new.csv"), "1").unwrap();
            std::fs::create_dir_all(r.join("data/made/deep")).unwrap();
            std::fs::write(r.join("data/made/deep/n.csv"), "1").unwrap();
            let p = r.join("data/run.sh");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        });
        let kind = |rel| (find(&c, r, rel).kind, find(&c, r, rel).why);
        assert_eq!(kind("data/a.csv"), (ChangeKind::Changed, None));
        assert_eq!(kind("data/gone.csv"), (ChangeKind::Deleted, None));
        assert_eq!(kind("data/old/new.csv"), (ChangeKind::Created, None));
        assert_eq!(kind("data/made/deep/n.csv"), (ChangeKind::Created, None));
        assert_eq!(kind("data/made"), (ChangeKind::Created, None));
        assert_eq!(
            kind("data/run.sh"),
            (ChangeKind::Mode, Some(Why::Executable))
        );
        // A folder whose entries changed is not itself a change.
        assert!(c.list.iter().all(|x| x.path != r.join("data/old")));
        assert_eq!(c.list.len(), 7, "{:?}", c.list);
        assert!(c.list[0].flagged);
    }

    #[test]
    fn what_runs_later_is_flagged_by_shape() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join(".git/modules/x")).unwrap();
        std::fs::write(r.join(".git/modules/x/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(r.join("sub/app")).unwrap();
        std::fs::write(r.join("sub/app/.git"), "gitdir: ../../.git/modules/x\n").unwrap();
        std::fs::create_dir_all(r.join("venv/lib/python3.11/site-packages")).unwrap();
        std::fs::create_dir_all(r.join("out")).unwrap();
        let c = run(r, |r| {
            std::fs::write(r.join(".git/modules/x/config"), "[core]\nfsmonitor=x\n").unwrap();
            std::fs::write(r.join("rust-toolchain.toml"), "x").unwrap();
            std::fs::write(r.join("sub/app/mise.toml"), "x").unwrap();
            std::fs::write(r.join(".devcontainer.json"), "x").unwrap();
            std::fs::write(r.join("venv/lib/python3.11/site-packages/a.pth"), "x").unwrap();
            std::fs::create_dir_all(r.join("sub/app/.agents/skills/s")).unwrap();
            std::fs::create_dir_all(r.join("skills/s")).unwrap();
            std::fs::write(r.join("skills/s/SKILL.md"), "x").unwrap();
            std::fs::write(r.join("out/r.csv"), "x").unwrap();
        });
        let why = |rel| find(&c, r, rel).why;
        assert_eq!(why(".git/modules/x/config"), Some(Why::VersionControl));
        assert_eq!(why("rust-toolchain.toml"), Some(Why::ProjectTop));
        // The top of a submodule is a project's top.
        assert_eq!(why("sub/app/mise.toml"), Some(Why::ProjectTop));
        assert_eq!(why(".devcontainer.json"), Some(Why::DotName));
        assert_eq!(
            why("venv/lib/python3.11/site-packages/a.pth"),
            Some(Why::Pth)
        );
        assert_eq!(why("sub/app/.agents/skills/s"), Some(Why::SkillFolder));
        assert_eq!(why("skills/s/SKILL.md"), Some(Why::SkillFolder));
        // Control: a data file in an ordinary folder.
        assert_eq!(why("out/r.csv"), None);
        let (warnings, note) = c.report();
        let flagged = c.list.iter().filter(|c| c.flagged).count();
        assert_eq!(warnings.len(), flagged.min(LISTED + 1));
        assert!(note.unwrap().contains("out/r.csv"));
        // Many flagged changes: the most serious are listed and the rest counted.
        let many: Vec<Change> = (0..30)
            .map(|i| Change {
                path: format!("/p/f{i}").into(),
                kind: ChangeKind::Created,
                flagged: true,
                why: Some(Why::ProjectTop),
            })
            .chain(std::iter::once(Change {
                path: "/p/.git/config".into(),
                kind: ChangeKind::Changed,
                flagged: true,
                why: Some(Why::VersionControl),
            }))
            .collect();
        let (warnings, _) = Changes::new(many).report();
        assert_eq!(warnings.len(), LISTED + 1);
        assert!(warnings[0].contains("/p/.git/config"));
        assert!(warnings[LISTED].contains("21 more"));
    }

    #[test]
    fn the_walk_is_bounded_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::create_dir(dir.path().join(format!("d{i}"))).unwrap();
        }
        let roots = [dir.path().to_path_buf()];
        let full = Snapshot::of(Listing::take(&roots, 5));
        assert_eq!(full.listing.capped, None);
        let cut = Snapshot::of(Listing::take(&roots, 4));
        assert_eq!(cut.listing.capped, Some(4));
        // Nothing past the bound is taken for made or gone.
        let c = cut.since(&full);
        assert!(c.list.is_empty(), "{:?}", c.list);
        assert!(
            c.capped_message()
                .unwrap()
                .to_string()
                .contains("the first 4 entries")
        );
    }
}
