//! The skill catalog part of the system prompt (DESIGN §4, progressive disclosure): one short
//! entry per skill that is loaded but not named by the agent or `--skill` — its name, its
//! description and its scripts' paths. The body comes later, when the model asks with
//! `!{skill NAME}`, so thirty installed skills cost a few KB instead of hundreds. Pure.

use super::prompt::{SkillPrompt, cell, script_ref};

/// A catalog description longer than this is cut: the full text is in the skill's body, and
/// real descriptions run past 1 KB.
pub const MAX_DESCRIPTION_CHARS: usize = 240;
/// Script paths listed per entry; the rest are counted (the body lists them all).
pub const MAX_SCRIPTS_LISTED: usize = 6;

/// What the model is told once, above the entries. Plain text, no backticks: models copy them.
pub const CATALOG_HEADER: &str = "\
# Skill catalog
These skills are installed but not loaded. Before you use one, load its instructions with !{skill NAME}. !{skill NAME FILE} reads a file of that skill, such as references/x.md.
";

/// Said once under the skills shown in full: their bodies often point at files of their own.
pub const FILES_HINT: &str = "To read a file that a skill mentions, such as references/x.md, write `!{skill NAME FILE}` without the backticks.\n";

/// Appends the catalog (header and one line per catalog-only skill) to `out`; nothing when no
/// skill is catalog-only. `all` are every skill in the prompt, to qualify shared script paths.
pub fn push_catalog(out: &mut String, all: &[SkillPrompt]) {
    let mut entries = all.iter().filter(|s| s.catalog_only).peekable();
    if entries.peek().is_none() {
        return;
    }
    out.push_str(CATALOG_HEADER);
    for skill in entries {
        push_entry(out, skill, all);
    }
    out.push('\n');
}

fn push_entry(out: &mut String, skill: &SkillPrompt, all: &[SkillPrompt]) {
    out.push_str("- ");
    out.push_str(&skill.name);
    let description = crate::skills::excerpt(&cell(&skill.description), MAX_DESCRIPTION_CHARS);
    if !description.is_empty() {
        out.push_str(": ");
        out.push_str(&description);
    }
    if !skill.scripts.is_empty() {
        let listed: Vec<String> = skill
            .scripts
            .iter()
            .take(MAX_SCRIPTS_LISTED)
            .map(|(path, _)| script_ref(&skill.name, path, all))
            .collect();
        out.push_str(" Scripts: ");
        out.push_str(&listed.join(", "));
        let more = skill.scripts.len().saturating_sub(MAX_SCRIPTS_LISTED);
        if more > 0 {
            out.push_str(&format!(
                " and {more} more (its !{{skill {}}} lists all)",
                skill.name
            ));
        }
        out.push('.');
    }
    out.push('\n');
}

/// What `!{skill NAME}` appends to the body: every script and tool of the skill, in the form a
/// directive writes it — the catalog entry lists only [`MAX_SCRIPTS_LISTED`]. Empty when the
/// skill has none or is not loaded.
pub fn loaded_scripts(skills: &crate::skills::SkillSet, name: &str) -> String {
    let names: Vec<String> = skills.iter().map(|s| s.name.clone()).collect();
    let all = super::skill_adapter::skill_prompts_of(skills, &names);
    match all.iter().find(|s| s.name == name) {
        Some(skill) if !skill.scripts.is_empty() => {
            format!(
                "\n\n# Scripts of skill {name}{}",
                super::prompt::scripts_table(skill, &all)
            )
        }
        _ => String::new(),
    }
}

/// Estimated tokens of a prompt: about four bytes a token for English prose and Markdown, the
/// usual rule of thumb (exact counts depend on the model's tokenizer).
pub fn estimated_tokens(prompt: &str) -> usize {
    prompt.len().div_ceil(4)
}

/// Above this many bytes `agents show` and `chat --verbose` warn: ~4k tokens is half the context
/// window of the small local models skillpipe targets, before the conversation starts.
pub const PROMPT_BUDGET_BYTES: usize = 16 * 1024;

/// The size line shown by `agents show` and `chat --verbose`, and a warning when over budget.
pub fn size_report(prompt: &str) -> (String, Option<String>) {
    let line = format!(
        "system prompt: {} bytes, ~{} tokens",
        prompt.len(),
        estimated_tokens(prompt)
    );
    let warning = (prompt.len() > PROMPT_BUDGET_BYTES).then(|| {
        format!(
            "the system prompt is {} bytes, over the budget of {PROMPT_BUDGET_BYTES} bytes \
             (~{} tokens): name fewer skills with --skill or in the agent; the others stay \
             in the catalog",
            prompt.len(),
            PROMPT_BUDGET_BYTES / 4
        )
    });
    (line, warning)
}

