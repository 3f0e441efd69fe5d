//! The prompt view of loaded skills.

use super::SkillPrompt;
use crate::skills::SkillSet;

/// Each active skill as the system prompt shows it, in load order.
pub fn skill_prompts_of(skills: &SkillSet) -> Vec<SkillPrompt> {
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
        })
        .collect()
}
