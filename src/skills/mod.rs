//! Skills (DESIGN §4): discovery, script detection, safe resolution.

mod copies;
pub(crate) mod discover;
mod excerpt;
pub(crate) mod files;
pub(crate) mod frontmatter;
pub(crate) mod functions;
pub(crate) mod invocation;
pub(crate) mod request;
pub(crate) mod resolve;
pub(crate) mod rules;
pub(crate) mod scripts;
pub(crate) mod tools;
pub(crate) mod validate;
pub(crate) mod written;

// For the skills benchmark; not part of the API.
#[doc(hidden)]
pub use discover::detect_scripts;
pub use discover::{DuplicateSkill, LoadOptions, SkillSet, UnknownSkills};
pub(crate) use excerpt::excerpt;
pub use functions::{Offer, functions};
pub use resolve::{ResolveError, ResolvedScript, ScriptCommand, listed_name, script_reference};
pub use scripts::Script;
pub use tools::{InputError, Tool, ToolInput};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The folder under a skill (or prompt/agent folder) that holds tool folders.
pub const TOOLS_DIR: &str = "tools";

/// The variables every script gets, in the order `ResolvedScript::command` sets them: its
/// skill's name, folder and version, and skillpipe's version.
pub const SCRIPT_ENV: [&str; 4] = [
    "SKILL_NAME",
    "SKILL_BASE_DIR",
    "SKILL_VERSION",
    "SKILLPIPE_VERSION",
];

/// `items` comma-separated for a message, or "none".
fn or_none(items: &[String]) -> String {
    match items.is_empty() {
        true => "none".to_owned(),
        false => items.join(", "),
    }
}

/// One loaded skill.
#[derive(Debug, Clone, Default)]
pub struct Skill {
    /// The frontmatter name (the folder name if the frontmatter's is missing or unusable).
    pub name: String,
    /// What it does (frontmatter `description`).
    pub description: String,
    /// Canonical skill folder.
    pub dir: PathBuf,
    /// SKILL.md as found on the search path (for messages).
    pub source: PathBuf,
    /// SKILL.md after the frontmatter, trimmed (for the system prompt).
    pub body: String,
    /// `metadata.version`, else "".
    pub version: String,
    /// Frontmatter `license`.
    pub license: Option<String>,
    /// Frontmatter `compatibility`.
    pub compatibility: Option<String>,
    /// Frontmatter `metadata` (a version lives in `metadata.version`).
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools` entries; `None` when the frontmatter has none (no restriction).
    pub allowed_tools: Option<Vec<String>>,
    /// Lenient-load warnings, `file:line: message`.
    pub warnings: Vec<String>,
    /// The tools under `tools/` that loaded, disabled ones included (see [`Skill::tools`]).
    pub all_tools: Vec<Tool>,
    ts_interpreter: String,
    scripts: OnceLock<Vec<Script>>,
}

impl Skill {
    /// The scripts under `scripts/`, at the root, and those the body names elsewhere in the
    /// folder, detected on first use.
    pub fn scripts(&self) -> &[Script] {
        self.scripts
            .get_or_init(|| scripts::detect(&self.dir, &self.ts_interpreter, &self.body))
    }

    /// False when `allowed-tools` is present without a `Bash` or `Bash(..)` entry.
    pub fn allows_scripts(&self) -> bool {
        self.allowed_tools
            .as_deref()
            .is_none_or(rules::tools_allow_scripts)
    }

    /// The enabled tools (`enabled: false` hides one from directives, the prompt and `--tools`).
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.all_tools.iter().filter(|t| t.disabled_by.is_none())
    }

    /// The enabled tool `id`.
    pub fn tool(&self, id: &str) -> Option<&Tool> {
        self.tools().find(|t| t.id == id)
    }

    /// The script at `rel_path` (`scripts/x.py`), if detected.
    pub fn script(&self, rel_path: &str) -> Option<&Script> {
        self.scripts().iter().find(|s| s.rel_path == rel_path)
    }

    /// Whether the folder holds something for `!{skill NAME FILE}` to read: an entry besides
    /// SKILL.md, `scripts/`, `tools/`, a licence and hidden ones (references, assets, docs).
    pub fn has_files(&self) -> bool {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().to_ascii_uppercase();
            !(name.starts_with('.')
                || name == "SKILL.MD"
                || name == "SCRIPTS"
                || name == "TOOLS"
                || name.starts_with("LICENSE")
                || name.starts_with("LICENCE")
                || name.starts_with("COPYING"))
        })
    }
}

/// `outputs` of a run (DESIGN §3): the whole stdout when it is one JSON value (pretty-printed
/// JSON included), else the last line when it is a JSON object, else `{}`. (Public for the
/// shipped skills' integration tests; not part of the API.)
#[doc(hidden)]
pub fn outputs_of(stdout: &[u8]) -> serde_json::Value {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(stdout) {
        return v;
    }
    let text = String::from_utf8_lossy(stdout);
    let trimmed = text.trim_end();
    let last = trimmed.rsplit('\n').next().unwrap_or("").trim();
    match serde_json::from_str(last) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => serde_json::Value::Object(serde_json::Map::new()),
    }
}

/// `words` as an argv.
#[cfg(test)]
pub(crate) fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Writes the skill folder `root/NAME`: its SKILL.md, and `files` as (path in it, text).
#[cfg(test)]
pub(crate) fn write_test_skill(root: &std::path::Path, name: &str, files: &[(&str, &str)]) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let md = format!("---\nname: {name}\ndescription: Test {name}.\n---\nBody\n");
    std::fs::write(dir.join("SKILL.md"), md).unwrap();
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_from_last_line() {
        let m = outputs_of(b"serendipity: luck\n{\"word\":\"serendipity\",\"found\":true}\n\n");
        assert_eq!(m["word"], "serendipity");
        assert_eq!(m["found"], true);
        let empty = serde_json::json!({});
        assert_eq!(outputs_of(b"{\"a\":1}\nplain\n"), empty);
        assert_eq!(outputs_of(b"1\n[1,2]\n"), empty);
        assert_eq!(outputs_of(b""), empty);
        assert_eq!(outputs_of(b"{\"a\":1}")["a"], 1);
        // One JSON value, however it is printed.
        assert_eq!(outputs_of(b"{\n  \"a\": [\n    1\n  ]\n}\n")["a"][0], 1);
        assert_eq!(outputs_of(b"[1,2]\n"), serde_json::json!([1, 2]));
    }
}
