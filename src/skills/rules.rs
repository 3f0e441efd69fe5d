//! The SKILL.md frontmatter spec (DESIGN §4) as checks over parsed entries. Pure.
//!
//! One pass yields both the usable values and every issue, each tagged with how much it matters:
//! lenient loading skips on [`Level::Fatal`], warns on [`Level::Warn`] and ignores
//! [`Level::Strict`]; `skills validate` reports them all.

use super::frontmatter::{Entry, Node};
use std::collections::BTreeMap;

pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 1024;
pub const MAX_COMPATIBILITY: usize = 500;
const KNOWN_KEYS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Only strict validation reports it.
    Strict,
    /// The skill loads, with a warning.
    Warn,
    /// The skill cannot be loaded.
    Fatal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// 1-based line in SKILL.md.
    pub line: usize,
    pub level: Level,
    pub message: String,
}

/// The frontmatter values, as usable as the issues allow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    /// The name to load the skill under: the frontmatter `name` when usable, else the folder name.
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    /// `None` when absent; a malformed value becomes an empty list (fail closed: no Bash).
    pub allowed_tools: Option<Vec<String>>,
}

/// Check the entries of a SKILL.md found in folder `folder` (its file name).
pub fn check(entries: &[Entry], folder: &str) -> (Frontmatter, Vec<Issue>) {
    let mut issues = Vec::new();
    let mut fm = Frontmatter {
        name: folder.to_owned(),
        ..Frontmatter::default()
    };
    let mut issue = |line: usize, level: Level, message: String| {
        issues.push(Issue {
            line,
            level,
            message,
        })
    };
    let find = |key: &str| entries.iter().find(|e| e.key == key);
    check_name(find("name"), folder, &mut fm, &mut issue);
    match find("description") {
        None => issue(1, Level::Fatal, "missing `description`".into()),
        Some(e) => match &e.value {
            Node::Str(d) if !d.trim().is_empty() => {
                fm.description = d.trim().to_owned();
                let n = d.chars().count();
                if n > MAX_DESCRIPTION {
                    issue(
                        e.line,
                        Level::Warn,
                        format!(
                            "`description` is {n} characters long; the limit is {MAX_DESCRIPTION}"
                        ),
                    );
                }
            }
            Node::Str(_) | Node::Null => {
                issue(e.line, Level::Fatal, "`description` is empty".into())
            }
            other => issue(
                e.line,
                Level::Fatal,
                must_be("`description`", "a string", other),
            ),
        },
    }
    if let Some(e) = find("license") {
        license(e, &mut fm, &mut issue);
    }
    if let Some(e) = find("compatibility") {
        compatibility(e, &mut fm, &mut issue);
    }
    if let Some(e) = find("metadata") {
        metadata(e, &mut fm, &mut issue);
    }
    if let Some(e) = find("allowed-tools") {
        allowed_tools(e, &mut fm, &mut issue);
    }
    for e in entries {
        if !KNOWN_KEYS.contains(&e.key.as_str()) {
            issue(
                e.line,
                Level::Strict,
                format!(
                    "unknown frontmatter key `{}` (allowed: {})",
                    e.key,
                    KNOWN_KEYS.join(", ")
                ),
            );
        }
    }
    issues.sort_by_key(|i| i.line);
    (fm, issues)
}

/// A step of `check`: the skill's name, from `name` when usable, else the folder's.
fn check_name(
    e: Option<&Entry>,
    folder_raw: &str,
    fm: &mut Frontmatter,
    issue: &mut dyn FnMut(usize, Level, String),
) {
    // Quoted in messages: a folder name is the cloned repository's choice, controls included.
    let folder_shown = crate::command::escape_controls(folder_raw);
    let folder = folder_shown.as_str();
    match e {
        None => issue(
            1,
            Level::Warn,
            format!("missing `name`; using the folder name `{folder}`"),
        ),
        Some(e) => match &e.value {
            Node::Str(name) => {
                for problem in name_problems(name) {
                    issue(e.line, Level::Warn, problem);
                }
                if name != folder {
                    issue(
                        e.line,
                        Level::Warn,
                        format!("name `{name}` does not match its folder name `{folder}`"),
                    );
                }
                if crate::command::is_skill_word(name) {
                    fm.name = name.clone();
                }
            }
            other => issue(
                e.line,
                Level::Warn,
                format!(
                    "{}; using the folder name `{folder}`",
                    must_be("`name`", "a string", other)
                ),
            ),
        },
    }

    // The folder's name stands in only when it could be a name itself: it is the word a
    // directive, a pattern and every listing use (`!{skill NAME}`), so a space, a `}` or a
    // control character in it would break them or reach the terminal.
    if fm.name == folder_raw && !crate::command::is_skill_word(&fm.name) {
        issue(
            1,
            Level::Fatal,
            format!(
                "the folder name `{folder}` cannot be a skill name (it has a space, a control \
                 character or one of `/ : \\ * ? [ ] {{ }}`); \
                 give the skill a `name` in its frontmatter, or rename the folder"
            ),
        );
    }
}

