//! Which directories the user trusts (DESIGN §5a). A cloned repository is foreign: its `./agents`
//! and `./skills` folders are used only when the user has said so with `skillpipe trust`.
//!
//! The store is a line file of canonical directory paths, `$XDG_CONFIG_HOME/skillpipe/trusted-dirs`
//! (`#` starts a comment). A directory is trusted when it or one of its ancestors is listed, so
//! trusting a repository's root also covers its subfolders. Parsing and the decision are pure;
//! reading and writing the file are the few functions that say so.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What went wrong with the trust store or a directory to trust.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The folder to trust or revoke cannot be found.
    #[error("cannot trust {}: {source}; name an existing project folder", path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("neither $XDG_CONFIG_HOME nor $HOME is set: there is nowhere to record trust")]
    NoConfigDir,
    /// The trust file, or a folder on the way to it, could be changed by another user: it
    /// trusts nothing until it is the user's alone.
    #[error(
        "the trust list {} trusts no directory: {} could be changed by another user; make it \
         yours and `chmod o-w` it",
        path.display(),
        open.display()
    )]
    OpenToOthers { path: PathBuf, open: PathBuf },
    #[error(
        "{}: refusing to trust {what}: it would trust every project below it; trust the project's own directory",
        path.display()
    )]
    TooBroad { path: PathBuf, what: &'static str },
    #[error(
        "{} is not listed itself; it is trusted through {}: run `skillpipe trust --revoke {}`",
        dir.display(),
        via.display(),
        via.display()
    )]
    TrustedThrough { dir: PathBuf, via: PathBuf },
    #[error("{} is not trusted (nothing to revoke)", .0.display())]
    NotTrusted(PathBuf),
    #[error(
        "{}: refusing to trust a path with a control character, `#`, a space at an end or \
         invalid UTF-8 in it: the trust list holds one path per line (`#` starts a comment); \
         rename the directory",
        crate::command::escape_controls(&.0.to_string_lossy())
    )]
    Unlistable(PathBuf),
    #[error(
        "{}: refusing to trust a directory {why}: others could put agents and skills in it",
        .path.display()
    )]
    NotYours { path: PathBuf, why: &'static str },
}

/// The trust file's location.
pub fn store_path() -> Option<PathBuf> {
    crate::paths::config_dir().map(|d| d.join("trusted-dirs"))
}

/// The directories listed in a trust file's text, in order, without comments and blanks.
pub fn parse(text: &str) -> Vec<PathBuf> {
    text.lines()
        .map(|l| l.split_once('#').map_or(l, |(a, _)| a).trim())
        .filter(|l| l.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// The listed directory that covers `dir` (itself or an ancestor), if any. `dir` is canonical.
pub fn covering<'a>(trusted: &'a [PathBuf], dir: &Path) -> Option<&'a PathBuf> {
    trusted.iter().find(|t| dir.starts_with(t))
}

/// Reads the trust file; a missing file trusts nothing.
pub fn load() -> Result<Vec<PathBuf>, TrustError> {
    let Some(path) = store_path() else {
        return Ok(Vec::new());
    };
    if let Some(open) = crate::paths::writable_by_others(&path) {
        return Err(TrustError::OpenToOthers { path, open });
    }
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(TrustError::Io { path, source }),
    }
}

fn canonical(dir: &Path) -> Result<PathBuf, TrustError> {
    std::fs::canonicalize(dir).map_err(|source| TrustError::Folder {
        path: dir.to_path_buf(),
        source,
    })
}

