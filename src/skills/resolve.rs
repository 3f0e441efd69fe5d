//! From a directive's `argv[0]` to a checked command (DESIGN §2, §3).
//!
//! `argv[0]` is untrusted model output. Every step fails closed: the path is checked lexically
//! (no `..`, not absolute), then canonicalized and required to lie inside the canonical skill
//! folder, setuid/setgid files are refused, the skill's `allowed-tools` must permit Bash, and the
//! interpreter must be allowed and found on the child's PATH. The checks on the file are
//! repeated in [`ResolvedScript::command`], right before the run.

use super::{Skill, SkillSet, Tool, scripts};
use crate::command::{self, ScriptRef};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// Why a skill script cannot run. Messages are one line and say what was searched or refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// No script or tool matched; the message says what was searched.
    #[error("{0}")]
    NotFound(String),
    /// The skill part of `SKILL/…` or `SKILL:ID` names no loaded skill.
    #[error("no loaded skill is named `{name}` (loaded: {available})")]
    UnknownSkill {
        /// The skill name as written.
        name: String,
        /// The loaded skills' names, comma-separated.
        available: String,
    },
    /// The skill named was found but not loaded (its SKILL.md has a fatal problem).
    #[error(
        "skill `{name}` was skipped at load: {why} (fix that file; `skillpipe skills validate` shows every problem)"
    )]
    SkippedSkill {
        /// The skill name as written.
        name: String,
        /// `file:line: message`.
        why: String,
    },
    /// A bare `scripts/x` exists in more than one skill; the model must say which.
    #[error("`{written}` is in several skills; write one of {}", skills.iter().map(|s| format!("{s}/{rel}")).collect::<Vec<_>>().join(", "))]
    Ambiguous {
        /// `argv[0]` as written.
        written: String,
        /// The path inside each skill, `scripts/x.py`.
        rel: String,
        /// The skills that have it.
        skills: Vec<String>,
    },
    /// `SKILL:ID` matches several scripts of one skill (`x.py` and `x.sh`).
    #[error("`{written}` is ambiguous: skill `{skill}` has {}; write {}", candidates.join(", "), script_reference(skill, &candidates[0]))]
    AmbiguousId {
        /// `argv[0]` as written.
        written: String,
        /// The skill searched.
        skill: String,
        /// The matching scripts, relative to the skill folder.
        candidates: Vec<String>,
    },
    /// The path escapes the skill folder (`..`, absolute, or a symlink pointing out).
    #[error("`{written}` is outside the skill folder{} (a path in a skill is relative to its folder, with no `..`, and may not lead out of it through a link)", dir.as_ref().map(|d| format!(" {}", d.display())).unwrap_or_default())]
    OutsideSkill {
        /// `argv[0]` as written.
        written: String,
        /// `None` when refused before a skill was chosen (`scripts/../x`).
        dir: Option<PathBuf>,
    },
    /// The file has the setuid or setgid bit; never run, whatever the policy.
    #[error("`{0}` is setuid/setgid; refusing to run it")]
    SetId(String),
    /// Neither the extension nor a `#!` line says which interpreter runs the file.
    #[error(
        "`{0}` is not a script: no known extension ({known}) and no #! line that names an interpreter",
        known = super::scripts::known_extensions()
    )]
    NotAScript(String),
    /// A script's `x.schema.json` is not a usable JSON Schema (`file:line: why`).
    #[error(transparent)]
    BadSchema(#[from] super::tools::SchemaError),
    /// The script's interpreter is allowed but not on the child's `PATH`.
    #[error("interpreter not found: {0}")]
    InterpreterNotFound(String),
    /// The script's interpreter is not in the policy's `allowed_interpreters`.
    #[error(
        "interpreter `{interpreter}` is not in allowed_interpreters ({allowed}); to allow it, add it to allowed_interpreters under [script_policy] in an agent file of your own config folder and run with that agent"
    )]
    InterpreterNotAllowed {
        /// The interpreter the script needs.
        interpreter: String,
        /// The policy's `allowed_interpreters`, comma-separated (`none` when empty).
        allowed: String,
    },
    /// The skill's `allowed-tools` is set and has no `Bash` entry, so its scripts may not run.
    #[error(
        "skill `{skill}` does not allow running scripts: its allowed-tools ({allowed}) has no Bash entry"
    )]
    ToolsDisallow {
        /// The skill's name.
        skill: String,
        /// Its `allowed-tools`, space-separated.
        allowed: String,
    },
}

