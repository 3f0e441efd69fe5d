//! What a failed run likely ran into ([`Hint`]): first from its facts ([`RunFacts`]: the limit
//! whose signal killed it, the timeout, a path outside its view, a relative argument that exists
//! only where the user is), then from the paths its messages name (hidden, protected, writable,
//! a socket: looked up, not read as words), then from the dozen [`KEYWORDS`] below. Nothing
//! else of a program's English is read; a case only a phrase could tell is not told.

use crate::exec::RunResult;
use crate::sandbox::Enforced;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a failed run likely ran into, and so which setting would have let it through.
// The variants' docs say what their fields hold.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hint {
    /// A resource limit (`key` is the policy key).
    Limit {
        key: &'static str,
        value: Option<u64>,
    },
    /// Its messages name a path that exists but is outside its read view.
    OutsideView { path: PathBuf },
    /// Its messages name a path hidden from scripts (`deny_read`).
    Hidden { path: PathBuf },
    /// A refusal inside a writable path: the file's or folder's own permissions, not the sandbox.
    OwnPermissions { path: String },
    /// It was refused a Unix socket (`path`: the one the init's broker refused, if known).
    Sockets {
        network_off: bool,
        named: bool,
        path: Option<PathBuf>,
    },
    /// It wrote to a place scripts are never offered; no setting is named.
    Protected {
        path: String,
        why: String,
        /// The folder it ran in, when a relative path there was the protected one.
        ran_in: Option<PathBuf>,
    },
    /// It wrote outside `$TMPDIR` and the writable paths.
    Writes {
        writable: Vec<PathBuf>,
        ran_in: Option<PathBuf>,
    },
    /// A refusal the sandbox does not explain (a read, in `/proc` or of a file the user cannot
    /// read either, or with no path named).
    Denied { path: Option<String>, in_proc: bool },
    /// It wrote into version control metadata, kept read-only; no setting is named.
    VcsMetadata { name: &'static str },
    /// It tried to make a namespace of its own; no setting lifts that.
    Namespaces,
    /// It needed the network; `local` is an address on this machine it named.
    Network { local: Option<String> },
    /// It was stopped at the timeout.
    Timeout {
        after: Duration,
        network_off: bool,
        tool: Option<(String, u64)>,
    },
    /// A skill script ran in its skill's folder and missed `arg`, which exists where the user is.
    Workdir { arg: String },
    /// A Python script could not import `module`.
    MissingModule {
        module: String,
        /// A hidden path over the user's site (`~/.local/lib`).
        hidden: Option<PathBuf>,
        /// Python's variables set here but not passed to the run.
        dropped: Vec<&'static str>,
    },
}

/// What a keyword says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clue {
    NoSpace,
    NoMemory,
    NoProcess,
    ReadOnly,
    Denied,
    NotPermitted,
    Namespace,
    NoModule,
    Socket,
    Network,
}

/// The only words of a program's messages read (in lower case): at most a dozen.
const KEYWORDS: [(&str, Clue); 12] = [
    ("no space left", Clue::NoSpace),
    ("memory", Clue::NoMemory),
    ("resource temporarily unavailable", Clue::NoProcess),
    ("read-only file system", Clue::ReadOnly),
    ("permission denied", Clue::Denied),
    ("operation not permitted", Clue::NotPermitted),
    ("unshare", Clue::Namespace),
    ("no module named", Clue::NoModule),
    ("socket", Clue::Socket),
    ("network is unreachable", Clue::Network),
    // `could not resolve`, `name resolution`.
    ("resol", Clue::Network),
    ("connection refused", Clue::Network),
];

