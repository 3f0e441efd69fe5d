//! **Stand-in for `crate::skills::SkillSet`** — the integrator should replace [`skill_prompts`] with
//! a call into the real skill loader once it exists (it validates frontmatter, resolves scripts
//! safely and detects interpreters). This minimal version only reads what the system prompt needs:
//! `DIR/NAME/SKILL.md` (frontmatter `name`/`description` + body) on the skill search path, and the
//! files under `scripts/` with their first comment line.

use super::{AgentError, SkillPrompt};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Script extensions recognised without a shebang (DESIGN §2, §4).
const SCRIPT_EXTENSIONS: &[&str] = &["py", "sh", "bash", "js", "rb", "pl", "ts"];
const MAX_DEPTH: usize = 5;

#[derive(Deserialize, Default)]
struct Frontmatter {
    name: Option<String>,
    description: Option<String>,
}

/// The prompt view of each named skill, in the given order, from
/// `crate::paths::skill_search_path(skills_dirs)` (first match wins). A name that is not found is
/// an error listing the directories searched.
pub fn skill_prompts(
    names: &[String],
    skills_dirs: &[PathBuf],
) -> Result<Vec<SkillPrompt>, AgentError> {
    let search = crate::paths::skill_search_path(skills_dirs);
    names
        .iter()
        .map(|name| {
            let dir = search
                .iter()
                .map(|d| d.join(name))
                .find(|d| d.join("SKILL.md").is_file())
                .ok_or_else(|| AgentError::SkillNotFound {
                    name: name.clone(),
                    searched: search.clone(),
                })?;
            read_skill(&dir, name)
        })
        .collect()
}

fn read_skill(dir: &Path, name: &str) -> Result<SkillPrompt, AgentError> {
    let file = dir.join("SKILL.md");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| AgentError::file(&file, format!("cannot read: {e}")))?;
    let (front, body) = split_frontmatter(&text);
    let meta: Frontmatter = match front {
        Some(yaml) => serde_saphyr::from_str(yaml)
            .map_err(|e| AgentError::file(&file, format!("bad frontmatter: {e}")))?,
        None => Frontmatter::default(),
    };
    let mut scripts = Vec::new();
    collect_scripts(dir, &dir.join("scripts"), 0, &mut scripts);
    scripts.sort();
    Ok(SkillPrompt {
        name: meta.name.unwrap_or_else(|| name.to_string()),
        description: meta.description.unwrap_or_default(),
        body: body.to_string(),
        scripts,
    })
}

/// `(frontmatter YAML, body)`; the frontmatter sits between `---` lines at the very top.
fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, text)
}

fn collect_scripts(skill: &Path, dir: &Path, depth: usize, out: &mut Vec<(String, String)>) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_scripts(skill, &path, depth + 1, out);
            continue;
        }
        let text = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&text[..text.len().min(4096)]);
        let known = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e));
        if !known && !text.starts_with("#!") {
            continue;
        }
        if let Ok(rel) = path.strip_prefix(skill) {
            out.push((rel.to_string_lossy().into_owned(), first_comment(&text)));
        }
    }
}

/// The first comment line after any shebang (`#`, `//`, or a `"""` docstring), else "".
pub(crate) fn first_comment(text: &str) -> String {
    let mut lines = text.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("#!")) {
        lines.next();
    }
    let mut in_docstring = false;
    for line in lines {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if in_docstring {
            return t.trim_end_matches("\"\"\"").trim().to_string();
        }
        if let Some(doc) = t.strip_prefix("\"\"\"") {
            let doc = doc.trim_end_matches("\"\"\"").trim();
            if doc.is_empty() {
                in_docstring = true;
                continue;
            }
            return doc.to_string();
        }
        if let Some(c) = t.strip_prefix("//").or_else(|| t.strip_prefix('#')) {
            let c = c.trim();
            if c.starts_with("-*-") || c.is_empty() {
                continue;
            }
            return c.to_string();
        }
        return String::new();
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_split() {
        let (f, b) = split_frontmatter("---\nname: x\n---\n# Body\n");
        assert_eq!(f, Some("name: x\n"));
        assert_eq!(b, "# Body\n");
        assert_eq!(split_frontmatter("# no front"), (None, "# no front"));
    }

    #[test]
    fn comments() {
        assert_eq!(first_comment("#!/bin/sh\n# Speak TEXT\necho"), "Speak TEXT");
        assert_eq!(
            first_comment("\"\"\"Look up WORD.\"\"\"\n"),
            "Look up WORD."
        );
        assert_eq!(
            first_comment("#!/usr/bin/env python3\n\"\"\"\nCalc.\n\"\"\""),
            "Calc."
        );
        assert_eq!(first_comment("// Node tool\n"), "Node tool");
        assert_eq!(first_comment("import os\n# late"), "");
    }
}