/// A skill script that passed resolution.
#[derive(Debug, Clone)]
pub struct ResolvedScript {
    /// The owning skill's name.
    pub skill: String,
    /// Canonical skill folder.
    pub skill_dir: PathBuf,
    /// `metadata.version` of the skill, else "".
    pub version: String,
    /// Normalized, relative to the skill folder: `scripts/x.py`.
    pub rel_path: String,
    /// Canonical path of the file (symlinks resolved, inside `skill_dir`).
    pub path: PathBuf,
    /// Interpreter name, e.g. `python3`.
    pub interpreter: String,
    /// `python -m MODULE` (a package-style script run as a module from the skill root).
    pub module: Option<String>,
    /// The tool, when `SKILL:ID` named one (`rel_path` is then its script, `tools/ID/x.py`).
    pub tool: Option<Tool>,
    /// Interpreter options written before the script (`python3 -u scripts/x.py`), passed on;
    /// only ones that take no code (see `super::invocation`).
    pub options: Vec<String>,
}

/// What to exec for a resolved script: `program args..` in `cwd`, with `env` added to the
/// policy's passthrough environment (and TMPDIR, which the executor owns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCommand {
    /// Absolute path of the interpreter.
    pub program: PathBuf,
    /// The script's path, then the directive's arguments.
    pub args: Vec<OsString>,
    /// The skill folder.
    pub cwd: PathBuf,
    /// [`super::SCRIPT_ENV`] (and `PYTHONPATH` for a Python script).
    pub env: Vec<(OsString, OsString)>,
}

impl SkillSet {
    /// Whether `argv[0]` refers to a skill script (as opposed to a system command): it starts
    /// with `scripts/`, or is `SKILL/scripts/..` or `SKILL:x` for a loaded SKILL.
    pub fn is_script_ref(&self, argv0: &str) -> bool {
        match command::script_ref(argv0) {
            Some(ScriptRef::Path { skill: None, .. }) => true,
            Some(ScriptRef::Path { skill: Some(s), .. } | ScriptRef::Id { skill: s, .. }) => {
                self.get(s).is_some()
            }
            None => false,
        }
    }

    /// Resolve `argv[0]` as written in a directive: `scripts/x.py`, `SKILL/scripts/x.py` or
    /// `SKILL:x`, read by the rules policy patterns use, so a directive resolves as the policy
    /// matched it.
    pub fn resolve(&self, argv0: &str) -> Result<ResolvedScript, ResolveError> {
        match command::script_ref(argv0) {
            Some(ScriptRef::Path {
                skill: None,
                rel_path: rel,
            }) => {
                check_lexically(argv0, rel, None)?;
                let found: Vec<&Skill> = self
                    .skills
                    .iter()
                    .filter(|s| fs::symlink_metadata(s.dir.join(rel)).is_ok())
                    .collect();
                match found.as_slice() {
                    [] => Err(ResolveError::NotFound(format!(
                        "no loaded skill has {rel} (searched: {})",
                        self.names_list()
                    ))),
                    [skill] => finish(skill, argv0, rel, None),
                    many => Err(ResolveError::Ambiguous {
                        written: argv0.to_owned(),
                        rel: normalize(rel),
                        skills: many.iter().map(|s| s.name.clone()).collect(),
                    }),
                }
            }
            Some(ScriptRef::Path {
                skill: Some(name),
                rel_path: rel,
            }) => {
                let skill = self.skill(name)?;
                check_lexically(argv0, rel, Some(&skill.dir))?;
                // Outside `scripts/`, only a script its SKILL.md names (`SKILL:DIR/x.py`):
                // assets and references are data, never run.
                if !rel.starts_with("scripts/") && skill.script(&normalize(rel)).is_none() {
                    return Err(ResolveError::NotFound(format!(
                        "`{rel}` is not a script of skill `{name}` (its scripts are in scripts/, \
                         at its root, or named in its SKILL.md; `skillpipe skills show {name}` \
                         lists them)"
                    )));
                }
                finish(skill, argv0, rel, None)
            }
            Some(ScriptRef::Id { skill: name, id }) => {
                let skill = self.skill(name)?;
                by_id(skill, argv0, id)
            }
            None => Err(ResolveError::NotFound(format!(
                "`{argv0}` does not name a skill script; write scripts/FILE, SKILL/scripts/FILE or SKILL:NAME"
            ))),
        }
    }

