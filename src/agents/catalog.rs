//! The skill catalog part of the system prompt (DESIGN §4, progressive disclosure): one short
//! entry per skill that is loaded but not named by the agent or `--skill` — its name, its
//! description and its scripts' paths. The body comes later, when the model asks with
//! `!{skill NAME}`, so thirty installed skills cost a few KB instead of hundreds. Pure.

use super::skill_adapter::{SkillPrompt, cell, scripts_table};

/// A catalog description longer than this is cut: the full text is in the skill's body, and
/// real descriptions run past 1 KB.
pub const MAX_DESCRIPTION_CHARS: usize = 240;
/// Script paths listed per entry; the rest are counted (the body lists them all).
pub const MAX_SCRIPTS_LISTED: usize = 6;
/// The most the catalog (header and entries) may take. With many skills, every entry is cut
/// alike — fewer script paths first, then shorter descriptions (see [`CUTS`]) — until it fits:
/// with the guide, thirty installed skills stay within DESIGN's 12 KB.
pub const CATALOG_BUDGET_BYTES: usize = 10 * 1024;
/// `(description characters, script paths listed)` per entry, tried in order: the first that
/// fits [`CATALOG_BUDGET_BYTES`] is used, else the last. A description is what the model picks a
/// skill by, so script paths (which `!{skill NAME}` lists anyway) go first.
const CUTS: &[(usize, usize)] = &[
    (MAX_DESCRIPTION_CHARS, MAX_SCRIPTS_LISTED),
    (MAX_DESCRIPTION_CHARS, 4),
    (180, 4),
    (180, 2),
    (120, 2),
    (120, 0),
    (80, 0),
    (40, 0),
];

/// What the model is told once, above the entries. Plain text, no backticks: models copy them.
pub const CATALOG_HEADER: &str = "\
# Skill catalog
These skills are installed but not loaded. Before you use one, load its instructions with !{skill NAME}. !{skill NAME FILE} reads a file of that skill, such as references/x.md.
";

/// Said once under the skills shown in full: their bodies often point at files of their own.
pub const FILES_HINT: &str = "To read a file that a skill mentions, such as references/x.md, write `!{skill NAME FILE}` without the backticks.\n";

/// The catalog (header and one line per catalog-only skill of `all`), cut to fit [`CATALOG_BUDGET_BYTES`] ([`fit`]); "" when no
/// skill is catalog-only.
pub fn catalog(all: &[SkillPrompt]) -> String {
    let entries: Vec<Entry> = all
        .iter()
        .filter(|s| s.catalog_only)
        .map(Entry::of)
        .collect();
    if entries.is_empty() {
        return String::new();
    }
    // The budget counts the blank line that ends the catalog.
    let mut out = fit(CATALOG_HEADER, &entries, CATALOG_BUDGET_BYTES - 1);
    out.push('\n');
    out
}

/// For a collection too large to describe within a budget: the names alone, on one line, as
/// many as fit `budget` bytes, and how many more there are (the model can still load one the
/// user names).
pub fn names_within(names: &[&str], budget: usize) -> String {
    const LEAD: &str = "Too many to describe here; by name: ";
    let more = |n: usize| format!(" and {n} more not listed.\n");
    let mut out = String::from(LEAD);
    for (i, name) in names.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let left = names.len() - i - 1;
        let tail = if left == 0 { 2 } else { more(left).len() };
        if out.len() + sep.len() + name.len() + tail > budget {
            out.push_str(&more(names.len() - i));
            return out;
        }
        out.push_str(sep);
        out.push_str(name);
    }
    out.push_str(".\n");
    out
}

/// `- NAME: DESCRIPTION` lines for a list of skills outside the system prompt (MCP's
/// `load_skill` tool), cut like the catalog's to fit `budget` bytes ([`fit`]).
pub fn described_within(skills: &[(&str, &str)], budget: usize) -> String {
    let entries: Vec<Entry> = skills
        .iter()
        .map(|&(name, description)| Entry {
            name,
            description: cell(description),
            scripts: &[],
        })
        .collect();
    fit("", &entries, budget)
}

/// `header` and the entries rendered with the first of [`CUTS`] that fits `budget` bytes, else
/// the names alone ([`names_within`]).
fn fit(header: &str, entries: &[Entry], budget: usize) -> String {
    for &(chars, scripts) in CUTS {
        let rendered = render(header, entries, chars, scripts);
        if rendered.len() <= budget {
            return rendered;
        }
    }
    let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
    let room = budget.saturating_sub(header.len());
    format!("{header}{}", names_within(&names, room))
}

