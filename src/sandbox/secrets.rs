//! What stays hidden *inside* a run's view (see `view`: nothing outside it is mounted at all):
//! the project's `.env*` files in the folders a run sees, `/etc`'s shadow files and private
//! keys, skillpipe's own config and state, and the policy's `deny_read`. The launcher covers
//! each one that exists (an empty read-only tmpfs over a directory, an empty read-only file over
//! a file). Lifted per path by `--allow-read`.

use std::ffi::OsStr;
use std::fs::DirEntry;
use std::path::{Path, PathBuf};

/// System-wide secrets. Unreadable to ordinary users anyway, but a skillpipe run as root (in
/// a container, say) maps root into the run, whose owner permissions then let a script read
/// them.
pub const DEFAULT_SYSTEM: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssl/private",
];

/// The user's Kerberos ticket caches in `dir` (`/tmp`): files named `krb5cc_*` owned by `uid`
/// (another user's are theirs to guard, and a planted link must not hide a host file).
pub fn kerberos_tickets(dir: &Path, uid: u32) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    sorted_entries(dir, |e| {
        e.file_name().as_encoded_bytes().starts_with(b"krb5cc_")
            && (e.metadata()).is_ok_and(|m| m.file_type().is_file() && m.uid() == uid)
    })
}

/// This process's real user id (whose ticket caches these are).
fn my_uid() -> u32 {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() }
}

/// The host's private SSH keys (`ssh_host_*_key`, not the `.pub` halves) in `dir`.
pub fn host_keys(dir: &Path) -> Vec<PathBuf> {
    sorted_entries(dir, |e| {
        let name = e.file_name().into_encoded_bytes();
        name.starts_with(b"ssh_host_") && name.ends_with(b"_key")
    })
}

/// The paths of the entries of `dir` that `pick` takes, sorted; none when `dir` cannot be read.
pub(super) fn sorted_entries(dir: &Path, pick: impl Fn(&DirEntry) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(pick)
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// File names that start with one of these are hidden (`.env`, `.env.local`, `.envrc`, and
/// Wrangler's `.dev.vars`) in the working directory, in its subfolders ([`dotenv_below`]) and in
/// each folder above it up to the project's root (see [`project_dirs`]).
pub const DOTENV_PREFIXES: [&str; 2] = [".env", ".dev.vars"];

/// Directory entries looked at, at most, in the subfolders of a working directory for `.env*`
/// files ([`dotenv_below`]): a run must not wait on a huge tree.
pub const MAX_WALK_ENTRIES: usize = 4_000;

/// Folders not walked into for `.env*` files besides version control metadata: dependencies,
/// build output and caches (big, and not where a project keeps its secrets).
const NOT_WALKED: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".cache",
    ".next",
    ".gradle",
    ".terraform",
    "vendor",
    "dist",
    "build",
];

/// What [`dotenv_below`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Below {
    /// `.env*` files, and `.envs/` folders (hidden as a whole).
    pub found: Vec<PathBuf>,
    /// The walk stopped at its bound: what is further down was not looked at.
    pub capped: bool,
}

/// The `.env*` files and `.envs/` folders in the subfolders of `dir` (`./backend/.env`,
/// `./backend/api/.env.local`, `./.envs/`), breadth first, not following links to folders,
/// skipping version control metadata and [`NOT_WALKED`], looking at no more than `max_entries`
/// entries in all (what is near the top is found first).
pub fn dotenv_below(dir: &Path, max_entries: usize, home: Option<&Path>) -> Below {
    let mut out = Below::default();
    let mut queue = std::collections::VecDeque::from([dir.to_path_buf()]);
    let mut seen = 0usize;
    while let Some(d) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut files = Vec::new();
        for e in rd.filter_map(Result::ok) {
            seen += 1;
            if seen > max_entries {
                files.sort();
                out.found.extend(files);
                out.capped = true;
                return out;
            }
            let name = e.file_name();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && !is_secrets_folder(&name) {
                if !super::is_vcs_metadata(&name) && !NOT_WALKED.iter().any(|n| name == *n) {
                    queue.push_back(e.path());
                }
            } else if d != dir && is_secret(&e, dir, home) {
                files.push(e.path());
            }
        }
        files.sort();
        out.found.extend(files);
    }
    out
}

