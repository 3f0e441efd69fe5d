//! OS enforcement of the policy's restrictions. The decision lives in `policy`; this module only
//! applies what it is told to, and fails closed when it cannot.
//!
//! - `caps`: what this machine can enforce (probed once, cached) and why not.
//! - `plan`: per run, what to enforce given the request and the machine (pure).
//! - the launcher (`skillpipe __launch`, Linux): a re-exec of skillpipe that applies the
//!   namespaces and Landlock to itself, then runs the command under a tiny PID-1 init.
//! - `unix_sockets`: a seccomp filter against new Unix-domain sockets, which a network
//!   namespace does not cover when they are bound to a path; `connect_broker`: when sockets
//!   are named, the run's init makes every `connect(2)` and reaches only those;
//!   `send_broker`: and every send that can name a destination (datagrams); `caller`: the
//!   thread waiting in such a call and where its address may lead, which both check.

use std::path::PathBuf;
use std::sync::RwLock;

#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod caller;
pub(crate) mod caps;
pub mod changes;
#[cfg(target_os = "linux")]
mod connect_broker;
mod entry;
#[cfg(target_os = "linux")]
mod inotify;
#[cfg(target_os = "linux")]
mod launcher;
pub(crate) mod limits;
pub(crate) mod message;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
pub(crate) mod ns;
pub(crate) mod placeholders;
mod plan;
pub(crate) mod report;
#[cfg(target_os = "linux")]
mod seccomp;
pub(crate) mod secrets;
#[cfg(target_os = "linux")]
mod send_broker;
#[cfg(target_os = "linux")]
mod unix_sockets;
pub mod view;
#[cfg(target_os = "linux")]
mod writes;

// For the sandbox's integration tests and benchmark; not part of the API.
#[doc(hidden)]
pub use caps::{Capabilities, Support, UNAVAILABLE_ENV, probe, probed};
pub(crate) use entry::{LAUNCH_ARG, check_not_in_failed_launcher};
pub use entry::{LauncherError, run_if_launcher};
pub(crate) use entry::{auto_launcher, handshake, this_program};
pub use limits::Limits;
pub use message::{Message, Setting};
pub use plan::Enforced;
pub(crate) use plan::{Plan, plan};
#[doc(hidden)]
pub use secrets::{deny_list, existing};

/// One of each launcher message that names a setting, as it comes back over the report pipe
/// (for the wording tests).
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn messages_naming_settings() -> Vec<Message> {
    let eperm = || std::io::Error::from_raw_os_error(libc::EPERM);
    let hide = mounts::MountError::Hide {
        path: "/h/.aws".into(),
        source: Box::new(mounts::MountError::Mount {
            what: "tmpfs".into(),
            target: "/h/.aws".into(),
            source: eperm(),
        }),
    };
    let arch = || seccomp::SeccompError::Architecture("mips");
    [
        hide.message(),
        writes::LandlockError::NoScopes.message(),
        writes::LandlockError::NotEnforced {
            what: "writes",
            status: "partial",
        }
        .message(),
        arch().message(),
        connect_broker::BrokerError::Filter(arch()).message(),
        ns::LoopbackError {
            step: "SIOCSIFFLAGS",
            source: eperm(),
        }
        .message(),
    ]
    .into_iter()
    .map(|m| {
        report::parse(report::error_line(&m).as_bytes())
            .error
            .unwrap()
    })
    .collect()
}

/// Version control metadata, kept read-only inside a writable path at its top and in the
/// folders directly in it, each with who runs what from it: its configuration and hooks run
/// commands (git's `core.fsmonitor`, `.git/hooks/*`, Mercurial's `[hooks]`) outside the
/// sandbox the next time the user runs the tool there. Also the mark of a project's root. A
/// closed set: every other file a tool runs or loads later is too many to name, so a change
/// to one is reported and flagged by its shape instead (see [`changes`]).
pub(crate) const KEPT_READ_ONLY: [(&str, &str); 4] = [
    (
        ".git",
        "git runs hooks and settings from there (core.fsmonitor …)",
    ),
    (".hg", "hg runs hooks and settings from there"),
    (".jj", "jj runs settings from there"),
    (".svn", "svn runs settings from there"),
];

