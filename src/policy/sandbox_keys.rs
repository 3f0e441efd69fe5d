//! The sandbox's policy keys and flags: `--writable`, `--allow-read`, `--allow-socket` and the
//! limits, and the check that keeps `$HOME`, places where code runs later (shell start-up,
//! login, PATH, tools' settings) and skillpipe's own files from being made writable by accident.

use super::{PolicyError, PolicyOverrides, ScriptPolicy};
use crate::sandbox::fold;
use crate::sandbox::secrets::expand_home;
use std::path::{Path, PathBuf};

/// The one place directly in `$HOME` that is not a dot-name but runs later: login shells'
/// profiles put `~/bin` on PATH when it exists. (Every dot-file and dot-folder there is a
/// tool's settings, refused by [`home_settings_problem`] whichever tool it is.)
const HOME_BIN: (&str, &str) = (
    "bin",
    "on PATH at login: a program there runs in place of another",
);

/// Outside `$HOME`: the system's own trees, where what a script writes runs later (as root,
/// at boot, from cron, in place of a command) or changes what every program loads, each with
/// why. `/root` counts only when it is not `$HOME` (then the `$HOME` rules apply).
const SYSTEM_TREES: &[(&str, &str)] = &[
    (
        "/etc",
        "system settings: boot, login, cron, sudo and shells run from them",
    ),
    ("/usr", "system programs and libraries, on PATH"),
    ("/bin", "system programs, on PATH"),
    ("/sbin", "system programs, on PATH"),
    ("/lib", "system libraries every program loads"),
    ("/lib32", "system libraries every program loads"),
    ("/lib64", "system libraries every program loads"),
    ("/libx32", "system libraries every program loads"),
    ("/boot", "the kernel and boot loader"),
    ("/var/spool", "cron and at jobs"),
    (
        "/var/lib",
        "system services' state (packages, systemd units)",
    ),
    ("/root", "root's home: its start-up files run as root"),
    (
        "/proc",
        "the kernel's settings and processes: as root a write changes the host",
    ),
    ("/sys", "the kernel's and devices' settings"),
    ("/dev", "devices"),
    (
        "/run",
        "runtime state: service sockets and systemd units run from it",
    ),
];

/// The user's runtime folder (first: it usually lies under /run and is the nearer name) and
/// the system trees, each with why; `/root` only when it is not `$HOME`.
fn system_trees(home: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let runtime = std::env::var("XDG_RUNTIME_DIR")
        .ok()
        .filter(|d| d.starts_with('/') && d.len() > 1)
        .map(|d| {
            let why = "your runtime folder: service sockets and systemd user units run from it";
            (PathBuf::from(d), why)
        });
    let trees = SYSTEM_TREES.iter().map(|(t, why)| (PathBuf::from(t), *why));
    runtime
        .into_iter()
        .chain(trees)
        .filter(|(t, _)| t != Path::new("/root") || home != Some(Path::new("/root")))
        .collect()
}

/// Why `path` must not be writable without `--force-writable` as a tool's settings in `$HOME`,
/// or `None`: a dot-folder or dotfile directly in `$HOME` (and all beneath it) holds some
/// tool's settings and credentials, and many run commands from them later (credential
/// processes, exec plugins, aliases, hooks) — whichever tool it is; so does a folder in
/// `$XDG_CONFIG_HOME`, `$XDG_DATA_HOME` or `$XDG_STATE_HOME` wherever they point.
pub fn home_settings_problem(path: &Path, home: Option<&Path>) -> Option<String> {
    let says = |place: String| {
        format!(
            "{} is in {place}, a tool's settings: they may hold credentials and run commands \
             later, outside the sandbox",
            path.display()
        )
    };
    // Where the XDG variables put the settings and data folders, wherever that is.
    for var in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"] {
        let Some(root) = std::env::var_os(var).map(PathBuf::from) else {
            continue;
        };
        if !root.is_absolute() {
            continue;
        }
        // The folder itself, or one holding it, holds every tool's settings there.
        if root.starts_with(path) {
            return Some(format!(
                "{} holds {}, where tools keep their settings: they may hold credentials and \
                 run commands later, outside the sandbox",
                path.display(),
                root.display()
            ));
        }
        if let Ok(rest) = path.strip_prefix(&root)
            && let Some(first) = rest.components().next()
        {
            return Some(says(root.join(first).display().to_string()));
        }
    }
    let first = path.strip_prefix(home?).ok()?.components().next()?;
    let name = first.as_os_str().to_string_lossy();
    name.starts_with('.').then(|| says(format!("~/{name}")))
}

