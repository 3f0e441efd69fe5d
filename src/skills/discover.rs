//! Loading skills from the search path (DESIGN §4), leniently: a skill with a fixable problem
//! loads with a warning; one that cannot be understood is skipped with a warning. Nothing here
//! fails as a whole, so one broken skill never hides the others.

use super::frontmatter;
use super::rules::{self, Level};
use super::{Skill, scripts};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Settings that change how skills are read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Interpreter for `.ts` scripts without a shebang (DESIGN §2: "`.ts` per config").
    pub ts_interpreter: String,
    /// How a duplicate skill's warning ends: what puts its folder (shell-quoted) first. The
    /// library names the search path; the `skillpipe` binary its `--skills-dir` flag.
    pub(crate) put_first: fn(&str) -> String,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            ts_interpreter: "node".into(),
            put_first: |dir| format!("name its folder first in the skill search path: {dir}"),
        }
    }
}

impl LoadOptions {
    /// Options from the `[skills]` table of `$XDG_CONFIG_HOME/skillpipe/config.toml`
    /// (`ts_interpreter = "deno"`); defaults when there is no such file or table.
    pub(crate) fn from_config_file() -> Result<LoadOptions, crate::config::ConfigError> {
        Ok(crate::config::ConfigFile::global()?
            .map(LoadOptions::from_config)
            .unwrap_or_default())
    }

    /// The options a parsed config file asks for.
    pub(crate) fn from_config(config: &crate::config::ConfigFile) -> LoadOptions {
        let mut opts = LoadOptions::default();
        if let Some(ts) = &config.skills.ts_interpreter {
            opts.ts_interpreter = ts.trim().to_string();
        }
        opts
    }
}

/// Skills asked for by name that were not found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown skill{} `{}`; available: {available}", if names.len() == 1 { "" } else { "s" }, names.join("`, `"))]
pub struct UnknownSkills {
    /// The names not found.
    pub names: Vec<String>,
    /// The names there are, comma-separated.
    pub available: String,
}

/// A skill added under a name another skill already has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: the name `{name}` is already a skill's ({}); rename one of the two",
    file.display(),
    existing.display()
)]
pub struct DuplicateSkill {
    /// The file that declares the new skill.
    pub file: PathBuf,
    /// The name both have.
    pub name: String,
    /// The folder of the skill that has it already.
    pub existing: PathBuf,
}

/// Why a skill folder was skipped. Each message is `file:line: why; skill skipped`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillSkipped {
    /// `SKILL.md` cannot be read (permissions, not UTF-8), its frontmatter is not a `---`
    /// fenced YAML mapping, or a key breaks a rule the skill cannot load without (no `name`).
    #[error("{}:{line}: {message}; skill skipped", file.display())]
    At {
        file: PathBuf,
        line: usize,
        /// What is wrong there, and how to fix it.
        message: String,
    },
    /// A project's skill folder that is not the user's alone: another user may have put the
    /// skill (its scripts) there, as a project folder open to them is refused as a whole.
    #[error(
        "{}: a file or folder {why}: another user may have put this skill's instructions or \
         scripts there ({}); skill skipped",
        file.display(),
        if why.contains("owns") { "make it yours if it is" } else { "`chmod o-w` it if it is yours" }
    )]
    NotUsersAlone {
        /// The part of the skill open to others: its folder, `SKILL.md`, `scripts/` or a
        /// script.
        file: PathBuf,
        /// How the folder is open to others.
        why: &'static str,
    },
}

/// The first part of a project's skill another user could have written — its folder, its
/// `SKILL.md`, its `scripts/` folder or a file directly in it — with how.
fn open_part(skill: &Path) -> Option<(PathBuf, &'static str)> {
    let scripts = skill.join("scripts");
    let in_scripts = fs::read_dir(&scripts).into_iter().flatten().flatten();
    [skill.to_path_buf(), skill.join("SKILL.md"), scripts.clone()]
        .into_iter()
        .chain(in_scripts.map(|e| e.path()))
        .filter(|p| p.exists())
        .find_map(|p| crate::paths::not_users_alone(&p).map(|why| (p, why)))
}

