//! The prompt view of loaded skills: scripts by path, a script at the skill root by
//! `SKILL:FILE`, each tool by `SKILL:ID`, a tool followed by its parameters in flag form
//! (`data:stats --input-path TEXT [--threshold NUMBER]`), as a directive writes them; and the
//! table of them that the system prompt, the catalog and `!{skill NAME}` show.

use crate::skills::SkillSet;

/// What the model is told about one skill.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillPrompt {
    /// The skill's name.
    pub name: String,
    /// What the skill does, from its frontmatter.
    pub description: String,
    /// SKILL.md without its frontmatter.
    pub body: String,
    /// `(the script as a directive writes it, description)`: its path relative to the skill
    /// folder (`scripts/x.py`), qualified when another loaded skill has the same path
    /// ([`SkillSet::listed_name`]).
    pub scripts: Vec<(String, String)>,
    /// Shown as a catalog entry (name, description, script paths) instead of in full: the
    /// model loads the body with `!{skill NAME}` when it needs it (progressive disclosure).
    pub catalog_only: bool,
    /// The skill folder holds files besides SKILL.md and its scripts (references, assets),
    /// which `!{skill NAME FILE}` reads: only then is the model told how.
    pub has_files: bool,
}

/// Each loaded skill as the system prompt shows it, in load order: the skills in `named` (by
/// the agent or `--skill`) in full, every other one as a catalog entry (progressive disclosure).
pub fn skill_prompts_of(skills: &SkillSet, named: &[String]) -> Vec<SkillPrompt> {
    // A skill whose allowed-tools forbid its scripts offers none: each would be refused.
    let offers = crate::skills::functions(skills);
    skills
        .iter()
        .map(|s| SkillPrompt {
            name: s.name.clone(),
            description: s.description.clone(),
            body: s.body.clone(),
            scripts: (offers.iter().filter(|o| o.skill == s.name))
                .map(|o| {
                    // A tool, or a script with a schema beside it, shows its flags.
                    let usage = o.typed.as_ref().map(|t| t.flag_usage());
                    let call = match usage {
                        Some(u) if !u.is_empty() || o.tool.is_none() => format!("{} {u}", o.shown),
                        _ => o.shown.clone(),
                    };
                    (call, o.description.clone())
                })
                .collect(),
            catalog_only: !named.contains(&s.name),
            has_files: s.has_files(),
        })
        .collect()
}

/// The table of a skill's scripts and tools, as a directive writes each (empty when it has
/// none): under the skill in the system prompt, and after the body `!{skill NAME}` returns.
pub fn scripts_table(skill: &SkillPrompt) -> String {
    if skill.scripts.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n| script | what it does |\n| --- | --- |\n");
    for (path, desc) in &skill.scripts {
        out.push_str(&format!("| {path} | {} |\n", cell(desc)));
    }
    out
}

/// A Markdown table cell: one line, `|` escaped.
pub(super) fn cell(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_scripts_are_named_by_file_name_and_resolve_to_it() {
        let root = tempfile::tempdir().unwrap();
        let sh = "#!/bin/sh\necho\n";
        let files = [("hello.py", sh), ("hello.sh", sh), ("scripts/go.sh", sh)];
        crate::skills::write_test_skill(root.path(), "rooty", &files);
        let set = SkillSet::load(&[root.path().to_path_buf()]);
        let prompts = skill_prompts_of(&set, &[]);
        let mut names: Vec<&str> = prompts[0].scripts.iter().map(|(n, _)| n.as_str()).collect();
        names.sort();
        assert_eq!(names, ["rooty:hello.py", "rooty:hello.sh", "scripts/go.sh"]);
        for name in names {
            assert!(set.resolve(name).is_ok(), "{name}");
        }
    }
}
