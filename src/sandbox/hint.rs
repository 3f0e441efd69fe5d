//! Why a sandboxed run may have failed: from its exit, signal and stderr, the restriction it
//! likely ran into ([`Hint`]), whose one line names the policy key that lifts it (the binary
//! names its flag instead). Pure; a guess from symptoms, so it is worded "likely" and only given
//! for a failed run.

use super::limits::Limits;
use super::plan::Enforced;
use std::path::PathBuf;
use std::time::Duration;

/// What is known about a finished run.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// It exited 0.
    pub success: bool,
    /// It was killed at the timeout.
    pub timed_out: bool,
    /// Its exit code.
    pub exit_code: i32,
    /// "SIGXCPU" when killed by a signal.
    pub signal: Option<&'a str>,
    /// What it wrote to stderr (the executor adds the end of its stdout: some scripts print
    /// their errors there).
    pub stderr: &'a [u8],
    /// The restrictions in force.
    pub enforced: Enforced,
    /// The limits in force.
    pub limits: Limits,
    /// The paths hidden from the run.
    pub hidden: &'a [PathBuf],
    /// The writable paths granted (besides `$TMPDIR`), in force when `enforced.filesystem`.
    pub writable: &'a [PathBuf],
    /// Some Unix sockets are named (`allowed_sockets`).
    pub sockets_named: bool,
    /// The folder the run worked in (relative paths in its messages are resolved against it).
    pub cwd: Option<&'a std::path::Path>,
    /// The working directory, when it is outside every writable path while the folder the user
    /// works in is inside one: a relative path then wrote where it may not (a skill script run
    /// in its own folder, `workdir = "skill"`).
    pub ran_elsewhere: Option<&'a std::path::Path>,
    /// Places scripts are never offered to write (the set `writable_paths` refuses: shell
    /// start-up files, system trees, PATH folders, credential stores, skillpipe's own files),
    /// each with what it is.
    pub protected: &'a [(PathBuf, String)],
    /// Network tools the run used whose exit code says a connection failed (`curl`, `wget`):
    /// the program itself, or named in its script.
    pub net_tools: &'a [&'a str],
}

/// What a failed run likely ran into, and so which policy key would have let it through.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hint {
    /// A resource limit (`key` is the policy key, e.g. `max_cpu_seconds`).
    Limit {
        /// The policy key of the limit.
        key: &'static str,
        /// Its value in force.
        value: Option<u64>,
        /// The unit shown after the value (`" s"`, `" MiB"`, or empty).
        unit: &'static str,
    },
    /// Its messages name a path that exists but is outside the run's read view (see
    /// `sandbox::view`): nothing granted shows it.
    OutsideView {
        /// The path.
        path: PathBuf,
    },
    /// It read a path hidden from scripts (`deny_read`).
    Hidden {
        /// The hidden path.
        path: PathBuf,
    },
    /// It likely touched a hidden file named by a relative path that more than one hidden path
    /// ends with (it may have changed folder first), or that is not the working directory's:
    /// which one is not known, so none is named.
    HiddenSomewhere {
        /// The relative path, as the message named it (control characters escaped).
        name: String,
        /// The hidden path it is relative to the folder the run started in, if one is: what it
        /// touched unless it changed folder.
        here: Option<PathBuf>,
    },
    /// A write refused inside a writable path: not by the sandbox but by the file's or the
    /// folder's own permissions (a root run has no capabilities over other users' files).
    OwnPermissions {
        /// The path the message names (control characters escaped).
        path: String,
    },
    /// It tried a Unix socket not open to it.
    Sockets {
        /// The network is off too (a refused connection may have been meant for it).
        network_off: bool,
        /// Some sockets are open (`allowed_sockets`), just not this one.
        named: bool,
    },
    /// It wrote to a place scripts are never offered (see `Facts::protected`): the hint says
    /// so, and names no setting.
    Protected {
        /// The path the message names (control characters escaped).
        path: String,
        /// What the place is.
        why: String,
        /// The folder the command ran in, when the path was relative and that folder is the
        /// protected place (a skill's own, with `workdir = "skill"`): where the user works
        /// was most likely meant.
        ran_in: Option<PathBuf>,
    },
    /// It wrote outside its `$TMPDIR` and the writable paths.
    Writes {
        /// The writable paths in force (besides `$TMPDIR`).
        writable: Vec<PathBuf>,
        /// The folder it ran in, outside every writable path while the user's own folder is writable.
        ran_in: Option<PathBuf>,
    },
    /// Something was refused whose message does not say it was a write: a read (of `/proc`, of a
    /// file), a Unix socket, or not known. Never worded as a write.
    Denied {
        /// The path the message names (control characters escaped), if any.
        path: Option<String>,
        /// It is in `/proc` (the run's own, where the host's processes and the run's init are
        /// out of reach).
        in_proc: bool,
        /// The message says it was a read.
        read: bool,
    },
    /// It wrote into version control metadata (`.git` …) or a tool's settings (`.claude` …),
    /// which stay read-only inside the writable paths.
    VcsMetadata {
        /// The folder's name, as the error showed it (`.git`).
        name: &'static str,
    },
    /// It tried to make a namespace of its own (`unshare`, a nested sandbox or container).
    Namespaces,
    /// It needed the network; there is none (nor services on this machine: the run has a
    /// loopback of its own).
    Network {
        /// An address on this machine the message names (`127.0.0.1:11434`), if any.
        local: Option<String>,
    },
    /// It was stopped at the timeout (`network_off`: a download may have been what it waited
    /// for).
    Timeout {
        /// The timeout in force (a tool's own may be part of a second).
        after: Duration,
        /// The run had no network.
        network_off: bool,
        /// `Some((tool, policy_seconds))` when a tool's `timeout:` in its tool.yaml, shorter
        /// than the policy's, set it: that file is what allows longer, not the policy.
        tool: Option<(String, u64)>,
    },
    /// The OS refused something (`said`: "Permission denied", …) and restrictions were in
    /// force, though none of the symptoms above points at one.
    Refused {
        /// What the refusal said.
        said: &'static str,
        /// The restrictions in force, in words.
        in_force: String,
    },
    /// A skill script ran in its skill's folder and missed `arg`, which exists where the user is.
    Workdir {
        /// The relative path it was given (control characters escaped).
        arg: String,
    },
    /// A skill script ran in its skill's folder and its messages ask for the user's project:
    /// it said to run it from the project root, or `git` found no repository there while the
    /// user is in one.
    RootAsked {
        /// `git` found no repository (rather than a message naming the project root).
        git: bool,
    },
    /// A Python script failed to import a module: the likelier story than any restriction.
    MissingModule(Box<MissingModule>),
}

/// A module a Python script could not import, and what may keep an installed one out of reach.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MissingModule {
    /// The module, as the traceback names it (control characters escaped).
    pub module: String,
    /// The package on PyPI that provides it (control characters escaped).
    pub package: String,
    /// The top module, when the package's name differs from it (`docx`: `python-docx`).
    pub renamed: Option<String>,
    /// A hidden path (`deny_read`) over the user's site (`~/.local/lib`, where
    /// `pip install --user` puts packages).
    pub hidden: Option<PathBuf>,
    /// Variables that point Python at packages, set here but not passed to the run
    /// (`env_passthrough`).
    pub dropped: Vec<&'static str>,
}

