//! Command patterns (DESIGN §2) and what they are matched against.
//!
//! A pattern is written like a command and split with the same word rules as a directive body.
//! Its first word picks the kind:
//! - `*` alone: everything.
//! - `scripts/GLOB`: a skill script of any skill, GLOB matched on the script's path relative
//!   to its skill directory (`scripts/*` also covers nested `scripts/sub/x.py`).
//! - `SKILL/scripts/GLOB`: the same, for that one skill. `SKILL:GLOB`: that skill's scripts by
//!   id (file stem).
//! - a word containing `/` otherwise: one program by path. It matches only a command whose
//!   `argv[0]` is byte-for-byte that path. Wildcards are refused here (escaped ones are literal),
//!   so no path pattern can quietly cover a whole directory.
//! - a bare word: a program looked up on PATH; the word is a glob but only ever matches a bare
//!   `argv[0]`, so `touch` (or `t*`) never lets `/usr/bin/touch` or `./touch` through.
//!
//! Further pattern words are the arguments, word for word, each a glob: `cat notes.txt` allows
//! exactly that command, not `cat notes.txt private.csv`. A last word `*` stands for any
//! further arguments (`git log *`), and a program alone (`echo`) allows it with any. Globs in
//! argument words match any text, `/` included (`cat *.txt` also matches `cat ../secret.txt`):
//! use them with care. Denying, the named words are a prefix: `--deny 'git push'` also denies
//! `git push --force`.
//!
//! Allow matching is exact and case-sensitive. Deny matching ([`Pattern::denies`]) is wider on
//! purpose, since a deny that can be dodged is worse than one that over-reaches: a bare deny word
//! also matches the last component of a path `argv[0]` (deny `rm` blocks `/bin/rm` and `./rm`),
//! the program word ignores ASCII case (case-insensitive file systems would run `RM`), and path
//! deny patterns compare with `//` and `/./` collapsed.

use super::argv::{InvalidBody, parse_argv};
use super::glob::{self, Glob};

/// What a command resolved to, for matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target<'a> {
    /// A resolved skill script: skill name and path relative to the skill dir, e.g. "scripts/lookup.py".
    Script {
        /// The skill that holds the script.
        skill: &'a str,
        /// The script's path inside the skill, e.g. `scripts/x.py`.
        rel_path: &'a str,
        /// Its arguments.
        args: &'a [String],
    },
    /// A skill's tool (`tools/ID/`): matched as the script `scripts/ID` of its skill (so
    /// `scripts/*`, `SKILL/scripts/ID` and `SKILL:ID` cover it), shown as `SKILL:ID`, the name
    /// a directive calls it by and a pattern allows it with.
    Tool {
        /// The skill (or agent or prompt folder) that holds the tool.
        skill: &'a str,
        /// The tool's id (its folder name).
        id: &'a str,
        /// Its arguments.
        args: &'a [String],
    },
    /// A system command: `argv[0]` exactly as written (bare name or a path) and the rest.
    System {
        /// `argv[0]` as written (a bare name or a path).
        program: &'a str,
        /// Its arguments.
        args: &'a [String],
    },
}

/// `SKILL` in `SKILL/scripts/x` and `SKILL:x`: any name a loaded skill can have (a skill whose
/// `name` breaks the spec still loads, so this is wider than a-z, 0-9 and `-`): not empty, not
/// `.` or `..`, and no `/`, `:`, `\`, space, control or glob character (a pattern's skill is
/// matched literally, so `s*/scripts/x` is refused as a path with a wildcard instead).
pub(crate) fn is_skill_word(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && !s.chars().any(|c| {
            matches!(c, '/' | ':' | '\\' | '*' | '?' | '[' | ']' | '{' | '}')
                || c.is_whitespace()
                || c.is_control()
        })
}

/// The parts of a script reference; the one reading of the three forms, for policy patterns,
/// directives and the skill resolver alike.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ScriptRef<'a> {
    /// `scripts/...` or `SKILL/scripts/...`: the skill, if named, and the `scripts/...` path.
    Path {
        skill: Option<&'a str>,
        rel_path: &'a str,
    },
    /// `SKILL:id`.
    Id { skill: &'a str, id: &'a str },
}