/// Whether a file of this name is version control metadata (see [`KEPT_READ_ONLY`]).
pub(crate) fn is_vcs_metadata(name: impl AsRef<std::ffi::OsStr>) -> bool {
    KEPT_READ_ONLY.iter().any(|(n, _)| name.as_ref() == *n)
}

/// Whether `dir` is a bare git repository (or a `.git` folder): a `HEAD` file, `objects/` and
/// `refs/` folders, as git itself tells one (it needs no `config`). Its `config` and `hooks/` run
/// commands like a `.git` folder's, with no `.git` in the path to say so.
pub(crate) fn is_bare_repository(dir: &std::path::Path) -> bool {
    let is = |name: &str, folder: bool| {
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| if folder { m.is_dir() } else { m.is_file() })
    };
    // git takes a folder with these for a repository even without its `config`.
    is("HEAD", false) && is("objects", true) && is("refs", true)
}

/// What in a bare repository runs commands, or sends git elsewhere for settings and hooks
/// (`commondir`, `worktrees/`): kept read-only like a `.git` folder where it exists (the rest
/// of it — objects, refs — stays writable, so a push into it still works). One the run makes
/// is reported and flagged after it (see [`changes`]).
pub(crate) const BARE_REPOSITORY_RUNS: [&str; 5] = [
    "config",
    "hooks",
    "commondir",
    "config.worktree",
    "worktrees",
];

/// The [`KEPT_READ_ONLY`] entries that exist now at the top of `roots` (the writable paths) and
/// of each folder directly in one (a folder of projects, a repository's submodules), and the
/// [`BARE_REPOSITORY_RUNS`] of a bare repository directly in one. The run cannot change those;
/// it can make one where there was none, or change one deeper down, which the change report
/// after the run flags (see [`changes`]).
pub(crate) fn vcs_metadata(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for root in roots {
        dirs.push(root.clone());
        // The entry's own type (no stat, no symlink followed).
        dirs.extend(secrets::sorted_entries(root, |e| {
            e.file_type().is_ok_and(|t| t.is_dir()) && !is_vcs_metadata(e.file_name())
        }));
    }
    dirs.iter()
        .flat_map(|d| {
            // A root is one only when forced (`--force-writable`): then it is writable as asked.
            let bare = match !roots.contains(d) && is_bare_repository(d) {
                true => &BARE_REPOSITORY_RUNS[..],
                false => &[],
            };
            KEPT_READ_ONLY
                .iter()
                .map(|(n, _)| n)
                .chain(bare)
                .map(move |n| d.join(n))
        })
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
}

