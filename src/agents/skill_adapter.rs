//! The prompt view of loaded skills: scripts by path, a script at the skill root and each tool
//! by `SKILL:ID`, a tool followed by its parameters in flag form
//! (`data:stats --input-path TEXT [--threshold NUMBER]`), as a directive writes them.

use super::SkillPrompt;
use crate::skills::SkillSet;

/// Each loaded skill as the system prompt shows it, in load order: the skills in `named` (by
/// the agent or `--skill`) in full, every other one as a catalog entry (progressive disclosure).
pub fn skill_prompts_of(skills: &SkillSet, named: &[String]) -> Vec<SkillPrompt> {
    skills
        .iter()
        .map(|s| SkillPrompt {
            name: s.name.clone(),
            description: s.description.clone(),
            body: s.body.clone(),
            scripts: s
                .tools()
                .map(|t| {
                    let usage = t.flag_usage();
                    let call = if usage.is_empty() {
                        format!("{}:{}", s.name, t.id)
                    } else {
                        format!("{}:{} {usage}", s.name, t.id)
                    };
                    let what = if t.description.is_empty() {
                        t.name.clone()
                    } else {
                        t.description.clone()
                    };
                    (call, what)
                })
                .chain(s.scripts().iter().map(|sc| {
                    let mut path = if sc.rel_path.contains('/') {
                        sc.rel_path.clone()
                    } else {
                        format!("{}:{}", s.name, sc.id)
                    };
                    // A script with a schema beside it shows its flags, like a tool.
                    if let Ok(Some(t)) = crate::skills::tools::script_tool(sc) {
                        path = format!("{path} {}", t.flag_usage());
                    }
                    (path, sc.description.clone())
                }))
                .collect(),
            catalog_only: !named.contains(&s.name),
            has_files: s.has_files(),
        })
        .collect()
}