/// `chat --verbose`'s line: the system prompt's [`size_report`] line, the tool schemas when
/// any are sent, and the whole request body before the first message.
pub fn request_line(system: &str, tools: usize, tool_bytes: usize, body_bytes: usize) -> String {
    let tools = match tools {
        0 => String::new(),
        n => format!(
            "; tool schemas: {n} tool{}, {tool_bytes} bytes, ~{} tokens",
            if n == 1 { "" } else { "s" },
            tool_bytes.div_ceil(4)
        ),
    };
    format!(
        "{system}{tools}; each request starts with {body_bytes} bytes, ~{} tokens",
        body_bytes.div_ceil(4)
    )
}

/// The warning for tool schemas that take what every request starts with over
/// [`PROMPT_BUDGET_BYTES`] (the system prompt's own excess is [`size_report`]'s).
pub fn tools_over_budget(tool_bytes: usize, body_bytes: usize) -> Option<String> {
    (tool_bytes > 0 && body_bytes > PROMPT_BUDGET_BYTES).then(|| {
        format!(
            "every request starts with {body_bytes} bytes, {tool_bytes} of them tool schemas \
             (--tools), over the budget of {PROMPT_BUDGET_BYTES} bytes (~{} tokens): name fewer \
             skills with --skill, or leave out --tools",
            PROMPT_BUDGET_BYTES / 4
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::system_prompt;

    fn entry(name: &str, description: &str, scripts: &[&str]) -> SkillPrompt {
        SkillPrompt {
            name: name.into(),
            description: description.into(),
            body: "a long body that must not appear".into(),
            scripts: scripts
                .iter()
                .map(|p| (p.to_string(), "what it does".into()))
                .collect(),
            catalog_only: true,
            has_files: false,
        }
    }

    #[test]
    fn the_request_line_counts_the_tool_schemas() {
        let l = request_line("system prompt: 10 bytes, ~3 tokens", 2, 401, 500);
        assert_eq!(
            l,
            "system prompt: 10 bytes, ~3 tokens; tool schemas: 2 tools, 401 bytes, ~101 tokens; \
             each request starts with 500 bytes, ~125 tokens"
        );
        assert!(!request_line("s", 0, 0, 12).contains("tool"));
        assert!(tools_over_budget(0, PROMPT_BUDGET_BYTES + 1).is_none());
        assert!(tools_over_budget(10, PROMPT_BUDGET_BYTES).is_none());
        let w = tools_over_budget(9000, PROMPT_BUDGET_BYTES + 1).unwrap();
        assert!(w.contains("9000 of them tool schemas"), "{w}");
    }

    #[test]
    fn catalog_entries_have_no_body() {
        let p = system_prompt(
            "",
            &[
                entry("notes", "Keep notes.", &["scripts/add.py"]),
                entry("plain", "No scripts.", &[]),
            ],
        );
        assert!(p.contains(CATALOG_HEADER), "{p}");
        assert!(
            p.contains("- notes: Keep notes. Scripts: scripts/add.py.\n"),
            "{p}"
        );
        assert!(p.contains("- plain: No scripts.\n"), "{p}");
        assert!(!p.contains("a long body"), "{p}");
        assert!(!p.contains("# Skills\n"), "{p}");
        assert!(!CATALOG_HEADER.contains('`'));
    }

    #[test]
    fn full_and_catalog_skills_mix_and_shared_paths_are_qualified() {
        let mut full = entry("a", "A.", &["scripts/run.py"]);
        full.catalog_only = false;
        let p = system_prompt("", &[full, entry("b", "B.", &["scripts/run.py"])]);
        assert!(p.contains("## a\nA.\n\na long body"), "{p}");
        assert!(p.contains("| a/scripts/run.py |"), "{p}");
        assert!(p.contains("- b: B. Scripts: b/scripts/run.py.\n"), "{p}");
        let skills_at = p.find("# Skills").unwrap();
        assert!(skills_at < p.find("# Skill catalog").unwrap());
    }

    #[test]
    fn long_descriptions_and_script_lists_are_cut() {
        let scripts: Vec<String> = (0..9).map(|i| format!("scripts/s{i}.py")).collect();
        let refs: Vec<&str> = scripts.iter().map(String::as_str).collect();
        let p = system_prompt("", &[entry("big", &"word ".repeat(200), &refs)]);
        let line = p.lines().find(|l| l.starts_with("- big: ")).unwrap();
        assert!(line.contains("… Scripts: scripts/s0.py"), "{line}");
        assert!(
            line.ends_with("scripts/s5.py and 3 more (its !{skill big} lists all)."),
            "{line}"
        );
        assert!(!line.contains("s6.py"));
    }

    #[test]
    fn sizes_and_budget() {
        assert_eq!(estimated_tokens("abcde"), 2);
        let (line, warn) = size_report("abcd");
        assert_eq!(line, "system prompt: 4 bytes, ~1 tokens");
        assert!(warn.is_none());
        let big = "x".repeat(PROMPT_BUDGET_BYTES + 1);
        let (_, warn) = size_report(&big);
        assert!(warn.unwrap().contains("over the budget of 16384 bytes"));
    }
}