/// A catalog-only skill, its description worked out once for every cut tried.
struct Entry<'a> {
    name: &'a str,
    /// The description on one line.
    description: String,
    /// `(the script as a directive writes it, description)`, as in [`SkillPrompt::scripts`].
    scripts: &'a [(String, String)],
}

impl<'a> Entry<'a> {
    fn of(skill: &'a SkillPrompt) -> Entry<'a> {
        Entry {
            name: &skill.name,
            description: cell(&skill.description),
            scripts: &skill.scripts,
        }
    }
}

fn render(header: &str, entries: &[Entry], chars: usize, scripts: usize) -> String {
    let mut out = String::from(header);
    for entry in entries {
        push_entry(&mut out, entry, chars, scripts);
    }
    out
}

fn push_entry(out: &mut String, entry: &Entry, chars: usize, scripts: usize) {
    out.push_str("- ");
    out.push_str(entry.name);
    let description = crate::skills::excerpt(&entry.description, chars);
    if !description.is_empty() {
        out.push_str(": ");
        out.push_str(&description);
    }
    let total = entry.scripts.len();
    if total > 0 {
        let listed: Vec<&str> = entry
            .scripts
            .iter()
            .take(scripts)
            .map(|(p, _)| p.as_str())
            .collect();
        let more = total - listed.len();
        let lists = format!("!{{skill {}}} lists", entry.name);
        match (listed.is_empty(), more) {
            (true, _) => out.push_str(&format!(
                " Scripts: {total} ({lists} {})",
                if total == 1 { "it" } else { "them" }
            )),
            (false, 0) => out.push_str(&format!(" Scripts: {}", listed.join(", "))),
            (false, _) => out.push_str(&format!(
                " Scripts: {} and {more} more (its {lists} all)",
                listed.join(", ")
            )),
        }
        out.push('.');
    }
    out.push('\n');
}

/// What `!{skill NAME}` appends to the body: every script and tool of the skill, in the form a
/// directive writes it — the catalog entry lists only [`MAX_SCRIPTS_LISTED`]. Empty when the
/// skill has none or is not loaded.
pub fn loaded_scripts(skills: &crate::skills::SkillSet, name: &str) -> String {
    let all = super::skill_adapter::skill_prompts_of(skills, &[]);
    match all.iter().find(|s| s.name == name) {
        Some(skill) if !skill.scripts.is_empty() => {
            format!("\n\n# Scripts of skill {name}{}", scripts_table(skill))
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

/// The size line shown by `agents show` and `chat --verbose`, and a warning when over budget
/// whose advice fits what fills the prompt: `instructions` are the agent's own (filled) text,
/// `skills` the skills in it.
pub fn size_report(
    prompt: &str,
    instructions: &str,
    skills: &[SkillPrompt],
) -> (String, Option<String>) {
    let line = format!(
        "system prompt: {} bytes, ~{} tokens",
        prompt.len(),
        estimated_tokens(prompt)
    );
    let warning = (prompt.len() > PROMPT_BUDGET_BYTES).then(|| {
        format!(
            "the system prompt is {} bytes, over the budget of {PROMPT_BUDGET_BYTES} bytes \
             (~{} tokens): {}",
            prompt.len(),
            PROMPT_BUDGET_BYTES / 4,
            advice(instructions, skills)
        )
    });
    (line, warning)
}

/// What would shrink the prompt, by its biggest part: the agent's instructions; the skills sent
/// in full (biggest first); or the catalog. Only the skills named (by `--skill` or an agent)
/// are loaded, so naming fewer drops the others, and naming none lists every installed skill
/// in the catalog instead.
fn advice(instructions: &str, skills: &[SkillPrompt]) -> String {
    let mut full: Vec<(&str, usize)> = skills
        .iter()
        .filter(|s| !s.catalog_only)
        .map(|s| (s.name.as_str(), s.body.len() + s.description.len()))
        .collect();
    full.sort_by_key(|&(_, bytes)| std::cmp::Reverse(bytes));
    let full_bytes: usize = full.iter().map(|(_, b)| b).sum();
    let catalog = catalog(skills);
    let in_catalog = skills.iter().filter(|s| s.catalog_only).count();
    let own = instructions.trim().len();
    if own > 0 && own >= full_bytes && own >= catalog.len() {
        return format!(
            "the agent's own instructions take {own} bytes of it; shorten them, or move the \
             detail into a skill whose body the model loads with !{{skill NAME}} when it needs it"
        );
    }
    if !full.is_empty() && full_bytes >= catalog.len() {
        let sizes: Vec<String> = full
            .iter()
            .take(3)
            .map(|(n, b)| format!("`{n}` {b} bytes"))
            .collect();
        let more = match full.len() {
            n if n > 3 => format!(", and {} more", n - 3),
            _ => String::new(),
        };
        return match full.as_slice() {
            [(name, bytes)] => format!(
                "skill `{name}` is sent in full ({bytes} bytes) because --skill or the agent \
                 names it; left unnamed, it is a one-line catalog entry whose body the model \
                 loads with !{{skill {name}}} when it needs it"
            ),
            _ => format!(
                "{} skills are sent in full ({}{more}) because --skill or the agent names them; \
                 name only those this task needs, or none: then each installed skill is a \
                 one-line catalog entry whose body the model loads when it needs it",
                full.len(),
                sizes.join(", ")
            ),
        };
    }
    format!(
        "the catalog of {in_catalog} installed skills takes {} bytes; pick the skills this task \
         needs with --skill NAME (repeatable) or an agent's `skills` list: the others are then \
         not loaded",
        catalog.len()
    )
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

    /// Its paths qualified, as `SkillSet::listed_name` writes a path another skill shares.
    fn shared(name: &str, description: &str, scripts: &[&str]) -> SkillPrompt {
        let qualified: Vec<String> = scripts.iter().map(|p| format!("{name}/{p}")).collect();
        let refs: Vec<&str> = qualified.iter().map(String::as_str).collect();
        entry(name, description, &refs)
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
    fn full_and_catalog_skills_mix() {
        let mut full = shared("a", "A.", &["scripts/run.py"]);
        full.catalog_only = false;
        let p = system_prompt("", &[full, shared("b", "B.", &["scripts/run.py"])]);
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

    /// 30 spec-valid skills at the limits real collections reach: 1020-character
    /// descriptions, six scripts each, every script path shared (so each is qualified).
    fn thirty_at_the_limits() -> Vec<SkillPrompt> {
        let description = "Handles a family of document tasks - reading, converting, checking \
                           and summarising files of this kind. "
            .repeat(12)[..1020]
            .to_string();
        let scripts = [
            "scripts/extract_text.py",
            "scripts/convert_format.py",
            "scripts/check_layout.py",
            "scripts/summarise_doc.py",
            "scripts/validate_input.py",
            "scripts/render_output.py",
        ];
        (0..30)
            .map(|i| shared(&format!("document-skill-{i:02}"), &description, &scripts))
            .collect()
    }

    /// The catalog of `skills` with nothing cut to fit.
    fn uncut(skills: &[SkillPrompt]) -> String {
        let entries: Vec<Entry> = skills.iter().map(Entry::of).collect();
        render(
            CATALOG_HEADER,
            &entries,
            MAX_DESCRIPTION_CHARS,
            MAX_SCRIPTS_LISTED,
        )
    }

    #[test]
    fn thirty_skills_at_the_limits_fit_the_catalog_budget() {
        let skills = thirty_at_the_limits();
        // Uncut, it would not fit.
        let uncut = uncut(&skills);
        assert!(uncut.len() > CATALOG_BUDGET_BYTES, "{}", uncut.len());
        let p = system_prompt("", &skills);
        assert!(p.len() <= 12 * 1024, "{} bytes", p.len());
        let catalog = catalog(&skills);
        assert!(catalog.len() <= CATALOG_BUDGET_BYTES, "{}", catalog.len());
        // Every skill is still there, with its scripts counted and a way to list them.
        for i in 0..30 {
            let name = format!("document-skill-{i:02}");
            let line = p
                .lines()
                .find(|l| l.starts_with(&format!("- {name}: ")))
                .unwrap_or_else(|| panic!("{name} missing: {p}"));
            assert!(line.contains(&format!("!{{skill {name}}} lists")), "{line}");
            assert!(
                line.contains("Handles a family of document tasks"),
                "{line}"
            );
        }
    }

    #[test]
    fn a_collection_too_large_to_describe_is_named_within_the_budget() {
        let description = "Does a long list of things for files of one kind. ".repeat(20);
        let many = |n: usize| -> Vec<SkillPrompt> {
            (0..n)
                .map(|i| {
                    entry(
                        &format!("skill-number-{i:03}"),
                        &description,
                        &["scripts/a.py"],
                    )
                })
                .collect()
        };
        // 200 skills: even 40-character descriptions do not fit, the names do.
        let c = catalog(&many(200));
        assert!(c.len() <= CATALOG_BUDGET_BYTES, "{}", c.len());
        assert!(c.contains("by name: skill-number-000, "), "{c}");
        assert!(c.contains("skill-number-199."), "{c}");
        assert!(!c.contains("Does a long list"), "{c}");
        // 1000: as many names as fit, and a count of the rest.
        let c = catalog(&many(1000));
        assert!(c.len() <= CATALOG_BUDGET_BYTES, "{}", c.len());
        assert!(c.contains(" more not listed."), "{c}");
        // Control: a few skills keep their descriptions.
        assert!(catalog(&many(5)).contains("Does a long list"));
    }

    #[test]
    fn a_described_list_is_cut_alike_to_fit() {
        let long = "word ".repeat(300);
        let skills: Vec<(String, &str)> =
            (0..30).map(|i| (format!("s{i}"), long.as_str())).collect();
        let refs: Vec<(&str, &str)> = skills.iter().map(|(n, d)| (n.as_str(), *d)).collect();
        let full = described_within(&refs, usize::MAX);
        assert!(full.len() > 4096, "{}", full.len());
        let cut = described_within(&refs, 4096);
        assert!(cut.len() <= 4096 && cut.lines().count() == 30, "{cut}");
        assert!(cut.starts_with("- s0: word word"), "{cut}");
        let names = described_within(&refs, 200);
        assert!(
            names.contains("by name: s0, s1, ") && names.ends_with("s29.\n"),
            "{names}"
        );
        let names = described_within(&refs, 80);
        assert!(
            names.len() <= 80 && names.contains("more not listed"),
            "{names}"
        );
    }

    #[test]
    fn long_names_and_deep_shared_paths_fit_too() {
        // 64-character names, six deep script paths each, all shared: ~27 KB uncut.
        let scripts: Vec<String> = (0..6)
            .map(|k| format!("scripts/office/helpers/validators/check_document_part_{k}.py"))
            .collect();
        let refs: Vec<&str> = scripts.iter().map(String::as_str).collect();
        let skills: Vec<SkillPrompt> = (0..30)
            .map(|i| {
                shared(
                    &format!("{i:02}{}", "-long-skill-name".repeat(4))[..64],
                    &"word ".repeat(300),
                    &refs,
                )
            })
            .collect();
        let uncut = uncut(&skills);
        assert!(uncut.len() > 25_000, "{}", uncut.len());
        let p = system_prompt("", &skills);
        assert!(p.len() <= 12 * 1024, "{} bytes", p.len());
    }

    #[test]
    fn the_budget_advice_fits_what_fills_the_prompt() {
        let mut big = entry("claude-api", "Use the API.", &[]);
        big.catalog_only = false;
        big.body = "x".repeat(20_000);
        let a = advice("Be brief.", std::slice::from_ref(&big));
        assert!(
            a.starts_with("skill `claude-api` is sent in full (20012 bytes) because --skill or the agent names it"),
            "{a}"
        );
        assert!(!a.contains("stay in the catalog"), "{a}");
        let mut other = big.clone();
        other.name = "pdf".into();
        other.body = "y".repeat(9_000);
        let a = advice("", &[other, big.clone()]);
        assert!(
            a.starts_with("2 skills are sent in full (`claude-api` 20012 bytes, `pdf` 9012 bytes)"),
            "{a}"
        );
        // Only catalog entries: naming fewer in full is not the fix; picking is.
        let a = advice("", &thirty_at_the_limits());
        assert!(
            a.starts_with("the catalog of 30 installed skills takes ")
                && a.contains("--skill NAME (repeatable)"),
            "{a}"
        );
        // The agent's own instructions are the biggest part: they are named, not the skills.
        let instructions = "Do this carefully.\n".repeat(1300);
        let small = entry("rooty", "Root scripts.", &[]);
        for skills in [
            vec![SkillPrompt {
                catalog_only: false,
                ..small.clone()
            }],
            thirty_at_the_limits(),
            vec![],
        ] {
            let a = advice(&instructions, &skills);
            assert!(
                a.starts_with("the agent's own instructions take 24699 bytes of it;"),
                "{a}"
            );
        }
    }
}