/// Why `path` must not be writable without `--force-writable`, or `None`. `protected` are the
/// folders skillpipe reads as the user's own, each with what it holds
/// ([`crate::paths::own_folders`]); `on_path` the folders of `$PATH` (absolute ones). Pure but for
/// reading `$XDG_RUNTIME_DIR`.
pub fn writable_problem(
    path: &Path,
    home: Option<&Path>,
    protected: &[(PathBuf, &str)],
    on_path: &[PathBuf],
) -> Option<String> {
    if path == Path::new("/") {
        return Some("/ holds the whole system; name a project directory instead".to_string());
    }
    if let Some(h) = home {
        if h.starts_with(path) {
            return Some(format!(
                "{} is $HOME or holds it; name a project directory instead",
                path.display()
            ));
        }
        let (bin, why) = HOME_BIN;
        let p = h.join(bin);
        if path.starts_with(&p) {
            return Some(format!(
                "{} is where code runs later, outside the sandbox ({why})",
                path.display()
            ));
        }
    }
    // The same folders as stay read-only inside a writable path (`--writable .git/hooks`
    // would let a script write what the tool runs later, outside the sandbox).
    if let Some(kept) = path.components().find(|c| {
        crate::sandbox::KEPT_READ_ONLY
            .iter()
            .any(|(d, _)| c.as_os_str() == *d)
    }) {
        let name = kept.as_os_str().to_string_lossy();
        return Some(format!(
            "{} is in version control metadata ({name}): its hooks and settings run commands \
             outside the sandbox; name the working tree instead",
            path.display(),
        ));
    }
    for (tree, why) in system_trees(home) {
        match relation(path, &tree) {
            Some("is") => return Some(format!("{} is a system folder ({why})", path.display())),
            Some(how) => {
                let (path, tree) = (path.display(), tree.display());
                return Some(format!("{path} {how} {tree}, a system folder ({why})"));
            }
            None => {}
        }
    }
    for dir in on_path {
        if path.starts_with(dir) {
            return Some(format!(
                "{} is on PATH ({}): a program there runs in place of another, outside the \
                 sandbox",
                path.display(),
                dir.display()
            ));
        }
        if dir.starts_with(path) {
            return Some(format!(
                "{} holds {}, which is on PATH: a program there runs in place of another, \
                 outside the sandbox",
                path.display(),
                dir.display()
            ));
        }
    }
    protected
        .iter()
        .find_map(|(p, what)| match relation(path, p)? {
            "is" => Some(format!("{} holds {what}", path.display())),
            how => Some(format!(
                "{} {how} {}, which holds {what}",
                path.display(),
                p.display()
            )),
        })
}

/// How `path` stands to `place`: it `is` it, `is in` it or `holds` it; `None` when apart.
fn relation(path: &Path, place: &Path) -> Option<&'static str> {
    match () {
        _ if path == place => Some("is"),
        _ if path.starts_with(place) => Some("is in"),
        _ if place.starts_with(path) => Some("holds"),
        _ => None,
    }
}

/// Every place scripts are never offered to write (what `--writable` refuses without
/// `--force-writable`), each with what it is: a write refused there is told as protected, with
/// no setting named. Beneath `$HOME` the places where code runs later, the system trees and the
/// runtime folder, the folders of `$PATH`, credential stores and skillpipe's own folders.
pub fn protected_places() -> Vec<(PathBuf, String)> {
    let home = crate::paths::home();
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for (dir, what) in crate::paths::own_folders() {
        out.push((dir, what.to_string()));
    }
    if let Some(h) = &home {
        let (bin, why) = HOME_BIN;
        out.push((
            h.join(bin),
            format!("code runs from it later, outside the sandbox: {why}"),
        ));
        // Every tool's settings there, as they are on disk now.
        let dot_names = std::fs::read_dir(h).into_iter().flatten().flatten();
        out.extend(
            dot_names
                .filter(|e| e.file_name().as_encoded_bytes().starts_with(b"."))
                .map(|e| {
                    (
                        e.path(),
                        "a tool's settings in your home folder: they may run commands later, \
                         outside the sandbox"
                            .to_string(),
                    )
                }),
        );
    }
    for (tree, why) in system_trees(home.as_deref()) {
        out.push((tree, format!("a system folder: {why}")));
    }
    for dir in path_folders(std::env::var_os("PATH").as_deref()) {
        out.push((
            dir,
            "on PATH: a program there runs in place of another".to_string(),
        ));
    }
    out
}