impl Hint {
    /// [`Hint::MissingModule`]'s line, with `show(path)` saying what lifts the hiding of `path`
    /// (the library names the key, the binary its flag).
    pub(crate) fn missing_module(&self, show: impl Fn(&std::path::Path) -> String) -> String {
        let Hint::MissingModule(m) = self else {
            return self.to_string();
        };
        let MissingModule {
            module,
            package,
            renamed,
            hidden,
            dropped,
        } = &**m;
        let mut line = format!(
            "python: the module `{module}` is missing; install it with `pip install {package}`"
        );
        if let Some(top) = renamed {
            line.push_str(&format!(
                " (the package's name is not the module's `{top}`)"
            ));
        }
        if let Some(hider) = hidden {
            line.push_str(&format!(
                "; the sandbox hides {} (deny_read), where `pip install --user` puts packages: {} \
                 shows it",
                hider.display(),
                show(hider)
            ));
        }
        if !dropped.is_empty() {
            line.push_str(&format!(
                "; {} is set here but not passed to scripts (add it to env_passthrough)",
                dropped.join(", ")
            ));
        }
        line
    }
}

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hint::Limit { key, value, unit } => write!(
                f,
                "sandbox: the run likely hit the limit {key}{}; raise {key}",
                value.map_or(String::new(), |v| format!(" = {v}{unit}"))
            ),
            Hint::OutsideView { path } => write!(
                f,
                "sandbox: {} is outside the run's view: allow_read shows it to scripts, \
                 writable_paths lets them write there",
                path.display()
            ),
            Hint::Hidden { path } => write!(
                f,
                "sandbox: {} is hidden from scripts (deny_read); lift it with allow_read",
                path.display()
            ),
            Hint::HiddenSomewhere { name, here } => write!(
                f,
                "{}; lift it with allow_read and its full path",
                hidden_somewhere(name, here.as_deref())
            ),
            Hint::OwnPermissions { path } => f.write_str(&own_permissions(path)),
            Hint::Sockets { network_off, named } => {
                f.write_str(sockets_closed(*named))?;
                f.write_str("; allow one in allowed_sockets")?;
                if *network_off {
                    f.write_str(
                        " (a separate setting from allow_network, which opens only the network)",
                    )?;
                }
                Ok(())
            }
            Hint::Protected {
                path,
                why,
                ran_in: Some(dir),
            } => write!(
                f,
                "{}; {}",
                protected(path, why),
                ran_elsewhere(dir, "workdir = \"caller\"")
            ),
            Hint::Protected { path, why, .. } => f.write_str(&protected(path, why)),
            Hint::Writes {
                writable,
                ran_in: Some(dir),
            } => write!(
                f,
                "{}; {}",
                writes_refused(writable),
                ran_elsewhere(dir, "workdir = \"caller\"")
            ),
            Hint::Writes { writable, .. } => write!(
                f,
                "{}; allow {} in writable_paths",
                writes_refused(writable),
                if writable.is_empty() {
                    "a directory"
                } else {
                    "another directory"
                }
            ),
            Hint::Denied {
                path,
                in_proc,
                read,
            } => match denied_story(path.as_deref(), *in_proc, *read) {
                Some(story) => f.write_str(&story),
                None => write!(
                    f,
                    "{}; it may lift with writable_paths (a write), allow_read (a hidden file) \
                     or allowed_sockets (a Unix socket)",
                    denied_words(path.as_deref(), *read)
                ),
            },
            Hint::VcsMetadata { name } => f.write_str(&vcs_read_only(name)),
            Hint::Namespaces => f.write_str(NAMESPACES),
            Hint::Network { local } => write!(
                f,
                "{}; allow it with allow_network",
                no_network(local.as_deref())
            ),
            Hint::Timeout {
                after,
                network_off,
                tool,
            } => {
                match tool {
                    Some((tool, policy)) => write!(f, "{}", tool_timeout(tool, *after, *policy))?,
                    None => write!(
                        f,
                        "stopped at the timeout (timeout_seconds = {}): a larger \
                         timeout_seconds allows longer (at most 600)",
                        crate::term::duration::text(*after)
                    )?,
                }
                if *network_off {
                    f.write_str(
                        "; with the network off, a script waiting on a download also ends here \
                         (allow_network)",
                    )?;
                }
                Ok(())
            }
            Hint::Refused { said, in_force } => write!(
                f,
                "sandbox: `{said}` may come from the sandbox ({in_force} in force)"
            ),
            Hint::Workdir { arg } => write!(
                f,
                "{}: workdir = \"caller\" runs skill scripts where you are",
                workdir_story(arg)
            ),
            Hint::RootAsked { git } => write!(
                f,
                "{}: workdir = \"caller\" runs skill scripts where you are",
                root_story(*git)
            ),
            Hint::MissingModule(_) => {
                f.write_str(&self.missing_module(|_| "listing it in allow_read".to_string()))
            }
        }
    }
}

/// [`Hint::HiddenSomewhere`]'s first words.
pub(crate) fn hidden_somewhere(name: &str, here: Option<&std::path::Path>) -> String {
    let which = match here {
        Some(h) => format!(
            "{} if it wrote where it started, another folder's if it changed folder",
            crate::command::escape_controls(&h.display().to_string())
        ),
        None => "which one is not known from a relative path".to_string(),
    };
    format!(
        "sandbox: the run likely touched a hidden {name} file (deny_read hides them from \
         scripts; {which})"
    )
}

/// [`Hint::OwnPermissions`]: names no setting (none lifts it), so the same for the library
/// and the binary.
pub(crate) fn own_permissions(path: &str) -> String {
    format!(
        "sandbox: {path} is in a writable path: the sandbox did not refuse the write, the file's or its \
         folder's own permissions did (a run as root has no capabilities over other users' \
         files); change them, or write elsewhere"
    )
}

/// [`Hint::Sockets`]'s first words.
pub(crate) fn sockets_closed(named: bool) -> &'static str {
    if named {
        "sandbox: only the Unix sockets named in the policy are open"
    } else {
        "sandbox: Unix sockets are closed"
    }
}

/// [`Hint::Denied`]'s first words: what was denied, never called a write.
pub(crate) fn denied_words(path: Option<&str>, read: bool) -> String {
    match (path, read) {
        (Some(p), true) => format!("sandbox: reading {p} was denied by the sandbox"),
        (Some(p), false) => format!("sandbox: {p} was denied by the sandbox"),
        (None, _) => "sandbox: denied by the sandbox".to_string(),
    }
}

/// [`Hint::Denied`] for a read: the whole line. In `/proc` it names no setting (none lifts
/// it); elsewhere the sandbox refuses no read (Landlock handles writes only; a hidden path reads
/// as empty), so the file's own permissions are the likelier story. `None`: not known to be a
/// read.
pub(crate) fn denied_story(path: Option<&str>, in_proc: bool, read: bool) -> Option<String> {
    let shown = path.map(|p| format!("reading {p} was denied"));
    match (in_proc, read, shown) {
        (true, _, _) => Some(format!(
            "{}: the run has a /proc of its own, where its init (PID 1) and the host's \
             processes are out of reach; no setting lifts that",
            denied_words(path, read)
        )),
        (false, true, Some(shown)) => Some(format!(
            "sandbox: {shown}; the sandbox refuses no read (a hidden path reads as empty \
             instead), so the file's own permissions likely did"
        )),
        _ => None,
    }
}

/// `.` or `./`: the folder a command runs in, whichever that is.
pub(crate) fn is_here(arg: &str) -> bool {
    matches!(arg, "." | "./")
}

/// What went wrong for [`Hint::Workdir`]: `arg` missing in the skill's folder, or `.` (which
/// exists everywhere) naming the skill's folder instead of the user's.
pub(crate) fn workdir_story(arg: &str) -> String {
    match is_here(arg) {
        true => format!(
            "the script ran in its skill's folder, so `{arg}` was that folder, not where you are"
        ),
        false => format!(
            "the script ran in its skill's folder, where `{arg}` does not exist (it does where \
             you are)"
        ),
    }
}

/// What went wrong for [`Hint::RootAsked`].
pub(crate) fn root_story(git: bool) -> &'static str {
    match git {
        true => {
            "the script ran in its skill's folder, which is in no Git repository (where you are is)"
        }
        false => {
            "the script ran in its skill's folder, and it asks to be run from your project's root"
        }
    }
}

/// The words of a failed script's messages that ask for the user's project rather than the
/// skill's folder: `Run this from your project root`, `must be run at the repository root`.
const ROOT_WORDS: &[&str] = &[
    "project root",
    "repository root",
    "repo root",
    "workspace root",
    "root of the project",
    "root of your project",
    "root of the repository",
    "root of your repository",
    "root of the repo",
    "root of your repo",
    "root of the workspace",
];

