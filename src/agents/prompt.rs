//! The system prompt (DESIGN §4): the agent's instructions, each active skill with a table of its
//! scripts, and the guide to the directive syntax ([`super::guide`]). Pure, so it can be shown (`agents show`),
//! measured and tested exactly. Kept short on purpose: small models must follow it.

use super::guide;
use super::skill_adapter::{SkillPrompt, scripts_table};
use crate::model::Message;
use crate::scan::Announced;

/// Build the system prompt of a chat that acts on every directive, coached: see
/// [`prompt_for`].
pub fn system_prompt(instructions: &str, skills: &[SkillPrompt]) -> String {
    compose(instructions, skills, Told::Coached)
}

/// The system prompt that tells the model of the directives `announced` (DESIGN §4, §7), or
/// `None` when there is nothing to say. `instructions` are already filled; `skills` are the
/// active skills in the order the agent names them. The fixed parts come first and the agent's
/// instructions last: they may hold `{{var}}` values, and a server's prompt cache keeps only
/// the common prefix.
/// - [`Announced::Nothing`]: the instructions alone.
/// - [`Announced::SkillReads`]: the skills and the catalog (whose reads are the built-in
///   `!{skill NAME}`), without the guide, the skills' worked examples or their scripts.
/// - [`Announced::Full`]: the guide, then the skills with their scripts. `coached`: each
///   skill's worked example moves from its body into [`few_shot`] (whose messages a coach
///   sends); else the body stays as its author wrote it.
pub fn prompt_for(
    instructions: &str,
    skills: &[SkillPrompt],
    announced: Announced,
    coached: bool,
) -> Option<String> {
    let told = match announced {
        Announced::Nothing => {
            return Some(instructions.trim().to_string()).filter(|i| !i.is_empty());
        }
        Announced::SkillReads => Told::SkillReads,
        Announced::Full if coached => Told::Coached,
        Announced::Full => Told::Full,
    };
    Some(compose(instructions, skills, told))
}

/// What a composed prompt says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    /// Skill reads only: no guide, no examples, no scripts.
    SkillReads,
    /// The guide and the skills as written.
    Full,
    /// The guide, the skills' examples moved out into the few-shot.
    Coached,
}

fn compose(instructions: &str, skills: &[SkillPrompt], told: Told) -> String {
    let mut skills = skills.to_vec();
    if told == Told::SkillReads {
        // No script is shown, under a skill or in the catalog.
        skills.iter_mut().for_each(|s| s.scripts.clear());
    }
    let mut out = String::new();
    let mut examples = Vec::new();
    let mut bodies = Vec::new();
    let full: Vec<&SkillPrompt> = skills.iter().filter(|s| !s.catalog_only).collect();
    for skill in &full {
        let (body, example) = guide::split_example(&skill.body);
        bodies.push(match told {
            Told::Full => skill.body.clone(),
            Told::SkillReads | Told::Coached => body,
        });
        examples.extend(example);
    }
    if told != Told::SkillReads {
        out.push_str(&guide::guide(&examples));
    }
    if !full.is_empty() {
        out.push_str("\n# Skills\n");
        if full.iter().any(|s| s.has_files) {
            out.push_str(super::catalog::FILES_HINT);
        }
        for (skill, body) in full.iter().zip(&bodies) {
            push_skill(&mut out, skill, body);
        }
    }
    // Skills not named by the agent or --skill: one line each (progressive disclosure).
    out.push_str(&super::catalog::catalog(&skills));
    let instructions = instructions.trim();
    if !instructions.is_empty() {
        out.push('\n');
        out.push_str(instructions);
        out.push('\n');
    }
    match told {
        // Nothing before the skills: no blank line to open with.
        Told::SkillReads => out.trim_start_matches('\n').to_string(),
        Told::Full | Told::Coached => out,
    }
}

/// The worked exchanges a coach sends for a session that acts on the directives `announced`:
/// [`few_shot`] where scripts run; where only skills are read, the worked read of the first
/// catalog skill alone (no script, no word of the rest of the syntax); none otherwise.
pub fn few_shot_for(skills: &[SkillPrompt], announced: Announced) -> Vec<Message> {
    match announced {
        Announced::Full => few_shot(skills),
        Announced::SkillReads if skills.iter().all(|s| s.catalog_only) => skills
            .iter()
            .find_map(|s| guide::load_example(&s.name, &s.description, &s.body))
            .map_or_else(Vec::new, |e| guide::exchange(&e)),
        Announced::SkillReads | Announced::Nothing => Vec::new(),
    }
}