/// `p` as named and, where a link on the way leads elsewhere, as it resolves.
fn as_named_and_real(p: PathBuf) -> impl Iterator<Item = PathBuf> {
    let real = std::fs::canonicalize(&p).ok().filter(|r| *r != p);
    std::iter::once(p).chain(real)
}

/// The absolute folders of a `$PATH` value, each also as it resolves (a link may lead there).
fn path_folders(path: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in path.map(std::env::split_paths).into_iter().flatten() {
        if d.is_absolute() && !out.contains(&d) {
            out.extend(as_named_and_real(d));
        }
    }
    out
}

/// The bare git repository `path` is or lies in (nearest first; see
/// [`crate::sandbox::is_bare_repository`]).
pub fn bare_repository(path: &Path) -> Option<&Path> {
    path.ancestors()
        .find(|d| crate::sandbox::is_bare_repository(d))
}

/// The entry of `hidden` (what scripts may not read) that covers `path`, if any: writable there,
/// a script would still see only an empty read-only stand-in. Pure.
pub fn hidden_cover<'a>(path: &Path, hidden: &'a [PathBuf]) -> Option<&'a Path> {
    hidden
        .iter()
        .find(|h| path.starts_with(h))
        .map(PathBuf::as_path)
}

/// The refusal of a writable path a link leads out of the working directory.
fn link_out(key: &str, given: &Path, real: &Path) -> PolicyError {
    PolicyError::Writable(format!(
        "{key} {}: refused: a link leads it out of the working directory, to {}; pass {key} {} \
         itself if that is the place meant",
        given.display(),
        real.display(),
        real.display()
    ))
}

/// Where `abs` (absolute, `.` and `..` folded) really leads when it is inside `cwd` as written
/// but a link on the way leads out of it: the resolved path of its deepest existing part, with
/// the rest joined. `None` when it is not inside `cwd` as written, or stays inside once
/// resolved. A clone can commit `out -> ~/Documents`; `--writable ./out` must not grant that.
fn leads_out_of(abs: &Path, cwd: &Path) -> Option<PathBuf> {
    let real_cwd = std::fs::canonicalize(cwd).ok()?;
    if !abs.starts_with(cwd) && !abs.starts_with(&real_cwd) {
        return None;
    }
    let existing = abs.ancestors().find(|a| a.symlink_metadata().is_ok())?;
    let rest = abs.strip_prefix(existing).ok()?;
    // A dangling link leads where it names (a later run may find it made).
    let resolved = std::fs::canonicalize(existing).ok().or_else(|| {
        let target = std::fs::read_link(existing).ok()?;
        Some(fold(&existing.parent()?.join(target)))
    })?;
    let real = match rest.as_os_str().is_empty() {
        true => resolved,
        false => resolved.join(rest),
    };
    (!real.starts_with(&real_cwd)).then_some(real)
}

/// The same places once each, by where they lead (the first spelling kept): `--writable DIR
/// --writable .` in DIR is one place, listed once in the confirmation.
fn dedup_places(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for p in paths {
        let key = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
        if !seen.contains(&key) {
            seen.push(key);
            out.push(p);
        }
    }
    out
}