/// Where a `.env*` link leads, and whether its target is hidden from scripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotenvLink {
    /// The target, resolved (`None`: it leads nowhere).
    pub target: Option<PathBuf>,
    /// Why the target stays readable; `None` when it is hidden.
    pub shown_because: Option<&'static str>,
}

impl DotenvLink {
    /// Whether the target is hidden (covered for the run).
    pub fn hidden(&self) -> bool {
        self.target.is_some() && self.shown_because.is_none()
    }
}

/// Whether the target of the `.env*` link `link` in `project` is hidden: a covered link covers
/// its target, so a hostile checkout's `.env -> /usr/bin/env` would blank that file for every
/// run. It is hidden only when it is a regular, non-executable file inside the project or the
/// user's home (`~/secrets/prod.env`), and not in skillpipe's config or the user's skill and
/// agent folders (a skill's files are no secrets); elsewhere (system trees, other users'
/// folders) it stays readable, as the file it is.
pub fn dotenv_link(link: &Path, project: &Path, home: Option<&Path>) -> DotenvLink {
    use std::os::unix::fs::PermissionsExt;
    let shown = |target: Option<PathBuf>, why| DotenvLink {
        target,
        shown_because: Some(why),
    };
    let Ok(target) = std::fs::canonicalize(link) else {
        return shown(None, "it leads nowhere");
    };
    let Ok(meta) = std::fs::metadata(&target) else {
        return shown(Some(target), "it leads nowhere");
    };
    if !meta.is_file() {
        return shown(Some(target), "not a file");
    }
    if meta.permissions().mode() & 0o111 != 0 {
        return shown(Some(target), "an executable, not a secrets file");
    }
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let own = crate::paths::policy_places();
    if own.iter().any(|p| target.starts_with(real(p))) {
        return shown(Some(target), "in skillpipe's config or your skill folders");
    }
    let in_project = target.starts_with(real(project));
    let in_home = home
        .filter(|h| h.parent().is_some())
        .is_some_and(|h| target.starts_with(real(h)));
    if !in_project && !in_home {
        return shown(Some(target), "outside the project and your home");
    }
    DotenvLink {
        target: Some(target),
        shown_because: None,
    }
}

/// The `.env*` links in the working directory `cwd` and the folders above it up to its
/// project's root, each with where it leads and whether that is hidden (for `doctor`).
pub fn dotenv_links(cwd: &Path) -> Vec<(PathBuf, DotenvLink)> {
    let home = crate::paths::home();
    let home = home.as_deref();
    let project = project_root(cwd, home).unwrap_or_else(|| cwd.to_path_buf());
    let mut out = Vec::new();
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&project))
        .collect();
    dirs.dedup();
    for d in dirs {
        let links = sorted_entries(d, |e| {
            is_dotenv(&e.file_name()) && e.file_type().is_ok_and(|t| t.is_symlink())
        });
        out.extend(links.into_iter().map(|l| {
            let v = dotenv_link(&l, &project, home);
            (l, v)
        }));
    }
    out
}

/// Whether a folder of this name holds a project's secrets as a whole: cookiecutter-django's
/// `.envs/` (`.envs/.production/.postgres`), whose files are not named `.env*`.
fn is_secrets_folder(name: &OsStr) -> bool {
    name == ".envs"
}

/// The project's root above `dir`: the nearest folder with version control metadata, below
/// `home` (a dotfiles repository in `$HOME` makes no project of it) and the user's alone (a
/// shared folder's other entries are not the user's to hide), or `None`.
pub fn project_root(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    project_dirs(dir, home, is_root)
        .pop()
        .filter(|d| Some(d.as_path()) != home && d.parent().is_some() && is_root(d))
        .filter(|d| crate::paths::not_users_alone(d).is_none())
}

/// Whether `d` holds version control metadata: the top of a project.
fn is_root(d: &Path) -> bool {
    super::KEPT_READ_ONLY
        .iter()
        .any(|(m, _)| d.join(m).exists())
}