/// The likely cause of a failed run, or `None` when nothing points at one.
pub fn explain(r: &RunResult) -> Option<Hint> {
    let f = &r.facts;
    let e = r.enforced;
    if r.success() {
        return None;
    }
    if let Some(s) = &f.stopped {
        return Some(Hint::Timeout {
            after: s.after,
            network_off: e.network,
            tool: s.tool.clone(),
        });
    }
    if let Some(l) = f.limit {
        return Some(Hint::Limit {
            key: l.key,
            value: l.value,
        });
    }
    if let Some(path) = f.refused_sockets.first() {
        return Some(Hint::Sockets {
            network_off: e.network,
            named: !f.sandbox.sockets.is_empty(),
            path: Some(path.clone()),
        });
    }
    let said = r.said();
    let lower = said.to_lowercase();
    let clues: Vec<Clue> = (KEYWORDS.iter())
        .filter(|(k, _)| lower.contains(k))
        .map(|(_, c)| *c)
        .collect();
    let has = |c: Clue| clues.contains(&c);
    // Paths hidden from it (only when they were).
    let hidden: &[PathBuf] = if e.mounts { &f.sandbox.hide } else { &[] };
    if has(Clue::NoModule) {
        return missing_module(&said, f, hidden);
    }
    let limit = |key, value: Option<u64>| value.map(|_| Hint::Limit { key, value });
    if e.mounts && has(Clue::NoSpace) {
        return Some(Hint::Limit {
            key: "max_tmp_mb",
            value: f.sandbox.limits.tmp_mb,
        });
    }
    if e.limits
        && has(Clue::NoProcess)
        && let Some(h) = limit("max_processes", f.sandbox.limits.processes)
    {
        return Some(h);
    }
    if e.limits
        && has(Clue::NoMemory)
        && let Some(h) = limit("max_memory_mb", f.sandbox.limits.memory_mb)
    {
        return Some(h);
    }
    let sandboxed = e != Enforced::default();
    let refused = has(Clue::ReadOnly) || has(Clue::Denied);
    let paths: Vec<String> = said.lines().flat_map(named_in).collect();
    if let Some(h) = hidden_named(f, hidden, &said) {
        return Some(h);
    }
    if sandboxed && has(Clue::NotPermitted) && has(Clue::Namespace) {
        return Some(Hint::Namespaces);
    }
    if sandboxed
        && refused
        && let Some(h) = refusal(r, &paths, has(Clue::ReadOnly), has(Clue::Socket))
    {
        return Some(h);
    }
    if e.network && has(Clue::Network) {
        return Some(Hint::Network {
            local: local_address(&said),
        });
    }
    if let Some(path) = &f.outside_view {
        return Some(Hint::OutsideView { path: path.clone() });
    }
    let arg = f.elsewhere.clone().or_else(|| named_elsewhere(&said, f));
    arg.map(|arg| Hint::Workdir { arg })
}

/// A relative file name in the messages' last 4 KiB (at most 64 looked at, none with `..`) that
/// is missing where a skill script ran but exists where the user is: looked up, not read.
fn named_elsewhere(said: &str, f: &crate::exec::RunFacts) -> Option<String> {
    let caller = f.caller.as_ref()?;
    let tail = &said[said.floor_char_boundary(said.len().saturating_sub(4096))..];
    let words = tail.split(|c: char| c.is_whitespace() || "'\"`:,;()[]".contains(c));
    (words.map(|w| w.trim_end_matches(['.', '!', '?'])))
        .filter(|w| !w.is_empty() && w.len() <= 200 && !w.starts_with(['/', '-', '~']))
        .filter(|w| (w.contains('.') || w.contains('/')) && !w.split('/').any(|p| p == ".."))
        .take(64)
        .find(|w| caller.join(w).exists() && !f.cwd.join(w).exists())
        .map(crate::command::escape_controls)
}

