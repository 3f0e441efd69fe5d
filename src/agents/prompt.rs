//! The system prompt (DESIGN §4): the agent's instructions, each active skill with a table of its
//! scripts, and a short guide to the directive syntax. Pure, so it can be shown (`agents show`),
//! measured and tested exactly. Kept short on purpose: small models (0.5B) must follow it.

/// What the model is told about one skill.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillPrompt {
    pub name: String,
    pub description: String,
    /// SKILL.md without its frontmatter.
    pub body: String,
    /// `(path relative to the skill folder, e.g. "scripts/x.py", description)`.
    pub scripts: Vec<(String, String)>,
    /// Shown as a catalog entry (name, description, script paths) instead of in full: the
    /// model loads the body with `!{skill NAME}` when it needs it (progressive disclosure).
    pub catalog_only: bool,
}

/// How to write directives. Examples are plain text on purpose: in backticks they would not run,
/// and a model copies the form it is shown.
pub const DIRECTIVE_GUIDE: &str = "\
# Running commands
To run a command, write a directive in your reply:
- %{command args} runs the command for its effect. The directive is removed from your reply and you do not see the output.
- !{command args} runs the command and gets its output. Your reply stops there, and the output comes back in a message starting \"Result of !{command args}\". Then continue your answer from where you stopped, without repeating the directive.
Rules: one command per directive. Put quotes around an argument with spaces: %{command \"two words\"}. No shell syntax (no pipes, ;, $ or redirection). Directives inside backticks or code blocks are not run, so write them as plain text.";

/// Build the system prompt. `instructions` are already filled; `skills` are the active skills in
/// the order the agent names them. Without skills: the instructions and the guide only.
pub fn system_prompt(instructions: &str, skills: &[SkillPrompt]) -> String {
    let mut out = String::new();
    let instructions = instructions.trim();
    if !instructions.is_empty() {
        out.push_str(instructions);
        out.push_str("\n\n");
    }
    if skills.iter().any(|s| !s.catalog_only) {
        out.push_str("# Skills\n");
        out.push_str(super::catalog::FILES_HINT);
        for skill in skills.iter().filter(|s| !s.catalog_only) {
            push_skill(&mut out, skill, skills);
        }
        out.push('\n');
    }
    super::catalog::push_catalog(&mut out, skills);
    out.push_str(DIRECTIVE_GUIDE);
    out.push('\n');
    out
}

fn push_skill(out: &mut String, skill: &SkillPrompt, all: &[SkillPrompt]) {
    out.push_str(&format!("\n## {}\n", skill.name));
    let description = skill.description.trim();
    if !description.is_empty() {
        out.push_str(description);
        out.push('\n');
    }
    let body = skill.body.trim();
    if !body.is_empty() {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    if skill.scripts.is_empty() {
        return;
    }
    out.push_str("\n| script | what it does |\n| --- | --- |\n");
    for (path, desc) in &skill.scripts {
        out.push_str(&format!(
            "| {} | {} |\n",
            script_ref(&skill.name, path, all),
            cell(desc)
        ));
    }
}

/// How the model should write a script: `scripts/x.py`, or `SKILL/scripts/x.py` when another
/// active skill has a script at the same path (the bare form would be ambiguous).
pub fn script_ref(skill: &str, path: &str, all: &[SkillPrompt]) -> String {
    let shared = all
        .iter()
        .filter(|s| s.name != skill && s.scripts.iter().any(|(p, _)| p == path))
        .count()
        > 0;
    if shared {
        format!("{skill}/{path}")
    } else {
        path.to_string()
    }
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

    fn skill(name: &str, scripts: &[(&str, &str)]) -> SkillPrompt {
        SkillPrompt {
            name: name.into(),
            description: format!("{name} things"),
            body: format!("# {name}\n\nUse it well.\n"),
            scripts: scripts
                .iter()
                .map(|(p, d)| (p.to_string(), d.to_string()))
                .collect(),
            catalog_only: false,
        }
    }

    #[test]
    fn no_skills_is_instructions_and_guide() {
        let p = system_prompt("  Be brief.\n", &[]);
        assert_eq!(p, format!("Be brief.\n\n{DIRECTIVE_GUIDE}\n"));
        assert!(!p.contains("# Skills"));
        assert_eq!(system_prompt("", &[]), format!("{DIRECTIVE_GUIDE}\n"));
    }

    #[test]
    fn exact_layout_with_one_skill() {
        let p = system_prompt(
            "Teach words.",
            &[skill("say", &[("scripts/say.sh", "Speak | TEXT\n aloud")])],
        );
        let expected = format!(
            "Teach words.\n\n# Skills\n{}\n## say\nsay things\n\n# say\n\nUse it well.\n\n\
             | script | what it does |\n| --- | --- |\n| scripts/say.sh | Speak \\| TEXT aloud |\n\n\
             {DIRECTIVE_GUIDE}\n",
            super::super::catalog::FILES_HINT
        );
        assert_eq!(p, expected);
    }

    #[test]
    fn shared_paths_are_qualified() {
        let skills = [
            skill("a", &[("scripts/run.py", "A"), ("scripts/only_a.py", "")]),
            skill("b", &[("scripts/run.py", "B")]),
        ];
        let p = system_prompt("", &skills);
        assert!(p.contains("| a/scripts/run.py | A |"), "{p}");
        assert!(p.contains("| b/scripts/run.py | B |"), "{p}");
        assert!(p.contains("| scripts/only_a.py |  |"), "{p}");
    }

    #[test]
    fn guide_states_the_rules() {
        let g = DIRECTIVE_GUIDE;
        for needle in [
            "%{command args}",
            "!{command args}",
            "\"Result of !{command args}\"",
            "without repeating the directive",
            "one command per directive",
            "\"two words\"",
            "no pipes, ;, $",
            "inside backticks or code blocks are not run",
        ] {
            assert!(g.contains(needle), "guide lacks {needle:?}");
        }
        assert!(!g.contains('`'), "no backticks: models copy them");
        assert!(g.len() < 900, "guide is {} bytes", g.len());
    }
}
