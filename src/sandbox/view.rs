//! The run's read view: what a sandboxed run sees of the file system. It is built from grants —
//! the system trees, the run's program and its installation, the folders on its `PATH`, its
//! working directory, its writable paths and what the user granted — and nothing else is
//! mounted (the launcher binds each grant into an empty root, see `mounts`). A secret nobody
//! listed is out of view because nobody granted it, not because a list names it.
//!
//! Facts are gathered here (file types, symlinks, shebangs, the programs a shim script starts,
//! which per-user package folders exist); nothing is run to find them. The choice of grants
//! from those facts is pure ([`grants`]).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The system trees every run sees (read-only): the Filesystem Hierarchy Standard's program and
/// configuration trees. `/etc`'s shadow files and private keys are covered inside it
/// (`secrets::system`).
pub const SYSTEM_TREES: [&str; 10] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
];

/// Why a path is in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// One of [`SYSTEM_TREES`].
    System,
    /// The program run, or the interpreter a script names, and the `lib` folders beside its
    /// `bin` folder.
    Program,
    /// The installation a shim starts (a version manager's root).
    Installation,
    /// An interpreter's per-user package folder (`~/.local/lib/pythonX.Y`).
    UserPackages,
    /// A folder on the run's `PATH`.
    PathEntry,
    /// The run's working directory (the skill's folder, or where the user is).
    WorkingDirectory,
    /// A skill's folder.
    Skill,
    /// A writable path.
    Writable,
    /// Granted by the user (`--allow-read`, `allow_read`, a confirmed argument).
    Granted,
    /// Where the name-service configuration leads (`/etc/resolv.conf` is often a link), with
    /// the network allowed.
    Resolver,
}

impl Why {
    /// A short phrase for `doctor` and notices.
    pub fn describe(self) -> &'static str {
        match self {
            Why::System => "system tree",
            Why::Program => "the program and its installation",
            Why::Installation => "the interpreter's installation",
            Why::UserPackages => "the interpreter's per-user packages",
            Why::PathEntry => "a folder on PATH",
            Why::WorkingDirectory => "the working directory",
            Why::Skill => "the skill's folder",
            Why::Writable => "a writable path",
            Why::Granted => "granted (--allow-read)",
            Why::Resolver => "name-service configuration (network allowed)",
        }
    }
}

/// One path of the view.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Grant {
    /// The path shown, with what is beneath it.
    pub path: PathBuf,
    /// Why it is shown.
    pub why: Why,
}

/// The facts one run's view is chosen from.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// `$HOME` (no grant may be it, or hold it).
    pub home: Option<PathBuf>,
    /// The programs the run starts first: the program as found, and for a script the
    /// interpreter its shebang names (as found on `PATH` for `env NAME`), each with its
    /// canonical path.
    pub programs: Vec<(PathBuf, PathBuf)>,
    /// What shims among them start (an absolute program their script execs, such as a
    /// version manager's): the installation folder each lies in.
    pub shim_targets: Vec<PathBuf>,
    /// The per-user package folders of Python that exist (`~/.local/lib/pythonX.Y`), when a
    /// Python is among them or on `PATH`.
    pub user_packages: Vec<PathBuf>,
    /// The absolute folders of the run's `PATH`, and of the module search paths its
    /// environment names (`PYTHONPATH`, `NODE_PATH`: a vendored library the user passes).
    pub path_entries: Vec<PathBuf>,
    /// The run's working directory.
    pub cwd: PathBuf,
    /// The writable paths.
    pub writable: Vec<PathBuf>,
    /// The skills' folders and the user's grants, each with its reason.
    pub granted: Vec<Grant>,
    /// Where `/etc/resolv.conf` leads when that is outside the system trees (network allowed).
    pub resolver: Option<PathBuf>,
}

/// Folders no derived grant may be or hold: `$HOME`, the XDG base folders in it (each holds
/// every tool's settings and data), and `/`. A user's own `--allow-read` is not held to this.
fn too_wide(p: &Path, home: Option<&Path>) -> bool {
    if p.parent().is_none() {
        return true;
    }
    let Some(h) = home else { return false };
    [
        h.to_path_buf(),
        h.join(".local"),
        h.join(".local/share"),
        h.join(".local/state"),
        h.join(".local/lib"),
        h.join(".config"),
        h.join(".cache"),
    ]
    .iter()
    .any(|wide| wide.starts_with(p))
}