/// A refused access, told by where the paths it names lie (never by what the message says
/// was done).
fn refusal(r: &RunResult, paths: &[String], read_only: bool, socket: bool) -> Option<Hint> {
    let f = &r.facts;
    let e = r.enforced;
    let abs = |p: &String| crate::sandbox::fold(&f.cwd.join(p));
    let esc = |p: &String| crate::command::escape_controls(p);
    let relative = paths.iter().any(|p| !p.starts_with('/'));
    let places = &f.sandbox.protected;
    let ran_in_protected = places.iter().any(|(place, _)| f.cwd.starts_with(place));
    let meant_caller = (f.ran_elsewhere.is_some() || ran_in_protected) && relative;
    if let Some(p) = paths.iter().find(|p| abs(p).starts_with("/proc")) {
        return Some(Hint::Denied {
            path: Some(esc(p)),
            in_proc: e.pids,
        });
    }
    let sockets = Hint::Sockets {
        network_off: e.network,
        named: !f.sandbox.sockets.is_empty(),
        path: None,
    };
    if socket && paths.is_empty() && !read_only {
        return Some(sockets);
    }
    let protected = paths.iter().find_map(|p| {
        let a = abs(p);
        let place = places.iter().find(|(place, _)| a.starts_with(place));
        place.map(|(_, why)| (p, why))
    });
    if let Some((p, why)) = protected
        && (e.filesystem || read_only)
        && !(meant_caller && f.ran_elsewhere.is_some())
    {
        return Some(Hint::Protected {
            path: esc(p),
            why: why.clone(),
            ran_in: (ran_in_protected && !p.starts_with('/')).then(|| f.cwd.clone()),
        });
    }
    if read_only
        && e.filesystem
        && let Some(name) = crate::sandbox::KEPT_READ_ONLY
            .into_iter()
            .map(|(n, _)| n)
            .find(|n| paths.iter().any(|p| Path::new(p).iter().any(|c| c == *n)))
    {
        return Some(Hint::VcsMetadata { name });
    }
    let first = paths.first();
    if let Some(p) = first {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = std::fs::symlink_metadata(abs(p)).map(|m| m.file_type());
        if kind.is_ok_and(|k| k.is_socket()) {
            return Some(sockets);
        }
        // Not readable outside the sandbox either: the file's own permissions.
        let unreadable = std::fs::File::open(abs(p))
            .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
        let inside = f.sandbox.writable.iter().any(|w| abs(p).starts_with(w));
        if !read_only && (inside && e.mounts || unreadable) {
            return Some(Hint::OwnPermissions { path: esc(p) });
        }
    }
    if e.filesystem && (read_only || first.is_some()) {
        return Some(Hint::Writes {
            writable: f.sandbox.writable.clone(),
            ran_in: f.ran_elsewhere.clone().filter(|_| relative),
        });
    }
    Some(Hint::Denied {
        path: first.map(esc),
        in_proc: false,
    })
}

/// A missing Python module: its top package, and what of skillpipe's making may keep an
/// installed one out of reach. `None` for the skill's own package (on the run's `PYTHONPATH`).
fn missing_module(said: &str, f: &crate::exec::RunFacts, hidden: &[PathBuf]) -> Option<Hint> {
    let at = said.to_lowercase().rfind("no module named")? + "no module named".len();
    let name: String = said[at..]
        .trim_start()
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
        .collect();
    let top = name.split('.').next().filter(|t| !t.is_empty())?;
    // The skill's own (bundled anywhere in its folder, or where it ran): no install helps.
    if f.skill_dir.iter().chain([&f.cwd]).any(|d| bundles(d, top)) {
        return None;
    }
    let site = f.home.as_ref().map(|h| h.join(".local/lib"));
    let hidden = site.and_then(|s| {
        let over = |p: &&PathBuf| s.starts_with(p) || p.starts_with(&s);
        hidden.iter().find(over).cloned()
    });
    Some(Hint::MissingModule {
        module: crate::command::escape_controls(&name),
        hidden,
        dropped: f.dropped.clone(),
    })
}

