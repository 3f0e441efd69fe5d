//! The sandbox's policy keys and flags: `--writable`, `--allow-read`, `--allow-socket` and the
//! limits, and the check that keeps `$HOME`, shell start-up files and skillpipe's own files
//! from being made writable by accident.

use super::{PolicyError, PolicyOverrides, ScriptPolicy};
use crate::sandbox::secrets::expand_home;
use std::path::{Path, PathBuf};

/// Beneath `$HOME`: files that run at the user's next login or shell.
const SHELL_START_UP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd",
];

/// Why `path` must not be writable without `--force-writable`, or `None`. `protected` are
/// skillpipe's own config and state directories. Pure.
pub fn writable_problem(path: &Path, home: Option<&Path>, protected: &[PathBuf]) -> Option<String> {
    if let Some(h) = home {
        if h.starts_with(path) {
            return Some(format!(
                "{} is $HOME or holds it; name a project directory instead",
                path.display()
            ));
        }
        for f in SHELL_START_UP {
            let p = h.join(f);
            if p.starts_with(path) || path.starts_with(&p) {
                return Some(format!(
                    "{} would let a script change {} (shell start-up)",
                    path.display(),
                    p.display()
                ));
            }
        }
    }
    protected
        .iter()
        .find(|p| p.starts_with(path) || path.starts_with(p))
        .map(|p| {
            format!(
                "{} would let a script change skillpipe's own files ({})",
                path.display(),
                p.display()
            )
        })
}

impl ScriptPolicy {
    /// The sandbox flags (see `apply_flags`). `--writable` paths are made absolute (against the
    /// working directory) and checked with the policy's own `writable_paths`.
    pub(super) fn apply_sandbox_flags(
        &mut self,
        flags: &PolicyOverrides,
    ) -> Result<(), PolicyError> {
        let home = crate::paths::home();
        let mut writable = Vec::new();
        let mut to_check = Vec::new();
        for w in &flags.writable {
            let abs = std::path::absolute(expand_home(w, home.as_deref()))
                .map_err(|e| PolicyError::Writable(format!("--writable {}: {e}", w.display())))?;
            // As given and as it resolves (a symlink may lead to $HOME).
            to_check.push(abs.clone());
            if let Ok(real) = std::fs::canonicalize(&abs) {
                to_check.push(real.clone());
                writable.push(real);
            } else {
                writable.push(abs);
            }
        }
        let protected: Vec<PathBuf> = [crate::paths::config_dir(), crate::paths::state_dir()]
            .into_iter()
            .flatten()
            .map(|d| d.join("skillpipe"))
            .collect();
        if !flags.force_writable {
            for (key, paths) in [
                ("--writable", &to_check),
                ("writable_paths", &self.writable_paths),
            ] {
                for p in paths {
                    let p = expand_home(p, home.as_deref());
                    if let Some(why) = writable_problem(&p, home.as_deref(), &protected) {
                        return Err(PolicyError::Writable(format!(
                            "{key} {}: refused: {why} (--force-writable accepts it anyway)",
                            p.display()
                        )));
                    }
                }
            }
        }
        self.writable_paths = self
            .writable_paths
            .iter()
            .map(|p| expand_home(p, home.as_deref()))
            .chain(writable)
            .collect();
        self.allow_read.extend(flags.allow_read.iter().cloned());
        self.allowed_sockets
            .extend(flags.allow_socket.iter().cloned());
        for (value, key) in [
            (flags.max_processes, &mut self.max_processes),
            (flags.max_memory, &mut self.max_memory_mb),
            (flags.max_file_size, &mut self.max_file_size_mb),
            (flags.max_tmp, &mut self.max_tmp_mb),
            (flags.max_cpu, &mut self.max_cpu_seconds),
        ] {
            if let Some(v) = value {
                *key = v;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_start_up_files_and_own_dirs_are_refused() {
        let home = Some(Path::new("/home/u"));
        let own = [PathBuf::from("/home/u/.config/skillpipe")];
        let no = |p: &str| writable_problem(Path::new(p), home, &own);
        assert!(no("/home/u").unwrap().contains("$HOME"));
        assert!(no("/").unwrap().contains("$HOME"));
        assert!(no("/home/u/.config").unwrap().contains("fish"));
        assert!(no("/home/u/.bashrc").unwrap().contains("start-up"));
        assert!(
            no("/home/u/.config/skillpipe/skills")
                .unwrap()
                .contains("own files")
        );
        assert_eq!(no("/home/u/project"), None);
        assert_eq!(no("/tmp/out"), None);
    }

    #[test]
    fn writable_flag_is_absolute_and_checked() {
        let mut p = ScriptPolicy::default();
        let flags = PolicyOverrides {
            writable: vec![".".into()],
            max_cpu: Some(5),
            allow_socket: vec!["/run/x.sock".into()],
            ..Default::default()
        };
        p.apply_sandbox_flags(&flags).unwrap();
        assert_eq!(
            p.writable_paths,
            [std::env::current_dir().unwrap().canonicalize().unwrap()]
        );
        assert_eq!(p.max_cpu_seconds, 5);
        assert_eq!(p.allowed_sockets, [PathBuf::from("/run/x.sock")]);
        let mut p = ScriptPolicy::default();
        let err = p
            .apply_sandbox_flags(&PolicyOverrides {
                writable: vec!["/".into()],
                ..Default::default()
            })
            .unwrap_err();
        assert!(err.to_string().contains("--force-writable"), "{err}");
        p.apply_sandbox_flags(&PolicyOverrides {
            writable: vec!["/".into()],
            force_writable: true,
            ..Default::default()
        })
        .unwrap();
    }
}