/// Restrictions requested for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxSpec {
    /// Fresh network namespace: no route out.
    pub isolate_network: bool,
    /// Landlock: write only to `writable` paths. With `private_mounts` too, every other mount
    /// is read-only as well, which is what refuses `chmod`, `chown`, `utimes` and `setxattr`
    /// (Landlock alone does not cover them).
    pub restrict_filesystem: bool,
    /// Paths that stay writable under `restrict_filesystem` (the per-run TMPDIR is added by the
    /// executor; `/dev/null` and `/dev/tty` always are).
    pub writable: Vec<PathBuf>,
    /// Refuse (instead of warn) when a restriction cannot be enforced.
    pub required: bool,
    /// Run in a fresh PID namespace even when nothing else is restricted, so that processes
    /// the command leaves behind (even ones that called `setsid`) die with it. Where there is
    /// no PID namespace this is silently a plain spawn.
    pub contain_processes: bool,
    /// Private mount, IPC and UTS namespaces: a minimal /dev, a /proc of the run's own
    /// processes, `$TMPDIR` on a capped tmpfs, and the `hide` paths covered.
    pub private_mounts: bool,
    /// Paths the command must not read (existing ones) inside its view. Needs `private_mounts`.
    pub hide: Vec<PathBuf>,
    /// What the run may read besides what the executor derives (the system trees, the program's
    /// installation, `PATH`, the working directory, the writable paths): the skill's folder and
    /// the user's grants. With `private_mounts` nothing else is in the run's view.
    pub read: Vec<view::Grant>,
    /// skillpipe's own policy files (its config folder, the trust store, the user's agent and
    /// skill folders): kept read-only under every policy, `allow_filesystem` and forced
    /// writable paths too, by a read-only mount over each (so they need the private mounts when
    /// writes are allowed). What a script wrote there would raise a later session's policy.
    pub protect: Vec<PathBuf>,
    /// The folders skillpipe reads as the user's own (config, agent, skill and state folders),
    /// existing or not: one that is missing is made empty for a run that could create it and
    /// covered read-only like `protect`, then removed (`placeholders`).
    pub own_places: Vec<PathBuf>,
    /// The file in skillpipe's state folder whose lock overlapping runs share while
    /// `own_places` made for them stand (`None`: what is made stays).
    pub own_places_lock: Option<PathBuf>,
    /// Said once per process with the run's warnings: what the look for `hide` paths left out
    /// (a `.env*` walk that stopped at its bound).
    pub hide_notice: Option<String>,
    /// Places scripts are never offered to write, each with what it is: a refused write there
    /// is told as protected, with no setting named (see `crate::advice`).
    pub protected: Vec<(PathBuf, String)>,
    /// Resource limits.
    pub limits: Limits,
    /// Unix sockets the command may connect to (existing paths), and no other Unix socket
    /// bound to a path. Without any, no Unix socket can be created at all, whatever the
    /// network setting.
    pub sockets: Vec<PathBuf>,
}

/// Set in a launcher's environment (and removed before the command runs). A process that
/// carries it but is about to start a command itself was started as a launcher and did not act
/// as one.
pub(crate) const MARKER_ENV: &str = "SKILLPIPE_LAUNCHER_MARKER";

/// Arguments of the hidden launcher subcommand (`skillpipe __launch FLAGS… -- PROGRAM ARGS…`),
/// one per flag (see [`LaunchArgs::fields`]): the plan's restrictions (`--net`, `--fs`,
/// `--pid`, `--mount`, in a user namespace with `--userns`) and the [`SandboxSpec`] paths and
/// limits they need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LaunchArgs {
    pub net: bool,
    pub fs: bool,
    pub pid: bool,
    pub userns: bool,
    pub mount: bool,
    /// The per-run TMPDIR (an empty directory): a private tmpfs is mounted on it.
    pub tmpdir: Option<PathBuf>,
    pub hide: Vec<PathBuf>,
    /// The read view (needs `--mount`): with any, the run's root holds these, the writable
    /// paths, `$TMPDIR`, `/dev` and `/proc`, and nothing else (see `view`).
    pub read: Vec<PathBuf>,
    pub protect: Vec<PathBuf>,
    /// The named Unix sockets (need `--pid`, whose init connects for the command).
    pub socket: Vec<PathBuf>,
    /// Cgroups to join first: the pids one for root (whom RLIMIT_NPROC does not hold), the
    /// memory one for `max_memory_mb` of the run as a whole.
    pub pids_cgroup: Option<PathBuf>,
    pub memory_cgroup: Option<PathBuf>,
    pub limits: Limits,
    pub writable: Vec<PathBuf>,
    pub best_effort: bool,
    /// Inherited descriptor for the report to the parent (else messages go to stderr).
    pub report_fd: Option<i32>,
    /// Inherited descriptor the parent writes one byte to once it may let the command start
    /// (its writable paths watched); the launcher sets up everything else meanwhile.
    pub gate_fd: Option<i32>,
    /// `argv[0]` for the command (default: PROGRAM).
    pub arg0: Option<std::ffi::OsString>,
    /// The command and its arguments (PROGRAM is used as given: no PATH search).
    pub argv: Vec<std::ffi::OsString>,
}

impl LaunchArgs {
    /// The launcher's command line (after `__launch`) for `plan`.
    pub fn for_plan(plan: &Plan, required: bool) -> LaunchArgs {
        LaunchArgs {
            net: plan.enforce.network,
            fs: plan.enforce.filesystem,
            pid: plan.enforce.pids,
            userns: plan.user_namespace,
            mount: plan.enforce.mounts,
            best_effort: !required,
            ..LaunchArgs::default()
        }
    }