/// The grants of one run, pure: the system trees, each program's folder (and the `lib`
/// folders beside a `bin` one), the installation a shim starts, the per-user packages, `PATH`,
/// the working directory, the writable paths and the granted ones. Derived grants too wide (see
/// `too_wide`) are dropped.
pub fn grants(f: &Facts) -> Vec<Grant> {
    let home = f.home.as_deref();
    let mut out: Vec<Grant> = SYSTEM_TREES
        .iter()
        .map(|t| Grant {
            path: PathBuf::from(t),
            why: Why::System,
        })
        .collect();
    let mut add = |path: PathBuf, why: Why| {
        if path.is_absolute() && !too_wide(&path, home) {
            out.push(Grant { path, why });
        }
    };
    for (found, real) in &f.programs {
        for p in [found, real] {
            let Some(dir) = p.parent() else { continue };
            add(dir.to_path_buf(), Why::Program);
            if dir.file_name() == Some(OsStr::new("bin"))
                && let Some(prefix) = dir.parent()
            {
                for lib in ["lib", "lib64", "pyvenv.cfg"] {
                    add(prefix.join(lib), Why::Program);
                }
            }
        }
    }
    for t in &f.shim_targets {
        add(t.clone(), Why::Installation);
    }
    for u in &f.user_packages {
        add(u.clone(), Why::UserPackages);
    }
    for p in &f.path_entries {
        add(p.clone(), Why::PathEntry);
    }
    if let Some(r) = &f.resolver {
        add(r.clone(), Why::Resolver);
    }
    out.push(Grant {
        path: f.cwd.clone(),
        why: Why::WorkingDirectory,
    });
    out.extend(f.writable.iter().map(|w| Grant {
        path: w.clone(),
        why: Why::Writable,
    }));
    out.extend(f.granted.iter().cloned());
    let mut seen = std::collections::HashSet::new();
    out.retain(|g| seen.insert(g.path.clone()));
    // One inside another shows nothing more, unless it is writable (bound again, writable).
    let shown: Vec<PathBuf> = out
        .iter()
        .filter(|g| g.why != Why::Writable)
        .map(|g| g.path.clone())
        .collect();
    out.retain(|g| {
        g.why == Why::Writable || !shown.iter().any(|o| *o != g.path && g.path.starts_with(o))
    });
    out
}

/// Whether `path` is in the view `grants` gives (itself or under a granted path).
pub fn shows(grants: &[Grant], path: &Path) -> bool {
    grants.iter().any(|g| path.starts_with(&g.path))
}

/// The interpreter a script's first line names: its program, and for `env [-S] [OPT…] NAME`
/// the NAME to look up on `PATH`. `None` for a file that is no script.
pub fn shebang(file: &Path) -> Option<(PathBuf, Option<String>)> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let (program, name) = crate::command::interpreter::shebang(&head[..n])?;
    Some((PathBuf::from(program), name))
}

/// `name` looked up on the absolute folders of `path_entries`.
pub fn on_path(name: &str, path_entries: &[PathBuf]) -> Option<PathBuf> {
    path_entries.iter().map(|d| d.join(name)).find(|p| runs(p))
}

/// Whether `p` is (leads to) a file with an executable bit.
fn runs(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The absolute folders of a `PATH` value, in order (relative ones never count).
pub fn path_entries(path_var: &OsStr) -> Vec<PathBuf> {
    std::env::split_paths(path_var)
        .filter(|p| p.is_absolute())
        .collect()
}

/// Whether `program` is a Python interpreter (by its file name: `python`, `python3.12`).
fn is_python(program: &Path) -> bool {
    program
        .file_name()
        .is_some_and(|n| n.as_bytes().starts_with(b"python"))
}

/// The installation folder of a program a shim starts: the folder above its `bin` or `libexec`
/// folder (a version manager's root), else its own folder.
fn installation_of(target: &Path) -> Option<PathBuf> {
    let dir = target.parent()?;
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("bin" | "libexec") => dir.parent().map(Path::to_path_buf),
        _ => Some(dir.to_path_buf()),
    }
}