fn write(list: &[PathBuf]) -> Result<(), TrustError> {
    let path = store_path().ok_or(TrustError::NoConfigDir)?;
    let io = |source| TrustError::Io {
        path: path.clone(),
        source,
    };
    // For the user's eyes and hand only, whatever the umask: a list others could change is
    // refused when read (`TrustError::OpenToOthers`).
    if let Some(parent) = path.parent() {
        crate::paths::create_private_dirs(parent).map_err(io)?;
    }
    let mut text = String::from(
        "# Directories whose ./agents and ./skills skillpipe uses (skillpipe trust --list)\n",
    );
    for d in list {
        text.push_str(&d.to_string_lossy());
        text.push('\n');
    }
    // Written whole (a fresh file, mode 0600) and renamed, so a crash never leaves half a list.
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(io)?;
    tmp.persist(&path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Records `dir` (canonicalized) as trusted. Returns it, and whether it was already listed.
/// `/`, `$HOME` and its ancestors are refused: they would trust every clone below them. So is a
/// path a line of the list cannot hold (a newline in it would list a second directory).
pub fn add(dir: &Path) -> Result<(PathBuf, bool), TrustError> {
    let dir = canonical(dir)?;
    // A line of the list is cut at `#` and trimmed (`parse`): such a path would list another.
    if dir
        .to_str()
        .is_none_or(|d| d.chars().any(char::is_control) || d.contains('#') || d.trim() != d)
    {
        return Err(TrustError::Unlistable(dir));
    }
    let home = crate::paths::home().and_then(|h| std::fs::canonicalize(h).ok());
    let too_broad = if dir == Path::new("/") {
        Some("the root directory")
    } else if home.as_deref() == Some(dir.as_path()) {
        Some("your home directory")
    } else if home.as_deref().is_some_and(|h| h.starts_with(&dir)) {
        Some("a folder that holds your home directory")
    } else {
        None
    };
    if let Some(what) = too_broad {
        return Err(TrustError::TooBroad { path: dir, what });
    }
    if let Some(why) = crate::paths::not_users_alone(&dir) {
        return Err(TrustError::NotYours { path: dir, why });
    }
    let mut list = load()?;
    if list.contains(&dir) {
        return Ok((dir, true));
    }
    list.push(dir.clone());
    write(&list)?;
    Ok((dir, false))
}

/// Removes `dir` from the list. A directory trusted only through an ancestor names that ancestor.
pub fn revoke(dir: &Path) -> Result<PathBuf, TrustError> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut list = load()?;
    if let Some(i) = list.iter().position(|d| *d == dir) {
        list.remove(i);
        write(&list)?;
        return Ok(dir);
    }
    match covering(&list, &dir) {
        Some(via) => Err(TrustError::TrustedThrough {
            via: via.clone(),
            dir,
        }),
        None => Err(TrustError::NotTrusted(dir)),
    }
}

/// Whether the working directory's project folders may be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CwdTrust {
    /// Listed (itself or a folder above it), and every folder from there down is the user's alone.
    Trusted,
    /// Not on the list.
    NotListed,
    /// Listed, but `dir` (the listed folder or one below it, down to here) is not the user's
    /// alone any more: `why` says how (see [`crate::paths::not_users_alone`]).
    Unsafe {
        /// The folder on the list that covers the working directory.
        listed: PathBuf,
        /// The folder that failed the check.
        dir: PathBuf,
        /// How it failed, e.g. "that anyone may write to".
        why: &'static str,
    },
    /// The trust file (or a folder on the way to it) could be changed by another user: it
    /// trusts nothing.
    StoreOpen {
        /// The trust file.
        store: PathBuf,
        /// The file or folder others could change.
        open: PathBuf,
    },
}

/// The working directory's [`CwdTrust`]; read once per process. An unreadable trust file
/// trusts nothing (fail closed).
pub fn cwd_trust() -> &'static CwdTrust {
    static TRUST: OnceLock<CwdTrust> = OnceLock::new();
    TRUST.get_or_init(|| {
        let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize) else {
            return CwdTrust::NotListed;
        };
        let list = match load() {
            Ok(list) => list,
            Err(TrustError::OpenToOthers { path, open }) => {
                return CwdTrust::StoreOpen { store: path, open };
            }
            Err(_) => return CwdTrust::NotListed,
        };
        let Some(listed) = covering(&list, &cwd) else {
            return CwdTrust::NotListed;
        };
        // The listed folder and every folder from it down to here: one that others may write
        // to (or own) could hold agents and skills of theirs.
        cwd.ancestors()
            .take_while(|d| d.starts_with(listed))
            .find_map(|d| {
                crate::paths::not_users_alone(d).map(|why| CwdTrust::Unsafe {
                    listed: listed.clone(),
                    dir: d.to_path_buf(),
                    why,
                })
            })
            .unwrap_or(CwdTrust::Trusted)
    })
}

/// Whether the working directory is trusted ([`CwdTrust::Trusted`]).
pub fn cwd_trusted() -> bool {
    *cwd_trust() == CwdTrust::Trusted
}

/// The skill search path (DESIGN §4), project folders included when the working directory is
/// trusted; `extra` are the `--skills-dir` flags.
pub fn skill_search_path(extra: &[PathBuf]) -> Vec<PathBuf> {
    crate::paths::skill_search_path_for(extra, cwd_trusted())
}

/// The agent search path (DESIGN §5), `./agents` included when the working directory is
/// trusted.
pub fn agent_search_path() -> Vec<PathBuf> {
    crate::paths::agent_search_path_for(cwd_trusted())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_skips_comments_blanks_and_relative_lines() {
        let list = parse("# header\n/a/b\n\n  /c # note\nrelative\n");
        assert_eq!(list, vec![PathBuf::from("/a/b"), PathBuf::from("/c")]);
    }

    #[test]
    fn a_listed_ancestor_covers_its_subfolders_only() {
        let list = vec![PathBuf::from("/src/repo")];
        assert!(covering(&list, Path::new("/src/repo")).is_some());
        assert!(covering(&list, Path::new("/src/repo/sub")).is_some());
        assert!(covering(&list, Path::new("/src/repo2")).is_none());
        assert!(covering(&list, Path::new("/src")).is_none());
    }
}