/// `git`'s own words, and scripts' (`Error: not inside a Git repository`), for a folder outside
/// any repository.
const NO_REPO_WORDS: &[&str] = &[
    "not a git repository",
    "not inside a git repository",
    "not in a git repository",
];

/// Whether a failed skill script's messages (`said`, untrusted; only the last 4 KiB are read)
/// ask for the user's project: `Some(false)` when they name its root, `Some(true)` when they
/// say there is no Git repository and `caller_in_repo` (the user's folder is in one).
pub(crate) fn root_asked(said: &[u8], caller_in_repo: bool) -> Option<bool> {
    let tail = String::from_utf8_lossy(&said[said.len().saturating_sub(4096)..]).to_lowercase();
    let tail = tail.split_whitespace().collect::<Vec<_>>().join(" ");
    if ROOT_WORDS.iter().any(|w| tail.contains(w)) {
        Some(false)
    } else if caller_in_repo && NO_REPO_WORDS.iter().any(|w| tail.contains(w)) {
        Some(true)
    } else {
        None
    }
}

/// A write refused in the folder a skill script ran in, while where the user works is
/// writable: `how` names the setting that runs it there.
pub(crate) fn ran_elsewhere(dir: &std::path::Path, how: &str) -> String {
    format!(
        "it ran in {}, not where you work, so a relative path wrote there; {how} runs it in your \
         folder",
        dir.display()
    )
}

/// Whether `err` names a path with the component `name` (`/x/.git/hooks`, `'.git/config'`,
/// `'.git'`), not merely a word that contains it (`.github`, `my.git`).
fn names_component(err: &str, name: &str) -> bool {
    err.match_indices(name).any(|(i, _)| {
        let before = err[..i].chars().next_back();
        let after = err[i + name.len()..].chars().next();
        let starts = before.is_none_or(|c| matches!(c, '/' | '\'' | '"' | ' ' | '`' | '\n'));
        let ends = after.is_none_or(|c| matches!(c, '/' | '\'' | '"' | ' ' | '`' | ':' | '\n'));
        starts && ends
    })
}

/// [`Hint::Writes`]'s first words: what is writable now.
pub(crate) fn writes_refused(writable: &[PathBuf]) -> String {
    let shown: Vec<String> = writable
        .iter()
        .map(|p| crate::command::escape_controls(&p.display().to_string()))
        .collect();
    if shown.is_empty() {
        "sandbox: writes outside $TMPDIR are refused".to_string()
    } else {
        format!(
            "sandbox: writes outside $TMPDIR and {} are refused",
            shown.join(", ")
        )
    }
}

/// [`Hint::VcsMetadata`]: names no setting (it must not talk anyone into opening it).
pub(crate) fn vcs_read_only(name: &str) -> String {
    format!(
        "sandbox: {name} stays read-only, inside writable paths too (its hooks and settings would run \
         commands outside the sandbox); change it yourself, outside skillpipe"
    )
}

/// [`Hint::Protected`]: names no setting, so the same for the library and the binary (the
/// hint reaches the model too, and must not talk anyone into opening the sandbox).
pub(crate) fn protected(path: &str, why: &str) -> String {
    format!(
        "sandbox: {path} is protected ({why}): scripts may not write there; write in the \
         project or $TMPDIR instead"
    )
}

/// [`Hint::Network`]'s first words: no network, and no services of this machine either.
pub(crate) fn no_network(local: Option<&str>) -> String {
    format!(
        "sandbox: there is no network, and the run has a loopback of its own: services on this \
         machine, such as {}, are outside the sandbox",
        local.unwrap_or("127.0.0.1:PORT")
    )
}

/// [`Hint::Namespaces`]: names no setting, so the same for the library and the binary.
pub(crate) const NAMESPACES: &str = "sandbox: scripts cannot make namespaces of their own \
     (unshare, user namespaces, a nested sandbox or container); no setting lifts that";

fn has(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| text.contains(n))
}

/// The likely cause, or `None` when nothing points at the sandbox.
pub fn explain(f: &Facts) -> Option<Hint> {
    if f.success || f.timed_out {
        return None;
    }
    let l = &f.limits;
    let limit = |key: &'static str, value: Option<u64>, unit: &'static str| Hint::Limit {
        key,
        value,
        unit,
    };
    let err = String::from_utf8_lossy(f.stderr);
    // The command itself killed by the signal, or (a shell's) child: 128 + N and the shell's
    // message.
    let by = |sig: &str, code: i32, text: &str| {
        f.signal == Some(sig) || f.exit_code == 128 + code || err.contains(text)
    };
    if f.enforced.limits {
        let signal = if by("SIGXCPU", libc::SIGXCPU, "CPU time limit exceeded") {
            Some("SIGXCPU")
        } else if by("SIGXFSZ", libc::SIGXFSZ, "File size limit exceeded") {
            Some("SIGXFSZ")
        } else {
            None
        };
        match signal {
            Some("SIGXCPU") => {
                return Some(limit("max_cpu_seconds", l.cpu_seconds, " s"));
            }
            Some("SIGXFSZ") => {
                return Some(limit("max_file_size_mb", l.file_size_mb, " MiB"));
            }
            _ => {}
        }
    }
    if f.enforced.mounts && has(&err, &["No space left on device", "ENOSPC"]) {
        return Some(limit("max_tmp_mb", l.tmp_mb, " MiB"));
    }
    if f.enforced.limits {
        if has(
            &err,
            &[
                "fork: Resource temporarily unavailable",
                "fork: retry",
                "Cannot fork",
                "can't fork",
                "BlockingIOError: [Errno 11]",
                "Resource temporarily unavailable",
            ],
        ) && l.processes.is_some()
        {
            return Some(limit("max_processes", l.processes, ""));
        }
        if has(
            &err,
            &[
                "Cannot allocate memory",
                "MemoryError",
                "out of memory",
                "Out of memory",
                "bad_alloc",
                "memory allocation of",
            ],
        ) && l.memory_mb.is_some()
        {
            return Some(limit("max_memory_mb", l.memory_mb, " MiB"));
        }
    }
    // A hidden path the error names, unless the error is a refused access to other paths
    // (a script that printed a hidden path's name and then failed a write elsewhere).
    if let Some(h) = hidden_named(f, &err) {
        let refused = Refusal::of(&err).paths;
        if refused.is_empty() || refused.iter().any(|p| names_hidden(&h, p)) {
            return Some(h);
        }
    }
    let sandboxed = f.enforced != Enforced::default();
    // The seccomp filter refuses them with EPERM; `unshare -r` and the like say which call.
    if sandboxed
        && has(&err, &["Operation not permitted", "EPERM"])
        && has(
            &err,
            &[
                "unshare",
                "uid_map",
                "gid_map",
                "setgroups",
                "namespace",
                "CLONE_NEW",
            ],
        )
    {
        return Some(Hint::Namespaces);
    }
    let denied = has(&err, &["Permission denied", "EACCES"]);
    if denied && has(&err, &["socket", "connect", ".sock"]) {
        return Some(Hint::Sockets {
            network_off: f.enforced.network,
            named: f.sockets_named,
        });
    }
    let read_only = has(&err, &["Read-only file system", "EROFS"]);
    // Landlock refuses with EACCES, a read-only mount with EROFS (EPERM is neither's). A
    // program the launcher could not start (`cannot run X: Permission denied`) wrote nothing.
    let not_started = has(&err, &["skillpipe: cannot run "]);
    let refusal = Refusal::of(&err);
    // A place no setting offered to scripts opens: said so, with no setting named. Refused by
    // Landlock or the mounts (skillpipe's own files stay read-only with writes allowed too).
    let write_refused = read_only || denied && refusal.access != Access::Read;
    let by_sandbox = f.enforced.filesystem || f.enforced.mounts && read_only;
    // A relative path written in the folder the command ran in (a skill's own, kept
    // read-only) most likely meant where the user works: the hints below say which folders
    // are writable and, where the user's is, name `--workdir caller`.
    let ran_in_protected = f
        .cwd
        .is_some_and(|cwd| f.protected.iter().any(|(place, _)| cwd.starts_with(place)));
    let meant_caller = f.enforced.filesystem
        && (f.ran_elsewhere.is_some() || ran_in_protected)
        && refusal.paths.iter().any(|p| !p.starts_with('/'));
    if write_refused
        && by_sandbox
        && !not_started
        && !meant_caller
        && let Some((path, why)) = protected_named(f, &refusal.paths)
    {
        return Some(Hint::Protected {
            path: crate::command::escape_controls(path),
            why: why.to_string(),
            ran_in: f
                .cwd
                .filter(|_| ran_in_protected && !path.starts_with('/'))
                .map(std::path::Path::to_path_buf),
        });
    }
    // Kept read-only whatever is writable: with no writable path given, `--writable DIR`
    // would not open it either.
    if f.enforced.filesystem && read_only {
        let vcs = super::KEPT_READ_ONLY
            .into_iter()
            .map(|(name, _)| name)
            .find(|name| names_component(&err, name));
        if let Some(name) = vcs {
            return Some(Hint::VcsMetadata { name });
        }
    }
    if f.enforced.filesystem && read_only && !not_started
        || f.enforced.filesystem && denied && refusal.access == Access::Write
    {
        // Inside a writable path only the file's own permissions refuse (EACCES; the sandbox's
        // read-only mounts say EROFS). Without those mounts Landlock refuses with EACCES too,
        // so then only an absolute path says where the write went (a relative one may follow a
        // `cd` out of the writable path).
        let told = |p: &&String| f.enforced.mounts || p.starts_with('/');
        if !read_only && let Some(p) = in_writable(f, &refusal.paths).filter(told) {
            return Some(Hint::OwnPermissions {
                path: crate::command::escape_controls(p),
            });
        }
        // "It ran elsewhere" explains only a relative path.
        let relative = refusal.paths.iter().any(|p| !p.starts_with('/'));
        return Some(Hint::Writes {
            writable: f.writable.to_vec(),
            ran_in: f
                .ran_elsewhere
                .filter(|_| relative)
                .map(std::path::Path::to_path_buf),
        });
    }
    if sandboxed && denied && !not_started {
        let path = refusal.paths.first();
        let in_proc = path.is_some_and(|p| p == "/proc" || p.starts_with("/proc/"));
        return Some(Hint::Denied {
            path: path.map(|p| crate::command::escape_controls(p)),
            read: refusal.access == Access::Read || in_proc,
            in_proc: in_proc && f.enforced.pids,
        });
    }
    if f.enforced.network && (connection_failed(&err) || tool_says_no_connection(f)) {
        return Some(Hint::Network {
            local: local_address(&err),
        });
    }
    denial(&err)
        .filter(|_| sandboxed)
        .map(|said| Hint::Refused {
            said,
            in_force: in_force(f.enforced),
        })
}

