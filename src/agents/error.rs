//! Errors from loading agent configs. Each names the file, and the line and key where one is known,
//! so a user can go straight to the mistake.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    /// A mistake at a known place in a config file (unknown key, wrong type, TOML syntax).
    #[error("{}:{line}: {message}", file.display())]
    At {
        file: PathBuf,
        line: usize,
        /// Dotted key path, e.g. `script_policy.timeout_seconds`, when the place is a key or its value.
        key: Option<String>,
        message: String,
    },
    /// A problem with a whole file: unreadable, or a required key or companion file is missing.
    #[error("{}: {message}", file.display())]
    File { file: PathBuf, message: String },
    /// The instructions use (or declare) a variable that `--var` did not give and has no default.
    #[error("{}: missing variable `{name}`: pass --var {name}=VALUE", file.display())]
    MissingVariable { file: PathBuf, name: String },
    /// A `--var` argument that is not `K=V`.
    #[error("--var {arg:?}: expected K=V, e.g. --var lang=Spanish")]
    BadVar { arg: String },
    /// No agent of that name on the search path.
    #[error(
        "unknown agent `{name}` (searched {}); `skillpipe agents list` shows the agents found",
        display_dirs(searched)
    )]
    NotFound {
        name: String,
        searched: Vec<PathBuf>,
    },
}

impl AgentError {
    pub(crate) fn file(file: &Path, message: impl Into<String>) -> Self {
        AgentError::File {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }
}

/// `a, b, c` for a list of directories.
pub(crate) fn display_dirs(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "no directories".into();
    }
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
