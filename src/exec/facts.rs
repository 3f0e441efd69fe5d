//! What is known for certain about a finished run, typed and without a word of English read:
//! the limit whose signal killed it, the timeout, the path its messages name outside its view,
//! and the sandbox in force. Whoever words advice (the front end's advisor, see `crate::advice`)
//! reads these first; the core never guesses.

use crate::sandbox::limits::Limits;
use std::path::PathBuf;
use std::time::Duration;

/// A resource limit the run hit, known by the signal that killed it (or a shell's `128 + N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitHit {
    /// The policy key of the limit (`max_cpu_seconds`, `max_file_size_mb`).
    pub key: &'static str,
    /// Its value in force.
    pub value: Option<u64>,
}

/// The timeout a run was stopped at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// The timeout in force.
    pub after: Duration,
    /// `Some((tool, policy_seconds))` when a tool's own `timeout:` (shorter than the policy's)
    /// set it.
    pub tool: Option<(String, u64)>,
}

/// The facts of one run (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Killed by the signal of a limit in force.
    pub limit: Option<LimitHit>,
    /// Stopped at the timeout (set by the dispatcher, which knows whose timeout it was).
    pub stopped: Option<Stopped>,
    /// Unix sockets the init's broker refused it (not named in `allowed_sockets`).
    pub refused_sockets: Vec<PathBuf>,
    /// A path its messages name that exists but is outside its read view.
    pub outside_view: Option<PathBuf>,
    /// A relative argument that does not exist where it ran but does where the user is (a skill
    /// script run in its skill's folder).
    pub elsewhere: Option<String>,
    /// The user's folder, when a skill script ran in its own instead.
    pub caller: Option<PathBuf>,
    /// The folder it ran in.
    pub cwd: PathBuf,
    /// The folder it ran in, when that is outside every writable path while the user's own
    /// folder is inside one.
    pub ran_elsewhere: Option<PathBuf>,
    /// The sandbox it asked for (what of it was in force: `RunResult::enforced`).
    pub sandbox: crate::sandbox::SandboxSpec,
    /// Variables that point Python at packages, set here but not passed to it.
    pub dropped: Vec<&'static str>,
    /// The folder of the skill whose script ran (`SKILL_BASE_DIR`), if it was one.
    pub skill_dir: Option<PathBuf>,
    /// The user's home (where `pip install --user` puts packages).
    pub home: Option<PathBuf>,
}

/// What a front end's advisor says after a failed run: typed (`run --json`'s `advice`), and
/// worded once by the advisor, for its user and for the model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Advice {
    /// What it ran into (`limit`, `hidden`, `writes`, `network`, `timeout` …).
    pub kind: &'static str,
    /// The policy key that lifts it, if one does.
    pub setting: Option<&'static str>,
    /// The path it concerns, if one.
    pub path: Option<PathBuf>,
    /// For the reader of this front end (policy keys, or flags): `run --json`'s `hint`.
    #[serde(skip)]
    pub hint: String,
    /// For the model: the user's settings by name, no flags.
    #[serde(skip)]
    pub for_model: String,
}

/// Variables that point Python at installed packages. (Not `VIRTUAL_ENV`: an active venv is
/// found through `PATH`, which is passed.)
const PYTHON_VARS: &[&str] = &["PYTHONPATH", "PYTHONUSERBASE"];

/// Of [`PYTHON_VARS`], those set here (`ours`) whose entries the run's `env` lacks.
pub(crate) fn dropped(
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    ours: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<&'static str> {
    let entries = |v: &std::ffi::OsStr| {
        v.to_string_lossy()
            .split(':')
            .filter(|e| !e.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    PYTHON_VARS
        .iter()
        .copied()
        .filter(|var| {
            let Some(ours) = ours(var).filter(|v| !v.is_empty()) else {
                return false;
            };
            let theirs = super::env_value(env, var).map(entries).unwrap_or_default();
            !entries(&ours).iter().all(|e| theirs.contains(e))
        })
        .collect()
}

/// The limit whose signal ended a run (`exit_code` 128 + N is a shell's child killed so).
pub(crate) fn limit_hit(signal: Option<&str>, exit_code: i32, limits: &Limits) -> Option<LimitHit> {
    let by = |name: &str, n: i32| signal == Some(name) || exit_code == 128 + n;
    if by("SIGXCPU", libc::SIGXCPU) {
        Some(LimitHit {
            key: "max_cpu_seconds",
            value: limits.cpu_seconds,
        })
    } else if by("SIGXFSZ", libc::SIGXFSZ) {
        Some(LimitHit {
            key: "max_file_size_mb",
            value: limits.file_size_mb,
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn a_variable_is_dropped_unless_its_entries_reach_the_run() {
        let ours = |v: &str| (v == "PYTHONPATH").then(|| OsString::from("/mine"));
        let passed = [(OsString::from("PYTHONPATH"), OsString::from("/skill:/mine"))];
        assert!(dropped(&passed, ours).is_empty());
        let skill_only = [(OsString::from("PYTHONPATH"), OsString::from("/skill"))];
        assert_eq!(dropped(&skill_only, ours), ["PYTHONPATH"]);
    }

    #[test]
    fn a_limit_is_known_by_its_signal() {
        let l = Limits {
            cpu_seconds: Some(2),
            ..Limits::default()
        };
        assert_eq!(limit_hit(Some("SIGXCPU"), -24, &l).unwrap().value, Some(2));
        assert_eq!(
            limit_hit(None, 128 + libc::SIGXFSZ, &l).unwrap().key,
            "max_file_size_mb"
        );
        assert_eq!(limit_hit(Some("SIGKILL"), -9, &l), None);
    }
}