/// Whether `dir` holds the module `top` within six levels (`top/` or `top.py`; dot folders
/// skipped, links not followed, at most 20,000 entries read).
fn bundles(dir: &Path, top: &str) -> bool {
    let file = format!("{top}.py");
    let (mut stack, mut seen) = (vec![(dir.to_path_buf(), 0)], 0);
    while let Some((d, depth)) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            seen += 1;
            let name = e.file_name();
            if seen > 20_000 {
                return false;
            }
            if name == top || name == file.as_str() {
                return true;
            }
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            if dir && depth < 6 && !name.to_string_lossy().starts_with('.') {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    false
}

/// The outermost hidden path the messages name, absolute or relative to where it ran. A
/// relative name that more than one hidden path ends with (it may have changed folder) is
/// given as it was named: which one is not known.
fn hidden_named(f: &crate::exec::RunFacts, hidden: &[PathBuf], said: &str) -> Option<Hint> {
    let relative = |p: &PathBuf| {
        let rel = p.strip_prefix(&f.cwd).ok()?.to_string_lossy().into_owned();
        let starts = said.match_indices(rel.as_str()).any(|(i, _)| {
            let head = said[..i].strip_suffix("./").unwrap_or(&said[..i]);
            head.ends_with(|c: char| c.is_whitespace() || "'\"`(‘".contains(c)) || head.is_empty()
        });
        (starts && names(said, &rel)).then_some(rel)
    };
    let named = |p: &&PathBuf| names(said, &p.to_string_lossy()) || relative(p).is_some();
    let path = (hidden.iter())
        .filter(named)
        .min_by_key(|p| p.as_os_str().len())?;
    if !names(said, &path.to_string_lossy())
        && let Some(rel) = relative(path)
        && hidden.iter().filter(|h| h.ends_with(&rel)).count() > 1
    {
        return Some(Hint::Hidden { path: rel.into() });
    }
    Some(Hint::Hidden { path: path.clone() })
}

/// Whether `said` names `path` as a whole (then `/`, a quote, `:`, a space or the end).
fn names(said: &str, path: &str) -> bool {
    !path.is_empty()
        && said.match_indices(path).any(|(i, _)| {
            (said[i + path.len()..].chars().next())
                .is_none_or(|c| "/'\":`)’".contains(c) || c.is_whitespace())
        })
}

/// The paths a refusal line names: quoted ones, else the word before the refusal; none on a
/// line that is no refusal.
fn named_in(line: &str) -> Vec<String> {
    let lower = line.to_lowercase();
    let end = ["permission denied", "read-only file system"]
        .iter()
        .filter_map(|w| lower.find(w))
        .min();
    let Some(end) = end else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len_utf8()..];
            let Some(j) = after.find(close) else { break };
            let inner = &after[..j];
            if looks_like_path(inner) && !out.iter().any(|o| o == inner) {
                out.push(inner.to_string());
            }
            rest = &after[j + close.len_utf8()..];
        }
    }
    if out.is_empty() {
        let before = line[..end].trim_end().trim_end_matches(':');
        let piece = before.rsplit(": ").next().unwrap_or(before);
        if let Some(word) = piece.split_whitespace().last()
            && looks_like_path(word)
            && word != before
        {
            out.push(word.to_string());
        }
    }
    out
}

/// Whether `s` may be a path (not `[Errno 13]`, a number or empty).
fn looks_like_path(s: &str) -> bool {
    !s.is_empty()
        && !s.contains(['[', ']', '\n'])
        && !s.chars().all(|c| c.is_ascii_digit())
        && s.chars()
            .any(|c| c.is_alphanumeric() || c == '/' || c == '.')
}

