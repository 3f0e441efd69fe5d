//! The names under which skill tools and scripts are offered as functions (native tool calls,
//! MCP tools). Function names allow `[A-Za-z0-9_-]{1,64}`, so two scripts with one stem
//! (`scripts/a/run.sh`, `scripts/b/run.sh`) or a long skill name would otherwise end up under
//! one name, or lose their script part to the cut: every name here is unique and keeps the
//! script part; the skill part is what gets shortened.

use super::{Skill, SkillSet, tools::Tool};
use std::collections::HashMap;

/// Longest function name providers accept.
const MAX_NAME: usize = 64;
/// Longest script part kept whole; a longer one is cut and given a digest.
const MAX_PART: usize = 48;

/// One enabled tool or script of a skill: what the system prompt lists and what is offered
/// as a function (native tool calls, MCP tools), walked once.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The function name, unique in the set.
    pub name: String,
    /// The skill it belongs to.
    pub skill: String,
    /// `Some(id)` for an enabled tool folder, `None` for a script.
    pub tool: Option<String>,
    /// The script's path in the skill folder (for a tool, its id).
    pub rel_path: String,
    /// How a directive names it unambiguously: `SKILL:ID` for a tool, the path form for a script.
    pub reference: String,
    /// How listings name it: `SKILL:ID` for a tool, [`SkillSet::listed_name`] for a script.
    pub shown: String,
    /// A tool's description, else its name; a script's first comment, or "".
    pub description: String,
    /// The tool, or the script as one when a schema beside it types its input.
    pub typed: Option<Tool>,
}

/// Every enabled tool and script of the skills that may run scripts, each under a unique name.
pub fn functions(skills: &SkillSet) -> Vec<Offer> {
    let mut wanted: Vec<(Offer, String)> = Vec::new();
    for skill in skills.iter() {
        if !skill.allows_scripts() {
            // It could never run one: offering them would only produce refusals.
            continue;
        }
        wanted.extend(of_skill(skills, skill));
    }
    // (`load_skill` has no `__`: no name here can be it.) A name wanted by several is replaced, for each of them, by one that spells
    // the script's path; a clash left after that gets a digest of the reference.
    let passes: [fn(&Offer, &str) -> String; 2] = [
        |f, path| compose(&f.skill, path),
        |f, path| {
            compose(
                &f.skill,
                &format!("{path}_{}", digest(f.reference.as_bytes())),
            )
        },
    ];
    for rename in passes {
        let mut wanting: HashMap<String, usize> = HashMap::new();
        for (f, _) in &wanted {
            *wanting.entry(f.name.clone()).or_default() += 1;
        }
        for (f, path) in &mut wanted {
            if wanting[&f.name] > 1 {
                f.name = rename(f, path);
            }
        }
    }
    // Still taken (a digest collision): a counter, so that every one is offered.
    let mut out: Vec<Offer> = Vec::with_capacity(wanted.len());
    for (mut f, path_part) in wanted {
        let mut n = 2;
        while out.iter().any(|o| o.name == f.name) {
            f.name = compose(&f.skill, &format!("{path_part}_{n}"));
            n += 1;
        }
        out.push(f);
    }
    out
}

impl SkillSet {
    /// The reference of the tool or script offered as function `name` ([`functions`]): a
    /// model that was offered native tools may write the function name as a command.
    pub(crate) fn reference_for_function(&self, name: &str) -> Option<String> {
        if !name.contains("__") {
            return None;
        }
        functions(self)
            .into_iter()
            .find(|f| f.name == name)
            .map(|f| f.reference)
    }
}

/// The functions the skills that may not run scripts (`allowed-tools` without `Bash`) would
/// have: never offered, but a model that calls one by its name is told why it cannot run
/// rather than that no such tool exists.
pub fn locked(skills: &SkillSet) -> Vec<Offer> {
    skills
        .iter()
        .filter(|s| !s.allows_scripts())
        .flat_map(|s| of_skill(skills, s).into_iter().map(|(f, _)| f))
        .collect()
}

/// The tools then the scripts of `skill`, each with its plain name and the path part used if
/// that name clashes.
fn of_skill(skills: &SkillSet, skill: &Skill) -> Vec<(Offer, String)> {
    let tools = skill.tools().map(|t| {
        let reference = format!("{}:{}", skill.name, t.id);
        let f = Offer {
            name: compose(&skill.name, &t.id),
            skill: skill.name.clone(),
            tool: Some(t.id.clone()),
            rel_path: t.id.clone(),
            shown: reference.clone(),
            reference,
            description: match t.description.is_empty() {
                true => t.name.clone(),
                false => t.description.clone(),
            },
            typed: Some(t.clone()),
        };
        (f, format!("tool_{}", t.id))
    });
    let scripts = skill.scripts().iter().map(|s| {
        let f = Offer {
            name: compose(&skill.name, &s.id),
            skill: skill.name.clone(),
            tool: None,
            rel_path: s.rel_path.clone(),
            reference: super::script_reference(&skill.name, &s.rel_path),
            shown: skills.listed_name(&skill.name, &s.rel_path),
            description: s.description.clone(),
            typed: super::tools::script_tool(s).ok().flatten(),
        };
        let path = s.rel_path.strip_prefix("scripts/").unwrap_or(&s.rel_path);
        (f, path.to_owned())
    });
    tools.chain(scripts).collect()
}