/// Whether a file of this name is hidden as a project's secrets (see [`DOTENV_PREFIXES`]).
fn is_dotenv(name: &OsStr) -> bool {
    DOTENV_PREFIXES
        .iter()
        .any(|p| name.as_encoded_bytes().starts_with(p.as_bytes()))
}

/// What to hide for one run, pure: the `.env*` files found (`dotenv`), plus `extra` (policy
/// `deny_read`, `~/` expanded, and the system's secrets), minus what a path in `allow`
/// (`--allow-read`) names: the entry it is, and those beneath it. A path that only holds
/// entries (`/`, `~`) lifts nothing — showing every secret at once takes naming each (the flag
/// refuses one, see `holds_hidden`).
pub fn deny_list(
    home: Option<&Path>,
    dotenv: &[PathBuf],
    extra: &[PathBuf],
    allow: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dotenv.to_vec();
    out.extend(extra.iter().map(|p| expand_home(p, home)));
    let allow: Vec<PathBuf> = allow
        .iter()
        .map(|p| expand_home(p, home))
        .filter(|a| out.iter().any(|h| a.starts_with(h)))
        .collect();
    out.retain(|p| !allow.iter().any(|a| p.starts_with(a)));
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The entries of `hidden` that `path` holds (lies above), when it is not itself one of them
/// nor inside one: `--allow-read` of such a path would show nothing (see [`deny_list`]), so the
/// flag refuses it naming these. Pure.
pub fn holds_hidden<'a>(path: &Path, hidden: &'a [PathBuf]) -> Vec<&'a Path> {
    if hidden.iter().any(|h| path.starts_with(h)) {
        return Vec::new();
    }
    let mut out: Vec<&Path> = hidden
        .iter()
        .filter(|h| h.starts_with(path))
        .map(PathBuf::as_path)
        .collect();
    out.dedup();
    out
}

/// `dir` and the folders above it, up to the first that is a project's root (`is_root`), or
/// `home`, or `/` — where a project's `.env` may be (a script run from `proj/sub` reads
/// `../.env` just as well). Pure.
pub fn project_dirs(
    dir: &Path,
    home: Option<&Path>,
    is_root: impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dir.ancestors() {
        out.push(d.to_path_buf());
        if Some(d) == home || is_root(d) {
            break;
        }
    }
    out
}

/// The `.env*` files in `dir` and the folders above it (see [`project_dirs`]). Above `dir`,
/// only the user's own folders that others cannot write to count (not `/tmp`), and only
/// regular files: hiding covers a link's target, so a link planted in a shared folder could
/// otherwise hide any file from every run.
pub fn dotenv_files(dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let project = project_root(dir, home).unwrap_or_else(|| dir.to_path_buf());
    for (i, d) in project_dirs(dir, home, is_root).into_iter().enumerate() {
        let above = i > 0;
        if above && crate::paths::not_users_alone(&d).is_some() {
            break;
        }
        let found = sorted_entries(&d, |e| is_secret(e, &project, home));
        out.extend(found.into_iter().filter(|p| {
            !above
                || p.symlink_metadata().is_ok_and(|m| {
                    m.is_file() || m.is_dir() && p.file_name().is_some_and(is_secrets_folder)
                })
        }));
    }
    out
}

/// `~/x` → `$HOME/x`; other paths unchanged.
pub fn expand_home(p: &Path, home: Option<&Path>) -> PathBuf {
    match (p.strip_prefix("~"), home) {
        (Ok(rest), Some(h)) => h.join(rest),
        _ => p.to_path_buf(),
    }
}

