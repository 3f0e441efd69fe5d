//! Whether two skill folders are copies of one skill (`cp -r ~/.claude/skills ~/.agents/skills`):
//! the same files at the same paths with the same bytes. A copy is the same skill, not a clash
//! worth a warning on every command.

use std::fs;
use std::path::{Path, PathBuf};

/// Beyond this many entries a folder is not compared (it counts as different: the warning
/// stays, which is the safe side).
const MAX_ENTRIES: usize = 10_000;

/// Beyond this many bytes of file content (per folder) the folders are not compared byte by
/// byte: this runs on every load, and a large asset in two search folders would be read twice
/// each command (each file is read whole, so this also bounds the memory it takes). Over the
/// cap they count as different (the warning stays).
const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// One entry of a folder, relative to it: a file with its size, a link with its target, or a
/// folder.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Entry {
    File(PathBuf, u64),
    Link(PathBuf, PathBuf),
    Dir(PathBuf),
}

/// True when `a` and `b` hold the same tree: the same names, kinds, link targets, and file
/// bytes. Any error reading either, or more than [`MAX_BYTES`] to compare, counts as different.
pub(super) fn identical(a: &Path, b: &Path) -> bool {
    let (Some(left), Some(right)) = (listing(a), listing(b)) else {
        return false;
    };
    let total: u64 = left
        .iter()
        .map(|e| match e {
            Entry::File(_, len) => *len,
            _ => 0,
        })
        .sum();
    left == right
        && total <= MAX_BYTES
        && left.iter().all(|e| match e {
            Entry::File(rel, _) => {
                matches!((fs::read(a.join(rel)), fs::read(b.join(rel))), (Ok(x), Ok(y)) if x == y)
            }
            _ => true,
        })
}

/// Every entry below `root`, sorted; `None` if it cannot be read or is too big.
fn listing(root: &Path) -> Option<Vec<Entry>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in fs::read_dir(root.join(&rel)).ok()? {
            let e = e.ok()?;
            let path = rel.join(e.file_name());
            let meta = fs::symlink_metadata(e.path()).ok()?;
            let entry = if meta.is_symlink() {
                Entry::Link(path, fs::read_link(e.path()).ok()?)
            } else if meta.is_dir() {
                stack.push(path.clone());
                Entry::Dir(path)
            } else {
                Entry::File(path, meta.len())
            };
            out.push(entry);
            if out.len() > MAX_ENTRIES {
                return None;
            }
        }
    }
    out.sort();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, files: &[(&str, &str)]) {
        for (rel, text) in files {
            let p = root.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
    }

    #[test]
    fn copies_are_identical_and_any_difference_is_not() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let files = [
            ("SKILL.md", "---\nname: x\n---\n"),
            ("scripts/x.py", "print(1)\n"),
        ];
        tree(&a, &files);
        tree(&b, &files);
        assert!(identical(&a, &b));
        // One byte differs, same size.
        fs::write(b.join("scripts/x.py"), "print(2)\n").unwrap();
        assert!(!identical(&a, &b));
        fs::write(b.join("scripts/x.py"), "print(1)\n").unwrap();
        assert!(identical(&a, &b));
        // A file more.
        fs::write(b.join("extra.md"), "").unwrap();
        assert!(!identical(&a, &b));
        fs::remove_file(b.join("extra.md")).unwrap();
        // A folder more, even empty.
        fs::create_dir(b.join("assets")).unwrap();
        assert!(!identical(&a, &b));
        assert!(!identical(&a, &t.path().join("missing")));
    }

    #[test]
    fn copies_over_the_byte_cap_count_as_different_unread() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        for root in [&a, &b] {
            fs::create_dir_all(root).unwrap();
            // Sparse: no data written, the size alone is over the cap.
            let f = fs::File::create(root.join("big.bin")).unwrap();
            f.set_len(MAX_BYTES + 1).unwrap();
        }
        assert!(!identical(&a, &b));
        // Positive control: at the cap they are still compared (and equal).
        for root in [&a, &b] {
            fs::OpenOptions::new()
                .write(true)
                .open(root.join("big.bin"))
                .unwrap()
                .set_len(MAX_BYTES)
                .unwrap();
        }
        assert!(identical(&a, &b));
    }
}