/// What commands that use skills say about differing duplicates: the warning itself for one,
/// one line naming them all for several (`skills list` gives each warning).
fn clash_summary(clashes: Vec<(String, String)>) -> Option<String> {
    match clashes.len() {
        0 => None,
        1 => clashes.into_iter().next().map(|(_, warning)| warning),
        n => {
            let mut names: Vec<String> = clashes.into_iter().map(|(name, _)| name).collect();
            names.dedup();
            Some(format!(
                "{n} skills are also found later in the skill search path with other contents, \
                 and those copies are ignored: {} (`skillpipe skills list` says where each is)",
                names.join(", ")
            ))
        }
    }
}

/// Why a folder's tools cannot join the skills (see [`tool_owner`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolOwnerError {
    /// The owner's name cannot be the `NAME` of `NAME:ID`.
    #[error(
        "{}: its tools need a name of a-z, 0-9 and `-` to be called as NAME:ID, not `{name}`; rename it",
        tools_dir.display()
    )]
    BadName { tools_dir: PathBuf, name: String },
    /// The folder cannot be resolved to its canonical path.
    #[error("{}: cannot resolve the folder: {reason}", dir.display())]
    Unresolvable { dir: PathBuf, reason: String },
}

/// The skills found on a search path, in search-path order, unique by name.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    pub(super) skills: Vec<Skill>,
    warnings: Vec<String>,
    /// `(skill name, warning)` of each duplicate that differs from the skill loaded (not a
    /// tool's own shipped copy losing to an installed skill).
    clashes: Vec<(String, String)>,
    /// `(folder name, file:line: why)` of each skill that could not be loaded.
    skipped: Vec<(String, String)>,
}

impl SkillSet {
    /// Load every skill under `dirs` with default options. See [`SkillSet::load_with`].
    pub fn load(dirs: &[PathBuf]) -> SkillSet {
        Self::load_with(dirs, &LoadOptions::default())
    }

