//! The prompt view of loaded skills.

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
                .scripts()
                .iter()
                .map(|sc| (sc.rel_path.clone(), sc.description.clone()))
                .collect(),
            catalog_only: !named.contains(&s.name),
        })
        .collect()
}