/// A step of `check`: the optional `license`.
fn license(e: &Entry, fm: &mut Frontmatter, issue: &mut dyn FnMut(usize, Level, String)) {
    match &e.value {
        Node::Str(s) if !s.trim().is_empty() => fm.license = Some(s.clone()),
        Node::Str(_) => issue(e.line, Level::Strict, "`license` is empty".into()),
        other => issue(
            e.line,
            Level::Strict,
            must_be("`license`", "a string", other),
        ),
    }
}

/// A step of `check`: the optional `compatibility`.
fn compatibility(e: &Entry, fm: &mut Frontmatter, issue: &mut dyn FnMut(usize, Level, String)) {
    match &e.value {
        Node::Str(s) => {
            let n = s.chars().count();
            if n == 0 || n > MAX_COMPATIBILITY {
                issue(
                    e.line,
                    Level::Strict,
                    format!(
                        "`compatibility` must be 1 to {MAX_COMPATIBILITY} characters, found {n}"
                    ),
                );
            }
            if n > 0 {
                fm.compatibility = Some(s.clone());
            }
        }
        other => issue(
            e.line,
            Level::Strict,
            must_be("`compatibility`", "a string", other),
        ),
    }
}

/// A step of `check`: the optional `metadata` mapping, strings to strings.
fn metadata(e: &Entry, fm: &mut Frontmatter, issue: &mut dyn FnMut(usize, Level, String)) {
    match &e.value {
        Node::Map(items) => {
            for item in items {
                let why = must_be(&format!("`metadata.{}`", item.key), "a string", &item.value);
                match &item.value {
                    Node::Str(s) => {
                        fm.metadata.insert(item.key.clone(), s.clone());
                    }
                    v @ (Node::Int(_) | Node::Float(_) | Node::Bool(_)) => {
                        let text = v.scalar_text().unwrap_or_default();
                        let quote = format!("{why}; quote it: \"{text}\"");
                        issue(item.line, Level::Strict, quote);
                        fm.metadata.insert(item.key.clone(), text);
                    }
                    _ => issue(item.line, Level::Strict, why),
                }
            }
        }
        Node::Null => {}
        other => issue(
            e.line,
            Level::Strict,
            must_be("`metadata`", "a mapping of strings to strings", other),
        ),
    }
}

/// A step of `check`: the optional `allowed-tools`; a malformed value allows none (fail closed).
fn allowed_tools(e: &Entry, fm: &mut Frontmatter, issue: &mut dyn FnMut(usize, Level, String)) {
    match &e.value {
        Node::Str(s) => fm.allowed_tools = Some(split_tools(s)),
        Node::Null => fm.allowed_tools = Some(Vec::new()),
        Node::Seq(items) => {
            let mut tools = Vec::new();
            for item in items {
                match item {
                    Node::Str(s) => tools.push(s.trim().to_owned()),
                    other => issue(
                        e.line,
                        Level::Warn,
                        format!(
                            "{}; entry ignored",
                            must_be("`allowed-tools` entries", "strings", other)
                        ),
                    ),
                }
            }
            fm.allowed_tools = Some(tools);
        }
        other => {
            issue(
                e.line,
                Level::Warn,
                format!(
                    "{}; scripts of this skill will not run",
                    must_be("`allowed-tools`", "a string or a list of strings", other)
                ),
            );
            fm.allowed_tools = Some(Vec::new());
        }
    }
}

/// "SUBJECT must be WANT, found KIND": the wording for every frontmatter value of a wrong type.
fn must_be(subject: &str, want: &str, found: &Node) -> String {
    format!("{subject} must be {want}, found {}", found.kind())
}

