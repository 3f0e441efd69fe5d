//! The prompt view of loaded skills: scripts by path, a script at the skill root by
//! `SKILL:FILE`, each tool by `SKILL:ID`, a tool followed by its parameters in flag form
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
            // A skill whose allowed-tools forbid its scripts lists none: each would be refused.
            scripts: s
                .tools()
                .filter(|_| s.allows_scripts())
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
                .chain(s.scripts().iter().filter(|_| s.allows_scripts()).map(|sc| {
                    // As listings name it: a root script by its file name (`SKILL:x.py`; the
                    // stem may be an `x.sh` beside it, or a `scripts/x.*` that it names first),
                    // a path another loaded skill also has qualified.
                    let mut path = skills.listed_name(&s.name, &sc.rel_path);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn root_scripts_are_named_by_file_name_and_resolve_to_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("rooty");
        fs::create_dir_all(dir.join("scripts")).unwrap();
        fs::write(
            dir.join("SKILL.md"),
            "---\nname: rooty\ndescription: d\n---\nb\n",
        )
        .unwrap();
        for f in ["hello.py", "hello.sh", "scripts/go.sh"] {
            fs::write(dir.join(f), "#!/bin/sh\necho\n").unwrap();
        }
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