    /// Resolve for `skillpipe run SKILL SCRIPT`: SCRIPT may be `scripts/x.py`, `x.py` or `x`,
    /// or any name listings print for that same skill (`SKILL:x`, `SKILL/scripts/x.py`, a
    /// detected script's path `SKILL/lib/x.py`).
    pub fn resolve_in(&self, skill: &str, script: &str) -> Result<ResolvedScript, ResolveError> {
        let name = skill;
        let skill = self.skill(name)?;
        let script = script
            .strip_prefix(name)
            .and_then(|s| {
                s.strip_prefix(':').or_else(|| {
                    // `SKILL/dir/x`: the listing's path form; a folder of the skill named
                    // like the skill itself keeps its meaning.
                    s.strip_prefix('/')
                        .filter(|r| r.contains('/'))
                        .filter(|_| fs::symlink_metadata(skill.dir.join(script)).is_err())
                })
            })
            .filter(|s| !s.is_empty())
            .unwrap_or(script);
        if script.starts_with("scripts/")
            || (script.contains('/') && skill.script(script).is_some())
        {
            return finish(skill, script, script, None);
        }
        if Path::new(script).is_absolute() || script.split('/').any(|c| c == "..") {
            return Err(ResolveError::OutsideSkill {
                written: script.to_owned(),
                dir: Some(skill.dir.clone()),
            });
        }
        if let Some(root) = root_file(skill, script) {
            return finish(skill, script, &root.rel_path, None);
        }
        let rel = format!("scripts/{script}");
        if fs::symlink_metadata(skill.dir.join(&rel)).is_ok() {
            return finish(skill, script, &rel, None);
        }
        by_id(skill, script, script)
    }

    pub(crate) fn skill(&self, name: &str) -> Result<&Skill, ResolveError> {
        self.get(name).ok_or_else(|| match self.skipped(name) {
            Some(why) => ResolveError::SkippedSkill {
                name: name.to_owned(),
                why: why.to_owned(),
            },
            None => ResolveError::UnknownSkill {
                name: name.to_owned(),
                available: self.names_list(),
            },
        })
    }
}

/// The script at the skill root whose file name is `id` written with its extension
/// (`build.sh`): named by its full file name, it is that file, even beside a `scripts/build.sh`
/// (which the stem `build` and the path `scripts/build.sh` name).
pub(super) fn root_file<'s>(skill: &'s Skill, id: &str) -> Option<&'s scripts::Script> {
    let has_extension = id.rfind('.').is_some_and(|i| i > 0 && i + 1 < id.len());
    if !has_extension || id.contains('/') {
        return None;
    }
    skill.script(id)
}

/// `SKILL:x` / `run SKILL x`: the enabled tool `x`, else the root script whose file name is `x`
/// (`x.sh`, [`root_file`]), else a detected script whose file stem or name is `x` (under
/// `scripts/` first, then at the skill root).
fn by_id(skill: &Skill, written: &str, id: &str) -> Result<ResolvedScript, ResolveError> {
    if let Some(tool) = skill.tool(id) {
        let mut resolved = finish(skill, written, &tool.script, tool.runtime.as_deref())?;
        resolved.tool = Some(tool.clone());
        return Ok(resolved);
    }
    if let Some(root) = root_file(skill, id) {
        return finish(skill, written, &root.rel_path, None);
    }
    let named = |s: &&scripts::Script| s.id == id || s.rel_path.rsplit('/').next() == Some(id);
    let mut matches: Vec<&scripts::Script> = skill
        .scripts()
        .iter()
        .filter(|s| s.rel_path.starts_with("scripts/"))
        .filter(named)
        .collect();
    if matches.is_empty() {
        // At the root; a script the SKILL.md names in another folder only by `SKILL:DIR/FILE`.
        matches = skill
            .scripts()
            .iter()
            .filter(|s| !s.rel_path.contains('/'))
            .filter(named)
            .collect();
    }
    match matches.as_slice() {
        [] if let Some(t) = skill.all_tools.iter().find(|t| t.id == id) => {
            Err(ResolveError::NotFound(format!(
                "tool `{id}` of skill `{}` is disabled ({} in its tool.yaml)",
                skill.name,
                t.disabled_by.unwrap_or("enabled: false")
            )))
        }
        // The owner may be an agent's folder (its tools join as a skill of its name): the
        // folder is named, which `skills validate` takes either way.
        [] if let Some(why) = skill.skipped_tool(id) => Err(ResolveError::NotFound(format!(
            "tool `{id}` of `{}` exists but was skipped at load: {why} (fix that file; \
             `skillpipe skills validate {}` shows every problem)",
            skill.name,
            shell_words::quote(&skill.dir.to_string_lossy())
        ))),
        [] => {
            let known: Vec<String> = skill
                .tools()
                .map(|t| t.id.clone())
                .chain(
                    skill
                        .scripts()
                        .iter()
                        .map(|s| script_reference(&skill.name, &s.rel_path)),
                )
                .collect();
            Err(ResolveError::NotFound(format!(
                "skill `{}` has no tool or script `{id}` (it has: {})",
                skill.name,
                super::or_none(&known)
            )))
        }
        [one] => finish(skill, written, &one.rel_path, None),
        many => Err(ResolveError::AmbiguousId {
            written: written.to_owned(),
            skill: skill.name.clone(),
            candidates: many.iter().map(|s| s.rel_path.clone()).collect(),
        }),
    }
}

