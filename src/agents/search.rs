//! Finding agents on disk (DESIGN §5): an explicit path, `NAME.toml` in each search directory, or
//! r9s's layout `NAME/agent.toml` → `versions/X.Y.Z.toml`.

use super::config::{self, AgentFile, AgentFormat};
use super::{AgentConfig, AgentError};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One row of `agents list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentSummary {
    /// The name `--agent` takes.
    pub name: String,
    /// The agent's one-line description.
    pub description: String,
    /// The file it was read from (the version file for r9s's layout).
    pub source: PathBuf,
    /// `model` or `provider:model`, as written in the file.
    pub model: Option<String>,
    /// The provider the file names, if any.
    pub provider: Option<String>,
    /// Skill names the agent loads.
    pub skills: Vec<String>,
    /// Variables the instructions need (declared or used).
    pub variables: Vec<String>,
    /// The on-disk layout.
    pub format: AgentFormat,
}

/// The agents found, first by name wins, and what was wrong with the rest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentListing {
    /// The usable agents, one per name: directory by directory, by file name within each.
    pub agents: Vec<AgentSummary>,
    /// Agents hidden by an earlier one of the same name, and the agents' own warnings.
    pub warnings: Vec<String>,
    /// Files that are no valid agent (with file and line): `doctor` fails on them.
    pub errors: Vec<String>,
}

/// Load an agent by name or path from the standard search path and fill its variables.
pub fn load(name_or_path: &str, vars: &[(String, String)]) -> Result<AgentConfig, AgentError> {
    load_from(name_or_path, vars, &crate::trust::agent_search_path())
}

/// [`load`] with an explicit list of search directories.
pub fn load_from(
    name_or_path: &str,
    vars: &[(String, String)],
    dirs: &[PathBuf],
) -> Result<AgentConfig, AgentError> {
    find(name_or_path, dirs)?.resolve(vars)
}

/// Locate and parse an agent without filling its variables.
pub fn find(name_or_path: &str, dirs: &[PathBuf]) -> Result<AgentFile, AgentError> {
    let path = Path::new(name_or_path);
    let not_found = || AgentError::NotFound {
        name: name_or_path.to_string(),
        searched: dirs.to_vec(),
    };
    if name_or_path.contains('/') {
        if path.exists() {
            return read_path(path);
        }
        return Err(AgentError::file(path, "no such agent file or folder"));
    }
    if name_or_path.ends_with(".toml") && path.is_file() {
        return read_path(path);
    }
    let name = name_or_path;
    if name.is_empty() || name == "." || name == ".." {
        return Err(not_found());
    }
    for (i, dir) in dirs.iter().enumerate() {
        if let Some(mut file) = find_in(dir, name)? {
            // A later folder (a trusted project's) with the same name is ignored; say so.
            for later in &dirs[i + 1..] {
                if let Ok(Some(hidden)) = find_in(later, name) {
                    file.agent.warnings.push(format!(
                        "{}: agent `{name}` ignored; {} of the same name is used",
                        hidden.agent.source.display(),
                        file.agent.source.display()
                    ));
                }
            }
            return Ok(file);
        }
    }
    // A file whose `name` differs from its file name is still found by that name.
    if let Some(file) = scan(dirs).0.into_iter().find(|f| f.agent.name == name) {
        return Ok(file);
    }
    Err(not_found())
}

/// `DIR/NAME.toml` (own format) or `DIR/NAME/agent.toml` (r9s's layout), if either exists.
fn find_in(dir: &Path, name: &str) -> Result<Option<AgentFile>, AgentError> {
    let file = if name.ends_with(".toml") {
        dir.join(name)
    } else {
        dir.join(format!("{name}.toml"))
    };
    if file.is_file() {
        return read_skillpipe(&file).map(Some);
    }
    let folder = dir.join(name);
    if folder.join("agent.toml").is_file() {
        return read_r9s(&folder).map(Some);
    }
    Ok(None)
}

/// An explicit path: a TOML file in our format, r9s's `agent.toml`, or an r9s agent folder.
fn read_path(path: &Path) -> Result<AgentFile, AgentError> {
    if path.is_dir() {
        if path.join("agent.toml").is_file() {
            return read_r9s(path);
        }
        return Err(AgentError::file(
            path,
            "is a folder without agent.toml (expected an agent TOML file or an r9s agent folder)",
        ));
    }
    let is_r9s_manifest = path.file_name().is_some_and(|n| n == "agent.toml")
        && path.parent().is_some_and(|p| p.join("versions").is_dir());
    if is_r9s_manifest {
        return read_r9s(path.parent().unwrap_or(Path::new(".")));
    }
    read_skillpipe(path)
}

fn read(path: &Path) -> Result<String, AgentError> {
    std::fs::read_to_string(path).map_err(|e| AgentError::file(path, format!("cannot read: {e}")))
}

fn read_skillpipe(file: &Path) -> Result<AgentFile, AgentError> {
    config::parse_skillpipe(&read(file)?, file)
}

/// `FOLDER/agent.toml` names `current_version`; the config lives in `versions/X.Y.Z.toml`.
fn read_r9s(folder: &Path) -> Result<AgentFile, AgentError> {
    let manifest = folder.join("agent.toml");
    let manifest_src = read(&manifest)?;
    let version = config::r9s_current_version(&manifest_src, &manifest)?;
    if version.contains('/') || version.contains("..") {
        return Err(AgentError::file(
            &manifest,
            format!(
                "bad current_version `{}`",
                crate::command::escape_controls(&version)
            ),
        ));
    }
    let version_file = folder.join("versions").join(format!("{version}.toml"));
    if !version_file.is_file() {
        return Err(AgentError::file(
            &manifest,
            format!(
                "current_version = \"{version}\" but {} does not exist",
                version_file.display()
            ),
        ));
    }
    let dir_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    config::parse_r9s(
        &manifest_src,
        &manifest,
        &read(&version_file)?,
        &version_file,
        &dir_name,
    )
}

/// Every agent on the standard search path.
pub fn list() -> AgentListing {
    list_in(&crate::trust::agent_search_path())
}

/// Every agent in `dirs`: `*.toml` files and r9s folders, sorted by name within a directory.
/// The first of a name wins; later ones and broken files become warnings.
pub fn list_in(dirs: &[PathBuf]) -> AgentListing {
    let (files, warnings, errors) = scan(dirs);
    AgentListing {
        agents: files.into_iter().map(summary).collect(),
        warnings,
        errors,
    }
}

/// Parse every agent in `dirs`, first of a name wins.
fn scan(dirs: &[PathBuf]) -> (Vec<AgentFile>, Vec<String>, Vec<String>) {
    let mut files: Vec<AgentFile> = Vec::new();
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let parsed = if path.is_dir() {
                if !path.join("agent.toml").is_file() {
                    continue;
                }
                read_r9s(&path)
            } else if path.extension().is_some_and(|e| e == "toml") {
                read_skillpipe(&path)
            } else {
                continue;
            };
            match parsed {
                Ok(file) => {
                    if let Some(first) = files.iter().find(|a| a.agent.name == file.agent.name) {
                        warnings.push(format!(
                            "{}: agent `{}` is hidden by {}",
                            file.agent.source.display(),
                            file.agent.name,
                            first.agent.source.display()
                        ));
                    } else {
                        warnings.extend(file.agent.warnings.iter().cloned());
                        files.push(file);
                    }
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    (files, warnings, errors)
}

fn summary(file: AgentFile) -> AgentSummary {
    AgentSummary {
        variables: file.variable_names(),
        name: file.agent.name,
        description: file.agent.description,
        source: file.agent.source,
        model: file.agent.model,
        provider: file.agent.provider,
        skills: file.agent.skills,
        format: file.agent.format,
    }
}