pub(crate) fn script_ref(word: &str) -> Option<ScriptRef<'_>> {
    if word.strip_prefix("scripts/").is_some_and(|r| !r.is_empty()) {
        return Some(ScriptRef::Path {
            skill: None,
            rel_path: word,
        });
    }
    if let Some((skill, rest)) = word.split_once('/')
        && is_skill_word(skill)
        && rest.strip_prefix("scripts/").is_some_and(|r| !r.is_empty())
    {
        return Some(ScriptRef::Path {
            skill: Some(skill),
            rel_path: rest,
        });
    }
    if let Some((skill, id)) = word.split_once(':')
        && is_skill_word(skill)
        && !id.is_empty()
    {
        // `SKILL:scripts/x.py` (as models write it, mixing the two forms) is the path form, and
        // `SKILL:DIR/x.py` the one form of a script its SKILL.md names in another folder.
        if id.contains('/') && !id.ends_with('/') {
            return Some(ScriptRef::Path {
                skill: Some(skill),
                rel_path: id,
            });
        }
        if !id.contains('/') {
            return Some(ScriptRef::Id { skill, id });
        }
    }
    None
}

/// A pattern that could not be parsed; names the pattern and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid pattern `{}`: {reason}", escape_controls(pattern))]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// Why it is not valid.
    pub reason: String,
}

#[derive(Debug, Clone)]
enum Kind {
    All,
    ScriptPath { skill: Option<String>, path: Glob },
    ScriptId { skill: String, id: Glob },
    Bare(Glob),
    Path(String),
}

/// A parsed command pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    kind: Kind,
    args: Vec<Glob>,
    /// Further arguments are allowed: the pattern names none (`echo`) or ends in a `*` word
    /// (`git log *`). Otherwise it allows exactly the arguments it names.
    rest: bool,
}