impl ScriptPolicy {
    /// The sandbox flags (see `apply_flags`). `--writable` paths are made absolute (against the
    /// working directory) and checked with the policy's own `writable_paths`.
    pub(super) fn apply_sandbox_flags(
        &mut self,
        flags: &PolicyOverrides,
    ) -> Result<(), PolicyError> {
        let home = crate::paths::home();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let own_check = self.own_writable(home.as_deref(), &cwd)?;
        let (writable, to_check) = flag_writable(flags, home.as_deref(), &cwd)?;
        // Hidden paths are compared as absolute paths, component by component: made absolute
        // and without `.` or `..`, plus where a link leads (the user named what it shows).
        let allow_read: Vec<PathBuf> = flags
            .allow_read
            .iter()
            .map(|p| fold(&cwd.join(expand_home(p, home.as_deref()))))
            .collect();
        (self.allow_read).extend(allow_read.iter().cloned().flat_map(as_named_and_real));
        // What scripts cannot read (the built-in list, `deny_read`, minus `allow_read`): a
        // writable path beneath one of these would not work, whatever the force.
        let hidden = crate::sandbox::secrets::deny_list(
            home.as_deref(),
            &[],
            &self.deny_read,
            &self.allow_read,
        );
        // Everything a run hides (the state folder and system files too), as the launcher gets it.
        // (Not looked for when nothing is checked against it: the `.env*` walk has a cost.)
        let checked = !allow_read.is_empty() || !to_check.is_empty() || !own_check.is_empty();
        let hidden_all = match checked {
            true => crate::sandbox::secrets::hidden(&cwd, &self.deny_read, &self.allow_read),
            false => Vec::new(),
        };
        // Everything hidden before any --allow-read: a path that only holds some is refused.
        // (Looked for only when there is one: the `.env*` walk has a cost.)
        let before: Vec<PathBuf> = (!allow_read.is_empty())
            .then(|| crate::sandbox::secrets::hidden(&cwd, &self.deny_read, &[]))
            .into_iter()
            .flatten()
            .chain(crate::sandbox::secrets::deny_list(
                home.as_deref(),
                &[],
                &self.deny_read,
                &[],
            ))
            .collect();
        check_allow_read(&allow_read, &before, &hidden_all)?;
        // Writable paths are checked against both: the built-in list as written (a folder that
        // does not exist yet, such as `~/.ssh`, stays refused) and everything a run hides
        // (skillpipe's own config and state, system secrets, `.env` files).
        let hidden: Vec<PathBuf> = hidden.into_iter().chain(hidden_all).collect();
        let checks = [("--writable", &to_check), ("writable_paths", &own_check)];
        check_writable(checks, home.as_deref(), &hidden, flags.force_writable)?;
        self.writable_paths = dedup_places(
            self.writable_paths
                .iter()
                .map(|p| expand_home(p, home.as_deref()))
                .chain(writable)
                .collect(),
        );
        // As `--writable` and `--allow-read`: `~` and a relative path mean where the user is.
        // A leading `$VAR/` stays as written: it is expanded from the script's environment.
        self.allowed_sockets
            .extend(flags.allow_socket.iter().map(|p| {
                if p.to_string_lossy().starts_with('$') {
                    return p.clone();
                }
                let p = expand_home(p, home.as_deref());
                std::path::absolute(&p).unwrap_or(p)
            }));
        self.max_processes = flags.max_processes.unwrap_or(self.max_processes);
        self.max_memory_mb = flags.max_memory.unwrap_or(self.max_memory_mb);
        self.max_file_size_mb = flags.max_file_size.unwrap_or(self.max_file_size_mb);
        self.max_tmp_mb = flags.max_tmp.unwrap_or(self.max_tmp_mb);
        self.max_cpu_seconds = flags.max_cpu.unwrap_or(self.max_cpu_seconds);
        Ok(())
    }

    /// A step of `apply_sandbox_flags`: the policy's own writable_paths (an agent file's) made
    /// absolute against the working directory here, once, like `--writable`: left relative,
    /// `.` would be checked as written and then meant each run's folder (a skill's, `/`,
    /// `$HOME`). Returns the paths to check, as written and as they resolve.
    fn own_writable(
        &mut self,
        home: Option<&Path>,
        cwd: &Path,
    ) -> Result<Vec<PathBuf>, PolicyError> {
        let mut own = Vec::new();
        let mut own_check = Vec::new();
        for w in &self.writable_paths {
            let abs = std::path::absolute(expand_home(w, home)).map_err(|e| {
                PolicyError::Writable(format!("writable_paths {}: {e}", w.display()))
            })?;
            // As written with `.` and `..` folded (`/etc/../tmp/x` is in /tmp, not /etc).
            own_check.push(fold(&abs));
            match std::fs::canonicalize(&abs) {
                Ok(real) => {
                    own_check.push(real.clone());
                    own.push(real);
                }
                Err(_) => own.push(fold(&abs)),
            }
        }
        self.writable_paths = own;
        // Inside the working directory as written but led out of it by a link (one the project
        // committed): refused, naming where it leads, so the user can pass that if meant.
        for p in &own_check {
            if let Some(real) = leads_out_of(p, cwd) {
                return Err(link_out("writable_paths", p, &real));
            }
        }
        Ok(own_check)
    }
}