    /// Load every skill under `dirs`: each entry is either a folder of skill folders or itself a
    /// skill folder (has SKILL.md). Missing directories are ignored. The first skill of a name
    /// wins; later ones are reported. The same folder reached twice is loaded once, silently.
    pub fn load_with(dirs: &[PathBuf], opts: &LoadOptions) -> SkillSet {
        let mut set = SkillSet::default();
        let mut seen_dirs: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            // A trusted project's folder: each skill in it must be the user's alone too.
            let project = crate::paths::is_project_skill_dir(dir);
            for candidate in skill_folders(dir) {
                let Ok(canonical) = fs::canonicalize(&candidate) else {
                    continue;
                };
                if seen_dirs.contains(&canonical) {
                    continue;
                }
                seen_dirs.push(canonical.clone());
                let loaded = match project.then(|| open_part(&candidate)).flatten() {
                    Some((file, why)) => Err(SkillSkipped::NotUsersAlone { file, why }),
                    None => load_skill(&candidate, canonical.clone(), opts),
                };
                match loaded {
                    Ok(skill) => {
                        if let Some(i) = set.skills.iter().position(|s| s.name == skill.name) {
                            // A copy of the skill loaded (the same collection in two
                            // folders) is that skill: nothing to say.
                            if super::copies::identical(&set.skills[i].dir, &skill.dir) {
                                continue;
                            }
                            // A skill folder is a search-path entry of its own: put first,
                            // it is the one loaded (directives name skills, not folders).
                            let warning = format!(
                                "{}:1: duplicate skill `{}` ignored; already loaded from {}; to \
                                 use this one, {}",
                                skill.source.display(),
                                skill.name,
                                set.skills[i].dir.display(),
                                (opts.put_first)(&shell_words::quote(&skill.dir.to_string_lossy()))
                            );
                            // A tool's own shipped copy losing to an installed skill of the
                            // same name is expected (and lasting): `skills list` says it,
                            // every run need not.
                            if !is_shipped_folder(dir) {
                                set.clashes.push((skill.name.clone(), warning.clone()));
                            }
                            set.warnings.push(warning);
                            continue;
                        }
                        set.warnings.extend(skill.warnings.iter().cloned());
                        set.skills.push(skill);
                    }
                    Err(skipped) => {
                        let warning = skipped.to_string();
                        let folder = folder_name(&canonical, &candidate);
                        set.skipped.push((folder, warning.clone()));
                        set.warnings.push(warning);
                    }
                }
            }
        }
        set
    }

    /// How many skill folders were skipped (a SKILL.md that cannot be understood).
    pub fn skipped_count(&self) -> usize {
        self.skipped.len()
    }

    /// Why the skill in folder `name` was skipped (`file:line: message`), if it was.
    pub fn skipped(&self, name: &str) -> Option<&str> {
        self.skipped
            .iter()
            .find(|(folder, _)| folder == name)
            .map(|(_, why)| why.as_str())
    }

    /// Everything worth telling the user, `file:line: message`: skipped skills, duplicates and
    /// the loaded skills' own warnings.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The warnings that say which skill or tool is used (a duplicate ignored, a skill or tool
    /// skipped), without the loaded skills' spec warnings: what a command that runs skills shows
    /// each time. With `wanted` (an agent's or `--skill` names) only about those skills: the
    /// other skills are not in the prompt, so a clash among them is `skills list`'s to say.
    pub fn load_problems(&self, wanted: &[String]) -> Vec<String> {
        let concerns = |name: &str| wanted.is_empty() || wanted.iter().any(|w| w == name);
        // A skipped skill is known by its folder, which may not be its name: while a skill
        // named is missing, every skipped one may be it.
        let missing = wanted
            .iter()
            .any(|w| !self.skills.iter().any(|s| s.name == *w));
        let skipped = self
            .skipped
            .iter()
            .filter(|(folder, _)| missing || concerns(folder))
            .map(|(_, why)| why.clone());
        let clashes: Vec<(String, String)> = self
            .clashes
            .iter()
            .filter(|(name, _)| concerns(name))
            .cloned()
            .collect();
        let skipped_tools = self
            .skills
            .iter()
            .filter(|s| concerns(&s.name))
            .flat_map(|s| &s.warnings)
            .filter(|w| w.ends_with(TOOL_SKIPPED))
            .cloned();
        skipped
            .chain(clash_summary(clashes))
            .chain(skipped_tools)
            .collect()
    }

    /// How many loaded skills (of `among`, when it names some) have warnings other than
    /// skipped tools (spec warnings).
    pub fn linted(&self, among: &[String]) -> usize {
        self.skills
            .iter()
            .filter(|s| among.is_empty() || among.contains(&s.name))
            .filter(|s| s.warnings.iter().any(|w| !w.ends_with(TOOL_SKIPPED)))
            .count()
    }

    /// The skills, in search-path order.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter()
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// How many skills there are.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Skill names in order, comma-separated, for messages ("none" when empty).
    pub fn names_list(&self) -> String {
        /// Names listed before the rest are counted: with a hundred skills installed the list
        /// buried the reason after it.
        const LISTED: usize = 12;
        let names: Vec<String> = self.skills.iter().map(|s| s.name.clone()).collect();
        match names.len() > LISTED {
            true => format!(
                "{}, … and {} more",
                names[..LISTED].join(", "),
                names.len() - LISTED
            ),
            false => super::or_none(&names),
        }
    }

    /// Adds a skill (e.g. an agent's tools, see `tool_owner`); a name already loaded is an error.
    pub fn add(&mut self, skill: Skill) -> Result<(), DuplicateSkill> {
        if let Some(existing) = self.get(&skill.name) {
            return Err(DuplicateSkill {
                file: skill.source.clone(),
                name: skill.name.clone(),
                existing: existing.dir.clone(),
            });
        }
        self.warnings.extend(skill.warnings.iter().cloned());
        self.skills.push(skill);
        Ok(())
    }

    /// Drops the named skills (those a caller must not use); other names are ignored.
    pub(crate) fn remove_named(&mut self, names: &[&str]) {
        self.skills.retain(|s| !names.contains(&s.name.as_str()));
    }

    /// Keep only the named skills (`--skill`), in load order. An unknown name is an error that
    /// names it and lists what is available; nothing is removed then.
    pub fn retain_named(&mut self, names: &[String]) -> Result<(), UnknownSkills> {
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| self.get(n).is_none())
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(UnknownSkills {
                names: unknown,
                available: self.names_list(),
            });
        }
        self.skills.retain(|s| names.contains(&s.name));
        Ok(())
    }
}

/// Whether `dir` is where a tool keeps the skills it ships itself (Codex's `.system`), which
/// an installed skill of the same name overrides.
fn is_shipped_folder(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == ".system")
}