/// The worked examples of `skills`, as messages sent between the system prompt and the
/// conversation (DESIGN §4).
pub fn few_shot(skills: &[SkillPrompt]) -> Vec<Message> {
    // With no skill named (every one in the catalog), the catalog's own examples show how.
    let all_catalog = skills.iter().all(|s| s.catalog_only);
    let mut examples: Vec<_> = skills
        .iter()
        .filter(|s| !s.catalog_only || all_catalog)
        .filter_map(|s| Some(guide::split_example(&s.body).1?.introduced_by(&s.name)))
        .collect();
    // A catalog with no example of its own (real collections have none) is shown how to load a
    // skill, with its first skill (a real one: a fictional load taught the model to invent
    // names). The load shown stays the user's to ask for: a skill read is never a copy.
    if all_catalog && examples.is_empty() {
        examples.extend(
            skills
                .iter()
                .find_map(|s| guide::load_example(&s.name, &s.description, &s.body)),
        );
    }
    guide::few_shot(&examples)
}

fn push_skill(out: &mut String, skill: &SkillPrompt, body: &str) {
    out.push_str(&format!("\n## {}\n", skill.name));
    let description = skill.description.trim();
    if !description.is_empty() {
        out.push_str(description);
        out.push('\n');
    }
    let body = body.trim();
    if !body.is_empty() {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    out.push_str(&scripts_table(skill));
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
            has_files: false,
        }
    }

    #[test]
    fn no_skills_is_guide_and_instructions() {
        let p = system_prompt("  Be brief.\n", &[]);
        assert_eq!(p, format!("{}\nBe brief.\n", guide::guide(&[])));
        assert!(!p.contains("# Skills"));
        assert_eq!(system_prompt("", &[]), guide::guide(&[]));
    }

    #[test]
    fn exact_layout_with_one_skill() {
        let p = system_prompt(
            "Teach words.",
            &[skill("say", &[("scripts/say.sh", "Speak | TEXT\n aloud")])],
        );
        let expected = format!(
            "{}\n# Skills\n\n## say\nsay things\n\n# say\n\nUse it well.\n\n\
             | script | what it does |\n| --- | --- |\n| scripts/say.sh | Speak \\| TEXT aloud |\n\
             \nTeach words.\n",
            guide::guide(&[]),
        );
        assert_eq!(p, expected);
    }

    /// How to read a skill's files is said only when a skill shown in full has some.
    #[test]
    fn the_files_hint_only_with_files() {
        let hint = super::super::catalog::FILES_HINT;
        let mut s = skill("pdf", &[]);
        assert!(!system_prompt("", std::slice::from_ref(&s)).contains(hint));
        s.has_files = true;
        assert!(system_prompt("", &[s]).contains(hint));
    }

    #[test]
    fn a_skill_example_moves_into_the_few_shot_and_instructions_come_last() {
        let mut s = skill("calc", &[("scripts/calc.py", "Compute")]);
        s.body = "# calc\n\n## Example\n\nUser: What is 23 times 4?\nYou: !{scripts/calc.py \"23 * 4\"}\nOutput: 92\nYou: It is 92.\n".into();
        let p = system_prompt("You are {{lang}}-speaking.", std::slice::from_ref(&s));
        assert!(!p.contains("What is 23 times 4?"), "{p}");
        assert!(
            p.contains("backticks: `!{scripts/calc.py \"23 * 4\"}`"),
            "{p}"
        );
        assert!(p.ends_with("\nYou are {{lang}}-speaking.\n"), "{p}");
        let shots = few_shot(&[s]);
        assert_eq!(shots[2], Message::user("What is 23 times 4?"));
        // Thanks (2), the example (4), a question answered in words (2), the syntax (2).
        assert_eq!(shots.len(), 10);
    }

    /// With no skill named, every skill is in the catalog: their examples still make the
    /// few-shot; with one named, only the named skills' do.
    #[test]
    fn catalog_skills_give_examples_only_when_no_skill_is_named() {
        let mut calc = skill("calc", &[("scripts/calc.py", "Compute")]);
        calc.body = "## Example\n\nUser: What is 23 times 4?\nYou: !{scripts/calc.py \"23 * 4\"}\nOutput: 92\nYou: It is 92.\n".into();
        calc.catalog_only = true;
        let mut other = skill("other", &[]);
        other.catalog_only = true;
        let shots = few_shot(&[calc.clone(), other.clone()]);
        assert!(shots.contains(&Message::user("What is 23 times 4?")));
        other.catalog_only = false;
        let shots = few_shot(&[calc, other]);
        assert!(
            !shots.contains(&Message::user("What is 23 times 4?")),
            "{shots:?}"
        );
    }

    /// A catalog whose skills bring no example (real collections have none) is shown how to
    /// load one, with its first skill.
    #[test]
    fn a_catalog_without_examples_is_shown_a_skill_load() {
        let mut maps = skill("map-maker", &[]);
        maps.description = "Drawing maps from survey notes. Use it for any map.".into();
        maps.body = "# Map maker\n\nRead the notes first.\nThen draw.\n".into();
        maps.catalog_only = true;
        let mut other = skill("other", &[]);
        other.catalog_only = true;
        let shots = few_shot(&[maps.clone(), other.clone()]);
        assert_eq!(shots[2], Message::user("Drawing maps from survey notes"));
        assert_eq!(shots[3], Message::assistant("!{skill map-maker}"));
        assert_eq!(
            shots[4],
            Message::user("Output: Read the notes first. Then draw. — continue your answer.")
        );
        // No question answered in words follows a skill read: the syntax exchange comes next,
        // showing script forms, not the skill read.
        assert_eq!(shots.len(), 8, "{shots:?}");
        let last = format!("{:?}", shots.last().unwrap());
        assert!(last.contains("`!{…}` runs a script"), "{last}");
        // With a skill named (not all in the catalog), or an example of their own, no load.
        other.catalog_only = false;
        assert!(!format!("{:?}", few_shot(&[maps.clone(), other])).contains("!{skill"));
        let mut calc = skill("calc", &[("scripts/calc.py", "Compute")]);
        calc.body = "## Example\n\nUser: What is 23 times 4?\nYou: !{scripts/calc.py \"23 * 4\"}\nOutput: 92\nYou: It is 92.\n".into();
        calc.catalog_only = true;
        assert!(!format!("{:?}", few_shot(&[maps, calc])).contains("!{skill"));
    }

    /// What the prompt tells follows what the session acts on: nothing, skill reads only (no
    /// guide, no example, no script), or everything; uncoached, a body keeps its example.
    #[test]
    fn the_prompt_tells_only_what_was_announced() {
        let mut calc = skill("calc", &[("scripts/calc.py", "Compute")]);
        calc.body = "# calc\n\n## Example\n\nUser: What is 23 times 4?\nYou: !{scripts/calc.py \"23 * 4\"}\nOutput: 92\nYou: It is 92.\n".into();
        let mut other = skill("other", &[("scripts/o.py", "Other")]);
        other.catalog_only = true;
        let skills = [calc, other];
        assert_eq!(
            prompt_for(" Hi. ", &skills, Announced::Nothing, true).as_deref(),
            Some("Hi.")
        );
        assert_eq!(prompt_for("", &skills, Announced::Nothing, false), None);
        let reads = prompt_for("", &skills, Announced::SkillReads, true).unwrap();
        assert!(reads.starts_with("# Skills\n"), "{reads}");
        assert!(reads.contains("!{skill NAME}"), "{reads}");
        for taught in ["# Running scripts", "23 times 4", "scripts/", "| script |"] {
            assert!(!reads.contains(taught), "{taught}: {reads}");
        }
        let full = prompt_for("", &skills, Announced::Full, false).unwrap();
        assert!(full.contains("# Running scripts") && full.contains("What is 23 times 4?"));
        let coached = prompt_for("", &skills, Announced::Full, true).unwrap();
        assert_eq!(coached, system_prompt("", &skills));
        assert!(!coached.contains("What is 23 times 4?"));
        assert!(few_shot_for(&skills, Announced::SkillReads).is_empty());
        assert!(!few_shot_for(&skills, Announced::Full).is_empty());
    }
}
