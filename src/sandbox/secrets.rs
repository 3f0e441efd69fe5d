//! Which paths a sandboxed run must not read: credentials, browser and password stores, shell
//! histories and the working directory's `.env*` files. The launcher hides each one that exists
//! (an empty read-only tmpfs over a directory, `/dev/null` over a file) in the run's private
//! mount namespace. Extended by the policy's `deny_read`, lifted per path by `--allow-read`.

use std::path::{Path, PathBuf};

/// Beneath `$HOME`. Directories and files alike; what does not exist is skipped.
pub const DEFAULT_HOME: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/git/credentials",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".docker",
    ".kube",
    ".terraform.d",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".config/op",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".bash_history",
    ".zsh_history",
    ".zhistory",
    ".history",
    ".sh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".lesshst",
    ".viminfo",
    // skillpipe's own configuration holds the model API key.
    ".config/skillpipe/config.toml",
];

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

/// The host's private SSH keys (`ssh_host_*_key`, not the `.pub` halves) in `dir`.
pub fn host_keys(dir: &Path) -> Vec<PathBuf> {
    let mut keys: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("ssh_host_") && n.ends_with("_key"))
                })
                .collect()
        })
        .unwrap_or_default();
    keys.sort();
    keys
}

/// File names in the working directory that start with this are hidden (`.env`, `.env.local`).
pub const DOTENV_PREFIX: &str = ".env";

/// What to hide for one run, pure: the default list under `home`, `.env*` among `cwd_entries`
/// (the names in the working directory), plus `extra` (policy `deny_read`, `~/` expanded),
/// minus every entry equal to or beneath a path in `allow` (`--allow-read`).
pub fn deny_list(
    home: Option<&Path>,
    cwd: &Path,
    cwd_entries: &[String],
    extra: &[PathBuf],
    allow: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(h) = home {
        out.extend(DEFAULT_HOME.iter().map(|p| h.join(p)));
    }
    let mut dotenv: Vec<&String> = cwd_entries
        .iter()
        .filter(|n| n.starts_with(DOTENV_PREFIX) && !n.contains('/'))
        .collect();
    dotenv.sort();
    out.extend(dotenv.into_iter().map(|n| cwd.join(n)));
    out.extend(extra.iter().map(|p| expand_home(p, home)));
    let allow: Vec<PathBuf> = allow.iter().map(|p| expand_home(p, home)).collect();
    out.retain(|p| !allow.iter().any(|a| p.starts_with(a)));
    out.dedup();
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
/// `.env*` files of `cwd` and of skillpipe's own working directory (the user's project), minus
/// `allow_read` (see [`deny_list`]).
pub fn hidden(cwd: &Path, deny_read: &[PathBuf], allow_read: &[PathBuf]) -> Vec<PathBuf> {
    let home = crate::paths::home();
    // skillpipe's config file holds the model API key, wherever XDG_CONFIG_HOME puts it; its
    // state folder holds the REPL history, saved conversations and the audit log.
    let extra: Vec<PathBuf> = deny_read
        .iter()
        .cloned()
        .chain(crate::paths::config_file())
        .chain(crate::paths::state_dir())
        .chain(DEFAULT_SYSTEM.iter().map(PathBuf::from))
        .chain(host_keys(Path::new("/etc/ssh")))
        .collect();
    let mut list = deny_list(home.as_deref(), cwd, &entries(cwd), &extra, allow_read);
    if let Ok(here) = std::env::current_dir()
        && here != cwd
    {
        let more = deny_list(None, &here, &entries(&here), &[], allow_read);
        list.extend(
            more.into_iter()
                .filter(|p| !list.contains(p))
                .collect::<Vec<_>>(),
        );
    }
    existing(list)
}

/// The `.env*` files in `dir` (none when it cannot be read). Directories are not secrets files
/// (a virtualenv is often called `.env`), so they stay.
pub fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(DOTENV_PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn defaults_dotenv_extra_and_lifted() {
        let home = Path::new("/h");
        let list = deny_list(
            Some(home),
            Path::new("/w"),
            &[
                ".env".into(),
                ".envrc".into(),
                "env".into(),
                ".env.local".into(),
            ],
            &["~/secret".into(), "/etc/shadow".into()],
            &["~/.ssh".into(), "/w/.envrc".into()],
        );
        assert!(list.contains(&PathBuf::from("/h/.aws")));
        assert!(list.contains(&PathBuf::from("/h/.config/gh")));
        assert!(!list.contains(&PathBuf::from("/h/.ssh")), "lifted");
        assert!(list.contains(&PathBuf::from("/w/.env")));
        assert!(list.contains(&PathBuf::from("/w/.env.local")));
        assert!(!list.contains(&PathBuf::from("/w/.envrc")), "lifted");
        assert!(
            !list
                .iter()
                .any(|p| p.ends_with("env") && p.starts_with("/w/env"))
        );
        assert!(list.contains(&PathBuf::from("/h/secret")));
        assert!(list.contains(&PathBuf::from("/etc/shadow")));
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

    #[test]
    fn allowing_a_parent_lifts_everything_beneath() {
        let list = deny_list(
            Some(Path::new("/h")),
            Path::new("/w"),
            &[],
            &[],
            &["/h".into()],
        );
        assert!(list.is_empty(), "{list:?}");
    }
}
