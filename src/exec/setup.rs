//! A run's set-up, before its command starts: the sandbox plan, the program, the run's TMPDIR
//! and environment, the launcher and its pipes, the cgroup, the placeholders and the read view.

use super::run_tmp::RunTmp;
use super::{ExecError, RunSpec, env_value, resolve, sys};
use crate::sandbox::{self, Capabilities};
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What a run starts with, made before its command: the sandbox plan, the program found, the
/// run's TMPDIR and environment, the launcher and its pipes, the cgroup, the placeholders and
/// the read view. Dropped after the run, which removes what it made.
pub(super) struct Setup {
    pub(super) plan: sandbox::Plan,
    pub(super) program: PathBuf,
    pub(super) tmp: RunTmp,
    pub(super) env: Vec<(OsString, OsString)>,
    pub(super) launcher: Option<PathBuf>,
    #[cfg(target_os = "linux")]
    pub(super) cgroup: sandbox::limits::RunCgroup,
    pub(super) placeholders: sandbox::placeholders::Placeholders,
    pub(super) view: Vec<sandbox::view::Grant>,
    /// What set-up could not do as asked: said with the run's result.
    pub(super) warnings: Vec<String>,
    pub(super) report: Option<LauncherPipe>,
    /// The writable paths' changes are reported.
    pub(super) watch: bool,
    pub(super) gate: Option<LauncherPipe>,
}

/// Step: everything the run needs before its command starts, or why it cannot run.
pub(super) fn set_up(
    spec: &RunSpec,
    caps: &Capabilities,
    launcher: Option<&Path>,
    setup_failed: &mut bool,
) -> Result<Setup, ExecError> {
    let sandbox_error = |e: &dyn std::fmt::Display| ExecError::Sandbox(e.to_string().into());
    let plan = sandbox::plan(&spec.sandbox, caps).map_err(|e| sandbox_error(&e))?;
    if !spec.cwd.is_dir() {
        return Err(ExecError::Io(
            format!("working directory {}", spec.cwd.display()),
            std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory"),
        ));
    }
    let program = resolve::resolve(&spec.program, &spec.env, &spec.cwd)?;
    let tmp = RunTmp::create()
        .map_err(|e| ExecError::Io("cannot create the per-run TMPDIR".into(), e))?;
    let mut env: Vec<(OsString, OsString)> = (spec.env.iter())
        .filter(|(k, _)| k != "TMPDIR")
        .cloned()
        .collect();
    env.push(("TMPDIR".into(), tmp.path().into()));
    let launcher = match plan.uses_launcher() {
        true => {
            sandbox::check_not_in_failed_launcher().map_err(|e| sandbox_error(&e))?;
            Some(match launcher {
                Some(l) => l.to_path_buf(),
                None => sandbox::launcher_path().map_err(|e| sandbox_error(&e))?,
            })
        }
        false => None,
    };
    let mut warnings = Vec::new();
    #[cfg(target_os = "linux")]
    let cgroup = run_cgroup(spec, &plan, &mut warnings);
    let placeholders = placeholders(spec, &plan, setup_failed, &mut warnings)?;
    let view = read_view(spec, &plan, &program);
    let pipe = |e| ExecError::Io("cannot create a pipe".into(), e);
    let report = match plan.uses_launcher() {
        true => Some(LauncherPipe::new(true).map_err(pipe)?),
        false => None,
    };
    // What the run creates, changes, deletes or re-modes in its writable paths is reported
    // (see `sandbox::changes`). The folders are watched while the launcher sets up, which
    // holds the command at this gate until they are.
    let watch = plan.enforce.filesystem && !spec.sandbox.writable.is_empty();
    let gate = match watch && report.is_some() {
        true => Some(LauncherPipe::new(false).map_err(pipe)?),
        false => None,
    };
    Ok(Setup {
        plan,
        program,
        tmp,
        env,
        launcher,
        #[cfg(target_os = "linux")]
        cgroup,
        placeholders,
        view,
        warnings,
        report,
        watch,
        gate,
    })
}

/// Step (of [`set_up`]): the run's cgroup: its memory as a whole (`max_memory_mb`), and for
/// root, who is exempt from RLIMIT_NPROC, its processes. Removed when the run is over. What
/// cannot be made is said, and the run goes on under the per-process rlimits: root in a
/// container without a delegated controller, or a user whose cgroup hands none down, would run
/// nothing otherwise, and the rlimits still bound the run (at max_processes × max_memory_mb).
#[cfg(target_os = "linux")]
fn run_cgroup(
    spec: &RunSpec,
    plan: &sandbox::Plan,
    warnings: &mut Vec<String>,
) -> sandbox::limits::RunCgroup {
    use sandbox::limits::{Controller, RunCgroup};
    let limits = &spec.sandbox.limits;
    let pids =
        (limits.processes).filter(|_| plan.uses_launcher() && sandbox::limits::nproc_exempt());
    let memory = limits.memory_mb.filter(|_| plan.uses_launcher());
    let (cgroup, failed) = match (pids, memory) {
        (None, None) => Default::default(),
        _ => RunCgroup::create(pids, memory),
    };
    for (controller, e) in failed {
        match controller {
            Controller::Pids => warnings.push(format!(
                "max_processes = {} is not enforced for this run: root is exempt from \
                 RLIMIT_NPROC and no pids cgroup could be made ({e})",
                pids.unwrap_or(0)
            )),
            // Once per process: on such a machine every run would say it.
            Controller::Memory => {
                static TOLD: std::sync::atomic::AtomicBool =
                    std::sync::atomic::AtomicBool::new(false);
                if !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    warnings.push(format!(
                        "max_memory_mb = {} holds each process alone, not the run: no memory \
                         cgroup could be made ({e}); the run's processes together may use up \
                         to max_processes times as much",
                        memory.unwrap_or(0)
                    ));
                }
            }
        }
    }
    cgroup
}

