//! Finding the program to exec: a bare name is searched on the PATH of the command's own
//! environment (not skillpipe's); a name with a slash is a path, relative to the command's cwd.

use super::ExecError;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What `execvp` uses when PATH is unset.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return false;
    }
    super::sys::executable(path)
}

fn not_found(program: &OsStr) -> ExecError {
    ExecError::NotFound {
        program: program.to_string_lossy().into_owned(),
    }
}

/// Resolve `program` to an absolute path of an executable file.
///
/// Empty and relative PATH entries are skipped: a model-written command must never be picked
/// up from whatever directory it runs in.
pub fn resolve(
    program: &OsStr,
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> Result<PathBuf, ExecError> {
    if program.is_empty() {
        return Err(not_found(program));
    }
    if program.as_bytes().contains(&b'/') {
        let path = cwd.join(program);
        if !path.exists() {
            return Err(not_found(program));
        }
        if !is_executable_file(&path) {
            return Err(ExecError::Io(
                format!("cannot run {}", path.display()),
                std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "not an executable file",
                ),
            ));
        }
        return Ok(path);
    }
    let path = super::env_value(env, "PATH").unwrap_or(OsStr::new(DEFAULT_PATH));
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable_file(candidate))
        .ok_or_else(|| not_found(program))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn env(path: &str) -> Vec<(OsString, OsString)> {
        vec![("PATH".into(), path.into())]
    }

    fn script(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn bare_names_use_the_commands_path_only() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        script(a.path(), "tool", 0o644); // not executable: skipped
        let want = script(b.path(), "tool", 0o755);
        let path = format!("{}:{}", a.path().display(), b.path().display());
        assert_eq!(
            resolve("tool".as_ref(), &env(&path), a.path()).unwrap(),
            want
        );
    }

    #[test]
    fn empty_and_relative_path_entries_are_ignored() {
        let d = tempfile::tempdir().unwrap();
        script(d.path(), "tool", 0o755);
        for path in ["", ":", ".", "./"] {
            assert!(
                resolve("tool".as_ref(), &env(path), d.path()).is_err(),
                "{path:?}"
            );
        }
    }

    #[test]
    fn paths_are_relative_to_the_working_directory() {
        let d = tempfile::tempdir().unwrap();
        let want = script(d.path(), "x.sh", 0o755);
        let got = resolve("./x.sh".as_ref(), &env(""), d.path()).unwrap();
        assert_eq!(got.canonicalize().unwrap(), want.canonicalize().unwrap());
        assert!(matches!(
            resolve("./missing".as_ref(), &env(""), d.path()),
            Err(ExecError::NotFound { .. })
        ));
        script(d.path(), "plain", 0o644);
        assert!(matches!(
            resolve("./plain".as_ref(), &env(""), d.path()),
            Err(ExecError::Io(..))
        ));
    }

    #[test]
    fn missing_path_falls_back_to_the_system_default() {
        let got = resolve("sh".as_ref(), &[], Path::new("/")).unwrap();
        assert!(got.ends_with("sh"));
    }
}
