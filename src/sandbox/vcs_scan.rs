//! Version control metadata and tools' project settings (every name on
//! [`super::KEPT_READ_ONLY`]) anywhere in the writable paths, before and after a run. Only those
//! at the top of a writable path and of the folders directly in it are kept read-only (see
//! [`super::vcs_metadata`]); deeper down, or where none was yet, a script can make a repository
//! (`docs/api/.git` with `core.fsmonitor` set), a `.claude/settings.json` with hooks or a
//! `.vscode/tasks.json`, or change one, and the tool runs them outside the sandbox the next time
//! the user works there. Nothing can be mounted over what does not exist yet, so the executor
//! compares a snapshot taken before the run with one taken after, and warns of each one made
//! or changed.
//!
//! The walk is bounded ([`MAX_ENTRIES`]): a writable path may hold a huge tree, and a run must
//! not wait on it. When the bound is hit the warning says that the rest was not looked at.

use super::{Message, VCS_METADATA};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Directory entries looked at per snapshot, over all writable paths.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// Entries looked at inside one tool's settings folder (`.vscode/`, `.claude/`): they are small;
/// one that is not is still compared by its first entries.
const MAX_SETTINGS_ENTRIES: usize = 1_000;

/// The files in a metadata folder whose change makes the tool run something: git's and
/// Mercurial's settings, the hooks folder (and what is in it), and what sends git to read
/// settings and hooks elsewhere: `commondir` (the folder it takes them from), a worktree's own
/// `config.worktree`, and `worktrees/` (each linked worktree's `commondir` and `gitdir`).
const RUNS_FROM: [&str; 6] = [
    "config",
    "hgrc",
    "hooks",
    "commondir",
    "config.worktree",
    "worktrees",
];

/// One piece of version control metadata found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    path: PathBuf,
    /// Who runs what from it, for a tool's settings (`None` for version control metadata).
    runs: Option<&'static str>,
    /// Device and inode (of the entry itself, not a link's target).
    id: (u64, u64),
    /// What makes the tool run something, as it stands: the entry itself if it is a file (a
    /// linked worktree's `.git`), else its [`RUNS_FROM`] files and hooks — each one's name,
    /// inode, size and status change (ctime, which a script cannot set back; the rest catches
    /// a change within the file system's clock tick).
    changed: Vec<Stamp>,
}

/// The version control metadata in the writable paths at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    found: Vec<Found>,
    /// The walk stopped at this many entries.
    capped: Option<usize>,
}

impl Snapshot {
    /// Walk `roots` (not following links, not into the metadata itself), breadth first, so
    /// what is near the top is found before the bound is reached.
    pub(crate) fn take(roots: &[PathBuf]) -> Snapshot {
        Snapshot::take_bounded(roots, MAX_ENTRIES)
    }

