//! Script paths as SKILL.md bodies and models write them, mapped to the reference a directive
//! resolves (DESIGN §2):
//! - a placeholder for the skill folder in front of the path — `<path-to-skill>/scripts/x.py`
//!   (OpenAI's gh-fix-ci), `{baseDir}/scripts/x.py`, `'$SKILL_DIR/scripts/x.py'` — is that
//!   path of a loaded skill: `scripts/x.py`, or `NAME/scripts/x.py` for `<NAME-path>`;
//! - the folder claude.ai mounts a skill at — `/mnt/skills/user/NAME/…`, `/mnt/skills/public/NAME/…`
//!   (any collection) — is that skill's folder when NAME is loaded: `NAME/…`;
//! - a script at a skill's root written by its file name (`rootscript.sh`, `data/rootscript.sh`)
//!   is `SKILL:rootscript.sh`, the one form that resolves to it;
//! - a tool's script written by its path (`SKILL/tools/ID/run.py`, `tools/ID/run.py`, or the
//!   placeholder forms) is the tool `SKILL:ID`: it runs as that tool (its schema, timeout and
//!   env), and the policy and its refusals name it so.
//!
//! Pure but for the skills' detected scripts.

use super::{ResolveError, SkillSet};
use std::fs;
use std::path::Path;

/// Placeholders for "this skill's folder", surveyed in Anthropic's and OpenAI's public
/// collections (`<path-to-skill>`, `<skill-path>`, `<SKILL_DIR>`, `<path/to/skill>`) and in the
/// conventions other clients document for SKILL.md (`{baseDir}`, `$SKILL_DIR`,
/// `${CLAUDE_SKILL_DIR}`), plus skillpipe's own `$SKILL_BASE_DIR`. Read by shape, not from a
/// list, since every collection spells them its own way:
/// - `<…>` or `{…}` (any case, words joined by `-`, `_`, `/`, spaces or camelCase) made only of
///   [`PLACEHOLDER_WORDS`], with `skill` and one of [`FOLDER_WORDS`] among them;
/// - `$NAME` / `${NAME}` whose NAME holds `SKILL` and ends with one of [`FOLDER_WORDS`] (a `$`
///   form only reaches here single-quoted: unquoted or in double quotes it is shell syntax,
///   refused before);
/// - `<NAME-path>` (or `-dir`, `-root`, `-folder`; skill-creator's `<skill-creator-path>`,
///   `<xlsx-skill-path>`): the folder of skill NAME.
const FOLDER_WORDS: &[&str] = &["path", "dir", "directory", "root", "folder", "base"];

/// The words a placeholder that names no skill may be made of, besides [`FOLDER_WORDS`].
const PLACEHOLDER_WORDS: &[&str] = &["skill", "skills", "to", "the", "this", "your", "my", "of"];

/// Where claude.ai mounts skills, one folder per collection (`user`, `public`, …), then a
/// folder per skill.
const MOUNTED: &str = "/mnt/skills/";

/// Spelled without `skill`, but documented as its folder.
const LITERAL: &[&str] = &["{baseDir}"];

/// What a placeholder stands for.
#[derive(Debug, PartialEq, Eq)]
enum Placeholder {
    /// The folder of whichever loaded skill has the path after it.
    AnySkill,
    /// `<NAME-path>`: skill NAME's folder (`NAME` lowercased, maybe with `-skill` after it).
    Named(String),
}

/// The placeholder a path starts with and what follows its `/`: `<…>`, `{…}`, `${…}` or `$NAME`.
fn split_head(word: &str) -> Option<(&str, &str)> {
    let end = match word.as_bytes().first()? {
        b'<' => word.find('>')? + 1,
        b'{' => word.find('}')? + 1,
        b'$' if word.starts_with("${") => word.find('}')? + 1,
        b'$' => word.find('/')?,
        _ => return None,
    };
    let rest = word[end..].strip_prefix('/')?;
    Some((&word[..end], rest))
}

