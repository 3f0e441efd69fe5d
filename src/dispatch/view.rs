//! What of the machine one run sees and may change, built from the grants: the policy's
//! writable and readable paths, the skill's folder, what the user granted at the prompt; and
//! what stays hidden or read-only whatever was granted.

use super::Dispatcher;
use crate::policy;
use crate::sandbox::SandboxSpec;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

impl Dispatcher {
    /// `reads`: the paths a confirmed prompt granted for this run.
    pub(super) fn sandbox_spec(
        &self,
        cwd: &std::path::Path,
        skill_dir: Option<&Path>,
        reads: &[PathBuf],
    ) -> SandboxSpec {
        use crate::sandbox::view::{Grant, Why};
        let p = &self.policy;
        // What of the user's the run sees besides `cwd` (with writes allowed anywhere there is
        // no view: all of it).
        let shown: Vec<PathBuf> = (p.writable_paths.iter().chain(&p.allow_read).chain(reads))
            .cloned()
            .chain(skill_dir.map(Path::to_path_buf))
            .collect();
        let view = (!p.allow_filesystem).then_some(shown.as_slice());
        let (hide, hide_notice) =
            crate::sandbox::secrets::hidden_and_notice(cwd, &self.deny_read(), &p.allow_read, view);
        let (kept, protected) = self.kept_and_protected();
        SandboxSpec {
            isolate_network: !p.allow_network,
            restrict_filesystem: !p.allow_filesystem,
            writable: p.writable_paths.clone(),
            required: p.sandbox == policy::SandboxMode::Required,
            // Lifting restrictions never lifts these: what a command starts dies with it, it
            // sees only its own /dev, /proc and $TMPDIR, and secrets stay hidden (with both
            // network and writes allowed, where the machine can; see `sandbox::plan`).
            contain_processes: true,
            private_mounts: true,
            hide,
            hide_notice,
            read: skill_dir
                .map(|d| Grant {
                    path: d.to_path_buf(),
                    why: Why::Skill,
                })
                .into_iter()
                .chain(p.allow_read.iter().chain(reads).map(|a| Grant {
                    path: a.clone(),
                    why: Why::Granted,
                }))
                .collect(),
            protect: kept,
            own_places: crate::paths::own_places(),
            own_places_lock: crate::paths::state_dir().map(|d| d.join("own-places.lock")),
            protected,
            limits: p.limits(),
            sockets: self.allowed_sockets(),
        }
    }

    /// The loaded skills' folders that stay read-only to scripts: their scripts are what the
    /// model runs, so a run that changed one would change what later runs do (a `--skills-dir`
    /// collection, a trusted project's `skills/`). One the user made writable itself (a
    /// writable path inside it or the folder itself: someone working on that skill) is left as
    /// given. A folder holding two or more of them, or named `skills` (a collection, a
    /// project's `skills/`), is kept whole — a new skill cannot be added there either, and it
    /// is one mount instead of one per skill — unless a writable path or the working directory
    /// lies in it.
    fn skill_folders(&self, writable: &[PathBuf], cwd: Option<&Path>) -> Vec<PathBuf> {
        let open_inside = |dir: &Path| writable.iter().any(|w| w.starts_with(dir));
        let mut dirs: Vec<PathBuf> = Vec::new();
        for skill in self.skills.iter() {
            let dir = real(&skill.dir);
            if !open_inside(&dir) && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in &dirs {
            let whole = dir.parent().filter(|parent| {
                (dirs.iter().filter(|d| d.parent() == Some(parent)).count() > 1
                    || parent.file_name().is_some_and(|n| n == "skills"))
                    && !open_inside(parent)
                    && !cwd.is_some_and(|c| c.starts_with(parent))
            });
            let keep = whole.map_or_else(|| dir.clone(), Path::to_path_buf);
            if !out.contains(&keep) {
                out.push(keep);
            }
        }
        out
    }

    /// What every run keeps read-only (skillpipe's own policy files and the loaded skills'
    /// folders, bound over themselves), and the places a refused write is told as protected
    /// ([`policy::protected_places`], where a linked policy file leads, the loaded skills'
    /// folders). One look at the file system for both.
    fn kept_and_protected(&self) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
        let policy_places = crate::paths::policy_places();
        // Where a linked agents folder, skill or config file leads (a dotfiles checkout).
        let linked: Vec<PathBuf> = (policy_places.iter().filter(|p| p.is_symlink()))
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        // Links followed: a skill or a writable path may be reached through one.
        let writable: Vec<PathBuf> = self.policy.writable_paths.iter().map(|w| real(w)).collect();
        let cwd = std::env::current_dir().map(|d| real(&d)).ok();
        let skills = self.skill_folders(&writable, cwd.as_deref());
        let projects = self.project_places_in_writable(&writable, cwd.as_deref());
        let mut protected = policy::protected_places();
        for (dirs, why) in [
            (
                &linked,
                "a link in skillpipe's config or your skill folders leads here: \
                       skillpipe reads it as yours",
            ),
            (&skills, "loaded skills, whose scripts the model runs"),
            (
                &projects,
                "a project's skills or agents, which skillpipe loads when you trust \
                         the project",
            ),
        ] {
            protected.extend(dirs.iter().map(|d| (d.clone(), why.to_string())));
        }
        ([policy_places, skills, projects].concat(), protected)
    }

