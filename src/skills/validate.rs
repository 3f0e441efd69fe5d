//! Strict validation for `skillpipe skills validate PATH...`: every spec violation, as
//! `file:line: message`.

use super::discover::checked;
use std::fs;
use std::path::{Path, PathBuf};

/// The outcome of validating some paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Skill folders looked at.
    pub skills: Vec<PathBuf>,
    /// `file:line: message`, in the order found.
    pub problems: Vec<String>,
}

/// Validate `path`: a skill folder, its SKILL.md, a folder of skill folders, or a folder with
/// only `tools/` (an agent's).
pub fn validate_path(path: &Path, report: &mut Report) {
    let shown = path.display();
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            report.problems.push(format!(
                "{shown}: no such file or folder, nor a skill of that name on the search path \
                 (give a skill folder, its SKILL.md, or a name `skillpipe skills list` shows)"
            ));
            return;
        }
        Err(e) => {
            report.problems.push(format!("{shown}: {e}"));
            return;
        }
    };
    if meta.is_file() {
        if path.file_name().is_some_and(|n| n == "SKILL.md") {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
            validate_skill(dir.unwrap_or(Path::new(".")), report);
        } else {
            report
                .problems
                .push(format!("{shown}: not a skill folder or SKILL.md"));
        }
        return;
    }
    if path.join("SKILL.md").exists() {
        validate_skill(path, report);
        return;
    }
    let mut children: Vec<PathBuf> = fs::read_dir(path)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("SKILL.md").is_file())
                .collect()
        })
        .unwrap_or_default();
    // An agent's (or prompt's) folder: no SKILL.md, tools in the same layout, and no skill
    // folders (a collection may hold a skill named `tools`).
    if children.is_empty() && path.join(super::TOOLS_DIR).is_dir() {
        report.skills.push(path.to_path_buf());
        report.problems.extend(super::tools::load_tools(path).1);
        return;
    }
    children.sort();
    if children.is_empty() {
        report.problems.push(format!(
            "{shown}: no SKILL.md here or in its subfolders; {}",
            super::discover::no_skills_hint(path)
        ));
    }
    for child in children {
        validate_skill(&child, report);
    }
}

/// Validate one skill folder (it has, or should have, a SKILL.md).
pub fn validate_skill(dir: &Path, report: &mut Report) {
    report.skills.push(dir.to_path_buf());
    let file = dir.join("SKILL.md");
    let shown = file.display();
    let canonical = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let (parsed, _, issues) = match checked(dir, &canonical) {
        Ok(c) => c,
        Err((line, message)) => {
            report.problems.push(format!("{shown}:{line}: {message}"));
            return;
        }
    };
    report.problems.extend(
        issues
            .into_iter()
            .map(|i| format!("{shown}:{}: {}", i.line, i.message)),
    );
    report.problems.extend(super::tools::load_tools(dir).1);
    for script in super::scripts::detect(&canonical, "node", &parsed.body) {
        if let Err(e) = super::tools::script_tool(&script) {
            report.problems.push(e.to_string());
        }
    }
}