/// `<SKILL_DIR>` → `skill dir`, `{skillDir}` → `skill dir`: the words, lowercased.
fn words_of(inner: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(inner.len() + 4);
    let mut lower_before = false;
    for c in inner.chars() {
        if c.is_ascii_uppercase() && lower_before {
            spaced.push(' ');
        }
        lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
        spaced.push(c.to_ascii_lowercase());
    }
    spaced
        .split(['-', '_', '/', ' ', '.'])
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `head` has the shape of a placeholder for a skill's folder, and which.
fn shape(head: &str) -> Option<Placeholder> {
    if LITERAL.contains(&head) {
        return Some(Placeholder::AnySkill);
    }
    if let Some(var) = head.strip_prefix('$') {
        let name = var
            .strip_prefix('{')
            .and_then(|v| v.strip_suffix('}'))
            .unwrap_or(var);
        let valid =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        let upper = name.to_ascii_uppercase();
        let folder = FOLDER_WORDS
            .iter()
            .any(|w| upper.ends_with(&w.to_ascii_uppercase()));
        return (valid && upper.contains("SKILL") && folder).then_some(Placeholder::AnySkill);
    }
    let (inner, angled) = match head.strip_prefix('<').and_then(|h| h.strip_suffix('>')) {
        Some(inner) => (inner, true),
        None => (head.strip_prefix('{')?.strip_suffix('}')?, false),
    };
    let words = words_of(inner);
    let generic = words
        .iter()
        .all(|w| PLACEHOLDER_WORDS.contains(&w.as_str()) || FOLDER_WORDS.contains(&w.as_str()))
        && words.iter().any(|w| w.starts_with("skill"))
        && words.iter().any(|w| FOLDER_WORDS.contains(&w.as_str()));
    if generic {
        return Some(Placeholder::AnySkill);
    }
    // `<NAME-path>`: NAME of a-z, 0-9 and `-`, as skill names are.
    let lower = inner.to_ascii_lowercase();
    let name = FOLDER_WORDS
        .iter()
        .find_map(|w| lower.strip_suffix(w)?.strip_suffix('-'))
        .filter(|n| angled && !n.is_empty())?;
    name.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        .then(|| Placeholder::Named(name.to_owned()))
}

/// The skill-folder placeholder that starts at byte `offset` of a directive body and is
/// followed by `/` — where shell syntax was found (`$SKILL_DIR/…` unquoted, `<path-to-skill>/…`
/// unquoted): the refusal can then say how to write the path instead.
pub(crate) fn placeholder_at(body: &str, offset: usize) -> Option<&str> {
    let (head, _) = split_head(body.get(offset..)?)?;
    shape(head).map(|_| head)
}

/// Said after the shell-syntax refusal of a body with a [`placeholder_at`].
pub(crate) fn placeholder_advice(placeholder: &str) -> String {
    format!(
        "; `{placeholder}` stands for the skill's folder: write the script's path without it \
         (scripts/x.py, or SKILL/scripts/x.py), or put it in single quotes"
    )
}

impl SkillSet {
    /// The reference `word` stands for when it is written one of the ways above; `None` when
    /// it is not (it is then read as written). `Some(Err)` for a root file name that several
    /// loaded skills have: the error lists the qualified candidates.
    pub(crate) fn written_reference(&self, word: &str) -> Option<Result<String, ResolveError>> {
        if let Some(reference) = self.placeholder(word) {
            // A script its SKILL.md names in another folder (`eval-viewer/x.py`), or a tool's.
            if let Some(named) = self
                .named_script(&reference, false)
                .or_else(|| self.tool_script(&reference, false))
            {
                return Some(named);
            }
            // Only a skill's scripts run (a placeholder path is never the user's own file).
            if !self.is_script_ref(&reference) {
                return Some(Err(ResolveError::NotFound(format!(
                    "`{word}` is `{reference}` of a skill, not one of its scripts (those are in \
                     scripts/ or at the skill's root; `skillpipe skills show NAME` lists them)"
                ))));
            }
            return Some(Ok(reference));
        }
        self.root_script(word)
            .or_else(|| self.named_script(word, true))
            .or_else(|| self.tool_script(word, true))
    }

    /// `SKILL/tools/ID/FILE` or `tools/ID/FILE`, where that is the script of the enabled tool
    /// ID → `SKILL:ID`. `here`: the word may also be a path from the working directory; a file
    /// there that is not the tool's own script is not silently traded for it.
    fn tool_script(&self, word: &str, here: bool) -> Option<Result<String, ResolveError>> {
        let owners = self.owners(word, |skill, rel| {
            let tool = skill
                .tools()
                .find(|t| rel.starts_with("tools/") && t.script == rel)?;
            Some((format!("{}:{}", skill.name, tool.id), skill.dir.join(rel)))
        });
        let same_file = |a: &Path, b: &Path| matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y);
        let clash = match owners.as_slice() {
            [(tool, path)]
                if here && Path::new(word).exists() && !same_file(Path::new(word), path) =>
            {
                let (name, _) = tool.split_once(':').unwrap_or_default();
                Some(format!(
                    "`{word}` is both the script of skill `{name}`'s tool `{tool}` and a file \
                     here: write {tool} for the tool, or ./{word} for yours"
                ))
            }
            _ => None,
        };
        let refs = owners.into_iter().map(|(r, _)| r).collect();
        choose(word, refs, clash, "the script of a tool of several skills")
    }

    /// `DIR/FILE` or `SKILL/DIR/FILE`, where that is a script the skill's SKILL.md names
    /// outside `scripts/` (`eval-viewer/generate_review.py`) → `SKILL:DIR/FILE`, the form that
    /// resolves to it. `here`: the word may also be a path from the working directory, whose
    /// file (the user's) is then not silently traded for the skill's.
    fn named_script(&self, word: &str, here: bool) -> Option<Result<String, ResolveError>> {
        let owners = self.owners(word, |skill, rel| {
            let named = rel.contains('/') && !rel.starts_with("scripts/");
            (named && skill.script(rel).is_some()).then(|| (skill.name.clone(), rel))
        });
        let clash = match owners.first() {
            Some((name, rel)) if here => mine_too(word, name, rel),
            _ => None,
        };
        let refs = owners.iter().map(|(s, rel)| format!("{s}:{rel}")).collect();
        choose(word, refs, clash, "a script of several skills")
    }

    /// What `of` finds for `word` as `SKILL/REL` of that skill, else for `word` in each skill.
    fn owners<'a, 'w, T>(
        &'a self,
        word: &'w str,
        of: impl Fn(&'a super::Skill, &'w str) -> Option<T>,
    ) -> Vec<T> {
        let in_named = (word.split_once('/')).and_then(|(name, rel)| of(self.get(name)?, rel));
        match in_named {
            Some(found) => vec![found],
            None => self.iter().filter_map(|s| of(s, word)).collect(),
        }
    }

    /// `PLACEHOLDER/REST` → `REST`, `<NAME-path>/REST` → `NAME/REST` for a loaded NAME (or
    /// `<NAME-skill-path>` for a loaded NAME).
    fn placeholder(&self, word: &str) -> Option<String> {
        if let Some(mounted) = word.strip_prefix(MOUNTED) {
            // `COLLECTION/NAME/REST`, NAME a loaded skill.
            let (_collection, within) = mounted.split_once('/')?;
            let (name, rest) = within.split_once('/')?;
            self.get(name)?;
            return (!rest.is_empty()).then(|| format!("{name}/{rest}"));
        }
        let (head, rest) = split_head(word)?;
        if rest.is_empty() {
            return None;
        }
        match shape(head)? {
            Placeholder::AnySkill => Some(rest.to_owned()),
            Placeholder::Named(name) => {
                let loaded = [Some(name.as_str()), name.strip_suffix("-skill")]
                    .into_iter()
                    .flatten()
                    .find(|n| self.get(n).is_some())?;
                Some(format!("{loaded}/{rest}"))
            }
        }
    }

    /// `FILE` (with an extension: a bare name without one is a system command) or
    /// `SKILL/FILE`, where FILE is a script detected at the skill's root → `SKILL:FILE`.
    fn root_script(&self, word: &str) -> Option<Result<String, ResolveError>> {
        if let Some((name, file)) = word.split_once('/') {
            let skill = self.get(name)?;
            if file.contains('/') || skill.script(file).is_none() {
                return None;
            }
            // Also a path from the working directory: the user's file there is not silently
            // traded for the skill's.
            let clash = mine_too(word, name, file);
            return choose(word, vec![format!("{name}:{file}")], clash, "");
        }
        let refs = (self
            .iter()
            .filter(|s| super::resolve::root_file(s, word).is_some()))
        .map(|s| format!("{}:{word}", s.name))
        .collect();
        choose(word, refs, None, "a script at the root of several skills")
    }
}