    /// Every flag with the field it sets: the one table that [`Self::to_args`] writes and
    /// [`Self::parse`] reads.
    fn fields(&mut self) -> [(&'static str, Field<'_>); 22] {
        use Field::*;
        let l = &mut self.limits;
        [
            ("--net", On(&mut self.net)),
            ("--fs", On(&mut self.fs)),
            ("--pid", On(&mut self.pid)),
            ("--userns", On(&mut self.userns)),
            ("--mount", On(&mut self.mount)),
            ("--best-effort", On(&mut self.best_effort)),
            ("--writable", Paths(&mut self.writable)),
            ("--tmpdir", Path(&mut self.tmpdir)),
            ("--hide", Paths(&mut self.hide)),
            ("--read", Paths(&mut self.read)),
            ("--protect", Paths(&mut self.protect)),
            ("--socket", Paths(&mut self.socket)),
            ("--pids-cgroup", Path(&mut self.pids_cgroup)),
            ("--memory-cgroup", Path(&mut self.memory_cgroup)),
            ("--max-processes", Number(&mut l.processes)),
            ("--max-memory", Number(&mut l.memory_mb)),
            ("--max-file-size", Number(&mut l.file_size_mb)),
            ("--max-tmp", Number(&mut l.tmp_mb)),
            ("--max-cpu", Number(&mut l.cpu_seconds)),
            ("--report-fd", Fd(&mut self.report_fd)),
            ("--gate-fd", Fd(&mut self.gate_fd)),
            ("--arg0", Text(&mut self.arg0)),
        ]
    }

    /// Render as arguments for `skillpipe __launch`.
    pub fn to_args(&self) -> Vec<std::ffi::OsString> {
        let mut out: Vec<std::ffi::OsString> = vec![LAUNCH_ARG.into()];
        for (flag, field) in self.clone().fields() {
            let values: Vec<std::ffi::OsString> = match field {
                Field::On(on) => {
                    out.extend(on.then(|| flag.into()));
                    continue;
                }
                Field::Paths(v) => v.iter().map(Into::into).collect(),
                Field::Path(v) => v.iter().map(Into::into).collect(),
                Field::Number(n) => n.iter().map(|n| n.to_string().into()).collect(),
                Field::Fd(n) => n.iter().map(|n| n.to_string().into()).collect(),
                Field::Text(t) => t.iter().cloned().collect(),
            };
            for v in values {
                out.extend([flag.into(), v]);
            }
        }
        out.push("--".into());
        out.extend(self.argv.iter().cloned());
        out
    }
}