/// The programs a shim script starts: absolute paths in its text (after the first line) that
/// are executable files. A version manager's shim (`exec "/home/u/.pyenv/libexec/pyenv" …`)
/// says where the manager lives; nothing is run to find out.
fn shim_starts(shim: &Path) -> Vec<PathBuf> {
    use std::io::Read;
    let mut text = String::new();
    let Ok(f) = std::fs::File::open(shim) else {
        return Vec::new();
    };
    if f.take(16 * 1024).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for word in text
        .lines()
        .skip(1)
        .flat_map(|l| l.split(|c: char| c.is_whitespace() || "\"'`;()".contains(c)))
        .filter(|w| w.starts_with('/'))
    {
        let p = PathBuf::from(word);
        if runs(&p) && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The facts of one run: its program (`program`, absolute), the script's interpreter, what a
/// Python interpreter among them reports, the run's `PATH`.
pub fn facts(
    program: &Path,
    path_var: &OsStr,
    module_paths: &[PathBuf],
    cwd: &Path,
    writable: &[PathBuf],
    granted: &[Grant],
    network: bool,
) -> Facts {
    let home = crate::paths::home();
    let mut path_entries = path_entries(path_var);
    let python_on_path = on_path("python3", &path_entries);
    path_entries.extend(module_paths.iter().filter(|p| p.is_absolute()).cloned());
    let pair = |p: &Path| {
        (
            p.to_path_buf(),
            std::fs::canonicalize(p).unwrap_or(p.into()),
        )
    };
    let mut programs = vec![pair(program)];
    // The Python a script may call by name: a shim there leads to a manager's folder.
    if let Some(python) = python_on_path {
        programs.push(pair(&python));
    }
    if let Some((interp, name)) = shebang(program) {
        programs.push(pair(&interp));
        if let Some(found) = name.and_then(|n| on_path(&n, &path_entries)) {
            programs.push(pair(&found));
        }
    }
    // A script given to an interpreter (`python3 scripts/x.py`) is in the skill's folder or
    // the working directory, both granted; the interpreter is `program`.
    let shim_targets = programs
        .iter()
        .filter(|(_, real)| shebang(real).is_some())
        .flat_map(|(_, real)| shim_starts(real))
        .filter_map(|t| installation_of(&t))
        .collect();
    // The per-user package folders of Python that exist: `~/.local/lib/python*`.
    let python = programs.iter().any(|(f, r)| is_python(f) || is_python(r));
    let user_packages = match (&home, python) {
        (Some(h), true) => super::secrets::sorted_entries(&h.join(".local/lib"), |e| {
            e.file_name().as_bytes().starts_with(b"python")
        }),
        _ => Vec::new(),
    };
    let resolver = network
        .then(|| std::fs::canonicalize("/etc/resolv.conf").ok())
        .flatten()
        .and_then(|r| r.parent().map(Path::to_path_buf))
        .filter(|r| !SYSTEM_TREES.iter().any(|t| r.starts_with(t)));
    Facts {
        home,
        programs,
        shim_targets,
        user_packages,
        path_entries,
        cwd: cwd.to_path_buf(),
        writable: writable.to_vec(),
        granted: granted.to_vec(),
        resolver,
    }
}

/// The first path (absolute, `~/…`, or relative to `cwd` with a `/` in it) a run's messages
/// name that exists on this machine but outside `grants` and the run's own folders (`own`:
/// `/dev`, `/proc`, `$TMPDIR`): a fact about the view, checked against the file system.
pub fn named_outside(said: &str, grants: &[Grant], own: &[&Path], cwd: &Path) -> Option<PathBuf> {
    let home = crate::paths::home();
    said.split(|c: char| c.is_whitespace() || "'\"`()[]{}<>,;".contains(c))
        .filter_map(|word| {
            let word = word.trim_end_matches([':', '.', '!', '?']);
            match word.strip_prefix("~/") {
                Some(rest) => home.as_ref().map(|h| h.join(rest)),
                // Absolute, or relative with a folder in it (`../../notes.txt`).
                None => word.contains('/').then(|| PathBuf::from(word)),
            }
        })
        .map(|p| super::fold(&cwd.join(p)))
        .filter(|p| p.components().count() > 1)
        .filter(|p| !own.iter().any(|o| p.starts_with(o)))
        .find(|p| {
            // Named as it is, or as a file to make in a folder that exists.
            let there = p.symlink_metadata().is_ok()
                || p.parent().is_some_and(|d| d.is_dir() && !shows(grants, d));
            there && !shows(grants, p)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        Facts {
            home: Some("/home/u".into()),
            cwd: "/home/u/proj".into(),
            ..Facts::default()
        }
    }

    fn paths(g: &[Grant]) -> Vec<&Path> {
        g.iter().map(|g| g.path.as_path()).collect()
    }

    #[test]
    fn the_system_trees_and_the_working_directory_and_nothing_of_home() {
        let g = grants(&facts());
        assert!(shows(&g, Path::new("/usr/lib/python3/x.py")));
        assert!(shows(&g, Path::new("/home/u/proj/a.txt")));
        assert!(!shows(&g, Path::new("/home/u/.claude.json")));
        assert!(!shows(&g, Path::new("/home/u/.bashrc")));
        assert!(!shows(&g, Path::new("/home/u/some-new-tool/token")));
        assert!(!shows(&g, Path::new("/home/u/proj-other/.env")));
        assert!(!shows(&g, Path::new("/root/x")));
    }

    #[test]
    fn an_interpreter_under_home_shows_its_bin_and_lib_not_its_settings() {
        let mut f = facts();
        let node = PathBuf::from("/home/u/.nvm/versions/node/v20/bin/node");
        f.programs = vec![(node.clone(), node)];
        let g = grants(&f);
        assert!(shows(
            &g,
            Path::new("/home/u/.nvm/versions/node/v20/lib/node_modules/x")
        ));
        assert!(!shows(&g, Path::new("/home/u/.nvm/alias")));
        // A cargo-installed program: its folder, never `~/.cargo/credentials.toml`.
        let tool = PathBuf::from("/home/u/.cargo/bin/tool");
        f.programs = vec![(tool.clone(), tool)];
        let g = grants(&f);
        assert!(shows(&g, Path::new("/home/u/.cargo/bin/tool")));
        assert!(!shows(&g, Path::new("/home/u/.cargo/credentials.toml")));
    }

    #[test]
    fn a_shim_shows_the_installation_it_starts_and_never_home() {
        let mut f = facts();
        let shim = PathBuf::from("/home/u/.pyenv/shims/python3");
        f.programs = vec![(shim.clone(), shim)];
        f.shim_targets = vec![installation_of(Path::new("/home/u/.pyenv/libexec/pyenv")).unwrap()];
        f.user_packages = vec!["/home/u/.local/lib/python3.11".into()];
        let g = grants(&f);
        assert!(shows(
            &g,
            Path::new("/home/u/.pyenv/versions/3.11.7/bin/python3.11")
        ));
        assert!(shows(
            &g,
            Path::new("/home/u/.local/lib/python3.11/site-packages/x")
        ));
        assert!(!shows(
            &g,
            Path::new("/home/u/.local/share/keyrings/login.keyring")
        ));
        // A program directly in $HOME, a shim that starts one there: nothing of $HOME.
        let p = PathBuf::from("/home/u/python3");
        f.programs = vec![(p.clone(), p)];
        f.shim_targets = vec![installation_of(Path::new("/home/u/tool")).unwrap()];
        f.path_entries = vec!["/home/u".into(), "/home/u/.local/bin".into(), "/".into()];
        let g = grants(&f);
        assert!(!paths(&g).contains(&Path::new("/home/u")));
        assert!(!paths(&g).contains(&Path::new("/")));
        assert!(shows(&g, Path::new("/home/u/.local/bin/x")));
        assert!(!shows(&g, Path::new("/home/u/.bashrc")));
    }

    #[test]
    fn a_shims_text_names_what_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let manager = dir.path().join("mgr/libexec/mgr");
        std::fs::create_dir_all(manager.parent().unwrap()).unwrap();
        std::fs::write(&manager, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&manager, std::fs::Permissions::from_mode(0o755)).unwrap();
        let shim = dir.path().join("python3");
        let text = format!(
            "#!/usr/bin/env bash\nexec \"{}\" exec python3 \"$@\"\n",
            manager.display()
        );
        std::fs::write(&shim, text).unwrap();
        assert_eq!(shim_starts(&shim), std::slice::from_ref(&manager));
        assert_eq!(installation_of(&manager), Some(dir.path().join("mgr")));
    }

    #[test]
    fn a_user_grant_may_be_anything_it_names() {
        let mut f = facts();
        f.granted = vec![Grant {
            path: "/home/u/notes".into(),
            why: Why::Granted,
        }];
        let g = grants(&f);
        assert!(shows(&g, Path::new("/home/u/notes/a")));
        assert!(
            g.iter()
                .any(|x| x.path == Path::new("/home/u/notes") && x.why == Why::Granted)
        );
    }

    #[test]
    fn shebangs_name_the_interpreter_and_envs_target() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("s");
        std::fs::write(&s, "#!/usr/bin/env -S python3 -u\nprint(1)\n").unwrap();
        assert_eq!(
            shebang(&s),
            Some(("/usr/bin/env".into(), Some("python3".into())))
        );
        std::fs::write(&s, "#!/bin/sh -e\n").unwrap();
        assert_eq!(shebang(&s), Some(("/bin/sh".into(), None)));
        std::fs::write(&s, "print(1)\n").unwrap();
        assert_eq!(shebang(&s), None);
    }
}