    /// The folders skillpipe would load a project's skills and agents from
    /// ([`crate::paths::project_places`]) that exist at the top of a writable path or of a
    /// folder directly in one (a folder of projects, a repository's submodules): read-only in
    /// the run, as the loaded skills' folders are, or a script could plant a skill that a later
    /// session offers. One the user made writable itself (a writable path inside it or the
    /// folder itself: someone working on that skill) is left as given. With writes allowed
    /// anywhere (`allow_filesystem`), those of the working directory itself.
    fn project_places_in_writable(&self, writable: &[PathBuf], cwd: Option<&Path>) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = match self.policy.allow_filesystem {
            true => cwd.map(Path::to_path_buf).into_iter().collect(),
            false => writable.to_vec(),
        };
        let places = crate::paths::project_places();
        let mut out: Vec<PathBuf> = Vec::new();
        for root in &roots {
            // With writes allowed anywhere, the working directory's own: the search path's.
            let subdirs = std::fs::read_dir(root)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|_| !self.policy.allow_filesystem);
            let tops = std::iter::once(root.clone()).chain(
                subdirs
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
            for top in tops {
                for place in &places {
                    let dir = top.join(place);
                    if dir.is_dir()
                        && !writable.iter().any(|w| w.starts_with(&dir))
                        && !out.contains(&dir)
                    {
                        out.push(dir);
                    }
                }
            }
        }
        out
    }

    /// What the sandbox hides from scripts (run in the caller's folder): skill files there are
    /// not read for the model either.
    pub(crate) fn read_hidden(&self) -> Vec<std::path::PathBuf> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        crate::sandbox::secrets::hidden(&cwd, &self.deny_read(), &self.policy.allow_read)
    }

    /// `deny_read` and the audit log, wherever it is kept (it holds every command and its
    /// input, as private as skillpipe's state folder).
    fn deny_read(&self) -> Vec<std::path::PathBuf> {
        // A file only (not `/dev/stderr`); absolute, as the launcher runs in the command's
        // working directory.
        let audit = self
            .audit
            .path()
            .filter(|a| std::fs::metadata(a).is_ok_and(|m| m.is_file()))
            .and_then(|a| std::path::absolute(a).ok());
        self.policy.deny_read.iter().cloned().chain(audit).collect()
    }

    /// `allowed_sockets` with `~/` and `$VAR/` expanded (from the environment scripts get), the
    /// existing ones.
    fn allowed_sockets(&self) -> Vec<PathBuf> {
        let home = crate::paths::home();
        let var = |name: &str| {
            (self.inherited(name).map(OsString::from)).or_else(|| std::env::var_os(name))
        };
        self.policy
            .allowed_sockets
            .iter()
            .filter_map(|p| crate::sandbox::secrets::expand(p, home.as_deref(), var))
            .filter(|p| p.exists())
            .collect()
    }
}

/// The existing paths `args` name (absolute, `~/…`, or relative to where the user is) that the
/// run would not see anyway (in its working directory, its skill's folder or the system trees).
/// Never `/`, `$HOME` or a folder holding it: answering a prompt grants files and projects, not
/// the whole home.
pub(super) fn named_paths(
    args: &[String],
    caller: &Path,
    cwd: &Path,
    skill: Option<&Path>,
) -> Vec<PathBuf> {
    use crate::sandbox::view;
    let home = crate::paths::home();
    let mut out: Vec<PathBuf> = Vec::new();
    for a in args {
        let p = match a.strip_prefix("~/") {
            Some(rest) => match &home {
                Some(h) => h.join(rest),
                None => continue,
            },
            None => crate::sandbox::fold(&caller.join(a)),
        };
        let seen = p.starts_with(cwd)
            || skill.is_some_and(|s| p.starts_with(s))
            || view::SYSTEM_TREES.iter().any(|t| p.starts_with(t));
        let too_wide = p.parent().is_none() || home.as_ref().is_some_and(|h| h.starts_with(&p));
        if !seen && !too_wide && p.symlink_metadata().is_ok() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// `p` with its links followed, or as it is when it cannot be.
fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_offers_only_existing_paths_outside_the_view_and_never_home() {
        let dir = tempfile::tempdir().unwrap();
        let (user, skill) = (dir.path().join("user"), dir.path().join("skill"));
        for d in [&user, &skill, &dir.path().join("data")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(dir.path().join("data/a.csv"), "x").unwrap();
        let args: Vec<String> = [
            "../data/a.csv",
            "missing.txt",
            "-n",
            "/usr/bin/env",
            "/",
            ".",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let got = named_paths(&args, &user, &skill, Some(&skill));
        assert_eq!(got, [dir.path().join("data/a.csv"), user.clone()]);
        // Run where the user is: `.` is in view already.
        assert_eq!(
            named_paths(&args, &user, &user, Some(&skill)),
            [dir.path().join("data/a.csv")]
        );
    }
}