/// A field of [`LaunchArgs`] as its flag sets it.
enum Field<'a> {
    /// A switch, no value.
    On(&'a mut bool),
    /// Given once per path.
    Paths(&'a mut Vec<PathBuf>),
    Path(&'a mut Option<PathBuf>),
    Number(&'a mut Option<u64>),
    /// An inherited descriptor.
    Fd(&'a mut Option<i32>),
    Text(&'a mut Option<std::ffi::OsString>),
}

/// The launcher itself: sets up the sandbox, runs the command, returns the exit code.
#[cfg(target_os = "linux")]
fn launch(args: LaunchArgs) -> i32 {
    launcher::launch(args)
}

#[cfg(not(target_os = "linux"))]
fn launch(_args: LaunchArgs) -> i32 {
    eprintln!("skillpipe: the sandbox launcher needs Linux (namespaces and Landlock)");
    report::EXIT_LAUNCH_FAILED
}

static LAUNCHER: RwLock<Option<PathBuf>> = RwLock::new(None);

/// The launcher for [`crate::exec::run`] in this process: `path` (a skillpipe binary, or a
/// program with the launch hook). A [`crate::Dispatcher`] carries its own and ignores this.
/// Tests need it: their executable is the test harness, not skillpipe. Not part of the API.
#[doc(hidden)]
pub fn set_launcher(path: impl Into<PathBuf>) {
    *LAUNCHER.write().unwrap_or_else(|e| e.into_inner()) = Some(path.into());
}

/// The launcher [`crate::exec::run`] uses: the one set with [`set_launcher`], else as
/// [`crate::Launcher::Auto`] finds it (this program when it called [`run_if_launcher`] in
/// time, else the first `skillpipe` on `PATH` that answers the handshake; found once). Never
/// this program without the hook: it would run itself again instead of launching.
pub(crate) fn launcher_path() -> Result<PathBuf, LauncherError> {
    if let Some(p) = LAUNCHER.read().unwrap_or_else(|e| e.into_inner()).clone() {
        return Ok(p);
    }
    let found = auto_launcher()?;
    Ok(LAUNCHER
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(found)
        .clone())
}

/// `/a/b/../c/./d` → `/a/c/d`, without looking at the file system.
pub(crate) fn fold(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_arguments_round_trip() {
        let mut a = LaunchArgs::for_plan(
            &Plan {
                enforce: Enforced {
                    network: true,
                    filesystem: true,
                    pids: false,
                    mounts: true,
                    limits: false,
                },
                user_namespace: true,
                warnings: vec![],
            },
            false,
        );
        a.writable = vec!["/tmp/x y".into()];
        a.tmpdir = Some("/tmp/run".into());
        a.hide = vec!["/h/.ssh".into(), "/w/.env".into()];
        a.read = vec!["/usr".into(), "/h/proj".into()];
        a.protect = vec!["/h/.config/skillpipe".into()];
        a.socket = vec!["/run/user/1/pulse/native".into()];
        a.pids_cgroup = Some("/sys/fs/cgroup/pids/x".into());
        a.memory_cgroup = Some("/sys/fs/cgroup/memory/x".into());
        a.limits = Limits {
            processes: Some(9),
            tmp_mb: Some(3),
            ..Limits::default()
        };
        assert!(a.limits.any() && !Limits::default().any());
        a.report_fd = Some(7);
        a.gate_fd = Some(8);
        a.arg0 = Some("say".into());
        a.argv = vec!["/usr/bin/say".into(), "--".into(), "-n".into()];
        let argv = a.to_args();
        assert_eq!(argv[0], LAUNCH_ARG);
        let b = LaunchArgs::parse(&argv[1..]).unwrap();
        assert!(b.net && b.fs && !b.pid && b.userns && b.best_effort && b.mount);
        assert_eq!(b, a);
    }

    #[test]
    fn vcs_metadata_at_the_top_and_one_folder_down() {
        // Tools' settings (`.claude`, `.mcp.json`) are no longer kept: reported when changed.
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        for d in [
            ".git/hooks",
            "app/.hg",
            "app/deep/.git",
            "lib",
            ".claude",
            "app/.vscode",
        ] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::fs::write(r.join(".mcp.json"), "{}").unwrap();
        std::fs::write(r.join("lib/.git"), "gitdir: ../.git/modules/lib").unwrap();
        // A bare repository: its settings and hooks, not its objects.
        for d in ["srv.git/objects", "srv.git/refs", "srv.git/hooks"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::fs::write(r.join("srv.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(r.join("srv.git/config"), "[core]\n").unwrap();
        let mut found = vcs_metadata(&[r.to_path_buf()]);
        found.sort();
        assert_eq!(
            found,
            [
                r.join(".git"),
                r.join("app/.hg"),
                r.join("lib/.git"),
                r.join("srv.git/config"),
                r.join("srv.git/hooks")
            ]
        );
    }

    #[test]
    fn launcher_arguments_without_a_command_are_refused() {
        let args = |s: &[&str]| s.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(LaunchArgs::parse(&args(&["--net"])).is_err());
        assert!(LaunchArgs::parse(&args(&["--net", "--"])).is_err());
        assert!(LaunchArgs::parse(&args(&["--report-fd", "x", "--", "ls"])).is_err());
        assert!(LaunchArgs::parse(&args(&["--bogus", "--", "ls"])).is_err());
        assert!(LaunchArgs::parse(&args(&["--mount", "--", "ls"])).is_err());
    }
}