    fn take_bounded(roots: &[PathBuf], max_entries: usize) -> Snapshot {
        let mut snap = Snapshot::default();
        let mut queue: std::collections::VecDeque<PathBuf> = roots.iter().cloned().collect();
        let mut seen = 0usize;
        'walk: while let Some(dir) = queue.pop_front() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut subdirs = Vec::new();
            let mut has_head = false;
            for entry in rd.filter_map(Result::ok) {
                seen += 1;
                if seen > max_entries {
                    snap.capped = Some(max_entries);
                    break 'walk;
                }
                let name = entry.file_name();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                has_head |= name == "HEAD";
                if VCS_METADATA.iter().any(|n| name == *n) {
                    snap.add(entry.path(), None);
                } else if let Some((_, runs)) = super::kept_read_only(&name) {
                    snap.add(entry.path(), Some(runs));
                } else if kind.is_dir() {
                    subdirs.push(entry.path());
                }
            }
            // A bare repository (looked at only where a `HEAD` is: a cheap first test) is
            // metadata as a whole; a root is one only when forced (`--force-writable`).
            if has_head && !roots.contains(&dir) && super::is_bare_repository(&dir) {
                snap.add(dir, None);
            } else {
                queue.extend(subdirs);
            }
        }
        snap
    }

    fn add(&mut self, path: PathBuf, runs: Option<&'static str>) {
        if let Ok(m) = path.symlink_metadata() {
            self.found.push(Found {
                changed: match runs {
                    None => last_change(&path, &m),
                    Some(_) => settings_stamps(&path, &m),
                },
                id: (m.dev(), m.ino()),
                runs,
                path,
            });
        }
    }

    /// The warnings for what the run did, this snapshot taken after it and `before` before.
    pub(crate) fn warnings_since(&self, before: &Snapshot) -> Vec<Message> {
        let mut out: Vec<Message> = self
            .found
            .iter()
            .filter_map(
                |f| match (before.found.iter().find(|b| b.id == f.id), f.runs) {
                    (None, None) => Some(super::made_vcs_metadata(&f.path)),
                    (None, Some(runs)) => Some(settings_warning("made", &f.path, runs)),
                    (Some(b), None) if b.changed != f.changed => {
                        Some(changed_vcs_metadata(&f.path))
                    }
                    (Some(b), Some(runs)) if b.changed != f.changed => {
                        Some(settings_warning("changed", &f.path, runs))
                    }
                    // Too big to compare whole (fail closed): it may have changed.
                    (Some(_), Some(runs)) if f.changed.contains(&TOO_BIG) => {
                        Some(settings_warning("may have changed", &f.path, runs))
                    }
                    (Some(_), _) => None,
                },
            )
            .collect();
        // Said once per process for a tree that was over the bound before the run (every run
        // there would repeat it), but always when the run itself pushed it over: a script could
        // fill the top of the tree to hide what it made below.
        static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if let Some(max) = self.capped
            && (before.capped.is_none() || !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed))
        {
            out.push(Message::text(format!(
                "looked for version control metadata and tools' settings the run made or \
                 changed in the first {max} entries of the writable paths only; those deeper \
                 down were not looked for"
            )));
        }
        out
    }
}

/// One file's name, inode, size and ctime.
type Stamp = (std::ffi::OsString, u64, u64, i64, i64);

/// The [`Found::changed`] of `path`, whose own metadata is `meta`.
fn last_change(path: &Path, meta: &std::fs::Metadata) -> Vec<Stamp> {
    let stamp = |name: std::ffi::OsString, m: &std::fs::Metadata| {
        (name, m.ino(), m.size(), m.ctime(), m.ctime_nsec())
    };
    if !meta.is_dir() {
        return vec![stamp(Default::default(), meta)];
    }
    let mut out = Vec::new();
    for name in RUNS_FROM {
        let p = path.join(name);
        let Ok(m) = p.symlink_metadata() else {
            continue;
        };
        out.push(stamp(name.into(), &m));
        if m.is_dir()
            && let Ok(rd) = std::fs::read_dir(&p)
        {
            for e in rd.filter_map(Result::ok) {
                let Ok(m) = e.path().symlink_metadata() else {
                    continue;
                };
                let rel = Path::new(name).join(e.file_name());
                out.push(stamp(rel.clone().into(), &m));
                // A linked worktree's folder: its `commondir` and `gitdir` say where git goes.
                if name == "worktrees" && m.is_dir() {
                    for f in ["commondir", "gitdir", "config.worktree"] {
                        if let Ok(m) = e.path().join(f).symlink_metadata() {
                            out.push(stamp(rel.join(f).into(), &m));
                        }
                    }
                }
            }
        }
    }
    out.sort();
    out
}

/// The mark of a settings folder over [`MAX_SETTINGS_ENTRIES`] in its [`Found::changed`].
static TOO_BIG: std::sync::LazyLock<Stamp> =
    std::sync::LazyLock::new(|| ("\u{0}too big".into(), 0, 0, 0, 0));