/// Spec violations of a skill name (empty when valid).
pub fn name_problems(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME {
        out.push(format!(
            "`name` must be 1 to {MAX_NAME} characters, found {n}"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        out.push(format!(
            "`name` `{}` has the character `{}`; use only a-z, 0-9 and hyphens",
            crate::command::escape_controls(name),
            crate::command::escape_controls(&c.to_string())
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push(format!(
            "`name` `{name}` must not start or end with a hyphen"
        ));
    }
    if name.contains("--") {
        out.push(format!(
            "`name` `{name}` must not contain consecutive hyphens"
        ));
    }
    out
}

/// `allowed-tools` as a string: entries separated by whitespace outside parentheses,
/// so `Bash(git status:*) Read` is two entries.
pub fn split_tools(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            c if (c.is_whitespace() || c == ',') && depth == 0 => {
                out.push(std::mem::take(&mut cur));
            }
            c => {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                cur.push(c);
            }
        }
    }
    out.push(cur);
    out.retain(|t| !t.is_empty());
    out
}

/// Whether an `allowed-tools` list lets the skill's scripts run: it needs `Bash` or `Bash(..)`.
pub fn tools_allow_scripts(tools: &[String]) -> bool {
    tools.iter().any(|t| t == "Bash" || t.starts_with("Bash("))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::frontmatter::parse;

    fn run(yaml: &str, folder: &str) -> (Frontmatter, Vec<Issue>) {
        let p = parse(&format!("---\n{yaml}---\nbody\n")).unwrap();
        check(&p.entries, folder)
    }

    #[test]
    fn valid_skill_has_no_issues() {
        let (fm, issues) = run(
            "name: say\ndescription: Speak.\nlicense: MIT\ncompatibility: Linux\nmetadata:\n  version: \"1.2\"\nallowed-tools: Bash(say:*) Read\n",
            "say",
        );
        assert_eq!(issues, vec![]);
        assert_eq!(fm.name, "say");
        assert_eq!(fm.metadata["version"], "1.2");
        assert_eq!(
            fm.allowed_tools,
            Some(vec!["Bash(say:*)".to_string(), "Read".to_string()])
        );
    }

    #[test]
    fn name_rules() {
        let long = "a".repeat(65);
        for name in ["-x", "x-", "a--b", "Bad_Name", "", &long] {
            assert_eq!(name_problems(name).len(), 1, "{name}");
        }
        for name in ["pdf-tools2", &long[1..]] {
            assert!(name_problems(name).is_empty(), "{name}");
        }
    }

    #[test]
    fn a_folder_name_that_cannot_be_a_name_is_fatal_without_a_usable_name() {
        for folder in ["my skill", "x\u{1b}[2J", "a}b"] {
            let (_, issues) = run("description: d\n", folder);
            let fatal = issues.iter().find(|i| i.level == Level::Fatal);
            let fatal = fatal.unwrap_or_else(|| panic!("{folder:?}: {issues:?}"));
            assert!(
                fatal.message.contains("cannot be a skill name"),
                "{fatal:?}"
            );
            assert!(!fatal.message.contains('\u{1b}'), "{fatal:?}");
        }
        // A usable `name` makes the folder's name irrelevant: the control.
        let (fm, issues) = run("name: ok\ndescription: d\n", "my skill");
        assert_eq!(fm.name, "ok");
        assert!(issues.iter().all(|i| i.level != Level::Fatal), "{issues:?}");
    }

    #[test]
    fn unaddressable_name_falls_back_to_folder() {
        let (fm, issues) = run("name: my skill\ndescription: d\n", "my-skill");
        assert_eq!(fm.name, "my-skill");
        assert!(issues.iter().all(|i| i.level == Level::Warn));
    }

    #[test]
    fn missing_or_empty_description_is_fatal() {
        let (_, issues) = run("name: x\n", "x");
        assert!(issues.iter().any(|i| i.level == Level::Fatal));
        let (_, issues) = run("name: x\ndescription: \"  \"\n", "x");
        assert_eq!(issues[0].level, Level::Fatal);
        assert_eq!(issues[0].line, 3);
    }

    #[test]
    fn long_description_warns() {
        let (fm, issues) = run(
            &format!("name: x\ndescription: {}\n", "d".repeat(1025)),
            "x",
        );
        assert_eq!(fm.description.len(), 1025);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].level, Level::Warn);
    }

    #[test]
    fn strict_only_issues() {
        let (fm, issues) = run(
            "name: x\ndescription: d\nversion: 2\nmetadata:\n  version: 1.0\n  list: [a]\ncompatibility: \"\"\n",
            "x",
        );
        let lines: Vec<usize> = issues.iter().map(|i| i.line).collect();
        assert_eq!(lines, vec![4, 6, 7, 8], "{issues:?}");
        assert!(issues.iter().all(|i| i.level == Level::Strict));
        assert_eq!(fm.metadata["version"], "1.0");
        assert!(issues[1].message.contains("quote it"));
    }

    #[test]
    fn allowed_tools_forms() {
        let (fm, _) = run(
            "name: x\ndescription: d\nallowed-tools: [Read, \"Bash(git:*)\"]\n",
            "x",
        );
        assert!(tools_allow_scripts(fm.allowed_tools.as_deref().unwrap()));
        let (fm, _) = run("name: x\ndescription: d\nallowed-tools: Read Grep\n", "x");
        assert!(!tools_allow_scripts(fm.allowed_tools.as_deref().unwrap()));
        let (fm, issues) = run("name: x\ndescription: d\nallowed-tools: {a: 1}\n", "x");
        assert_eq!(fm.allowed_tools, Some(vec![]));
        assert_eq!(issues[0].level, Level::Warn);
        assert!(!tools_allow_scripts(&["Bashful".into()]));
    }

    #[test]
    fn split_tools_keeps_parenthesised_spaces() {
        assert_eq!(
            split_tools("Bash(git status:*)  Read, Write"),
            vec!["Bash(git status:*)", "Read", "Write"]
        );
    }
}