/// Why `word` cannot be skill `name`'s script `rel` unasked: it is also a file here (the user's).
fn mine_too(word: &str, name: &str, rel: &str) -> Option<String> {
    Path::new(word).exists().then(|| {
        format!(
            "`{word}` is both skill `{name}`'s script and a file here: write {name}:{rel} for \
             the skill's, or ./{word} for yours"
        )
    })
}

/// The reference `word` stands for among `refs`: none, the one (unless `clash` says why not),
/// or a refusal naming them all, which are `several`.
fn choose(
    word: &str,
    refs: Vec<String>,
    clash: Option<String>,
    several: &str,
) -> Option<Result<String, ResolveError>> {
    let refused = |why: String| Some(Err(ResolveError::NotFound(why)));
    match (refs.as_slice(), clash) {
        ([], _) => None,
        (_, Some(why)) => refused(why),
        ([one], None) => Some(Ok(one.clone())),
        (many, None) => refused(format!(
            "`{word}` is {several}; write one of {}",
            many.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::skills::{LoadOptions, SkillSet};
    use std::fs;

    fn set() -> (tempfile::TempDir, SkillSet) {
        let root = tempfile::tempdir().unwrap();
        for (name, files) in [
            ("gh-fix-ci", &["scripts/inspect.py"][..]),
            ("data", &["rootscript.sh", "scripts/sub.sh"][..]),
            ("more", &["shared.py"][..]),
            ("also", &["shared.py"][..]),
            ("twin", &["scripts/inspect.py"][..]),
        ] {
            let script = "import sys\nprint(sys.argv)\n";
            let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, script)).collect();
            crate::skills::write_test_skill(root.path(), name, &files);
        }
        let set = SkillSet::load_with(&[root.path().to_path_buf()], &LoadOptions::default());
        (root, set)
    }

    fn ok(set: &SkillSet, word: &str) -> Option<String> {
        set.written_reference(word).map(Result::unwrap)
    }

    /// Words that are written forms of a loaded skill's script, and the reference each stands
    /// for; `None`: read as written.
    #[test]
    fn written_forms_map_to_references() {
        let (root, _) = set();
        let tool = root.path().join("data/tools/stats");
        fs::create_dir_all(&tool).unwrap();
        fs::write(tool.join("tool.yaml"), "id: stats\nscript: run.py\n").unwrap();
        fs::write(tool.join("run.py"), "print(1)\n").unwrap();
        fs::write(tool.join("notes.py"), "print(2)\n").unwrap();
        let set = SkillSet::load_with(&[root.path().to_path_buf()], &Default::default());
        for (word, want) in [
            // claude.ai's mount points are the skill's own folder when the skill is loaded.
            (
                "/mnt/skills/user/gh-fix-ci/scripts/inspect.py",
                Some("gh-fix-ci/scripts/inspect.py"),
            ),
            (
                "/mnt/skills/public/gh-fix-ci/scripts/inspect.py",
                Some("gh-fix-ci/scripts/inspect.py"),
            ),
            (
                "/mnt/skills/examples/gh-fix-ci/scripts/inspect.py",
                Some("gh-fix-ci/scripts/inspect.py"),
            ),
            (
                "/mnt/skills/public/data/scripts/sub.sh",
                Some("data/scripts/sub.sh"),
            ),
            ("/mnt/skills/user/nope/scripts/inspect.py", None),
            ("/mnt/skills/user/gh-fix-ci/", None),
            // A tool's script by its path is the tool; another file of its folder is not.
            ("data/tools/stats/run.py", Some("data:stats")),
            ("tools/stats/run.py", Some("data:stats")),
            ("<path-to-skill>/tools/stats/run.py", Some("data:stats")),
            ("data/tools/stats/notes.py", None),
            // A root script by its file name.
            ("rootscript.sh", Some("data:rootscript.sh")),
            ("data/rootscript.sh", Some("data:rootscript.sh")),
            // A system command stays one: no extension, not a root script, a deeper path.
            ("ls", None),
            ("sub.sh", None),
            ("data/scripts/sub.sh", None),
            ("bin/rootscript.sh", None),
        ] {
            assert_eq!(ok(&set, word).as_deref(), want, "{word}");
        }
        let e = set.written_reference("shared.py").unwrap().unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("more:shared.py") && e.contains("also:shared.py"),
            "{e}"
        );
    }

    #[test]
    fn placeholders_for_the_skill_folder() {
        let (_root, set) = set();
        for p in [
            "<path-to-skill>",
            "{baseDir}",
            "$SKILL_DIR",
            "${CLAUDE_SKILL_DIR}",
            // Spellings found by shape, not listed one by one.
            "<SKILL_DIR>",
            "<skill_path>",
            "<path/to/skill>",
            "<Path-To-This-Skill>",
            "{skillDir}",
            "$SKILL_PATH",
            "${SKILL_ROOT}",
            "$SKILL_BASE_DIR",
        ] {
            assert_eq!(
                ok(&set, &format!("{p}/scripts/inspect.py")).as_deref(),
                Some("scripts/inspect.py"),
                "{p}"
            );
        }
        for p in [
            "<gh-fix-ci-path>",
            "<gh-fix-ci-skill-path>",
            "<GH-FIX-CI-dir>",
        ] {
            assert_eq!(
                ok(&set, &format!("{p}/scripts/inspect.py")).as_deref(),
                Some("gh-fix-ci/scripts/inspect.py"),
                "{p}"
            );
        }
        // Not a skill's folder: `$HOME`, a folder word without `skill`, other words.
        for p in [
            "$HOME",
            "$SKILL_NAME",
            "<path>",
            "<base-dir>",
            "<skill-name>",
            "<file-path>",
        ] {
            assert_eq!(ok(&set, &format!("{p}/scripts/inspect.py")), None, "{p}");
        }
        // A file of the skill that is no script: said, not run as something else.
        let e = set
            .written_reference("<path-to-skill>/eval-viewer/view.py")
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("not one of its scripts"), "{e}");
        // Not a loaded skill, not a placeholder, or nothing after it: read as written.
        for w in [
            "<nope-path>/scripts/inspect.py",
            "<other>/scripts/inspect.py",
            "<path-to-skill>/",
            "scripts/inspect.py",
        ] {
            assert_eq!(ok(&set, w), None, "{w}");
        }
    }

    #[test]
    fn a_placeholder_where_shell_syntax_was_found_is_named() {
        for (body, at, want) in [
            ("python $SKILL_DIR/scripts/x.py", 7, Some("$SKILL_DIR")),
            ("echo $HOME/x", 5, None),
            (
                "python <skill-creator-path>/x.py",
                7,
                Some("<skill-creator-path>"),
            ),
            ("x <a>/b", 2, None),
            ("python <path/to/skill>/x.py", 7, Some("<path/to/skill>")),
            ("python $SKILL_PATH/x.py", 7, Some("$SKILL_PATH")),
            ("x <path-to-skill>", 2, None),
        ] {
            assert_eq!(super::placeholder_at(body, at), want, "{body}");
        }
        let a = super::placeholder_advice("$SKILL_DIR");
        assert!(a.contains("write the script's path without it"), "{a}");
    }

    #[test]
    fn listings_name_each_script_so_that_it_resolves() {
        let (_root, set) = set();
        assert_eq!(set.listed_name("data", "scripts/sub.sh"), "scripts/sub.sh");
        assert_eq!(
            set.listed_name("data", "rootscript.sh"),
            "data:rootscript.sh"
        );
        // Another skill has the same path: qualified.
        assert_eq!(
            set.listed_name("twin", "scripts/inspect.py"),
            "twin/scripts/inspect.py"
        );
        for name in [
            "scripts/sub.sh",
            "data:rootscript.sh",
            "twin/scripts/inspect.py",
        ] {
            assert!(set.resolve(name).is_ok(), "{name}");
        }
    }
}