/// The [`Found::changed`] of a tool's settings `path` (own metadata `meta`): the file itself,
/// or each entry in the folder at any depth (bounded by [`MAX_SETTINGS_ENTRIES`]), by name.
fn settings_stamps(path: &Path, meta: &std::fs::Metadata) -> Vec<Stamp> {
    let stamp = |name: std::ffi::OsString, m: &std::fs::Metadata| {
        (name, m.ino(), m.size(), m.ctime(), m.ctime_nsec())
    };
    if !meta.is_dir() {
        return vec![stamp(Default::default(), meta)];
    }
    // Not the folder's own ctime: making a file in it changes that too, and that file is here.
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([path.to_path_buf()]);
    'walk: while let Some(dir) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            if out.len() >= MAX_SETTINGS_ENTRIES {
                // Not all compared: marked, so that the run is told it may have changed it.
                out.push(TOO_BIG.clone());
                break 'walk;
            }
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            let rel = e
                .path()
                .strip_prefix(path)
                .unwrap_or(&e.path())
                .to_path_buf();
            out.push(stamp(rel.into(), &m));
            if m.is_dir() {
                queue.push_back(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The warning for a tool's settings a run made or changed (`what`).
fn settings_warning(what: &str, path: &Path, runs: &str) -> Message {
    Message::text(format!(
        "the run {what} {}: {runs}, outside the sandbox; look at it before you use \
         that tool in {}",
        crate::command::escape_controls(&path.display().to_string()),
        crate::command::escape_controls(&path.parent().unwrap_or(path).display().to_string())
    ))
}

/// The warning for settings or hooks a run changed in existing version control metadata.
fn changed_vcs_metadata(path: &Path) -> Message {
    let tool = super::vcs_tool(path);
    Message::text(format!(
        "the run changed the settings or hooks in {}: {tool} runs them outside the sandbox; \
         look at them before you run {tool} in {}",
        crate::command::escape_controls(&path.display().to_string()),
        crate::command::escape_controls(&path.parent().unwrap_or(path).display().to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(m: Vec<Message>) -> Vec<String> {
        m.iter().map(|m| m.to_string()).collect()
    }

    /// git reads settings and hooks from where `commondir` (or a linked worktree's folder)
    /// points: making or changing one is changing the settings.
    #[test]
    fn a_redirect_to_other_settings_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("a/b/repo/.git/worktrees/w")).unwrap();
        std::fs::create_dir_all(r.join("srv.git/objects")).unwrap();
        std::fs::create_dir_all(r.join("srv.git/refs")).unwrap();
        std::fs::write(r.join("srv.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let roots = [r.to_path_buf()];
        let before = Snapshot::take(&roots);
        // A bare repository without a config is one to git, and to the walk.
        assert_eq!(before.found.len(), 2, "{:?}", before.found);
        std::fs::write(r.join("a/b/repo/.git/commondir"), "../../.cx\n").unwrap();
        std::fs::write(r.join("a/b/repo/.git/worktrees/w/commondir"), "../x\n").unwrap();
        std::fs::write(r.join("srv.git/commondir"), "../cache\n").unwrap();
        let said = texts(Snapshot::take(&roots).warnings_since(&before));
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said.iter()
                .all(|s| s.starts_with("the run changed the settings")),
            "{said:?}"
        );
    }

    #[test]
    fn made_and_changed_metadata_at_any_depth_is_told_of() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        for d in ["a/b/c/old/.git/hooks", "a/b/quiet/.hg", "lib/x"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::fs::write(r.join("a/b/c/old/.git/config"), "[core]\n").unwrap();
        let roots = [r.to_path_buf()];
        let before = Snapshot::take(&roots);
        assert_eq!(before.found.len(), 2);
        assert!(texts(Snapshot::take(&roots).warnings_since(&before)).is_empty());
        // Made deep down, a linked worktree's file, a hook planted in an old one.
        std::fs::create_dir_all(r.join("docs/api/.git")).unwrap();
        std::fs::write(r.join("lib/x/.git"), "gitdir: /elsewhere\n").unwrap();
        std::fs::write(r.join("a/b/c/old/.git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
        // A bare repository made deep down, whose objects are not walked.
        for d in ["srv/x.git/objects/ab", "srv/x.git/refs/heads"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::fs::write(r.join("srv/x.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(r.join("srv/x.git/config"), "[core]\n").unwrap();
        // Work in a repository that touches no settings is not worth a word.
        std::fs::write(r.join("a/b/quiet/.hg/dirstate"), "x").unwrap();
        let said = texts(Snapshot::take(&roots).warnings_since(&before));
        assert_eq!(said.len(), 4, "{said:?}");
        let bare = r.join("srv/x.git");
        assert!(
            said.iter()
                .any(|s| s.starts_with(&format!("the run made {}: git runs", bare.display())))
        );
        assert!(said.iter().any(|s| s.starts_with(&format!(
            "the run made {}",
            r.join("docs/api/.git").display()
        ))));
        assert!(
            said.iter()
                .any(|s| s.contains(&r.join("lib/x/.git").display().to_string()))
        );
        assert!(said.iter().any(|s| s.starts_with(&format!(
            "the run changed the settings or hooks in {}",
            r.join("a/b/c/old/.git").display()
        ))));
    }

    /// Tools' settings made in an empty writable folder, or changed two levels down, are told
    /// of like a new `.git`; work beside them is not.
    #[test]
    fn a_settings_folder_too_big_to_compare_is_told_of() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        let big = r.join("a/.vscode");
        std::fs::create_dir_all(&big).unwrap();
        for i in 0..=MAX_SETTINGS_ENTRIES {
            std::fs::write(big.join(format!("f{i}")), "").unwrap();
        }
        let roots = [r.to_path_buf()];
        let before = Snapshot::take(&roots);
        let said = texts(Snapshot::take(&roots).warnings_since(&before));
        assert!(
            said.iter()
                .any(|w| w.contains("may have changed") && w.contains(".vscode")),
            "{said:?}"
        );
    }

    #[test]
    fn tools_settings_made_or_changed_at_any_depth_are_told_of() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        std::fs::create_dir_all(r.join("sub/deep/.claude")).unwrap();
        std::fs::write(r.join("sub/deep/.claude/settings.json"), "{}").unwrap();
        std::fs::create_dir_all(r.join("sub/deep/.devcontainer")).unwrap();
        std::fs::write(r.join("sub/deep/.pre-commit-config.yaml"), "repos: []\n").unwrap();
        let roots = [r.to_path_buf()];
        let before = Snapshot::take(&roots);
        assert_eq!(before.found.len(), 3, "{:?}", before.found);
        // Control: nothing done, nothing said; a file beside them is no settings.
        std::fs::write(r.join("sub/deep/notes.md"), "x").unwrap();
        assert!(texts(Snapshot::take(&roots).warnings_since(&before)).is_empty());
        std::fs::create_dir_all(r.join(".claude")).unwrap();
        std::fs::write(r.join(".claude/settings.json"), r#"{"hooks":{}}"#).unwrap();
        std::fs::create_dir_all(r.join(".vscode")).unwrap();
        std::fs::write(r.join(".vscode/tasks.json"), "{}").unwrap();
        std::fs::write(r.join(".mcp.json"), "{}").unwrap();
        std::fs::write(r.join("lefthook.yml"), "x").unwrap();
        std::fs::write(
            r.join("sub/deep/.claude/settings.json"),
            r#"{"hooks":{"x":1}}"#,
        )
        .unwrap();
        std::fs::write(r.join("sub/deep/.devcontainer/devcontainer.json"), "{}").unwrap();
        std::fs::write(r.join("sub/deep/.pre-commit-config.yaml"), "repos: [x]\n").unwrap();
        let said = texts(Snapshot::take(&roots).warnings_since(&before));
        assert_eq!(said.len(), 7, "{said:?}");
        for (what, p) in [
            ("made", ".claude"),
            ("made", ".vscode"),
            ("made", ".mcp.json"),
            ("made", "lefthook.yml"),
            ("changed", "sub/deep/.claude"),
            ("changed", "sub/deep/.devcontainer"),
            ("changed", "sub/deep/.pre-commit-config.yaml"),
        ] {
            let head = format!("the run {what} {}: ", r.join(p).display());
            assert!(
                said.iter().any(|s| s.starts_with(&head)),
                "{head}: {said:?}"
            );
        }
        assert!(
            said.iter().any(|s| s.contains("VS Code runs the tasks")),
            "{said:?}"
        );
    }

    #[test]
    fn the_walk_is_bounded_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::create_dir(dir.path().join(format!("d{i}"))).unwrap();
        }
        let roots = [dir.path().to_path_buf()];
        let full = Snapshot::take_bounded(&roots, 5);
        assert_eq!(full.capped, None);
        let cut = Snapshot::take_bounded(&roots, 4);
        assert_eq!(cut.capped, Some(4));
        let said = texts(cut.warnings_since(&Snapshot::default()));
        assert!(said[0].contains("in the first 4 entries"), "{said:?}");
    }
}