impl Pattern {
    /// The pattern as written.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Parses a pattern (`say`, `git status`, `scripts/*`, `SKILL/scripts/*`, `*`).
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let err = |reason: String| PatternError {
            pattern: text.to_string(),
            reason,
        };
        let words = parse_argv(text).map_err(|e: InvalidBody| err(e.to_string()))?;
        let glob = |w: &str| Glob::parse(w).map_err(|e| err(e.to_string()));
        let mut named = &words[1..];
        let rest = match named.split_last() {
            None => true,
            Some((last, before)) if last == "*" => {
                named = before;
                true
            }
            Some(_) => false,
        };
        let args = named
            .iter()
            .map(|w| glob(w))
            .collect::<Result<Vec<_>, _>>()?;
        let first = words[0].as_str();
        let kind = if first == "*" && words.len() == 1 {
            Kind::All
        } else {
            match script_ref(first) {
                Some(ScriptRef::Path { skill, rel_path }) => Kind::ScriptPath {
                    skill: skill.map(str::to_string),
                    path: glob(rel_path)?,
                },
                Some(ScriptRef::Id { skill, id }) => Kind::ScriptId {
                    skill: skill.to_string(),
                    id: glob(id)?,
                },
                None if first.contains('/') => match glob(first)?.literal() {
                    Some(path) => Kind::Path(path),
                    None => {
                        // `SKILL/DIR/*` for a script its SKILL.md names outside `scripts/`.
                        let hint = match first.split_once('/') {
                            Some((skill, rest)) if is_skill_word(skill) && !rest.is_empty() => {
                                format!(
                                    "; for skill `{skill}`'s scripts there write `{skill}:{rest}`"
                                )
                            }
                            _ => String::new(),
                        };
                        return Err(err(format!(
                            "wildcards are not allowed in a path (`{first}`): a path pattern matches only that exact path{hint}"
                        )));
                    }
                },
                None => Kind::Bare(glob(first)?),
            }
        };
        Ok(Pattern {
            text: text.to_string(),
            kind,
            args,
            rest,
        })
    }

    /// Allow semantics: exact, case-sensitive.
    pub fn matches(&self, target: &Target) -> bool {
        self.matches_with(target, false)
    }

    /// Allow semantics for the program or script alone: whether the pattern matches some call
    /// of it (its argument words, if any, can always be met).
    pub fn matches_some_call(&self, target: &Target) -> bool {
        let head = Pattern {
            text: String::new(),
            kind: self.kind.clone(),
            args: Vec::new(),
            rest: true,
        };
        head.matches(target)
    }

    /// Deny semantics: like [`Pattern::matches`], but wider (see the module docs).
    pub fn denies(&self, target: &Target) -> bool {
        self.matches_with(target, true)
    }

    fn matches_with(&self, target: &Target, broad: bool) -> bool {
        if let Target::Tool { skill, id, args } = *target {
            let rel_path = format!("scripts/{id}");
            let script = Target::Script {
                skill,
                rel_path: &rel_path,
                args,
            };
            return self.matches_with(&script, broad);
        }
        let (head, args) = match (&self.kind, target) {
            (Kind::All, _) => return true,
            (
                Kind::ScriptPath { skill, path },
                Target::Script {
                    skill: s,
                    rel_path,
                    args,
                },
            ) => (
                skill.as_deref().is_none_or(|k| k == *s) && path.matches(rel_path, false),
                args,
            ),
            (
                Kind::ScriptId { skill, id },
                Target::Script {
                    skill: s,
                    rel_path,
                    args,
                },
            ) => (
                // A script at the skill root (`x.py`) is matched by id too; the id with its
                // extension (`say:x.sh`, which the resolver also takes) is the same script.
                // What the resolver takes `SKILL:x` to: a script anywhere under `scripts/`
                // (`scripts/sub/x.py` too) or at the root — never one its SKILL.md names in
                // another folder, which only `SKILL:DIR/FILE` names. Denying, any script of
                // the skill by that stem or name (`SKILL:*` all of them).
                skill == s
                    && (broad || rel_path.starts_with("scripts/") || !rel_path.contains('/'))
                    && (id.matches(file_stem(rel_path), broad)
                        || id.matches(rel_path.rsplit('/').next().unwrap_or(rel_path), broad)),
                args,
            ),
            (Kind::Bare(name), Target::System { program, args }) => {
                let ok = if !program.contains('/') {
                    name.matches(program, broad)
                } else if broad {
                    let base = program.rsplit('/').next().unwrap_or(program);
                    !base.is_empty() && name.matches(base, true)
                } else {
                    false
                };
                (ok, args)
            }
            // Denying, `SKILL/DIR/FILE` (a path pattern) is also that skill's script at DIR/FILE,
            // and a relative `DIR/FILE` any skill's there: the forms a directive or a listing
            // may write for a script its SKILL.md names.
            (
                Kind::Path(path),
                Target::Script {
                    skill,
                    rel_path,
                    args,
                },
            ) if broad => (
                // `SKILL/DIR/FILE`, or `DIR/FILE` as a listing prints it (any skill's).
                normalize(path) == normalize(&format!("{skill}/{rel_path}"))
                    || (!path.starts_with('/') && normalize(path) == normalize(rel_path)),
                args,
            ),
            (Kind::Path(path), Target::System { program, args }) => {
                let ok = if broad {
                    normalize(path) == normalize(program) || same_file(path, program)
                } else {
                    path == program
                };
                (ok, args)
            }
            _ => return false,
        };
        // Denying, the named words are a prefix (a deny that extra words dodge is no deny).
        let count = match self.rest || broad {
            true => self.args.len() <= args.len(),
            false => self.args.len() == args.len(),
        };
        head && count
            && self
                .args
                .iter()
                .zip(args.iter())
                .all(|(g, a)| g.matches(a, false))
    }
}

/// The file name without its last extension: the script id.
fn file_stem(rel_path: &str) -> &str {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// `a//b/./c` → `a/b/c`; keeps whether the path is absolute and any `..`.
fn normalize(path: &str) -> (bool, Vec<&str>) {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
        // `..` folded away (`/usr/bin/../bin/rm` is `/usr/bin/rm`); one that climbs above the
        // start stays, so a relative `../x` is not taken for `x`.
        if c == ".." && parts.last().is_some_and(|p| *p != "..") {
            parts.pop();
        } else {
            parts.push(c);
        }
    }
    (path.starts_with('/'), parts)
}