/// Step (of [`set_up`]): a folder read as the user's own that is missing could be made by a
/// command allowed to write there: made empty for the run, covered by its read-only mounts,
/// removed after.
fn placeholders(
    spec: &RunSpec,
    plan: &sandbox::Plan,
    setup_failed: &mut bool,
    warnings: &mut Vec<String>,
) -> Result<sandbox::placeholders::Placeholders, ExecError> {
    let s = &spec.sandbox;
    let creatable: Vec<PathBuf> = (s.own_places.iter())
        .filter(|p| !s.restrict_filesystem || s.writable.iter().any(|w| p.starts_with(w)))
        .cloned()
        .collect();
    if !plan.enforce.mounts || creatable.is_empty() {
        return Ok(Default::default());
    }
    // A link there to nothing cannot be covered: refused like a layer that cannot be set up
    // (best-effort: said, and run).
    if let Some((link, to)) = sandbox::placeholders::dangling_link(&creatable) {
        let what = format!(
            "{} leads to {}, which does not exist: a script allowed to write could make it \
             there and it would be read as yours; create it, or remove the link",
            link.display(),
            to.display()
        );
        if s.required {
            // Nothing ran: the run is decided again against the spec as given.
            *setup_failed = true;
            return Err(ExecError::Sandbox(what.into()));
        }
        warnings.push(what);
    }
    let lock = s.own_places_lock.as_deref();
    Ok(sandbox::placeholders::Placeholders::make(&creatable, lock))
}

/// Step (of [`set_up`]): the run's read view, what it sees of the file system (see
/// `sandbox::view`). A run allowed to write anywhere (`allow_filesystem`) sees the whole tree:
/// it could plant code that runs outside the sandbox anyway, so a view would only get in its
/// way.
fn read_view(spec: &RunSpec, plan: &sandbox::Plan, program: &Path) -> Vec<sandbox::view::Grant> {
    if !(plan.enforce.mounts && spec.sandbox.restrict_filesystem) {
        return Vec::new();
    }
    let path_var = env_value(&spec.env, "PATH").unwrap_or_default();
    // The Unix sockets the user named are reached at their paths.
    let sockets = spec.sandbox.sockets.iter().map(|p| sandbox::view::Grant {
        path: p.clone(),
        why: sandbox::view::Why::Granted,
    });
    let granted: Vec<_> = spec.sandbox.read.iter().cloned().chain(sockets).collect();
    // The module search paths the user passes through (a vendored library).
    let module_paths: Vec<PathBuf> = (spec.env.iter())
        .filter(|(k, _)| k == "PYTHONPATH" || k == "NODE_PATH")
        .flat_map(|(_, v)| std::env::split_paths(v).collect::<Vec<_>>())
        .collect();
    sandbox::view::grants(&sandbox::view::facts(
        program,
        path_var,
        &module_paths,
        &spec.cwd,
        &spec.sandbox.writable,
        &granted,
        !spec.sandbox.isolate_network,
    ))
}

/// A pipe between skillpipe and the launcher: the report pipe (the launcher writes what it
/// set up, read here without blocking) or the gate (the launcher waits for one byte before it
/// lets the command start). Both ends are close-on-exec here, so concurrent spawns never
/// inherit them; only the launcher's copy of its end is made inheritable.
pub(super) struct LauncherPipe {
    pub(super) ours: OwnedFd,
    /// Numbered above 0..=2, which the child's stdio replaces.
    pub(super) theirs: OwnedFd,
}

impl LauncherPipe {
    pub(super) fn new(launcher_writes: bool) -> std::io::Result<LauncherPipe> {
        let (read, write) = sys::pipe(launcher_writes)?;
        let (ours, theirs) = match launcher_writes {
            true => (read, write),
            false => (write, read),
        };
        let theirs = match theirs.as_raw_fd() > 2 {
            true => theirs,
            false => sys::dup_at_least(&theirs, 3)?,
        };
        Ok(LauncherPipe { ours, theirs })
    }

    /// After the spawn: let the command start (a launcher already gone finds nothing to read).
    pub(super) fn open(self) {
        use std::io::Write;
        drop(self.theirs);
        let _ = std::fs::File::from(self.ours).write_all(&[1]);
    }
}