/// An address on this machine the messages name (`127.0.0.1:48123`, curl's `127.0.0.1 port N`).
fn local_address(said: &str) -> Option<String> {
    ["127.0.0.1", "localhost", "[::1]"].iter().find_map(|host| {
        said.match_indices(host).find_map(|(i, _)| {
            let rest = &said[i + host.len()..];
            let rest = rest
                .strip_prefix(':')
                .or_else(|| rest.strip_prefix(" port "))?;
            let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (1..=5)
                .contains(&port.len())
                .then(|| format!("{host}:{port}"))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{RunFacts, Stopped};
    use crate::sandbox::SandboxSpec;

    fn failed(stderr: &str, enforced: Enforced, facts: RunFacts) -> RunResult {
        RunResult {
            exit_code: 1,
            stderr: stderr.as_bytes().to_vec(),
            enforced,
            facts,
            ..RunResult::default()
        }
    }

    fn all() -> Enforced {
        Enforced {
            network: true,
            filesystem: true,
            pids: true,
            mounts: true,
            limits: true,
        }
    }

    #[test]
    fn a_dozen_keywords_at_most() {
        assert!(KEYWORDS.len() <= 12);
        assert!(KEYWORDS.iter().all(|(k, _)| *k == k.to_lowercase()));
    }

    #[test]
    fn facts_come_first() {
        let facts = RunFacts {
            stopped: Some(Stopped {
                after: Duration::from_secs(3),
                tool: None,
            }),
            ..RunFacts::default()
        };
        let r = failed("Permission denied", all(), facts);
        assert!(matches!(
            explain(&r),
            Some(Hint::Timeout {
                network_off: true,
                ..
            })
        ));
        let facts = RunFacts {
            limit: Some(crate::exec::LimitHit {
                key: "max_cpu_seconds",
                value: Some(1),
            }),
            ..RunFacts::default()
        };
        let r = failed("", all(), facts);
        assert_eq!(
            explain(&r),
            Some(Hint::Limit {
                key: "max_cpu_seconds",
                value: Some(1)
            })
        );
    }

    #[test]
    fn paths_are_looked_up_not_read() {
        let facts = || RunFacts {
            cwd: "/p".into(),
            sandbox: SandboxSpec {
                hide: vec!["/h/.aws".into()],
                writable: vec!["/p/out".into()],
                protected: vec![("/home/u/.bashrc".into(), "a shell start-up file".into())],
                ..SandboxSpec::default()
            },
            ..RunFacts::default()
        };
        for (said, kind) in [
            ("cat: /h/.aws/credentials: No such file", "hidden"),
            ("bash: /home/u/.bashrc: Permission denied", "protected"),
            (
                "touch: cannot touch '/etc/x': Read-only file system",
                "writes",
            ),
        ] {
            let hint = explain(&failed(said, all(), facts()));
            assert_eq!(hint.map(|h| h.kind()), Some(kind), "{said}");
        }
        let git = failed(
            "error: '.git/config': Read-only file system",
            all(),
            facts(),
        );
        assert_eq!(explain(&git), Some(Hint::VcsMetadata { name: ".git" }));
        let proc = failed("cat: /proc/1/environ: Permission denied", all(), facts());
        assert!(matches!(
            explain(&proc),
            Some(Hint::Denied { in_proc: true, .. })
        ));
    }

    #[test]
    fn keywords_name_the_limit_only_when_it_is_set() {
        let mut facts = RunFacts::default();
        let r = failed("MemoryError", all(), facts.clone());
        assert_eq!(explain(&r), None);
        facts.sandbox.limits.memory_mb = Some(64);
        let r = failed("MemoryError", all(), facts);
        assert!(matches!(
            explain(&r),
            Some(Hint::Limit {
                key: "max_memory_mb",
                ..
            })
        ));
        let r = failed(
            "curl: (7) Failed to connect to 127.0.0.1 port 8080: Connection refused",
            all(),
            RunFacts::default(),
        );
        let local = Some("127.0.0.1:8080".to_string());
        assert_eq!(explain(&r), Some(Hint::Network { local }));
        let plain = failed("usage: x FILE", all(), RunFacts::default());
        assert_eq!(explain(&plain), None);
    }

    #[test]
    fn a_missing_module_names_its_top_package() {
        let facts = RunFacts {
            home: Some("/home/u".into()),
            sandbox: SandboxSpec {
                hide: vec!["/home/u/.local".into()],
                ..SandboxSpec::default()
            },
            ..RunFacts::default()
        };
        let r = failed(
            "ModuleNotFoundError: No module named 'google.protobuf'",
            all(),
            facts,
        );
        let Some(Hint::MissingModule { module, hidden, .. }) = explain(&r) else {
            panic!()
        };
        assert_eq!(module, "google.protobuf");
        assert_eq!(hidden, Some("/home/u/.local".into()));
    }
}
