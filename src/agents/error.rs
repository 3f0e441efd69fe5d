//! Errors from loading agent configs. Each names the file, and the line and key where one is known,
//! so a user can go straight to the mistake.

use std::path::{Path, PathBuf};

/// Why an agent could not be found, read or filled in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// A mistake at a known place in a config file (unknown key, wrong type, TOML syntax).
    #[error("{}:{line}: {message}", file.display())]
    At {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the mistake.
        line: usize,
        /// Dotted key path, e.g. `script_policy.timeout_seconds`, when the place is a key or its value.
        key: Option<String>,
        /// What was wrong, and what to write instead where that is known.
        message: String,
    },
    /// A problem with a whole file: unreadable, or a required key or companion file is missing.
    #[error("{}: {message}", file.display())]
    File {
        /// The file (or folder, for r9s's layout) concerned.
        file: PathBuf,
        /// What was wrong with it.
        message: String,
    },
    /// The instructions use (or declare) variables that were not given and have no default:
    /// all of them, so that one run can give every value.
    #[error("{}: {}: give {} a value", file.display(), missing_variables(names), if names.len() == 1 { "it" } else { "each" })]
    MissingVariable {
        /// The agent file whose instructions need them.
        file: PathBuf,
        /// The variables' names, as in `{{name}}`, first use first.
        names: Vec<String>,
    },
    /// No agent of that name on the search path.
    #[error(
        "unknown agent `{name}` (searched {}); `skillpipe agents list` shows the agents found",
        display_dirs(searched)
    )]
    NotFound {
        /// The name asked for.
        name: String,
        /// The directories looked in, in search order.
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

/// "missing variable `a`", "missing variables `a`, `b`".
pub(crate) fn missing_variables(names: &[String]) -> String {
    let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    format!(
        "missing variable{} {}",
        if names.len() == 1 { "" } else { "s" },
        listed.join(", ")
    )
}