/// Words of a failed connection or name lookup (compared in lower case).
const CONNECTION_WORDS: &[&str] = &[
    "temporary failure in name resolution",
    "name or service not known",
    "could not resolve",
    "getaddrinfo",
    "network is unreachable",
    "nodename nor servname",
    "no address associated with hostname",
    "connection refused",
    "no route to host",
    "failed to connect",
    "couldn't connect",
    "could not connect",
    "unable to connect",
    "fetch failed",
    "urlopen error",
    "max retries exceeded",
];

/// Error codes of a failed connection or lookup (Node prints `connect ECONNREFUSED …`,
/// `getaddrinfo ENOTFOUND host`; Erlang `{error,econnrefused}`), compared as whole words, in
/// upper or lower case: inside a word `enotfound` is part of Python's `FileNotFoundError`.
const CONNECTION_CODES: &[&str] = &[
    "ECONNREFUSED",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "EAI_AGAIN",
    "ENOTFOUND",
];

/// Whether the messages read as a failed connection.
fn connection_failed(err: &str) -> bool {
    let lower = err.to_lowercase();
    CONNECTION_WORDS.iter().any(|w| lower.contains(w))
        || err
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| {
                CONNECTION_CODES
                    .iter()
                    .any(|c| word == *c || word == c.to_ascii_lowercase())
            })
}

/// Exit codes of network tools that mean the connection failed (a quiet `wget -q` says nothing
/// else): curl 6 (name), 7 (connect), 28 (timeout); wget 4 (network failure).
const TOOL_EXIT_CODES: &[(&str, &[i32])] = &[("curl", &[6, 7, 28]), ("wget", &[4])];

/// Whether a network tool the run used exited with its code for a failed connection.
fn tool_says_no_connection(f: &Facts) -> bool {
    TOOL_EXIT_CODES
        .iter()
        .any(|(tool, codes)| f.net_tools.contains(tool) && codes.contains(&f.exit_code))
}

/// An address on this machine the messages name: `127.0.0.1:48123`, `localhost:11434`,
/// `[::1]:8080`, or curl's `127.0.0.1 port 48123`.
fn local_address(err: &str) -> Option<String> {
    for host in ["127.0.0.1", "localhost", "[::1]", "0.0.0.0"] {
        for (i, _) in err.match_indices(host) {
            let rest = &err[i + host.len()..];
            let port_text = rest
                .strip_prefix(':')
                .or_else(|| rest.strip_prefix(" port "));
            let port: String = port_text
                .map(|r| r.chars().take_while(char::is_ascii_digit).collect())
                .unwrap_or_default();
            if !port.is_empty() && port.len() <= 5 {
                return Some(format!("{host}:{port}"));
            }
        }
    }
    None
}

/// The first refused path that lies in a protected place (absolute, or relative to where the
/// run worked; `.` and `..` folded), with what the place is.
fn protected_named<'a>(f: &'a Facts, paths: &'a [String]) -> Option<(&'a String, &'a str)> {
    paths.iter().find_map(|p| {
        let path = std::path::Path::new(p);
        let abs = match (path.is_absolute(), f.cwd) {
            (true, _) => path.to_path_buf(),
            (false, Some(c)) => c.join(path),
            (false, None) => return None,
        };
        let abs = fold(&abs);
        f.protected
            .iter()
            .find(|(place, _)| abs.starts_with(place))
            .map(|(_, why)| (p, why.as_str()))
    })
}

/// `/a/b/../c/./d` → `/a/c/d`, without looking at the file system.
pub(crate) fn fold(path: &std::path::Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The hidden path the error names. The outermost one: a file in a folder hidden as a whole
/// shows only once the folder is lifted (`--allow-read` refuses the file alone). Named as it
/// is, or relative to where the run worked (`bash: .env: Read-only file system`) — but a
/// relative path may be another folder's (`cd sub && echo x > .env`): when another hidden path
/// ends the same way, or only a hidden `.env*` file's name matches, none is named.
fn hidden_named(f: &Facts, err: &str) -> Option<Hint> {
    let outermost = |v: Vec<&PathBuf>| v.into_iter().min_by_key(|p| p.as_os_str().len()).cloned();
    let absolute: Vec<&PathBuf> = f
        .hidden
        .iter()
        .filter(|p| names_path(err, &p.to_string_lossy()))
        .collect();
    if let Some(path) = outermost(absolute) {
        return Some(Hint::Hidden { path });
    }
    let rel_of = |p: &PathBuf| {
        f.cwd
            .and_then(|c| p.strip_prefix(c).ok())
            .map(std::path::Path::to_path_buf)
            .filter(|rel| names_relative(err, &rel.to_string_lossy()))
    };
    let relative: Vec<&PathBuf> = f.hidden.iter().filter(|p| rel_of(p).is_some()).collect();
    if let Some(path) = outermost(relative) {
        let rel = rel_of(&path).unwrap_or_default();
        let alike = f.hidden.iter().filter(|h| h.ends_with(&rel)).count();
        return Some(match alike {
            1 => Hint::Hidden { path },
            _ => Hint::HiddenSomewhere {
                name: crate::command::escape_controls(&rel.to_string_lossy()),
                here: Some(path),
            },
        });
    }
    f.hidden
        .iter()
        .filter_map(|h| h.file_name())
        .find(|n| super::secrets::is_dotenv(n) && names_relative(err, &n.to_string_lossy()))
        .map(|n| Hint::HiddenSomewhere {
            name: crate::command::escape_controls(&n.to_string_lossy()),
            here: None,
        })
}

/// Whether `path`, as a refusal names it (absolute or relative), is the hidden one `hint`
/// names.
fn names_hidden(hint: &Hint, path: &str) -> bool {
    let p = fold(std::path::Path::new(path));
    match hint {
        Hint::Hidden { path: hidden } => *hidden == p || hidden.ends_with(&p),
        Hint::HiddenSomewhere { name, .. } => p.ends_with(name.as_str()),
        _ => false,
    }
}

/// The first of `paths` (from a refusal) that lies in a writable path, resolved against the
/// working directory; `None` when one does not (a write outside them), or when none is named.
fn in_writable<'a>(f: &Facts, paths: &'a [String]) -> Option<&'a String> {
    let inside = |p: &String| {
        let path = std::path::Path::new(p);
        let abs = match (path.is_absolute(), f.cwd) {
            (true, _) => path.to_path_buf(),
            (false, Some(c)) => c.join(path),
            (false, None) => return false,
        };
        let plain = abs
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
        plain && f.writable.iter().any(|w| abs.starts_with(w))
    };
    match !paths.is_empty() && paths.iter().all(inside) {
        true => paths.first(),
        false => None,
    }
}