/// For a deny: both paths lead to the same existing file (`/bin/rm` and `/usr/bin/rm` where
/// `/bin` links to `/usr/bin`). The one place a pattern looks at the file system, and only to
/// refuse more.
fn same_file(pattern: &str, program: &str) -> bool {
    match (
        std::fs::canonicalize(pattern),
        std::fs::canonicalize(program),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Text shown in a one-line message (a notice, an error, the confirmation prompt, a refusal) in
/// the terminal sanitizer's wording (`term::sanitize`; a test there holds the two together):
/// controls as their pictures (`␛`, and `␊`, `␉` too, so the message stays on its line), C1
/// controls and invisible or bidirectional format characters as `<U+XXXX>`, so what is shown
/// reads as what would run.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c as u32 {
            b @ 0x00..=0x1f => out.push(char::from_u32(0x2400 + b).expect("control picture")),
            0x7f => out.push('␡'),
            0x80..=0x9f => out.push_str(&format!("<U+{:04X}>", c as u32)),
            _ if is_invisible_format(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            _ => out.push(c),
        }
    }
    out
}

/// `text` in at most `max` (> 0) characters: cut, its last one is `…`.
pub(crate) fn cut_chars(text: &str, max: usize) -> String {
    match text.chars().nth(max) {
        None => text.to_string(),
        Some(_) => text.chars().take(max - 1).chain(['…']).collect(),
    }
}

/// Zero-width characters, bidi marks, embeddings, overrides and isolates, the BOM.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
    )
}

/// A program word that stands for a command in an explanation rather than naming one: one
/// [`is_left_out`], or `<…>`.
pub(crate) fn is_placeholder(word: &str) -> bool {
    is_left_out(word) || (word.len() > 2 && word.starts_with('<') && word.ends_with('>'))
}

/// A word that stands for something left out: three dots or more, or `…` (`.` and `..` are
/// folders). As an argument `<…>` is not one: it may be a value (`"<b>"`).
pub(crate) fn is_left_out(word: &str) -> bool {
    word == "…" || (word.len() >= 3 && word.bytes().all(|b| b == b'.'))
}

/// Quote a word so the directive/pattern word rules read it back unchanged.
pub fn quote_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Cap on the shown command in a reason, so reasons stay one readable line.
const DISPLAY_MAX_CHARS: usize = 200;

impl Target<'_> {
    /// The program or script alone, its arguments left out.
    pub(crate) fn alone(mut self) -> Self {
        let (Target::Script { args, .. } | Target::Tool { args, .. } | Target::System { args, .. }) =
            &mut self;
        *args = &[];
        self
    }

    /// The command as one line of text: words quoted, control characters escaped, long
    /// commands cut with `…`.
    pub fn display(&self) -> String {
        let (head, args) = match *self {
            // In `scripts/`: `SKILL/scripts/…`; at the skill root, or in a folder its SKILL.md
            // names: `SKILL:…`, the form that resolves to it (`SKILL/x.sh` would not).
            Target::Script {
                skill,
                rel_path,
                args,
            } => {
                let sep = if rel_path.starts_with("scripts/") {
                    '/'
                } else {
                    ':'
                };
                (format!("{skill}{sep}{rel_path}"), args)
            }
            Target::Tool { skill, id, args } => (format!("{skill}:{id}"), args),
            Target::System { program, args } => (program.to_string(), args),
        };
        let words: Vec<String> = std::iter::once(head.as_str())
            .chain(args.iter().map(String::as_str))
            .map(|w| escape_controls(&quote_word(w)))
            .collect();
        cut_chars(&words.join(" "), DISPLAY_MAX_CHARS)
    }

    /// The narrowest pattern text that allows this program (any arguments): the bare name, the
    /// exact path, `SKILL:NAME` (which also covers a same-named script with another extension
    /// in that skill's `scripts/`), or `SKILL/scripts/...` for a script deeper down. Parsing it back gives a pattern that matches `self`.
    /// Empty when no pattern short of the whole command says what runs (an interpreter given
    /// code in an option).
    pub fn suggest_pattern(&self) -> String {
        // A placeholder copied from an explanation (`...`, `…`, `<command>`) names no program:
        // allowing it would change nothing, so nothing is suggested.
        if let Target::System { program, .. } = self
            && is_placeholder(program)
        {
            return String::new();
        }
        let word = match self {
            // A script at the skill root or directly in `scripts/` (a tool counts as
            // `scripts/ID`): `SKILL:NAME`, the name a directive calls it by; deeper in
            // `scripts/`, its path; in another folder, which its SKILL.md names: `SKILL:DIR/x.py`.
            Target::Script {
                skill, rel_path, ..
            } if is_skill_word(skill) => {
                let in_scripts = rel_path.strip_prefix("scripts/");
                match in_scripts.unwrap_or(rel_path).contains('/') {
                    false => format!("{skill}:{}", file_stem(rel_path)),
                    true if in_scripts.is_some() => format!("{skill}/{rel_path}"),
                    true => format!("{skill}:{rel_path}"),
                }
            }
            Target::Script { rel_path, .. } => rel_path.to_string(),
            Target::Tool { skill, id, .. } if is_skill_word(skill) => format!("{skill}:{id}"),
            Target::Tool { id, .. } => format!("scripts/{id}"),
            // An interpreter runs its script: allow that script, never the interpreter alone
            // (`python3` would be any Python). Code in an option (`-c`) has no short pattern.
            // Wrappers (`env`, `sudo` …) and runners' other subcommands have none either.
            Target::System { program, args } => {
                let argv: Vec<String> = std::iter::once(*program)
                    .chain(args.iter().map(String::as_str))
                    .map(str::to_owned)
                    .collect();
                // With its script named, `*` keeps its arguments open (`python3 x.py *`).
                return super::interpreter::what_runs(&argv).map_or_else(String::new, |words| {
                    let mut text: Vec<String> =
                        words.iter().map(|w| quote_word(&glob::escape(w))).collect();
                    if words.len() > 1 {
                        text.push("*".into());
                    }
                    text.join(" ")
                });
            }
        };
        quote_word(&glob::escape(&word))
    }
}