/// A step of `apply_sandbox_flags`: the `--writable` paths, absolute, and the paths to check
/// for them (as given, `.` and `..` folded, and as they resolve: a symlink may lead to $HOME).
fn flag_writable(
    flags: &PolicyOverrides,
    home: Option<&Path>,
    cwd: &Path,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), PolicyError> {
    let mut writable = Vec::new();
    let mut to_check = Vec::new();
    for w in &flags.writable {
        let abs = std::path::absolute(expand_home(w, home))
            .map_err(|e| PolicyError::Writable(format!("--writable {}: {e}", w.display())))?;
        if let Some(real) = leads_out_of(&fold(&abs), cwd) {
            return Err(link_out("--writable", w, &real));
        }
        to_check.push(fold(&abs));
        if let Ok(real) = std::fs::canonicalize(&abs) {
            to_check.push(real.clone());
            writable.push(real);
        } else {
            writable.push(abs);
        }
    }
    Ok((writable, to_check))
}

/// A step of `apply_sandbox_flags`: an `--allow-read` that shows nothing is a mistake the user
/// should hear of: a typo, a path that holds hidden ones (`before`), or a file in a folder
/// hidden as a whole (a tmpfs covers the folder, not its files).
fn check_allow_read(
    allow_read: &[PathBuf],
    before: &[PathBuf],
    hidden_all: &[PathBuf],
) -> Result<(), PolicyError> {
    for p in allow_read {
        if p.symlink_metadata().is_err() {
            return Err(PolicyError::AllowRead(format!(
                "--allow-read {}: no such file or directory",
                p.display()
            )));
        }
        let mut held = crate::sandbox::secrets::holds_hidden(p, before);
        // Those on this machine first: the example should be one that is there; and not
        // skillpipe's own config or state (the audit log), which is no example to follow.
        let own: Vec<PathBuf> = crate::paths::config_file()
            .into_iter()
            .chain(crate::paths::state_dir())
            .collect();
        held.sort_by_key(|h| (own.iter().any(|o| h.starts_with(o)), !h.exists()));
        if let Some(first) = held.first() {
            let mut few: Vec<String> = Vec::new();
            for h in &held {
                let h = h.display().to_string();
                if !few.contains(&h) && few.len() < 3 {
                    few.push(h);
                }
            }
            return Err(PolicyError::AllowRead(format!(
                "--allow-read {}: refused: it holds paths hidden from scripts ({}{}); it \
                 shows only a hidden path it names, so name the one to show, e.g. \
                 --allow-read {}",
                p.display(),
                few.join(", "),
                if held.len() > few.len() { ", …" } else { "" },
                first.display()
            )));
        }
        if let Some(h) = hidden_cover(p, hidden_all) {
            return Err(PolicyError::AllowRead(format!(
                "--allow-read {}: it is inside {}, which is hidden as a whole; pass \
                 --allow-read {} to show that folder",
                p.display(),
                h.display(),
                h.display()
            )));
        }
    }
    Ok(())
}