/// How a refused operation reads in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Write,
    Read,
    /// The message does not say (`PermissionError: [Errno 13] Permission denied: 'x'`).
    Unknown,
}

/// The refusals in a run's messages: what they say was done, and the paths they name.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    access: Access,
    paths: Vec<String>,
}

/// Words of a refused write (a read-only file system refuses nothing else).
const WRITE_WORDS: &[&str] = &[
    "read-only file system",
    "erofs",
    "cannot create",
    "can't create",
    "could not create",
    "unable to create",
    "failed to create",
    "cannot touch",
    "for writing",
    "cannot write",
    "can't write",
    "write error",
    "cannot remove",
    "cannot make",
    "cannot mkdir",
    "cannot move",
    "cannot overwrite",
    "cannot rename",
    "cannot unlink",
    "cannot link",
    "cannot delete",
    "failed to remove",
    "open failed",
    "cannot change",
    "cannot set",
    "cannot copy",
    "changing permissions",
    "changing ownership",
    "setting times",
    "tee: ",
];

/// Words of a refused read, and programs that only read what they name.
const READ_WORDS: &[&str] = &[
    "for reading",
    "cannot open",
    "can't open",
    "cannot read",
    "can't read",
    "cannot access",
    "opendir",
    "cat: ",
    "head: ",
    "tail: ",
    "less: ",
    "grep: ",
    "wc: ",
    "ls: ",
    "diff: ",
    "md5sum: ",
    "sha256sum: ",
];

impl Refusal {
    /// From the lines of `err` that say "Permission denied" or "Read-only file system". Pure.
    fn of(err: &str) -> Refusal {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| {
                has(
                    l,
                    &[
                        "Permission denied",
                        "EACCES",
                        "Read-only file system",
                        "EROFS",
                    ],
                )
            })
            .collect();
        let lower: Vec<String> = lines.iter().map(|l| l.to_lowercase()).collect();
        let any = |words: &[&str]| lower.iter().any(|l| words.iter().any(|w| l.contains(w)));
        let access = if any(WRITE_WORDS) {
            Access::Write
        } else if any(READ_WORDS) {
            Access::Read
        } else {
            Access::Unknown
        };
        let mut paths = Vec::new();
        for l in &lines {
            for p in named_in(l) {
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        Refusal { access, paths }
    }
}

/// The paths one refusal line names: quoted ones (`'x'`, `"x"`, `‘x’`), else the word before
/// the refusal (`sh: 1: cannot create out: Permission denied`). Pure; a guess.
fn named_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
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
        let end = ["Permission denied", "Read-only file system"]
            .iter()
            .filter_map(|w| line.find(w))
            .min();
        if let Some(end) = end {
            let before = line[..end].trim_end().trim_end_matches(':');
            let piece = before.rsplit(": ").next().unwrap_or(before);
            if let Some(word) = piece.split_whitespace().last()
                && looks_like_path(word)
                && word != before
            {
                out.push(word.to_string());
            }
        }
    }
    out
}

/// Whether `s` may be a path (not `[Errno 13]`, a line number or empty).
fn looks_like_path(s: &str) -> bool {
    !s.is_empty()
        && !s.contains(['[', ']', '\n'])
        && !s.chars().all(|c| c.is_ascii_digit())
        && s.chars()
            .any(|c| c.is_alphanumeric() || c == '/' || c == '.')
}

/// Whether `err` names the relative path `rel` as a whole: at the start of a word (or after
/// `./`) and ending as [`names_path`] wants.
fn names_relative(err: &str, rel: &str) -> bool {
    if rel.is_empty() {
        return false;
    }
    err.match_indices(rel).any(|(i, _)| {
        let head = &err[..i];
        let head = head.strip_suffix("./").unwrap_or(head);
        let starts = head
            .chars()
            .next_back()
            .is_none_or(|c| matches!(c, '\'' | '"' | '`' | '‘' | '(') || c.is_whitespace());
        let ends = err[i + rel.len()..].chars().next().is_none_or(|c| {
            matches!(c, '/' | '\'' | '"' | ':' | '`' | ')' | '’') || c.is_whitespace()
        });
        starts && ends
    })
}

/// Whether `err` names `path` as a whole (followed by `/`, a quote, `:`, a space or the end):
/// `/h/.a` is not named by `/h/.aws/credentials`.
fn names_path(err: &str, path: &str) -> bool {
    err.match_indices(path).any(|(i, _)| {
        err[i + path.len()..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '/' | '\'' | '"' | ':' | '`' | ')') || c.is_whitespace())
    })
}

/// What a refusal by the OS says: a failure without any of these has nothing to do with the
/// sandbox (a usage error, a division by zero), so nothing about the sandbox is said.
fn denial(err: &str) -> Option<&'static str> {
    [
        "Operation not permitted",
        "EPERM",
        "Permission denied",
        "EACCES",
        "Read-only file system",
        "EROFS",
        "Network is unreachable",
        "ENETUNREACH",
    ]
    .into_iter()
    .find(|n| err.contains(n))
    .or_else(|| {
        // Setting an extended attribute (`rsync -X`, `setfattr`, `os.setxattr`) is refused
        // so; the same words from a file system (fallocate on tmpfs) are no refusal.
        let xattr = ["xattr", "setfattr", "extended attribute"]
            .iter()
            .any(|w| err.contains(w));
        ["Operation not supported", "EOPNOTSUPP", "ENOTSUP"]
            .into_iter()
            .find(|n| xattr && err.contains(n))
    })
}

/// The restrictions in force, in words.
fn in_force(e: Enforced) -> String {
    [
        (e.network, "no network"),
        (
            e.filesystem,
            "writes only to $TMPDIR and the writable paths",
        ),
        (e.pids, "own process tree"),
        (e.mounts, "own /dev and $TMPDIR, secrets hidden"),
        (e.limits, "resource limits"),
        (
            e != Enforced::default(),
            "no namespaces of its own, no setuid/setgid bits or extended attributes",
        ),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, words)| *words)
    .collect::<Vec<_>>()
    .join(", ")
}