/// The skill folders `dir` stands for: itself if it has SKILL.md, else its subfolders that
/// have one (sorted by name, hidden ones skipped).
pub(crate) fn skill_folders(dir: &Path) -> Vec<PathBuf> {
    if dir.join("SKILL.md").is_file() {
        return vec![dir.to_path_buf()];
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    out.sort();
    out
}

/// What to say about `dir`, named by the user, when it holds no skill folder: where skills are
/// one level down (a collection that groups its skills, as in `skills/.curated/NAME/SKILL.md`,
/// hidden subfolders included), if they are.
pub(crate) fn no_skills_hint(dir: &Path) -> String {
    let mut deeper: Vec<(String, usize)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let inner = fs::read_dir(e.path()).ok()?;
            let n = inner
                .flatten()
                .filter(|c| c.path().join("SKILL.md").is_file())
                .count();
            (n > 0).then(|| (e.file_name().to_string_lossy().into_owned(), n))
        })
        .collect();
    deeper.sort();
    let Some((first, _)) = deeper.first() else {
        return "a skill is a folder with a SKILL.md; none is in it".into();
    };
    let listed: Vec<String> = deeper
        .iter()
        .map(|(name, n)| format!("{name} ({n})"))
        .collect();
    format!(
        "its skills are one level down, in {}: pass --skills-dir {} (once for each)",
        listed.join(", "),
        dir.join(first).display()
    )
}

/// How a tool-folder problem's warning ends (the tool is left out, the skill loads).
const TOOL_SKIPPED: &str = "; tool skipped";

impl Skill {
    /// Why the tool folder `tools/ID/` of this skill was left out at load, as its first problem
    /// (`tools/ID/FILE:LINE: what`), or `None` when no folder of that name was skipped.
    pub(crate) fn skipped_tool(&self, id: &str) -> Option<String> {
        let folder = format!("/{}/{id}/", super::TOOLS_DIR);
        self.warnings.iter().find_map(|w| {
            let problem = w.strip_suffix(TOOL_SKIPPED)?;
            let at = problem.find(&folder)?;
            Some(problem[at + 1..].to_owned())
        })
    }
}

/// Load one skill leniently. `Err` says why it was skipped; its message is the warning.
pub fn load_skill(
    found_at: &Path,
    canonical: PathBuf,
    opts: &LoadOptions,
) -> Result<Skill, SkillSkipped> {
    let source = found_at.join("SKILL.md");
    let shown = source.display();
    let skipped = |line, message| SkillSkipped::At {
        file: source.clone(),
        line,
        message,
    };
    let (parsed, fm, issues) = checked(found_at, &canonical).map_err(|(l, m)| skipped(l, m))?;
    if let Some(fatal) = issues.iter().find(|i| i.level == Level::Fatal) {
        return Err(skipped(fatal.line, fatal.message.clone()));
    }
    let mut warnings: Vec<String> = issues
        .iter()
        .filter(|i| i.level == Level::Warn)
        .map(|i| format!("{shown}:{}: {}", i.line, i.message))
        .collect();
    let (all_tools, tool_problems) = super::tools::load_tools(found_at);
    warnings.extend(
        tool_problems
            .into_iter()
            .map(|p| format!("{p}{TOOL_SKIPPED}")),
    );
    Ok(Skill {
        name: fm.name,
        description: fm.description,
        version: fm.metadata.get("version").cloned().unwrap_or_default(),
        dir: canonical,
        source,
        body: parsed.body,
        license: fm.license,
        compatibility: fm.compatibility,
        metadata: fm.metadata,
        allowed_tools: fm.allowed_tools,
        warnings,
        all_tools,
        ts_interpreter: opts.ts_interpreter.clone(),
        scripts: OnceLock::new(),
    })
}

/// The SKILL.md of the skill folder found at `found_at`, split, and its frontmatter checked
/// (every issue, of each level); `Err((line, message))` when it cannot be read or split.
pub(super) fn checked(
    found_at: &Path,
    canonical: &Path,
) -> Result<(frontmatter::Parsed, rules::Frontmatter, Vec<rules::Issue>), (usize, String)> {
    let text = fs::read_to_string(found_at.join("SKILL.md"))
        .map_err(|e| (1, format!("cannot read: {e}")))?;
    let parsed = frontmatter::parse(&text).map_err(|e| (e.line, e.message))?;
    let (fm, issues) = rules::check(&parsed.entries, &folder_name(canonical, found_at));
    Ok((parsed, fm, issues))
}