/// `SKILL__PART`, sanitised, at most 64 characters: a long part is cut to 48 with a digest of
/// the whole; the skill part is cut to what is left, with a digest of the skill's name.
pub fn compose(skill: &str, part: &str) -> String {
    let mut part = sanitise(part);
    if part.len() > MAX_PART {
        let d = digest(part.as_bytes());
        part.truncate(MAX_PART - d.len() - 1);
        part = format!("{part}_{d}");
    }
    let mut skill_part = sanitise(skill);
    if skill_part.len() + 2 + part.len() > MAX_NAME {
        let d = digest(skill.as_bytes());
        skill_part.truncate(MAX_NAME - 2 - part.len() - d.len() - 1);
        skill_part = format!("{skill_part}_{d}");
    }
    format!("{skill_part}__{part}")
}

fn sanitise(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect()
}

/// Four hex digits (FNV-1a folded to 16 bits): short, stable across runs and platforms.
fn digest(bytes: &[u8]) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{:04x}", (h >> 16) ^ (h & 0xffff))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn names_are_unique_and_keep_the_script_part() {
        let root = tempfile::tempdir().unwrap();
        let long = "l".repeat(64);
        for (name, files) in [
            ("locked", &["scripts/hi.sh"][..]),
            (
                "many",
                &["scripts/a/run.sh", "scripts/b/run.sh", "scripts/solo.sh"],
            ),
            (long.as_str(), &["scripts/first.sh", "scripts/second.sh"]),
            ("both", &["scripts/go.sh", "tools/go/go.sh"]),
        ] {
            let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, "echo\n")).collect();
            crate::skills::write_test_skill(root.path(), name, &files);
        }
        let tool = "id: go\nscript: go.sh\ninput: args\n";
        fs::write(root.path().join("both/tools/go/tool.yaml"), tool).unwrap();
        let locked = "---\nname: locked\ndescription: Test.\nallowed-tools: Read\n---\nBody\n";
        fs::write(root.path().join("locked/SKILL.md"), locked).unwrap();
        let set = SkillSet::load(&[root.path().to_path_buf()]);
        let fns = functions(&set);
        let names: Vec<&str> = fns.iter().map(|f| f.name.as_str()).collect();
        assert!(names.contains(&"many__a_run_sh"), "{names:?}");
        assert!(names.contains(&"many__b_run_sh"), "{names:?}");
        assert!(names.contains(&"many__solo"), "{names:?}");
        let a = fns.iter().find(|f| f.name == "many__a_run_sh").unwrap();
        assert_eq!(a.reference, "many/scripts/a/run.sh");
        let long_names: Vec<&&str> = names.iter().filter(|n| n.starts_with("lll")).collect();
        assert_eq!(long_names.len(), 2, "{names:?}");
        assert!(long_names.iter().any(|n| n.ends_with("__first")));
        assert!(long_names.iter().any(|n| n.ends_with("__second")));
        assert!(names.iter().all(|n| n.len() <= MAX_NAME));
        // A tool and a script of one name: each spells what it is.
        assert!(names.contains(&"both__tool_go"), "{names:?}");
        assert!(names.contains(&"both__go_sh"), "{names:?}");
        // A skill whose allowed-tools has no Bash can never run one: none offered.
        assert!(!names.iter().any(|n| n.starts_with("locked")), "{names:?}");
    }

    #[test]
    fn composing() {
        assert_eq!(compose("lookup", "lookup"), "lookup__lookup");
        assert_eq!(compose("a", "x.y z"), "a__x_y_z");
        let n = compose(&"s".repeat(70), "script");
        assert_eq!(n.len(), MAX_NAME);
        assert!(n.ends_with("__script"), "{n}");
        let n = compose("s", &"p".repeat(70));
        assert!(n.len() <= MAX_NAME, "{n}");
        assert_ne!(compose("s", &"p".repeat(70)), compose("s", &"p".repeat(71)));
        assert_ne!(compose(&"a".repeat(70), "x"), compose(&"a".repeat(71), "x"));
    }
}