/// Refuse `..`, absolute and root components before touching the file system.
pub(super) fn check_lexically(
    written: &str,
    rel: &str,
    dir: Option<&Path>,
) -> Result<(), ResolveError> {
    let bad = Path::new(rel)
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    if bad || rel.contains('\0') {
        return Err(ResolveError::OutsideSkill {
            written: written.to_owned(),
            dir: dir.map(Path::to_path_buf),
        });
    }
    Ok(())
}

/// `scripts//a/./x.py` → `scripts/a/x.py`.
fn normalize(rel: &str) -> String {
    Path::new(rel)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The checks on the file itself, then the interpreter (`runtime` when a tool names one).
fn finish(
    skill: &Skill,
    written: &str,
    rel: &str,
    runtime: Option<&str>,
) -> Result<ResolvedScript, ResolveError> {
    check_lexically(written, rel, Some(&skill.dir))?;
    if !skill.allows_scripts() {
        return Err(ResolveError::ToolsDisallow {
            skill: skill.name.clone(),
            allowed: skill.allowed_tools.as_deref().unwrap_or_default().join(" "),
        });
    }
    let rel = normalize(rel);
    let path = check_file(&skill.dir, &skill.dir.join(&rel), written)?;
    let name = rel.rsplit('/').next().unwrap_or(&rel);
    let interpreter = runtime
        .map(str::to_owned)
        .or_else(|| scripts::interpreter_for(name, &path, &skill.ts_interpreter))
        .or_else(|| {
            // A link without extension to a file with one (`scripts/run` → `impl.py`).
            let target = path.file_name()?.to_str()?;
            scripts::interpreter_by_extension(target, &skill.ts_interpreter).map(str::to_owned)
        })
        .ok_or_else(|| ResolveError::NotAScript(written.to_owned()))?;
    // A script with `x.schema.json` beside it takes JSON on stdin, like a tool.
    let tool = match skill.script(&rel) {
        Some(script) if runtime.is_none() => super::tools::script_tool(script)?,
        _ => None,
    };
    Ok(ResolvedScript {
        skill: skill.name.clone(),
        skill_dir: skill.dir.clone(),
        version: skill.version.clone(),
        rel_path: rel,
        path,
        interpreter,
        module: None,
        tool,
        options: Vec::new(),
    })
}

/// Canonicalize `path`, require it inside `dir` (canonical), a regular file, not setuid/setgid.
pub(super) fn check_file(dir: &Path, path: &Path, written: &str) -> Result<PathBuf, ResolveError> {
    let canonical = fs::canonicalize(path).map_err(|_| {
        let what = match fs::symlink_metadata(path) {
            Ok(_) => "broken symbolic link",
            Err(_) => "no such file",
        };
        ResolveError::NotFound(format!("{written}: {what} in {}", dir.display()))
    })?;
    if !canonical.starts_with(dir) {
        return Err(ResolveError::OutsideSkill {
            written: written.to_owned(),
            dir: Some(dir.to_path_buf()),
        });
    }
    let meta =
        fs::metadata(&canonical).map_err(|e| ResolveError::NotFound(format!("{written}: {e}")))?;
    if !meta.is_file() {
        return Err(ResolveError::NotFound(format!(
            "{written}: not a regular file in {}",
            dir.display()
        )));
    }
    // S_ISUID | S_ISGID (spelled out: libc's mode_t width differs between Linux and macOS).
    if meta.permissions().mode() & 0o6000 != 0 {
        return Err(ResolveError::SetId(written.to_owned()));
    }
    Ok(canonical)
}

/// How a directive names the script `rel_path` of `skill` so that it resolves to that file:
/// `SKILL/scripts/x.py` under `scripts/`, `SKILL:x.py` at the skill root (a root script has no
/// path form; its file name, not its stem, keeps `x.py` apart from an `x.sh` beside it).
pub fn script_reference(skill: &str, rel_path: &str) -> String {
    if rel_path.starts_with("scripts/") {
        format!("{skill}/{rel_path}")
    } else {
        // At the root (`SKILL:x.py`) or in a folder its SKILL.md names (`SKILL:DIR/x.py`).
        format!("{skill}:{rel_path}")
    }
}

/// How a one-skill listing (`skills show`) names a script: its path (`scripts/x.py`), or for
/// one at the skill root, which has no path form, [`script_reference`]'s `SKILL:x.py`.
pub fn listed_name(skill: &str, rel_path: &str) -> String {
    match rel_path.contains('/') {
        true => rel_path.to_owned(),
        false => script_reference(skill, rel_path),
    }
}

impl SkillSet {
    /// How a listing of the loaded skills names a script so that the name resolves to it:
    /// [`listed_name`], qualified (`SKILL/scripts/x.py`) when another loaded skill has a
    /// script at the same path (the bare path would be ambiguous).
    pub fn listed_name(&self, skill: &str, rel_path: &str) -> String {
        let shared = self
            .iter()
            .any(|s| s.name != skill && s.script(rel_path).is_some());
        match shared {
            true => script_reference(skill, rel_path),
            false => listed_name(skill, rel_path),
        }
    }
}

impl ResolvedScript {
    /// What policy patterns see: a tool folder's script is the tool
    /// ([`crate::command::Target::Tool`]), any other script its path in the skill.
    pub fn policy_target<'a>(&'a self, args: &'a [String]) -> crate::command::Target<'a> {
        match &self.tool {
            Some(t) if self.rel_path.starts_with("tools/") => crate::command::Target::Tool {
                skill: &self.skill,
                id: &t.id,
                args,
            },
            _ => crate::command::Target::Script {
                skill: &self.skill,
                rel_path: &self.rel_path,
                args,
            },
        }
    }

    /// Re-check the file, check the interpreter against `allowed_interpreters` and find it on
    /// `path_var` (the PATH the child will get; relative entries are ignored), and build what
    /// to exec: `interpreter script args..` in the skill folder. `python_path` is the
    /// `PYTHONPATH` the child would inherit (passed through `env_passthrough`): a Python
    /// script gets the skill folder first, then those entries.
    pub fn command(
        &self,
        args: &[String],
        allowed_interpreters: &[String],
        path_var: &OsStr,
        python_path: Option<&OsStr>,
    ) -> Result<ScriptCommand, ResolveError> {
        let path = check_file(&self.skill_dir, &self.path, &self.rel_path)?;
        if !allowed_interpreters.contains(&self.interpreter) {
            return Err(ResolveError::InterpreterNotAllowed {
                interpreter: self.interpreter.clone(),
                allowed: super::or_none(allowed_interpreters),
            });
        }
        let program = find_on_path(&self.interpreter, path_var)
            .ok_or_else(|| ResolveError::InterpreterNotFound(self.interpreter.clone()))?;
        let mut argv = Vec::with_capacity(args.len() + 2);
        argv.extend(self.options.iter().map(OsString::from));
        match &self.module {
            Some(module) => argv.extend(["-m".into(), OsString::from(module)]),
            None => argv.push(path.into_os_string()),
        }
        argv.extend(args.iter().map(OsString::from));
        let values = [
            OsString::from(&self.skill),
            self.skill_dir.clone().into_os_string(),
            OsString::from(&self.version),
            OsString::from(env!("CARGO_PKG_VERSION")),
        ];
        let names = super::SCRIPT_ENV.map(OsString::from);
        let mut env: Vec<(OsString, OsString)> = names.into_iter().zip(values).collect();
        if self.interpreter.starts_with("python") {
            // Package-style skills import `scripts.utils` from the skill root, whatever the cwd;
            // the user's own entries (a vendored library) still count, after it.
            let mut value = self.skill_dir.clone().into_os_string();
            if let Some(theirs) = python_path.filter(|p| !p.is_empty()) {
                value.push(":");
                value.push(theirs);
            }
            env.push(("PYTHONPATH".into(), value));
        }
        Ok(ScriptCommand {
            program,
            args: argv,
            cwd: self.skill_dir.clone(),
            env,
        })
    }
}

/// The first executable regular file named `name` in the absolute directories of `path_var`.
pub fn find_on_path(name: &str, path_var: &OsStr) -> Option<PathBuf> {
    use crate::sandbox::view;
    let plain = !name.is_empty() && !name.contains('/');
    plain.then(|| view::on_path(name, &view::path_entries(path_var)))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        // Each form as `path SKILL REL` or `id SKILL ID` (`-`: no skill named).
        let read = |w| match command::script_ref(w) {
            Some(ScriptRef::Path { skill, rel_path }) => {
                format!("path {} {rel_path}", skill.unwrap_or("-"))
            }
            Some(ScriptRef::Id { skill, id }) => format!("id {skill} {id}"),
            None => "none".into(),
        };
        for (written, want) in [
            ("scripts/x.py", "path - scripts/x.py"),
            ("say/scripts/say.sh", "path say scripts/say.sh"),
            ("say:say", "id say say"),
            ("/usr/bin/say", "none"),
            ("./scripts/x", "none"),
            ("../scripts/x", "none"),
            ("say", "none"),
            ("a/b/scripts/x", "none"),
            ("say:a/b", "path say a/b"),
            // A skill whose name breaks the spec (it still loads) is addressed like any other.
            ("My_Tools:hi", "id My_Tools hi"),
            // The two forms mixed, as models write them: the path form.
            ("say:scripts/say.sh", "path say scripts/say.sh"),
        ] {
            assert_eq!(read(written), want, "{written}");
        }
    }

    #[test]
    fn lexical_check() {
        assert_eq!(
            check_lexically("scripts/../../x", "scripts/../../x", None)
                .unwrap_err()
                .to_string(),
            "`scripts/../../x` is outside the skill folder (a path in a skill is relative to its \
             folder, with no `..`, and may not lead out of it through a link)"
        );
        assert!(check_lexically("w", "/etc/passwd", None).is_err());
        assert!(check_lexically("w", "scripts/./a/x.py", None).is_ok());
        assert_eq!(normalize("scripts//a/./x.py"), "scripts/a/x.py");
    }

    #[test]
    fn run_accepts_every_name_its_listing_prints() {
        let root = tempfile::tempdir().unwrap();
        let files = [
            ("scripts/office/unpack.py", "print(1)\n"),
            ("scripts/pack.py", "print(2)\n"),
            ("lib/helper.sh", "echo 3\n"),
        ];
        crate::skills::write_test_skill(root.path(), "docx", &files);
        let set = SkillSet::load(&[root.path().to_path_buf()]);
        let skill = set.get("docx").unwrap();
        let mut names = Vec::new();
        for s in skill.scripts() {
            names.push((script_reference("docx", &s.rel_path), s.rel_path.clone()));
            names.push((set.listed_name("docx", &s.rel_path), s.rel_path.clone()));
        }
        names.extend(
            [
                ("docx:unpack", "scripts/office/unpack.py"),
                ("unpack.py", "scripts/office/unpack.py"),
                ("pack", "scripts/pack.py"),
            ]
            .map(|(a, b)| (a.to_owned(), b.to_owned())),
        );
        assert!(
            names
                .iter()
                .any(|(n, _)| n == "docx/scripts/office/unpack.py")
        );
        for (written, want) in names {
            match set.resolve_in("docx", &written) {
                Ok(r) => assert_eq!(r.rel_path, want, "{written}"),
                Err(e) => panic!("{written}: {e}"),
            }
        }
        // Still confined to the skill.
        assert!(
            set.resolve_in("docx", "docx/../docx/scripts/pack.py")
                .is_err()
        );
        assert!(set.resolve_in("docx", "docx/nothing/x.py").is_err());
    }

    #[test]
    fn path_lookup_skips_relative_entries() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tool");
        fs::write(&exe, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let noexec = dir.path().join("plain");
        fs::write(&noexec, "").unwrap();
        let path = std::env::join_paths([Path::new("relative"), dir.path()]).unwrap();
        assert_eq!(find_on_path("tool", &path), Some(exe));
        assert_eq!(find_on_path("plain", &path), None);
        assert_eq!(find_on_path("../tool", &path), None);
    }
}