/// A folder that is not a skill but holds tools in the same layout (`DIR/tools/ID/`), such as
/// an agent's folder, as a skill named `name` that has only those tools (so `NAME:ID` runs one).
/// `Ok(None)` when the folder has no `tools/`; `Err` when `name` cannot name a skill.
pub fn tool_owner(
    name: &str,
    description: &str,
    dir: &Path,
) -> Result<Option<Skill>, ToolOwnerError> {
    let tools_dir = dir.join(super::TOOLS_DIR);
    if !tools_dir.is_dir() {
        return Ok(None);
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(ToolOwnerError::BadName {
            tools_dir,
            name: name.to_owned(),
        });
    }
    let canonical = fs::canonicalize(dir).map_err(|e| ToolOwnerError::Unresolvable {
        dir: dir.to_owned(),
        reason: e.to_string(),
    })?;
    let (all_tools, problems) = super::tools::load_tools(dir);
    Ok(Some(Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        dir: canonical,
        source: tools_dir,
        warnings: problems
            .into_iter()
            .map(|p| format!("{p}{TOOL_SKIPPED}"))
            .collect(),
        all_tools,
        ts_interpreter: LoadOptions::default().ts_interpreter,
        // Tools only: the folder's other files are not scripts.
        scripts: OnceLock::from(Vec::new()),
        ..Skill::default()
    }))
}

/// The folder name the spec compares `name` with: the name the folder was found under
/// (a symlinked skill keeps the link's name), else the canonical one.
fn folder_name(canonical: &Path, found_at: &Path) -> String {
    found_at
        .file_name()
        .filter(|n| *n != "." && *n != "..")
        .or_else(|| canonical.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Detect scripts of a folder without loading the skill (benchmarks, tools): those in
/// `scripts/` and at the root (the ones its SKILL.md names elsewhere need the loaded skill).
pub fn detect_scripts(skill_dir: &Path, opts: &LoadOptions) -> Vec<scripts::Script> {
    scripts::detect(skill_dir, &opts.ts_interpreter, "")
}

#[cfg(test)]
mod tests {
    use super::LoadOptions;
    use crate::config::ConfigFile;

    fn options(text: &str) -> LoadOptions {
        LoadOptions::from_config(&ConfigFile::parse(text, "/c.toml".as_ref()).unwrap())
    }

    #[test]
    fn tool_owner_errors_are_typed() {
        let dir = tempfile::tempdir().unwrap();
        // No tools/: nothing to add, whatever the name.
        assert_eq!(
            super::tool_owner("Bad Name", "", dir.path())
                .unwrap()
                .map(|s| s.name),
            None
        );
        std::fs::create_dir(dir.path().join("tools")).unwrap();
        let err = super::tool_owner("Bad Name", "", dir.path()).unwrap_err();
        assert_eq!(
            err,
            super::ToolOwnerError::BadName {
                tools_dir: dir.path().join("tools"),
                name: "Bad Name".into()
            }
        );
        assert!(
            err.to_string().contains("not `Bad Name`; rename it"),
            "{err}"
        );
        // Positive control: a good name makes a skill of the folder.
        let owner = super::tool_owner("good-name", "d", dir.path())
            .unwrap()
            .unwrap();
        assert_eq!(owner.name, "good-name");
    }

    #[test]
    fn a_skipped_skill_says_why_with_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("s");
        std::fs::create_dir(&skill).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: s\n---\nbody\n").unwrap();
        let canonical = std::fs::canonicalize(&skill).unwrap();
        let err =
            super::load_skill(&skill, canonical.clone(), &LoadOptions::default()).unwrap_err();
        assert!(
            matches!(&err, super::SkillSkipped::At { file, .. } if *file == skill.join("SKILL.md")),
            "{err:?}"
        );
        assert!(err.to_string().ends_with("; skill skipped"), "{err}");
        // Positive control: with a description it loads.
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: s\ndescription: d\n---\nbody\n",
        )
        .unwrap();
        let loaded = super::load_skill(&skill, canonical, &LoadOptions::default()).unwrap();
        assert_eq!(loaded.name, "s");
    }

    #[test]
    fn ts_interpreter_comes_from_the_skills_table() {
        assert_eq!(options("").ts_interpreter, "node");
        assert_eq!(
            options("[skills]\nts_interpreter = \"deno\"\n").ts_interpreter,
            "deno"
        );
    }
}