/// `~/x` → `$HOME/x`, `$VAR/x` → the variable's value + `/x` (as `var` says); `None` when the
/// variable is unset or empty.
pub fn expand(
    p: &Path,
    home: Option<&Path>,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let text = p.to_string_lossy();
    if let Some(rest) = text.strip_prefix('$') {
        let (name, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let value = var(name).filter(|v| !v.is_empty())?;
        return Some(PathBuf::from(value).join(tail));
    }
    Some(expand_home(p, home))
}

/// The entries of `deny_list` that exist on this machine (what doctor shows, what the launcher
/// is given). Symlinks count when their target exists: the mount covers the target.
pub fn existing(list: Vec<PathBuf>) -> Vec<PathBuf> {
    list.into_iter().filter(|p| p.exists()).collect()
}

/// The existing paths a script run in `cwd` must not read: the built-in list, `deny_read`, the
/// `.env*` files of `cwd` and of skillpipe's own working directory (the user's project) and of
/// the folders above them up to the project's root, minus `allow_read` (see [`deny_list`]).
pub fn hidden(cwd: &Path, deny_read: &[PathBuf], allow_read: &[PathBuf]) -> Vec<PathBuf> {
    hidden_and_notice(cwd, deny_read, allow_read, None).0
}

/// [`hidden`] for a run whose read view is `cwd` and the folders `view` (writable, granted)
/// and nothing else of the user's: only what it sees is walked for `.env*` files (`None`: no
/// view, the whole tree is seen). Also what to tell the user when a walk stopped at its bound
/// ([`MAX_WALK_ENTRIES`]): files further down stay readable unless `deny_read` names them.
pub fn hidden_and_notice(
    cwd: &Path,
    deny_read: &[PathBuf],
    allow_read: &[PathBuf],
    view: Option<&[PathBuf]>,
) -> (Vec<PathBuf>, Option<String>) {
    let shown = view.unwrap_or_default();
    let visible =
        |p: &Path| view.is_none() || p.starts_with(cwd) || shown.iter().any(|s| p.starts_with(s));
    let home_dir = crate::paths::home();
    let home = home_dir.as_deref();
    // skillpipe's config file holds the model API key, wherever XDG_CONFIG_HOME puts it; its
    // state folder holds the REPL history, saved conversations and the audit log.
    let extra: Vec<PathBuf> = deny_read
        .iter()
        .cloned()
        .chain(crate::paths::config_file())
        .chain(crate::paths::state_dir())
        .chain(DEFAULT_SYSTEM.iter().map(PathBuf::from))
        .chain(host_keys(Path::new("/etc/ssh")))
        .chain(kerberos_tickets(Path::new("/tmp"), my_uid()))
        .collect();
    let here = std::env::current_dir()
        .ok()
        .filter(|h| h != cwd && visible(h));
    let heres = || std::iter::once(cwd).chain(here.as_deref());
    let mut dotenv = Vec::new();
    // Found twice is listed once (`deny_list` keeps the first).
    for d in heres() {
        dotenv.extend(dotenv_files(d, home));
        let git_config = d.join(".git/config");
        if git_config_holds_credentials(&git_config) {
            dotenv.push(git_config);
        }
    }
    // Below each working directory (what is near first), then below the project's root: a
    // script run in `proj/web` reads `../api/.env` as well.
    let roots = heres().filter_map(|d| project_root(d, home));
    let starts = (heres().map(Path::to_path_buf))
        .chain(roots.filter(|r| visible(r)))
        .chain(shown.iter().filter(|s| s.is_dir()).cloned());
    let (mut walked, mut notice) = (Vec::new(), None);
    for start in starts {
        if walked.contains(&start) {
            continue;
        }
        let below = dotenv_below(&start, MAX_WALK_ENTRIES, home);
        if below.capped && notice.is_none() {
            notice = Some(walk_capped(&start));
        }
        dotenv.extend(below.found);
        walked.push(start);
    }
    (
        existing(deny_list(home, &dotenv, &extra, allow_read)),
        notice,
    )
}

/// Whether a git config file holds credentials, by git's own keys: a remote `url`/`pushurl`
/// with a password in it (`https://user:token@host/…`), or an `extraheader` (an
/// `Authorization:` header sent with every fetch).
pub fn git_config_holds_credentials(config: &Path) -> bool {
    use std::io::Read;
    let mut text = String::new();
    let Ok(f) = std::fs::File::open(config) else {
        return false;
    };
    let _ = f.take(64 * 1024).read_to_string(&mut text);
    text.lines()
        .filter_map(|l| l.split_once('='))
        .any(|(key, value)| {
            let key = key.trim().to_ascii_lowercase();
            let userinfo = value
                .trim()
                .split_once("://")
                .and_then(|(_, rest)| rest.split('/').next())
                .and_then(|authority| authority.rsplit_once('@'))
                .is_some_and(|(user, _)| user.contains(':'));
            key == "extraheader" || (matches!(key.as_str(), "url" | "pushurl") && userinfo)
        })
}

/// The notice for a `.env*` walk below `start` that stopped at its bound.
fn walk_capped(start: &Path) -> String {
    format!(
        "looked for .env files in the first {MAX_WALK_ENTRIES} entries below {} only: those \
         further down stay readable to scripts; add them to deny_read in the policy to hide them",
        crate::command::escape_controls(&start.display().to_string())
    )
}

/// Whether the entry `e` is a project's secret: a `.env*` file, a `.envs/` folder, or a
/// `.env*` link that leads to a file the user keeps secrets in (see [`dotenv_link`]: a link
/// named `.env` in a checkout must not blank any host file it points at, an interpreter, a CA
/// bundle, a skill's script). Other directories are not secrets files (a virtualenv is often
/// called `.env`). The name first: a folder above the project (`/tmp`) may hold thousands of
/// entries.
fn is_secret(e: &DirEntry, project: &Path, home: Option<&Path>) -> bool {
    let name = e.file_name();
    let (dotenv, folder) = (is_dotenv(&name), is_secrets_folder(&name));
    let Some(Ok(kind)) = (dotenv || folder).then(|| e.file_type()) else {
        return false;
    };
    match () {
        _ if kind.is_dir() => folder,
        _ if kind.is_symlink() => dotenv && dotenv_link(&e.path(), project, home).hidden(),
        _ => dotenv && kind.is_file(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_configs_with_credentials_are_told_by_their_keys() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path().join("config");
        let holds = |text: &str| {
            std::fs::write(&c, text).unwrap();
            git_config_holds_credentials(&c)
        };
        assert!(holds(
            "[remote \"o\"]\n\turl = https://me:ghp_x@github.com/a/b\n"
        ));
        assert!(holds("[http]\n\textraheader = AUTHORIZATION: basic eA==\n"));
        assert!(!holds("[remote \"o\"]\n\turl = https://github.com/a/b\n"));
        assert!(!holds("[remote \"o\"]\n\turl = git@github.com:a/b.git\n"));
        assert!(!holds("[core]\n\tbare = false\n"));
    }

    #[test]
    fn host_keys_are_the_private_halves_only() {
        let dir = tempfile::tempdir().unwrap();
        for n in [
            "ssh_host_ed25519_key",
            "ssh_host_ed25519_key.pub",
            "sshd_config",
        ] {
            std::fs::write(dir.path().join(n), "x").unwrap();
        }
        assert_eq!(
            host_keys(dir.path()),
            [dir.path().join("ssh_host_ed25519_key")]
        );
        assert!(host_keys(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn dotenv_is_looked_for_up_to_the_project_root_or_home() {
        let root = |d: &Path| d == Path::new("/p");
        let dirs = |d: &str, h: Option<&str>| project_dirs(Path::new(d), h.map(Path::new), root);
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            dirs("/p/sub/deep", None),
            paths(&["/p/sub/deep", "/p/sub", "/p"])
        );
        assert_eq!(dirs("/h/x/y", Some("/h")), paths(&["/h/x/y", "/h/x", "/h"]));
        assert_eq!(dirs("/t/x", Some("/h")), paths(&["/t/x", "/t", "/"]));
    }

    #[test]
    fn dotenv_files_above_the_working_directory_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(proj.join(".git")).unwrap();
        std::fs::create_dir_all(proj.join("sub/.env")).unwrap(); // a virtualenv: stays
        std::fs::write(proj.join(".env"), "K=v").unwrap();
        std::fs::write(dir.path().join(".env"), "outside the project").unwrap();
        let found = dotenv_files(&proj.join("sub"), None);
        assert_eq!(found, [proj.join(".env")]);
        // Above the working directory a link is not followed (it would hide its target), and
        // a folder anyone may write to ends the search.
        use std::os::unix::fs::PermissionsExt;
        let free = dir.path().join("free");
        std::fs::create_dir_all(free.join("w/deep")).unwrap();
        std::os::unix::fs::symlink("/usr/bin/env", free.join("w/.env-planted")).unwrap();
        std::fs::write(free.join(".env"), "in a shared folder").unwrap();
        std::fs::write(free.join("w/deep/.env"), "here").unwrap();
        std::fs::set_permissions(&free, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let found = dotenv_files(&free.join("w/deep"), None);
        assert_eq!(found, [free.join("w/deep/.env")]);
        // In the working directory itself a link is hidden only when it leads to a secrets
        // file the user keeps (in the project or the home), never to a host program.
        std::os::unix::fs::symlink("/usr/bin/env", free.join("w/deep/.env-link")).unwrap();
        assert!(!dotenv_files(&free.join("w/deep"), None).contains(&free.join("w/deep/.env-link")));
        std::fs::write(free.join("w/deep/prod.env"), "K=v").unwrap();
        std::os::unix::fs::symlink("prod.env", free.join("w/deep/.env.prod")).unwrap();
        assert!(dotenv_files(&free.join("w/deep"), None).contains(&free.join("w/deep/.env.prod")));
    }

    #[test]
    fn a_dotenv_links_target_is_hidden_only_when_it_is_a_secrets_file_the_user_keeps() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = tempfile::tempdir().unwrap();
        let (home, proj, elsewhere) = (
            dir.path().join("home"),
            dir.path().join("home/proj"),
            dir.path().join("srv"),
        );
        for d in [&proj, &home.join("secrets"), &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
        }
        let file = |p: &Path, mode: u32| {
            std::fs::write(p, "K=v").unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        file(&home.join("secrets/prod.env"), 0o600);
        file(&proj.join("config.production"), 0o644);
        file(&home.join("secrets/run.sh"), 0o755);
        file(&elsewhere.join("ca.pem"), 0o644);
        let cases = [
            (".env", home.join("secrets/prod.env"), None),
            (".env.local", proj.join("config.production"), None),
            (
                ".env.sh",
                home.join("secrets/run.sh"),
                Some("an executable, not a secrets file"),
            ),
            (
                ".env.ca",
                elsewhere.join("ca.pem"),
                Some("outside the project and your home"),
            ),
            (
                ".env.bin",
                PathBuf::from("/usr/bin/env"),
                Some("an executable, not a secrets file"),
            ),
            (".env.dir", home.join("secrets"), Some("not a file")),
            (".env.gone", home.join("nothing"), Some("it leads nowhere")),
        ];
        for (name, target, why) in &cases {
            symlink(target, proj.join(name)).unwrap();
            let v = dotenv_link(&proj.join(name), &proj, Some(&home));
            assert_eq!(v.shown_because, *why, "{name}");
            assert_eq!(v.hidden(), why.is_none(), "{name}");
        }
        let hidden = sorted_entries(&proj, |e| is_secret(e, &proj, Some(&home)));
        assert_eq!(hidden, [proj.join(".env"), proj.join(".env.local")]);
    }

    #[test]
    fn dotenv_files_in_subfolders_are_found_within_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        for d in [
            "backend/api",
            "node_modules/x",
            "web/.git",
            "docs",
            "venv-like/.env",
        ] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        for f in [
            ".env",
            "backend/.env",
            "backend/api/.env.local",
            "backend/.dev.vars",
            "node_modules/x/.env",
            "web/.git/.env",
            "docs/env.md",
        ] {
            std::fs::write(r.join(f), "K=v").unwrap();
        }
        std::os::unix::fs::symlink(r.join("backend"), r.join("link")).unwrap();
        // A `.env` link to a host file is not followed (it would blank that file for the run);
        // one to another `.env*` file is (its target is the secret).
        std::fs::create_dir_all(r.join("links")).unwrap();
        std::os::unix::fs::symlink("/usr/bin/env", r.join("links/.env")).unwrap();
        std::os::unix::fs::symlink(r.join("backend/.env"), r.join("links/.env.shared")).unwrap();
        let below = dotenv_below(r, MAX_WALK_ENTRIES, None);
        assert!(!below.capped);
        assert_eq!(
            below.found,
            [
                r.join("backend/.dev.vars"),
                r.join("backend/.env"),
                r.join("links/.env.shared"),
                r.join("backend/api/.env.local"),
            ],
            "the working directory's own are dotenv_files'; skipped folders, links and \
             folders named .env stay"
        );
        // The bound: with few entries allowed, what is deeper is not reached.
        let near = dotenv_below(r, 8, None);
        assert!(near.capped);
        assert!(
            !near.found.contains(&r.join("backend/api/.env.local")),
            "{near:?}"
        );
        assert!(dotenv_below(r, 0, None).found.is_empty());
        // cookiecutter-django's `.envs/` is hidden as a folder, and not walked into.
        std::fs::create_dir_all(r.join("web/.envs/.production")).unwrap();
        std::fs::write(r.join("web/.envs/.production/.postgres"), "P=x").unwrap();
        let below = dotenv_below(r, MAX_WALK_ENTRIES, None);
        assert!(below.found.contains(&r.join("web/.envs")), "{below:?}");
        assert!(
            !below
                .found
                .iter()
                .any(|p| p.starts_with(r.join("web/.envs/.production")))
        );
    }

    /// The project's root is the nearest folder with version control metadata below `$HOME`.
    #[test]
    fn the_project_root_is_below_home() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path();
        std::fs::create_dir_all(h.join(".git")).unwrap();
        std::fs::create_dir_all(h.join("proj/.git")).unwrap();
        std::fs::create_dir_all(h.join("proj/web/src")).unwrap();
        std::fs::create_dir_all(h.join("loose/x")).unwrap();
        assert_eq!(
            project_root(&h.join("proj/web/src"), Some(h)),
            Some(h.join("proj"))
        );
        assert_eq!(project_root(&h.join("proj"), Some(h)), Some(h.join("proj")));
        // A dotfiles repository in $HOME is no project.
        assert_eq!(project_root(&h.join("loose/x"), Some(h)), None);
        assert_eq!(project_root(h, Some(h)), None);
    }

    #[test]
    fn variables_and_home_expand() {
        let var = |n: &str| (n == "XDG_RUNTIME_DIR").then(|| "/run/user/7".into());
        let h = Some(Path::new("/h"));
        let e = |p: &str| expand(Path::new(p), h, var);
        assert_eq!(
            e("$XDG_RUNTIME_DIR/pulse/native"),
            Some("/run/user/7/pulse/native".into())
        );
        assert_eq!(e("$NOPE/x"), None);
        assert_eq!(e("~/s.sock"), Some("/h/s.sock".into()));
        assert_eq!(e("/abs"), Some("/abs".into()));
    }

    /// `--allow-read /` or `~` does not lift every hide at once; naming one lifts it alone.
    #[test]
    fn allowing_a_folder_that_only_holds_hidden_paths_lifts_nothing() {
        let home = Some(Path::new("/h"));
        let extra: Vec<PathBuf> = vec!["/etc/shadow".into(), "~/.config/skillpipe".into()];
        let dotenv: Vec<PathBuf> = vec!["/h/p/.env".into()];
        let all = deny_list(home, &dotenv, &extra, &[]);
        for allow in ["/h", "/", "/h/p", "~"] {
            let list = deny_list(home, &dotenv, &extra, &[allow.into()]);
            assert_eq!(list, all, "{allow}");
        }
        let list = deny_list(home, &dotenv, &extra, &["/h/p/.env".into()]);
        assert_eq!(list.len() + 1, all.len());
        // What the flag says about them.
        let held = holds_hidden(Path::new("/h"), &all);
        assert!(held.contains(&Path::new("/h/p/.env")), "{held:?}");
        assert!(!held.contains(&Path::new("/etc/shadow")), "{held:?}");
        assert!(holds_hidden(Path::new("/h/p/.env"), &all).is_empty());
        assert!(holds_hidden(Path::new("/srv"), &all).is_empty());
    }
}