/// Targets built in one line, for the tests of the modules that match them.
#[cfg(test)]
pub(crate) mod test_targets {
    use super::Target;

    pub(crate) fn sys<'a>(program: &'a str, args: &'a [String]) -> Target<'a> {
        Target::System { program, args }
    }

    pub(crate) fn script<'a>(skill: &'a str, rel_path: &'a str, args: &'a [String]) -> Target<'a> {
        Target::Script {
            skill,
            rel_path,
            args,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_targets::{script, sys};
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    fn sys_matches(pattern: &str, program: &str, args: &[&str]) -> bool {
        let args = words(args);
        Pattern::parse(pattern)
            .unwrap()
            .matches(&sys(program, &args))
    }

    fn script_matches(pattern: &str, skill: &str, rel_path: &str) -> bool {
        Pattern::parse(pattern)
            .unwrap()
            .matches(&script(skill, rel_path, &[]))
    }

    #[test]
    fn a_tool_is_shown_and_suggested_as_skill_colon_id_and_matched_as_scripts_id() {
        let args = words(&["x"]);
        let tool = Target::Tool {
            skill: "tt",
            id: "hello",
            args: &args,
        };
        assert_eq!(tool.display(), "tt:hello x");
        assert_eq!(tool.suggest_pattern(), "tt:hello");
        let suggested = Pattern::parse(&tool.suggest_pattern()).unwrap();
        assert!(suggested.matches(&tool));
        for pattern in ["scripts/*", "tt/scripts/hello", "tt:*", "tt:hello x"] {
            assert!(Pattern::parse(pattern).unwrap().matches(&tool), "{pattern}");
        }
        for pattern in ["tt:other", "uu:hello", "hello", "tt:hello y"] {
            assert!(
                !Pattern::parse(pattern).unwrap().matches(&tool),
                "{pattern}"
            );
        }
        assert!(Pattern::parse("tt:hello").unwrap().denies(&tool));
    }

    #[test]
    fn an_id_pattern_with_its_extension_names_the_same_script() {
        for pattern in ["say:danger", "say:danger.sh", "say:danger.*"] {
            assert!(
                script_matches(pattern, "say", "scripts/danger.sh"),
                "{pattern}"
            );
            let p = Pattern::parse(pattern).unwrap();
            assert!(
                p.denies(&script("say", "scripts/danger.sh", &[])),
                "{pattern}"
            );
        }
        assert!(!script_matches("say:danger.py", "say", "scripts/danger.sh"));
        assert!(!script_matches(
            "say:danger.sh",
            "other",
            "scripts/danger.sh"
        ));
    }

    #[test]
    fn script_refs_are_told_from_programs() {
        for (w, script) in [
            ("scripts/x.py", true),
            ("scripts/sub/x.py", true),
            ("say/scripts/x.sh", true),
            ("my-skill2/scripts/x", true),
            ("say:speak", true),
            ("scripts/", false),
            // A skill whose name breaks the spec still loads, and is addressed the same way.
            ("Say/scripts/x", true),
            ("a_b:x", true),
            ("s*/scripts/x", false),
            ("../scripts/x", false),
            ("say:", false),
            // `SKILL:DIR/x`: a script its SKILL.md names in another folder.
            ("say:a/b", true),
            ("./scripts/x.py", false),
            ("/usr/bin/touch", false),
            ("../touch", false),
            ("bin/x", false),
            ("echo", false),
            ("git", false),
        ] {
            assert_eq!(script_ref(w).is_some(), script, "{w}");
        }
    }

    #[test]
    fn bare_program_with_argument_prefix() {
        for (pattern, program, args, matches) in [
            ("say", "say", &[][..], true),
            ("say", "say", &["hello", "world"], true),
            ("git status", "git", &["status"], true),
            // Named arguments are exact: no word more (`cat notes.txt private.csv`).
            ("git status", "git", &["status", "--short"], false),
            ("cat notes.txt", "cat", &["notes.txt", "private.csv"], false),
            ("cat notes.txt", "cat", &["notes.txt"], true),
            // A last `*` word: any further arguments, none included.
            ("git status *", "git", &["status", "--short"], true),
            ("git status *", "git", &["status"], true),
            ("git status *", "git", &["push"], false),
            ("cat *.txt", "cat", &["a.txt", "b.csv"], false),
            ("git status", "git", &["push"], false),
            ("git status", "git", &[], false),
            ("git status", "git", &["statusx"], false),
            ("git log -* *", "git", &["log", "-5", "x"], true),
            ("git log -*", "git", &["log", "-5", "x"], false),
            ("git commit -m *", "git", &["commit", "-m", "fix a/b"], true),
            ("py*", "python3", &[], true),
            ("printf {x}", "printf", &["{x}"], true),
            ("printf {x}", "printf", &["x"], false),
        ] {
            let got = sys_matches(pattern, program, args);
            assert_eq!(got, matches, "{pattern} / {program} {args:?}");
        }
    }

    #[test]
    fn bare_never_matches_a_path_or_lookalike() {
        for program in [
            "/usr/bin/touch",
            "./touch",
            "../touch",
            "bin/touch",
            "TOUCH",
            "t\u{43e}uch",  // Cyrillic о
            "\u{ff54}ouch", // fullwidth t
            "touch ",
        ] {
            assert!(!sys_matches("touch", program, &["x"]), "{program:?}");
        }
        assert!(!sys_matches("t*", "/usr/bin/touch", &[]));
        assert!(!sys_matches("echo", "e*o", &["hi"]));
    }

    #[test]
    fn path_patterns_are_exact() {
        assert!(sys_matches("/usr/bin/touch", "/usr/bin/touch", &["x"]));
        assert!(!sys_matches("/usr/bin/touch", "touch", &["x"]));
        assert!(!sys_matches("/usr/bin/touch", "/usr/bin//touch", &[]));
        assert!(!sys_matches("./x", "x", &[]));
        assert!(sys_matches("./x", "./x", &[]));
        let e = Pattern::parse("/usr/bin/*").unwrap_err();
        assert!(e.to_string().contains("wildcards are not allowed"), "{e}");
        assert!(sys_matches("'/opt/a\\*b'", "/opt/a*b", &[]));
    }

    #[test]
    fn star_alone_is_everything() {
        assert!(sys_matches("*", "anything", &["at", "all"]));
        assert!(sys_matches("*", "/usr/bin/touch", &[]));
        assert!(script_matches("*", "evil", "scripts/x.py"));
        // `*` followed by words is a bare-name glob, not "everything".
        assert!(sys_matches("* --help", "ls", &["--help"]));
        assert!(!sys_matches("* --help", "/bin/ls", &["--help"]));
        assert!(!script_matches("* --help", "evil", "scripts/x.py"));
    }

    #[test]
    fn script_patterns() {
        assert!(script_matches("scripts/*", "any", "scripts/x.py"));
        assert!(script_matches("scripts/*", "any", "scripts/sub/x.py"));
        assert!(script_matches("scripts/*.py", "any", "scripts/x.py"));
        assert!(!script_matches("scripts/*.py", "any", "scripts/x.sh"));
        assert!(script_matches("good/scripts/*", "good", "scripts/x.py"));
        assert!(!script_matches("good/scripts/*", "evil", "scripts/x.py"));
        assert!(!script_matches("good/scripts/*", "goodx", "scripts/x.py"));
        assert!(script_matches("say:speak", "say", "scripts/speak.sh"));
        assert!(script_matches("say:*", "say", "scripts/sub/a.b.py"));
        assert!(script_matches("say:root", "say", "root.py"));
        assert!(script_matches("say:a", "say", "scripts/sub/a.py"));
        assert!(!script_matches("say:a", "say", "viewer/a.py"));
        assert!(!script_matches("say:*", "say", "viewer/a.py"));
        // Denying, a path pattern `SKILL/DIR/FILE` is that skill's script there too.
        let deny = Pattern::parse("say/viewer/a.py").unwrap();
        let t = script("say", "viewer/a.py", &[]);
        assert!(deny.denies(&t) && !deny.matches(&t));
        for p in ["say:*", "say:a", "say:a.py", "viewer/a.py", "./viewer/a.py"] {
            let p = Pattern::parse(p).unwrap();
            assert!(p.denies(&t) && !p.matches(&t), "{p:?}");
        }
        assert!(!script_matches("scripts/*", "say", "root.py"));
        assert!(!script_matches("say:speak", "say", "scripts/speaker.sh"));
        assert!(!script_matches("say:speak", "other", "scripts/speak.sh"));
        // Script patterns never match system commands, and vice versa.
        assert!(!sys_matches("scripts/*", "scripts/x.py", &[]));
        assert!(!script_matches("say", "say", "scripts/say.sh"));
        let args = words(&["--fast", "x"]);
        let p = Pattern::parse("scripts/lookup.py --fast").unwrap();
        let target = |args| script("s", "scripts/lookup.py", args);
        assert!(!p.matches(&target(&args)));
        assert!(p.matches(&target(&args[..1])));
        assert!(!p.matches(&target(&[])));
        let p = Pattern::parse("scripts/lookup.py --fast *").unwrap();
        assert!(p.matches(&target(&args)));
        // Denying, the named words are a prefix.
        let d = Pattern::parse("scripts/lookup.py --fast").unwrap();
        assert!(d.denies(&target(&args)));
    }

    #[test]
    fn deny_matching_is_wider() {
        let rm = Pattern::parse("rm").unwrap();
        for program in ["rm", "/bin/rm", "./rm", "RM", "/usr/bin/Rm"] {
            let t = sys(program, &[]);
            assert!(rm.denies(&t), "{program}");
        }
        let t = sys("/bin/", &[]);
        assert!(!rm.denies(&t));
        let p = Pattern::parse("/usr/bin/rm").unwrap();
        let t = sys("/usr//bin/./rm", &[]);
        assert!(p.denies(&t) && !p.matches(&t));
        // `..` folded; and the same file by another path (a link) is that file.
        for program in ["/usr/bin/../bin/rm", "/usr/lib/../bin/rm"] {
            let t = sys(program, &[]);
            assert!(p.denies(&t), "{program}");
        }
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("tool");
        std::fs::write(&real, "").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let deny = Pattern::parse(&glob::escape(real.to_str().unwrap())).unwrap();
        let other = link.join("tool");
        let t = sys(other.to_str().unwrap(), &[]);
        assert!(deny.denies(&t) && !deny.matches(&t));
        // Control: another file there is not denied.
        std::fs::write(dir.path().join("other"), "").unwrap();
        let elsewhere = link.join("other");
        assert!(!deny.denies(&sys(elsewhere.to_str().unwrap(), &[])));
        // Arguments stay exact: `git push` is not `git PUSH` to git.
        let p = Pattern::parse("git push").unwrap();
        let args = words(&["PUSH"]);
        assert!(!p.denies(&sys("git", &args)));
    }

    #[test]
    fn pattern_errors_name_the_pattern() {
        let e = Pattern::parse("a\nb").unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
        for bad in ["", "echo; rm", "git $x", "ls [abc", "'unterminated"] {
            let e = Pattern::parse(bad).unwrap_err();
            assert_eq!(e.pattern, bad);
            assert!(
                e.to_string()
                    .starts_with(&format!("invalid pattern `{bad}`"))
            );
        }
    }

    #[test]
    fn escaped_text_shows_invisible_characters() {
        assert_eq!(escape_controls("a\nb\u{1b}[2J"), "a␊b␛[2J");
        assert_eq!(
            escape_controls("e\u{200d}cho \u{202e}txt"),
            "e<U+200D>cho <U+202E>txt"
        );
        assert_eq!(escape_controls("é ｅ"), "é ｅ");
    }

    #[test]
    fn display_is_one_quoted_line() {
        let args = words(&["a b", "it's", "x\ny"]);
        let t = sys("echo", &args);
        assert_eq!(t.display(), r"echo 'a b' 'it'\''s' 'x␊y'");
        let long = words(&["x".repeat(500).as_str()]);
        let t = sys("echo", &long);
        assert_eq!(t.display().chars().count(), DISPLAY_MAX_CHARS);
        assert!(t.display().ends_with('…'));
        let t = script("say", "scripts/x.py", &[]);
        assert_eq!(t.display(), "say/scripts/x.py");
    }

    #[test]
    fn suggested_pattern_round_trips() {
        let targets = [
            sys("say", &[]),
            sys("e*o", &[]),
            sys("/opt/my tool/it's", &[]),
            sys("./x[1]", &[]),
            script("say", "scripts/speak.sh", &[]),
            script("Odd_Name", "scripts/a b?.py", &[]),
        ];
        for t in targets {
            let text = t.suggest_pattern();
            let p = Pattern::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert!(p.matches(&t), "{text} should match {t:?}");
        }
        let say = sys("say", &[]);
        assert_eq!(say.suggest_pattern(), "say");
        // A placeholder from an explanation: nothing to allow.
        for program in ["...", "…", "<command>"] {
            let t = sys(program, &[]);
            assert_eq!(t.suggest_pattern(), "", "{program}");
        }
        let script = |rel_path| script("data", rel_path, &[]);
        assert_eq!(script("scripts/stats").suggest_pattern(), "data:stats");
        assert_eq!(script("run.py").suggest_pattern(), "data:run");
        assert_eq!(
            script("scripts/office/unpack.py").suggest_pattern(),
            "data/scripts/office/unpack.py"
        );
        // An interpreter: its script, never the interpreter alone; code in an option: nothing.
        let script = words(&["tools/x.py", "--fast"]);
        let py = sys("python3", &script);
        assert_eq!(py.suggest_pattern(), "python3 tools/x.py *");
        let p = Pattern::parse(&py.suggest_pattern()).unwrap();
        assert!(p.matches(&py));
        let other = words(&["tools/y.py"]);
        assert!(!p.matches(&sys("python3", &other)));
        let code = words(&["-c", "print(1)"]);
        let inline = sys("python3", &code);
        assert_eq!(inline.suggest_pattern(), "");
        // A runner: its `run` and script; a wrapper: nothing (its arguments are the command).
        let run = words(&["run", "scripts/fill.py", "a"]);
        let uv = sys("uv", &run);
        assert_eq!(uv.suggest_pattern(), "uv run scripts/fill.py *");
        assert!(Pattern::parse(&uv.suggest_pattern()).unwrap().matches(&uv));
        let wrapped = words(&["bash", "-c", "x"]);
        let env = sys("env", &wrapped);
        assert_eq!(env.suggest_pattern(), "");
        // Escaped: allowing the program literally named `e*o` must not allow `echo`.
        let p = Pattern::parse(&targets[1].suggest_pattern()).unwrap();
        assert!(!p.matches(&sys("echo", &[])));
    }
}