/// A tool stopped at its own tool.yaml `timeout:` (the same words for every caller: the key
/// is in the tool's file, not a flag).
pub fn tool_timeout(tool: &str, after: Duration, policy: u64) -> String {
    format!(
        "stopped at the timeout of tool `{tool}` (its tool.yaml's timeout, {}): a larger \
         timeout there allows longer (up to the policy's {policy} s)",
        crate::term::duration::text(after)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(signal: Option<&'a str>, stderr: &'a str, hidden: &'a [PathBuf]) -> Facts<'a> {
        Facts {
            success: false,
            timed_out: false,
            exit_code: 1,
            signal,
            stderr: stderr.as_bytes(),
            enforced: Enforced {
                network: true,
                filesystem: true,
                pids: true,
                mounts: true,
                limits: true,
            },
            limits: Limits {
                processes: Some(64),
                memory_mb: Some(512),
                file_size_mb: Some(100),
                tmp_mb: Some(256),
                cpu_seconds: Some(10),
            },
            hidden,
            writable: &[],
            sockets_named: false,
            cwd: None,
            ran_elsewhere: None,
            protected: &[],
            net_tools: &[],
        }
    }

    #[test]
    fn a_refused_write_to_a_protected_place_names_no_setting() {
        let places = [
            (
                PathBuf::from("/h/.bashrc"),
                "code runs from it later, outside the sandbox: shell start-up".to_string(),
            ),
            (
                PathBuf::from("/h/.config/skillpipe"),
                "skillpipe's config".to_string(),
            ),
        ];
        let mut f = facts(None, "", &[]);
        f.protected = &places;
        f.cwd = Some(std::path::Path::new("/h/proj"));
        for (err, path) in [
            (
                "sh: 1: cannot create /h/.bashrc: Permission denied",
                "/h/.bashrc",
            ),
            (
                "line 2: /h/x/../.config/skillpipe/agents/evil.toml: Read-only file system",
                "/h/x/../.config/skillpipe/agents/evil.toml",
            ),
            (
                "touch: cannot touch '../.bashrc': Read-only file system",
                "../.bashrc",
            ),
        ] {
            f.stderr = err.as_bytes();
            let h = explain(&f).unwrap();
            assert_eq!(
                h,
                Hint::Protected {
                    path: path.into(),
                    why: places
                        .iter()
                        .find(|(p, _)| fold(&f.cwd.unwrap().join(path)).starts_with(p))
                        .unwrap()
                        .1
                        .clone(),
                    ran_in: None,
                },
                "{err}"
            );
            let text = h.to_string();
            assert!(
                text.contains("is protected") && !text.contains("allow"),
                "{text}"
            );
        }
        // With writes allowed, only the mounts refuse (EROFS): said as protected too.
        f.enforced.filesystem = false;
        f.stderr = b"sh: /h/.config/skillpipe/trusted-dirs: Read-only file system";
        assert!(matches!(explain(&f), Some(Hint::Protected { .. })));
        // A relative write in the protected folder the command ran in (a skill's own): where
        // the user works was likely meant, and the hint says how to run there.
        let skill = [(PathBuf::from("/h/skills/wd"), "loaded skills".to_string())];
        f.protected = &skill;
        f.cwd = Some(std::path::Path::new("/h/skills/wd"));
        f.stderr = b"sh: 1: cannot create out.txt: Read-only file system";
        let h = explain(&f).unwrap();
        assert!(
            matches!(&h, Hint::Protected { ran_in: Some(d), .. } if d == std::path::Path::new("/h/skills/wd")),
            "{h:?}"
        );
        assert!(h.to_string().contains("workdir = \"caller\""), "{h}");
        // Control: the same path absolute is no story of where it ran.
        f.stderr = b"sh: 1: cannot create /h/skills/wd/out.txt: Read-only file system";
        assert!(matches!(
            explain(&f),
            Some(Hint::Protected { ran_in: None, .. })
        ));
        f.protected = &places;
        f.cwd = Some(std::path::Path::new("/h/proj"));
        // Control: a refused write elsewhere is the plain one, and a read is no write.
        f.enforced.filesystem = true;
        f.stderr = b"sh: 1: cannot create /srv/out: Permission denied";
        assert!(matches!(explain(&f), Some(Hint::Writes { .. })));
        f.stderr = b"cat: /h/.bashrc: Permission denied";
        assert!(!matches!(explain(&f), Some(Hint::Protected { .. })));
    }

    #[test]
    fn a_failed_connection_with_the_network_off_says_this_machine_is_outside_too() {
        let mut f = facts(None, "", &[]);
        for (err, local) in [
            (
                "curl: (7) Failed to connect to 127.0.0.1 port 48123 after 0 ms: Couldn't connect to server",
                Some("127.0.0.1:48123"),
            ),
            (
                "urlopen(\"http://localhost:11434/api/tags\")\nURLError: <urlopen error [Errno 111] Connection refused>",
                Some("localhost:11434"),
            ),
            ("fetch failed ECONNREFUSED", None),
            ("connect ENETUNREACH 1.1.1.1:80", None),
            ("Error: getaddrinfo ENOTFOUND example.com", None),
            ("** (exit) {error,econnrefused}", None),
            (
                "dial tcp [::1]:8080: connect: connection refused",
                Some("[::1]:8080"),
            ),
        ] {
            f.stderr = err.as_bytes();
            assert_eq!(
                explain(&f),
                Some(Hint::Network {
                    local: local.map(String::from)
                }),
                "{err}"
            );
        }
        // Error codes count as whole words only: Python's *NotFound* errors are no lookup.
        for err in [
            "FileNotFoundError: [Errno 2] No such file or directory: 'in1.txt'",
            "ModuleNotFoundError: No module named 'office'",
            "jinja2.exceptions.TemplateNotFound: page.html",
        ] {
            f.stderr = err.as_bytes();
            assert!(
                !matches!(explain(&f), Some(Hint::Network { .. })),
                "{err}: {:?}",
                explain(&f)
            );
        }
        let text = Hint::Network { local: None }.to_string();
        assert!(
            text.contains("services on this machine, such as 127.0.0.1:PORT"),
            "{text}"
        );
        // A quiet tool: its exit code alone, for the tools that say so.
        f.stderr = b"";
        f.exit_code = 4;
        f.net_tools = &["wget"];
        assert_eq!(explain(&f), Some(Hint::Network { local: None }));
        f.net_tools = &["curl"];
        assert_eq!(explain(&f), None, "4 is no connection failure of curl's");
        f.exit_code = 7;
        assert_eq!(explain(&f), Some(Hint::Network { local: None }));
        // Control: with the network on, nothing points at the sandbox.
        f.enforced.network = false;
        assert_eq!(explain(&f), None);
    }

    #[test]
    fn a_program_that_could_not_start_is_no_refused_write() {
        let hidden = [];
        let f = facts(
            None,
            "skillpipe: cannot run /usr/bin/cat: Permission denied (os error 13)",
            &hidden,
        );
        assert!(!matches!(explain(&f), Some(Hint::Writes { .. })));
        // Control: a refused write is one.
        let f = facts(None, "sh: 1: cannot create out: Permission denied", &hidden);
        assert!(matches!(explain(&f), Some(Hint::Writes { .. })));
    }

    #[test]
    fn build_and_package_settings_are_told_as_kept_read_only_without_a_flag() {
        let writable = [PathBuf::from("/p")];
        for (err, name) in [
            (
                "sh: 1: cannot create .cargo/config.toml: Read-only file system",
                ".cargo",
            ),
            (
                "sh: 1: cannot create /p/.npmrc: Read-only file system",
                ".npmrc",
            ),
            (
                "touch: cannot touch '.idea/x.xml': Read-only file system",
                ".idea",
            ),
        ] {
            let mut f = facts(None, err, &[]);
            f.writable = &writable;
            let h = explain(&f).unwrap();
            assert_eq!(h, Hint::VcsMetadata { name }, "{err}");
            assert!(!h.to_string().contains("allow"), "{h}");
            // With nothing writable given, --writable would not open it either: the same.
            f.writable = &[];
            assert_eq!(explain(&f), Some(Hint::VcsMetadata { name }), "{err}");
        }
    }

    #[test]
    fn version_control_folders_are_found_as_path_parts() {
        for err in [
            "touch: cannot touch '.git/hooks/x': Read-only file system",
            "touch: cannot touch '.git': Read-only file system",
            "OSError: [Errno 30] Read-only file system: '/p/.git/config'",
            "sh: 1: cannot create /p/.hg/hgrc: Read-only file system",
        ] {
            assert!(
                super::super::VCS_METADATA
                    .iter()
                    .any(|n| names_component(err, n)),
                "{err}"
            );
        }
        assert!(!names_component("cannot touch '.github/x'", ".git"));
        assert!(!names_component("cannot touch 'my.git/x'", ".git"));
    }

    #[test]
    fn each_symptom_names_the_key_that_lifts_it() {
        let cases = [
            (
                Some("SIGXCPU"),
                "",
                "max_cpu_seconds = 10 s; raise max_cpu_seconds",
            ),
            (Some("SIGXFSZ"), "", "max_file_size_mb = 100 MiB"),
            (
                None,
                "line 2: 7 File size limit exceeded head",
                "raise max_file_size_mb",
            ),
            (
                None,
                "cat: x: No space left on device",
                "max_tmp_mb = 256 MiB",
            ),
            (
                None,
                "bash: fork: Resource temporarily unavailable",
                "raise max_processes",
            ),
            (None, "MemoryError", "max_memory_mb = 512 MiB"),
            (
                None,
                "sh: /home/u/out: Read-only file system",
                "allow a directory in writable_paths",
            ),
            (
                None,
                "touch: cannot touch '/x': Permission denied",
                "allow a directory in writable_paths",
            ),
            (
                None,
                "curl: (6) Could not resolve host: example.com",
                "allow it with allow_network",
            ),
            (
                None,
                "s.connect('/run/x.sock')\nPermissionError: [Errno 13] Permission denied",
                "allow one in allowed_sockets",
            ),
        ];
        for (sig, err, want) in cases {
            let h = explain(&facts(sig, err, &[]))
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(!h.contains("--"), "no flags in the library: {h}");
            assert!(h.contains(want), "{err:?}: {h}");
        }
    }

    #[test]
    fn hints_reflect_the_grants_in_force() {
        // A refused namespace is not a refused write.
        let h = explain(&facts(
            None,
            "unshare: write failed /proc/self/uid_map: Operation not permitted",
            &[],
        ));
        assert_eq!(h, Some(Hint::Namespaces));
        let h = explain(&facts(
            None,
            "unshare: unshare failed: Operation not permitted",
            &[],
        ));
        assert_eq!(h, Some(Hint::Namespaces));
        // EPERM alone is neither Landlock's (EACCES) nor a read-only mount's (EROFS).
        // Only the operation that an extended attribute explains.
        assert!(explain(&facts(None, "fallocate: Operation not supported", &[])).is_none());
        // A hidden path is named only as a whole: `/h/.a` is not in `/h/.aws/credentials`.
        let near = [PathBuf::from("/h/.a"), PathBuf::from("/h/.aws")];
        assert_eq!(
            explain(&facts(
                None,
                "cat: /h/.aws/credentials: No such file",
                &near
            )),
            Some(Hint::Hidden {
                path: PathBuf::from("/h/.aws")
            })
        );
        // A file in a folder hidden as a whole: the folder is what --allow-read takes.
        let hidden = [
            PathBuf::from("/s/skillpipe/audit.jsonl"),
            PathBuf::from("/s/skillpipe"),
        ];
        assert_eq!(
            explain(&facts(
                None,
                "cat: /s/skillpipe/audit.jsonl: No such file",
                &hidden
            )),
            Some(Hint::Hidden {
                path: PathBuf::from("/s/skillpipe")
            })
        );
        let h = explain(&facts(
            None,
            "rsync: lsetxattr(\"a\",\"user.foo\") failed: Operation not supported (95)",
            &[],
        ));
        assert!(
            h.is_some_and(|h| h.to_string().contains("extended attributes")),
            "an xattr refusal names the rule"
        );
        let h = explain(&facts(None, "chattr: Operation not permitted", &[]));
        assert!(matches!(h, Some(Hint::Refused { .. })), "{h:?}");
        // With the network allowed, a refused socket does not offer the network.
        let socket = "connect('/run/x.sock')\nPermissionError: [Errno 13] Permission denied";
        let mut f = facts(None, socket, &[]);
        f.enforced.network = false;
        f.sockets_named = true;
        let h = explain(&f).unwrap().to_string();
        assert!(!h.contains("allow_network"), "{h}");
        assert!(
            h.contains("only the Unix sockets named in the policy"),
            "{h}"
        );
        // The writable paths in force are named; their .git is its own story.
        let writable = [PathBuf::from("/p")];
        let mut f = facts(None, "sh: /h/out: Read-only file system", &[]);
        f.writable = &writable;
        let h = explain(&f).unwrap().to_string();
        assert!(h.contains("outside $TMPDIR and /p are refused"), "{h}");
        assert!(h.contains("allow another directory"), "{h}");
        let mut f = facts(None, "sh: /p/.git/config: Read-only file system", &[]);
        f.writable = &writable;
        assert_eq!(explain(&f), Some(Hint::VcsMetadata { name: ".git" }));
    }

    /// A write refused inside a writable path is the file's own permissions' doing, not the
    /// sandbox's: no flag is offered. Control: outside the writable paths it is the sandbox's.
    #[test]
    fn a_write_refused_inside_a_writable_path_is_the_files_own_permissions() {
        let writable = [PathBuf::from("/p")];
        let cwd = PathBuf::from("/p/sub");
        let said = "cp: cannot create regular file 'ro.txt': Permission denied";
        let mut f = facts(None, said, &[]);
        f.writable = &writable;
        f.cwd = Some(&cwd);
        let h = explain(&f).unwrap();
        assert_eq!(
            h,
            Hint::OwnPermissions {
                path: "ro.txt".into()
            }
        );
        let text = h.to_string();
        assert!(text.contains("own permissions did"), "{text}");
        assert!(
            !text.contains("--writable") && !text.contains("writable_paths"),
            "{text}"
        );
        for outside in [
            "cp: cannot create regular file '/srv/x': Permission denied",
            "cp: cannot create regular file '../../x': Permission denied",
        ] {
            let mut f = facts(None, outside, &[]);
            f.writable = &writable;
            f.cwd = Some(&cwd);
            assert!(
                matches!(explain(&f), Some(Hint::Writes { .. })),
                "control: {outside}"
            );
        }
    }

    /// `cd sub && echo x > .env`: the message's `.env` may be any folder's, so a hidden one is
    /// named only when no other hidden path ends the same way.
    #[test]
    fn a_relative_hidden_path_is_named_only_when_unambiguous() {
        let cwd = PathBuf::from("/p");
        let both = [PathBuf::from("/p/.env"), PathBuf::from("/p/sub/.env")];
        let said = "bash: .env: Read-only file system";
        let mut f = facts(None, said, &both);
        f.cwd = Some(&cwd);
        let h = explain(&f).unwrap();
        assert_eq!(
            h,
            Hint::HiddenSomewhere {
                name: ".env".into(),
                here: Some("/p/.env".into())
            }
        );
        let text = h.to_string();
        assert!(text.contains("a hidden .env file"), "{text}");
        assert!(
            text.contains("/p/.env if it wrote where it started"),
            "{text}"
        );
        // Only the subfolder's is hidden: it is not the working directory's, so none is named.
        let sub = [PathBuf::from("/p/sub/.env")];
        let mut f = facts(None, said, &sub);
        f.cwd = Some(&cwd);
        let h = explain(&f).unwrap();
        assert_eq!(
            h,
            Hint::HiddenSomewhere {
                name: ".env".into(),
                here: None
            }
        );
        assert!(!h.to_string().contains("/p/"), "{h}");
        // Control: one hidden path, named from the working directory, or absolute.
        let one = [PathBuf::from("/p/.env")];
        let mut f = facts(None, said, &one);
        f.cwd = Some(&cwd);
        assert_eq!(
            explain(&f),
            Some(Hint::Hidden {
                path: "/p/.env".into()
            })
        );
        let mut f = facts(None, "bash: /p/sub/.env: Read-only file system", &both);
        f.cwd = Some(&cwd);
        assert_eq!(
            explain(&f),
            Some(Hint::Hidden {
                path: "/p/sub/.env".into()
            })
        );
    }

    /// A read is never called a write; unsure, the hint says "denied" and names every flag
    /// that may lift it.
    #[test]
    fn reads_sockets_and_unknown_refusals_are_not_called_writes() {
        // Programs that read or write say which: a delete or an output file is a write.
        for line in [
            "find: cannot delete '/x/y': Permission denied",
            "sort: open failed: /x/out: Permission denied",
        ] {
            assert_eq!(Refusal::of(line).access, Access::Write, "{line}");
        }
        let proc = explain(&facts(None, "cat: /proc/1/environ: Permission denied", &[])).unwrap();
        assert_eq!(
            proc,
            Hint::Denied {
                path: Some("/proc/1/environ".into()),
                in_proc: true,
                read: true
            }
        );
        let said = proc.to_string();
        assert!(
            said.contains("reading /proc/1/environ was denied"),
            "{said}"
        );
        assert!(!said.contains("write"), "{said}");
        // A socket refused without saying so (python -c: no source line in the traceback).
        let sock = explain(&facts(
            None,
            "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n\
             PermissionError: [Errno 13] Permission denied",
            &[],
        ))
        .unwrap()
        .to_string();
        assert!(sock.starts_with("sandbox: denied by the sandbox"), "{sock}");
        assert!(
            sock.contains("allowed_sockets") && sock.contains("writable_paths"),
            "{sock}"
        );
        let read = explain(&facts(
            None,
            "head: cannot open '/srv/x' for reading: Permission denied",
            &[],
        ))
        .unwrap()
        .to_string();
        assert!(read.contains("reading /srv/x was denied"), "{read}");
        assert!(read.contains("own permissions"), "{read}");
        assert!(!read.contains("writes outside"), "{read}");
        // Controls: writes are still writes.
        for err in [
            "sh: 1: cannot create out: Permission denied",
            "bash: /x/y: Read-only file system",
            "mkdir: cannot create directory ‘/x’: Permission denied",
            "tee: /x/log: Permission denied",
            "chmod: changing permissions of '/x': Permission denied",
        ] {
            assert!(
                matches!(explain(&facts(None, err, &[])), Some(Hint::Writes { .. })),
                "{err}"
            );
        }
    }

    #[test]
    fn ran_elsewhere_only_for_a_relative_path() {
        let dir = PathBuf::from("/skills/probe");
        let writable = [PathBuf::from("/p")];
        let mut f = facts(None, "bash: /p2/out: Read-only file system", &[]);
        f.writable = &writable;
        f.ran_elsewhere = Some(&dir);
        assert_eq!(
            explain(&f),
            Some(Hint::Writes {
                writable: writable.to_vec(),
                ran_in: None
            })
        );
        let mut f = facts(None, "bash: out.txt: Read-only file system", &[]);
        f.writable = &writable;
        f.ran_elsewhere = Some(&dir);
        assert_eq!(
            explain(&f),
            Some(Hint::Writes {
                writable: writable.to_vec(),
                ran_in: Some(dir.clone())
            })
        );
    }

    /// A hidden file named relative to where the run worked (a write to it, its removal).
    #[test]
    fn a_hidden_path_named_relatively_is_found() {
        let hidden = [PathBuf::from("/p/.env")];
        let cwd = PathBuf::from("/p");
        for err in [
            "bash: .env: Read-only file system",
            "rm: cannot remove '.env': Device or resource busy",
            "cp: cannot create regular file './.env': Read-only file system",
        ] {
            let mut f = facts(None, err, &hidden);
            f.cwd = Some(&cwd);
            assert_eq!(
                explain(&f),
                Some(Hint::Hidden {
                    path: hidden[0].clone()
                }),
                "{err}"
            );
        }
        // Control: another folder's `.env` or a longer name is not it.
        for err in [
            "bash: /q/.env: Read-only file system",
            "bash: x.env: Read-only file system",
        ] {
            let mut f = facts(None, err, &hidden);
            f.cwd = Some(&cwd);
            assert!(!matches!(explain(&f), Some(Hint::Hidden { .. })), "{err}");
        }
    }

    /// A relative write in the folder the command ran in, a protected one (a skill's own), is
    /// told as a write outside the writable folders, not as a protected place: the script
    /// most likely meant where the user works. An absolute one there is protected (control).
    #[test]
    fn a_relative_write_in_the_protected_folder_it_ran_in_is_a_refused_write() {
        let places = [(PathBuf::from("/kit"), "loaded skills".to_string())];
        let cwd = PathBuf::from("/kit/probe");
        for (err, protected) in [
            ("bash: rel.txt: Read-only file system", false),
            ("bash: /kit/probe/rel.txt: Read-only file system", true),
        ] {
            let mut f = facts(None, err, &[]);
            f.protected = &places;
            f.cwd = Some(&cwd);
            let h = explain(&f);
            assert_eq!(
                matches!(h, Some(Hint::Protected { .. })),
                protected,
                "{err}: {h:?}"
            );
            assert!(protected || matches!(h, Some(Hint::Writes { .. })), "{h:?}");
        }
    }

    /// A script that printed a hidden path's name and then failed a write elsewhere is told
    /// of that write, not of the hidden path.
    #[test]
    fn a_hidden_path_only_mentioned_does_not_hide_the_refused_write() {
        let hidden = [PathBuf::from("/etc/shadow")];
        let writable = [PathBuf::from("/p")];
        let err = "/etc/shadow: 0 bytes\ntouch: cannot touch '/q/x': Read-only file system";
        let mut f = facts(None, err, &hidden);
        f.writable = &writable;
        assert!(matches!(explain(&f), Some(Hint::Writes { .. })), "{err}");
        // Control: a refused write to the hidden path itself names it.
        let err = "bash: /etc/shadow: Read-only file system";
        let mut f = facts(None, err, &hidden);
        f.writable = &writable;
        assert!(matches!(explain(&f), Some(Hint::Hidden { .. })), "{err}");
    }

    #[test]
    fn hidden_paths_are_named() {
        let hidden = [PathBuf::from("/h/.aws")];
        let h = explain(&facts(
            None,
            "cat: /h/.aws/credentials: No such file",
            &hidden,
        ))
        .unwrap()
        .to_string();
        assert!(
            h.contains("/h/.aws is hidden from scripts (deny_read)"),
            "{h}"
        );
    }

    #[test]
    fn success_unrelated_failures_and_lifted_restrictions_get_none() {
        let mut f = facts(None, "Permission denied", &[]);
        f.success = true;
        assert_eq!(explain(&f), None);
        assert_eq!(explain(&facts(None, "syntax error", &[])), None);
        let mut f = facts(None, "Could not resolve host", &[]);
        f.enforced.network = false;
        assert_eq!(explain(&f), None);
        // A usage error says nothing about the sandbox.
        assert_eq!(
            explain(&facts(None, "usage: x.py [-h] FILE\nx.py: error: bad", &[])),
            None
        );
    }

    #[test]
    fn a_denial_no_layer_explains_names_what_was_in_force() {
        let mut f = facts(None, "ptrace: Operation not permitted", &[]);
        f.enforced.filesystem = false;
        let h = explain(&f).unwrap().to_string();
        assert!(
            h.contains("`Operation not permitted` may come from the sandbox"),
            "{h}"
        );
        assert!(h.contains("no network, own process tree"), "{h}");
        assert!(!h.contains("writes only"), "{h}");
        // Nothing in force: the denial is not the sandbox's.
        f.enforced = Enforced::default();
        assert_eq!(explain(&f), None);
    }

    #[test]
    fn messages_that_ask_for_the_project_are_heard() {
        for said in [
            "Error: run this script from your project root.",
            "must be run at the Repository\nroot",
            "Please cd to the root of your project first",
        ] {
            assert_eq!(root_asked(said.as_bytes(), false), Some(false), "{said}");
        }
        let git = b"fatal: not a git repository (or any of the parent directories): .git";
        assert_eq!(root_asked(git, true), Some(true));
        // Where the user is is no repository either: no story to tell.
        assert_eq!(root_asked(git, false), None);
        for said in ["not found: data.txt", "the root of the problem", "rooted"] {
            assert_eq!(root_asked(said.as_bytes(), true), None, "{said}");
        }
        // Only the tail is read.
        let long = format!("project root{}", "x".repeat(5000));
        assert_eq!(root_asked(long.as_bytes(), false), None);
        let h = Hint::RootAsked { git: false }.to_string();
        assert!(
            h.ends_with("root: workdir = \"caller\" runs skill scripts where you are"),
            "{h}"
        );
    }
}