/// A step of `apply_sandbox_flags`: each writable path (by the key that gave it) refused when
/// it is a place a script must not write (unless `force`), or hidden from scripts (always).
fn check_writable(
    checks: [(&str, &Vec<PathBuf>); 2],
    home: Option<&Path>,
    hidden: &[PathBuf],
    force: bool,
) -> Result<(), PolicyError> {
    // Each as named and as it resolves (a link may lead there).
    let protected: Vec<(PathBuf, &str)> = crate::paths::own_folders()
        .into_iter()
        .flat_map(|(dir, what)| as_named_and_real(dir).map(move |d| (d, what)))
        .collect();
    if !force {
        let on_path = path_folders(std::env::var_os("PATH").as_deref());
        for (key, paths) in checks {
            for p in paths {
                let p = expand_home(p, home);
                let why = writable_problem(&p, home, &protected, &on_path)
                    .or_else(|| home_settings_problem(&p, home))
                    .or_else(|| {
                        bare_repository(&p).map(|repo| {
                            let how = relation(&p, repo).unwrap_or_default();
                            format!(
                                "{} {how} the bare git repository {}: its hooks and config run \
                                 commands outside the sandbox; name a folder outside it",
                                p.display(),
                                repo.display()
                            )
                        })
                    });
                if let Some(why) = why {
                    return Err(PolicyError::Writable(format!(
                        "{key} {}: refused: {why} (--force-writable accepts it anyway)",
                        p.display()
                    )));
                }
            }
        }
    }
    for (key, paths) in checks {
        for p in paths {
            let p = expand_home(p, home);
            if let Some(h) = hidden_cover(&p, hidden) {
                return Err(PolicyError::Writable(format!(
                    "{key} {}: refused: {} is hidden from scripts (deny_read), so a script could not see what it writes there (--allow-read {} lifts that)",
                    p.display(),
                    h.display(),
                    h.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `p` with the sandbox flags applied, or the error's text.
    fn applied(p: &ScriptPolicy, flags: PolicyOverrides) -> Result<ScriptPolicy, String> {
        let mut p = p.clone();
        p.apply_sandbox_flags(&flags).map_err(|e| e.to_string())?;
        Ok(p)
    }

    #[test]
    fn home_start_up_files_and_own_dirs_are_refused() {
        let home = Some(Path::new("/home/u"));
        let own = [
            (
                PathBuf::from("/home/u/.config/skillpipe"),
                "skillpipe's config",
            ),
            (PathBuf::from("/home/u/.r9s"), "your agents"),
            (PathBuf::from("/home/u/.agents/skills"), "your skills"),
        ];
        let on_path = [
            PathBuf::from("/opt/tool/bin"),
            PathBuf::from("/root/.pyenv/shims"),
        ];
        let no = |p: &str| writable_problem(Path::new(p), home, &own, &on_path);
        assert!(no("/home/u").unwrap().contains("$HOME"));
        assert!(no("/").unwrap().contains("whole system"));
        // System trees, and PATH folders wherever they are (and what holds them).
        for (p, says) in [
            ("/etc", "/etc is a system folder"),
            ("/etc/profile.d", "is in /etc"),
            ("/etc/cron.d", "is in /etc"),
            ("/usr/local/bin", "is in /usr"),
            ("/usr/bin", "is in /usr"),
            ("/usr/lib/python3/dist-packages", "is in /usr"),
            ("/var/spool/cron", "cron and at jobs"),
            ("/var", "/var holds /var/spool"),
            ("/var/lib/dpkg", "is in /var/lib"),
            ("/boot", "kernel"),
            ("/lib64", "libraries"),
            ("/proc", "/proc is a system folder"),
            ("/proc/sys/vm", "is in /proc"),
            ("/sys/kernel", "is in /sys"),
            ("/run/systemd", "is in /run"),
            ("/root/.pyenv/shims", "is in /root"),
            ("/opt/tool/bin/x", "is on PATH (/opt/tool/bin)"),
            ("/opt/tool", "holds /opt/tool/bin, which is on PATH"),
            // ~/bin is on PATH at login; the user's own agent and skill folders.
            ("/home/u/bin/tool", "on PATH at login"),
            ("/home/u/.r9s/agents/x", "your agents"),
            ("/home/u/.agents", "holds"),
            ("/home/u/.agents/skills/s", "your skills"),
        ] {
            let why = no(p).unwrap_or_default();
            assert!(why.contains(says), "{p}: {why}");
        }
        // /root is $HOME's rules when it is $HOME; a PATH folder in it still counts.
        let root_home = Some(Path::new("/root"));
        let as_root = |p: &str| writable_problem(Path::new(p), root_home, &[], &on_path);
        assert_eq!(as_root("/root/project"), None);
        assert!(as_root("/root/.pyenv/shims").unwrap().contains("on PATH"));
        let root_settings = home_settings_problem(Path::new("/root/.pyenv"), root_home);
        assert!(root_settings.unwrap().contains("run commands later"));
        let cred = |p: &str| home_settings_problem(Path::new(p), home);
        for p in ["/home/u/projects/aws", "/srv/.aws"] {
            assert_eq!(cred(p), None, "{p}");
        }
        // A shell's start-up file is a dot-file like any other (a tool's settings, above).
        for p in ["/opt/other", "/var/tmp/x", "/srv/www", "/home/u/.bashrc"] {
            assert_eq!(no(p), None, "{p}");
        }
        assert_eq!(
            no("/home/u/.config/skillpipe/skills").unwrap(),
            "/home/u/.config/skillpipe/skills is in /home/u/.config/skillpipe, which holds \
             skillpipe's config"
        );
        assert_eq!(
            no("/home/u/.r9s").unwrap(),
            "/home/u/.r9s holds your agents"
        );
        assert!(no("/home/u/.agents/other").is_none());
        // Where code runs later, as a class: login, PATH, any tool's settings in $HOME, named
        // or not (a dot-folder or dotfile there).
        for p in [
            "/home/u/.aws",
            "/home/u/.kube/config.d",
            "/home/u/.some-new-tool/auth.json",
            "/home/u/.config/gh",
            "/home/u/.bashrc",
            "/home/u/.config",
            "/home/u/.config/systemd/user",
            "/home/u/.config/autostart",
            "/home/u/.local/bin",
            "/home/u/.local",
            "/home/u/bin",
            "/home/u/.ssh",
            "/home/u/.gitconfig",
            "/home/u/.local/lib/python3.12/site-packages",
            "/home/u/.claude",
            "/home/u/.codex/config.toml",
            "/home/u/.config/direnv",
            "/home/u/.pyenv",
            "/home/u/.config/Code/User",
            "/home/u/.some-tool-of-next-year/hooks",
        ] {
            let why = cred(p).or_else(|| no(p)).unwrap_or_default();
            assert!(
                why.contains("runs later") || why.contains("run commands later"),
                "{p}"
            );
        }
        // Control: a folder of projects in $HOME.
        assert_eq!(
            no("/home/u/src/app").or_else(|| cred("/home/u/src/app")),
            None
        );
        // Inside a repository's metadata, wherever the repository is.
        for p in [
            "/tmp/repo/.git",
            "/tmp/repo/.git/hooks",
            "/home/u/project/.hg",
        ] {
            assert!(no(p).unwrap().contains("version control metadata"), "{p}");
        }
        // A project's tool settings may be named: what the run writes there is flagged. A
        // name that starts alike, or a prefix of a name, is not the name.
        for p in [
            "/tmp/repo/.claude",
            "/tmp/repo/.vscode/x",
            "/tmp/repo/.github",
            "/home/u/binaries",
            "/home/u/project",
            "/tmp/out",
        ] {
            assert_eq!(no(p), None, "{p}");
        }
    }

    #[test]
    fn a_writable_place_given_twice_is_kept_once() {
        let here = std::env::current_dir().unwrap();
        let mut p = ScriptPolicy::default();
        p.apply_sandbox_flags(&PolicyOverrides {
            writable: vec![here.clone(), ".".into(), here.join("./")],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(p.writable_paths.len(), 1, "{:?}", p.writable_paths);
    }

    #[test]
    fn a_writable_path_hidden_from_scripts_is_refused_unless_shown() {
        let hidden = [
            PathBuf::from("/home/u/.ssh"),
            PathBuf::from("/home/u/.netrc"),
        ];
        assert_eq!(
            hidden_cover(Path::new("/home/u/.ssh/keys"), &hidden),
            Some(Path::new("/home/u/.ssh"))
        );
        assert_eq!(hidden_cover(Path::new("/home/u/.sshx"), &hidden), None);
        // Holding a hidden path is fine: it stays hidden, the rest is writable.
        assert_eq!(hidden_cover(Path::new("/home/u/proj"), &hidden), None);
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::create_dir(&secret).unwrap();
        let p = ScriptPolicy {
            deny_read: vec![secret.clone()],
            ..Default::default()
        };
        let flags = PolicyOverrides {
            writable: vec![secret.clone()],
            ..Default::default()
        };
        let err = applied(&p, flags.clone()).unwrap_err();
        assert!(err.contains("hidden from scripts"), "{err}");
        assert!(err.contains("--allow-read"), "{err}");
        let shown = PolicyOverrides {
            allow_read: vec![secret.clone()],
            ..flags
        };
        applied(&p, shown).unwrap();
        // An --allow-read that would show nothing says so: a file of a folder hidden as a
        // whole, or a path that is not there.
        std::fs::write(secret.join("key"), "k").unwrap();
        for (path, says) in [
            (secret.join("key"), "hidden as a whole; pass --allow-read"),
            (dir.path().join("typo"), "no such file or directory"),
            // A folder that only holds hidden paths: each must be named.
            (
                dir.path().to_path_buf(),
                "refused: it holds paths hidden from scripts (",
            ),
            (
                dir.path().to_path_buf(),
                &format!("e.g. --allow-read {}", secret.display()),
            ),
        ] {
            let flags = PolicyOverrides {
                allow_read: vec![path],
                ..Default::default()
            };
            let err = applied(&p, flags).unwrap_err();
            assert!(err.contains(says), "{err}");
        }
        assert_eq!(fold(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(fold(Path::new("/../x")), PathBuf::from("/x"));
        // A relative path is made absolute, as hidden paths are compared (`..` folded too).
        for given in ["Cargo.toml", "src/../Cargo.toml"] {
            let flags = PolicyOverrides {
                allow_read: vec![given.into()],
                ..Default::default()
            };
            let q = applied(&ScriptPolicy::default(), flags).unwrap();
            let here = std::env::current_dir().unwrap();
            assert_eq!(q.allow_read[0], here.join("Cargo.toml"), "{given}");
        }
    }

    #[test]
    fn a_bare_repository_and_what_is_in_it_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("bare.git");
        for d in ["objects/ab", "refs/heads", "hooks"] {
            std::fs::create_dir_all(bare.join(d)).unwrap();
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(bare.join("config"), "[core]\n\tbare = true\n").unwrap();
        assert_eq!(bare_repository(&bare), Some(bare.as_path()));
        assert_eq!(bare_repository(&bare.join("hooks")), Some(bare.as_path()));
        assert_eq!(
            bare_repository(&bare.join("not/made/yet")),
            Some(bare.as_path())
        );
        assert_eq!(bare_repository(dir.path()), None);
        // A folder that only looks a little like one.
        std::fs::remove_dir_all(bare.join("refs")).unwrap();
        assert_eq!(bare_repository(&bare), None);
    }

    #[test]
    fn writable_flag_is_absolute_and_checked() {
        let mut p = ScriptPolicy::default();
        let flags = PolicyOverrides {
            writable: vec![".".into()],
            max_cpu: Some(5),
            allow_socket: vec![
                "/run/x.sock".into(),
                "./u.sock".into(),
                "$XDG_RUNTIME_DIR/bus".into(),
            ],
            ..Default::default()
        };
        p.apply_sandbox_flags(&flags).unwrap();
        assert_eq!(
            p.writable_paths,
            [std::env::current_dir().unwrap().canonicalize().unwrap()]
        );
        assert_eq!(p.max_cpu_seconds, 5);
        // A relative socket path means where the user is, as a writable one does.
        assert_eq!(
            p.allowed_sockets,
            [
                PathBuf::from("/run/x.sock"),
                std::path::absolute("u.sock").unwrap(),
                PathBuf::from("$XDG_RUNTIME_DIR/bus"),
            ]
        );
        let root = PolicyOverrides {
            writable: vec!["/".into()],
            ..Default::default()
        };
        let err = applied(&ScriptPolicy::default(), root.clone()).unwrap_err();
        assert!(err.contains("--force-writable"), "{err}");
        let forced = PolicyOverrides {
            force_writable: true,
            ..root
        };
        applied(&ScriptPolicy::default(), forced).unwrap();
    }

    #[test]
    fn a_path_inside_the_working_directory_that_a_link_leads_out_of_is_found() {
        let cwd = tempfile::tempdir().unwrap();
        let away = tempfile::tempdir().unwrap();
        let (c, a) = (cwd.path(), away.path());
        let real_a = std::fs::canonicalize(a).unwrap();
        std::os::unix::fs::symlink(a, c.join("out")).unwrap();
        std::os::unix::fs::symlink(a.join("later"), c.join("dangling")).unwrap();
        std::fs::create_dir(c.join("own")).unwrap();
        std::os::unix::fs::symlink(c.join("own"), c.join("alias")).unwrap();
        assert_eq!(leads_out_of(&c.join("out"), c), Some(real_a.clone()));
        assert_eq!(
            leads_out_of(&c.join("out/new/deeper"), c),
            Some(real_a.join("new/deeper"))
        );
        assert_eq!(
            leads_out_of(&c.join("dangling"), c),
            Some(fold(&a.join("later")))
        );
        // Controls: a link that stays inside, a plain folder, one not yet made, and a path
        // outside the working directory as written (the user named it) are not.
        assert_eq!(leads_out_of(&c.join("alias"), c), None);
        assert_eq!(leads_out_of(&c.join("own"), c), None);
        assert_eq!(leads_out_of(&c.join("new"), c), None);
        assert_eq!(leads_out_of(a, c), None);
    }
}
