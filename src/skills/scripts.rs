//! Script detection in a skill's `scripts/` folder (DESIGN §4).
//!
//! Real skills ship scripts without an exec bit, without a shebang, or with a shebang that
//! disagrees with the extension, so the extension decides first and the exec bit never matters.
//! Only the first few KiB of each file are read: enough for the shebang and the first comment.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// How deep below `scripts/` detection descends (`scripts/a/b/c/d/e/x.py` is the deepest found).
pub const MAX_DEPTH: usize = 5;
/// Bytes read from the start of a file for its shebang and description.
const HEAD_BYTES: usize = 4096;
/// Descriptions longer than this are cut (they go into the system prompt).
const MAX_DESCRIPTION: usize = 300;

/// One detected script of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// Relative to the skill folder with `/` separators: `scripts/sub/x.py`.
    pub rel_path: String,
    /// The file stem, for `SKILL:id`.
    pub id: String,
    /// The skill folder joined with `rel_path` (not canonicalized: resolution does that).
    pub path: PathBuf,
    /// `python3`, `bash`, `node`, `ruby`, `perl`, `sh`, ...; `None` if a shebang names nothing usable.
    pub interpreter: Option<String>,
    /// The first comment block joined into one line, or "".
    pub description: String,
    /// `x.schema.json` beside `x.py`: the script reads one JSON object on stdin, of this schema
    /// (see `super::tools::script_tool`).
    pub schema: Option<PathBuf>,
}

/// Each known extension and the interpreter it implies (`None`: the configured
/// `ts_interpreter`). One table for resolution and for the messages that list the extensions.
const EXTENSIONS: [(&str, Option<&str>); 10] = [
    ("py", Some("python3")),
    ("sh", Some("bash")),
    ("bash", Some("bash")),
    ("js", Some("node")),
    ("mjs", Some("node")),
    ("cjs", Some("node")),
    ("ts", None),
    ("mts", None),
    ("rb", Some("ruby")),
    ("pl", Some("perl")),
];

/// The interpreter implied by a file name's extension. `.ts` maps to `ts_interpreter`.
pub fn interpreter_by_extension<'a>(file_name: &str, ts_interpreter: &'a str) -> Option<&'a str> {
    let ext = file_name.rsplit_once('.')?.1;
    let (_, by) = EXTENSIONS.iter().find(|(e, _)| *e == ext)?;
    Some(by.unwrap_or(ts_interpreter))
}

/// The known extensions, as a message lists them (`.py .sh …`).
pub fn known_extensions() -> String {
    let all: Vec<String> = EXTENSIONS.iter().map(|(e, _)| format!(".{e}")).collect();
    all.join(" ")
}

/// The name skillpipe runs an interpreter by: `python` is `python3` (tool folders and `#!`
/// lines written for other systems say `python`, which many machines no longer have, and which
/// `allowed_interpreters` lists as `python3`); any other name as it is.
pub fn interpreter_name(name: &str) -> String {
    match name {
        "python" => "python3".to_owned(),
        other => other.to_owned(),
    }
}

/// The interpreter named by a `#!` line: `#!/bin/bash` → `bash`, `#!/usr/bin/env python3` →
/// `python3`, `#!/usr/bin/env -S node --flag` → `node`. Arguments after it are not kept.
pub fn shebang_interpreter(head: &[u8]) -> Option<String> {
    let (program, env_name) = crate::command::interpreter::shebang(head)?;
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    let name = match env_name {
        Some(name) => base(&name),
        None if base(&program) == "env" => return None,
        None => base(&program),
    };
    (!name.is_empty()).then(|| interpreter_name(&name))
}

/// Whether a file is a script (known extension or a shebang) and with which interpreter.
/// `.ts` is special: its shebang, if any, wins over `ts_interpreter` (TypeScript has several runners).
fn classify(file_name: &str, head: &[u8], ts_interpreter: &str) -> Option<Option<String>> {
    let by_ext = interpreter_by_extension(file_name, ts_interpreter);
    let by_shebang = || shebang_interpreter(head);
    match by_ext {
        Some(_) if file_name.ends_with(".ts") || file_name.ends_with(".mts") => {
            Some(by_shebang().or(by_ext.map(str::to_owned)))
        }
        Some(i) => Some(Some(i.to_owned())),
        None if head.starts_with(b"#!") => Some(by_shebang()),
        None => None,
    }
}

/// The interpreter for one file, as resolution sees it: extension, then shebang.
pub fn interpreter_for(file_name: &str, path: &Path, ts_interpreter: &str) -> Option<String> {
    let head = read_head(path).unwrap_or_default();
    classify(file_name, &head, ts_interpreter).flatten()
}

/// Most paths taken from a SKILL.md body as scripts it names (see [`detect`]).
const MAX_NAMED: usize = 64;

/// Detect the scripts under `skill_dir/scripts`, then those at the skill root itself (not
/// below it: `references/` and `assets/` hold data), then the scripts `body` (the SKILL.md
/// text) names by a path into another folder (`eval-viewer/generate_review.py`): an author who
/// tells the model to run a file there made it one. `skill_dir` must be canonical: symlinks
/// whose target leaves it are skipped. Each group sorted by `rel_path`, `scripts/` first.
pub fn detect(skill_dir: &Path, ts_interpreter: &str, body: &str) -> Vec<Script> {
    let mut out = Vec::new();
    let folder = skill_dir.join("scripts");
    if folder.is_dir() {
        walk(skill_dir, &folder, "scripts", 0, ts_interpreter, &mut out);
    }
    out.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    let at_root: Vec<String> = fs::read_dir(skill_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name != "SKILL.md")
        .collect();
    for group in [at_root, named_paths(body)] {
        let mut found: Vec<Script> = group
            .into_iter()
            .filter_map(|rel| {
                let path = skill_dir.join(&rel);
                let name = rel.rsplit('/').next().unwrap_or(&rel).to_owned();
                // A regular file inside the skill, reached without a link: a body can name
                // anything, and a link at the root is not followed.
                let plain = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
                    && fs::canonicalize(&path).is_ok_and(|c| c == path);
                (plain && !skip_name(&name)).then(|| examine(&path, &name, rel, ts_interpreter))?
            })
            .collect();
        found.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
        out.extend(found);
    }
    out
}

/// Relative paths with a folder and a script's extension that `body` gives an interpreter to
/// run (`python <path>/eval-viewer/generate_review.py`, `node tools/x.js`, `uv run a/b.py`),
/// each tail of a longer one too. A path merely mentioned (a template to read) is not one.
/// Paths in `scripts/` and `tools/` (a tool runs as its tool) and ones with `..` are left out.
/// Pure.
fn named_paths(body: &str) -> Vec<String> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let bare = |w: &str| {
        w.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '/'))
            .to_owned()
    };
    let mut out: Vec<String> = Vec::new();
    // After an interpreter (or `run`), its options come before the path: `python3 -u x.py`,
    // `uv run --with pandas x.py`.
    let mut runs = false;
    let mut skip_value = false;
    for raw in body.split_whitespace() {
        let word_bare = bare(raw);
        if skip_value {
            skip_value = false;
            continue;
        }
        if runs && raw.starts_with('-') {
            skip_value = matches!(
                word_bare.as_str(),
                "with" | "from" | "python" | "m" | "W" | "X"
            );
            continue;
        }
        let this_runs = runs;
        runs = word_bare == "run" || crate::command::interpreter::is_interpreter(&word_bare);
        if !this_runs {
            continue;
        }
        // The path part: the last run of path characters (after a `<skill-path>` placeholder).
        let word = raw.trim_end_matches(|c: char| !path_char(c));
        let word = word.rsplit(|c: char| !path_char(c)).next().unwrap_or("");
        let word = word.trim_end_matches('.');
        if interpreter_by_extension(word, "").is_none() || word.split('/').any(|c| c == "..") {
            continue;
        }
        // The path may start with where the skill is (`<skill-path>/`, `~/.claude/skills/x/`):
        // each tail with a folder in it is a candidate; only one that exists in the skill counts.
        let parts: Vec<&str> = word
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        for start in 0..parts.len().saturating_sub(1) {
            let tail = parts[start..].join("/");
            // A tool's script is run as its tool (its schema, timeout and env), never bare.
            let tool_folder = tail.starts_with(&format!("{}/", super::TOOLS_DIR));
            if tail.starts_with("scripts/") || tool_folder || out.contains(&tail) {
                continue;
            }
            out.push(tail);
            if out.len() == MAX_NAMED {
                return out;
            }
        }
    }
    out
}

fn walk(skill_dir: &Path, dir: &Path, rel: &str, depth: usize, ts: &str, out: &mut Vec<Script>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if skip_name(name) {
            continue;
        }
        let path = entry.path();
        let Ok(mut ft) = entry.file_type() else {
            continue;
        };
        if ft.is_symlink() {
            // Follow only links that stay inside the skill (this also rules out loops out of it;
            // loops inside are bounded by MAX_DEPTH).
            match fs::canonicalize(&path) {
                Ok(target) if target.starts_with(skill_dir) => match fs::metadata(&target) {
                    Ok(m) => ft = m.file_type(),
                    Err(_) => continue,
                },
                _ => continue,
            }
        }
        let child_rel = format!("{rel}/{name}");
        if ft.is_dir() {
            if depth < MAX_DEPTH {
                walk(skill_dir, &path, &child_rel, depth + 1, ts, out);
            }
        } else if ft.is_file()
            && let Some(script) = examine(&path, name, child_rel, ts)
        {
            out.push(script);
        }
    }
}

/// Hidden files, caches, compiled files, package markers, docs and data are never scripts.
fn skip_name(name: &str) -> bool {
    const COMPILED: &[&str] = &[
        ".pyc", ".pyo", ".so", ".o", ".a", ".class", ".dylib", ".dll",
    ];
    name.starts_with('.')
        || name == "__pycache__"
        || name == "node_modules"
        || name == "__init__.py"
        || COMPILED.iter().any(|ext| name.ends_with(ext))
        || name.eq_ignore_ascii_case("README.md")
}

/// Python files read in full to tell a script from an imported helper module.
const MAX_PYTHON_SCAN: u64 = 1024 * 1024;

/// A Python module that is clearly imported, not run: its top level only defines things
/// (imports, `def`, `class`, assignments; a `__main__` guard or any call is a statement), so
/// running it would do nothing — `utils.py`, `connections.py`, a validator base class. A file
/// with top-level statements (`print(...)`) is a script even without a main guard. Which
/// command-line library a module imports says nothing either way. Offering helpers as tools
/// would only mislead the model.
fn is_python_helper(path: &Path) -> bool {
    let mut text = Vec::new();
    let read = fs::File::open(path).and_then(|f| f.take(MAX_PYTHON_SCAN).read_to_end(&mut text));
    if read.is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&text);
    only_definitions(&text) || not_runnable(&text) || imported_by_its_package(path)
}

/// A module that cannot or will not run as a script: it imports relatively (`from .base import
/// …` fails outside its package), or its `__main__` guard only raises ("should not be run
/// directly"). `raise SystemExit(main())` is how many scripts run their `main`: not a refusal.
fn not_runnable(text: &str) -> bool {
    let mut lines = text.lines();
    let relative = text.lines().any(|l| l.starts_with("from ."));
    let guard_raises = lines
        .by_ref()
        .position(|l| l.starts_with("if __name__ ==") && l.contains("__main__"))
        .and_then(|_| lines.find(|l| !l.trim().is_empty()))
        .is_some_and(|l| {
            let l = l.trim_start();
            l.starts_with("raise ") && !l.starts_with("raise SystemExit")
        });
    relative || guard_raises
}

/// A file its own package's `__init__.py` imports (`from .base import …`): part of a library.
fn imported_by_its_package(path: &Path) -> bool {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem().and_then(|s| s.to_str())) else {
        return false;
    };
    let Ok(init) = fs::read_to_string(dir.join("__init__.py")) else {
        return false;
    };
    init.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(&format!("from .{stem} import"))
            || (l.starts_with("from . import")
                && l["from . import".len()..]
                    .split(',')
                    .any(|n| n.split_whitespace().next() == Some(stem)))
    })
}

/// Whether Python source defines functions or classes and its every top-level line defines
/// something (or is a comment, a docstring, or the continuation of one). Lines inside
/// triple-quoted strings are skipped. An empty or comment-only file is not clearly a helper.
fn only_definitions(text: &str) -> bool {
    let mut defines_code = false;
    const DEFINING: &[&str] = &[
        "import ",
        "from ",
        "def ",
        "async def ",
        "class ",
        "@",
        "#",
        ")",
        "]",
        "}",
        "try:",
        "except",
        "else:",
        "finally:",
        "if TYPE_CHECKING",
        "__all__",
    ];
    let mut in_string: Option<&str> = None;
    for line in text.lines() {
        let starts_in_string = in_string.is_some();
        for quote in ["\"\"\"", "'''"] {
            if in_string.is_none_or(|q| q == quote) && line.matches(quote).count() % 2 == 1 {
                in_string = if in_string.is_some() {
                    None
                } else {
                    Some(quote)
                };
            }
        }
        if starts_in_string || line.is_empty() || line.starts_with([' ', '\t']) {
            continue;
        }
        defines_code |= ["def ", "async def ", "class "]
            .iter()
            .any(|p| line.starts_with(p));
        let defines = DEFINING.iter().any(|p| line.starts_with(p))
            || line.starts_with("\"\"\"")
            || line.starts_with("'''")
            || is_assignment(line);
        if !defines {
            return false;
        }
    }
    defines_code
}

/// `NAME = …` or `NAME: type = …` (not `==`).
fn is_assignment(line: &str) -> bool {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(line.len());
    if name_end == 0 {
        return false;
    }
    let rest = line[name_end..].trim_start();
    (rest.starts_with('=') && !rest.starts_with("=="))
        || (rest.starts_with(':') && rest.contains('='))
}

fn examine(path: &Path, name: &str, rel_path: String, ts: &str) -> Option<Script> {
    let head = read_head(path).ok()?;
    let interpreter = classify(name, &head, ts)?;
    if name.ends_with(".py") && is_python_helper(path) {
        return None;
    }
    let id = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => name.to_owned(),
    };
    let schema = Some(path.with_file_name(format!("{id}.schema.json"))).filter(|p| p.is_file());
    Some(Script {
        rel_path,
        id,
        path: path.to_path_buf(),
        interpreter,
        description: describe(&String::from_utf8_lossy(&head)),
        schema,
    })
}

/// The [`describe`] of a file's first [`HEAD_BYTES`], or "" when it cannot be read: a tool
/// folder without a description is described by its script, as a plain script is.
pub fn describe_file(path: &Path) -> String {
    read_head(path)
        .map(|head| describe(&String::from_utf8_lossy(&head)))
        .unwrap_or_default()
}

fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(HEAD_BYTES);
    fs::File::open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

/// The first comment block of a script, joined into one line: `#` or `//` line comments,
/// a `/* */` block, or a Python docstring. It may follow a shebang, encoding and lint lines and
/// a PEP 723 `# /// script` block; only its first paragraph is kept.
pub fn describe(text: &str) -> String {
    let mut lines = text.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("#!")) {
        lines.next();
    }
    // Skip blank lines, pragmas and inline script metadata before the comment.
    let mut in_metadata = false;
    let first = loop {
        let Some(line) = lines.next() else {
            return String::new();
        };
        let t = line.trim();
        if in_metadata {
            in_metadata = t != "# ///";
            continue;
        }
        if t.starts_with("# /// ") {
            in_metadata = true;
            continue;
        }
        if t.is_empty() || is_pragma(t) || t == "\"use strict\";" || t == "'use strict';" {
            continue;
        }
        break t;
    };

    let mut words: Vec<String> = Vec::new();
    let push =
        |words: &mut Vec<String>, s: &str| words.extend(s.split_whitespace().map(str::to_owned));

    // A docstring or a `/* */` block: its first paragraph.
    for (open, close) in [
        ("\"\"\"", "\"\"\""),
        ("r\"\"\"", "\"\"\""),
        ("'''", "'''"),
        ("r'''", "'''"),
        ("/*", "*/"),
    ] {
        let Some(after) = first.strip_prefix(open) else {
            continue;
        };
        // A block's lines may start with `*` (`/**`, ` * Convert files.`).
        let block = open == "/*";
        let mut add = |t: &str| -> bool {
            // Returns true at the end of the comment or of the first paragraph.
            let (part, done) = match t.find(close) {
                Some(end) => (&t[..end], true),
                None => (t, false),
            };
            let part = match block {
                true => part.trim().trim_start_matches('*').trim(),
                false => part.trim(),
            };
            if part.is_empty() {
                return done || !words.is_empty();
            }
            push(&mut words, part);
            done
        };
        if !add(after.trim_start_matches(|c| block && c == '*')) {
            for line in lines.by_ref() {
                if add(line.trim()) {
                    break;
                }
            }
        }
        return finish(words);
    }

    for marker in ["//", "#"] {
        if !first.starts_with(marker) {
            continue;
        }
        let mut line = Some(first);
        let mut prose_lines = 0;
        while let Some(t) = line {
            let Some(content) = t.strip_prefix(marker) else {
                // One comment line right above a shell's set-up line (`# Exit on error` over
                // `set -e`) says what that line does, not what the script does. Above other code
                // it is usually the script's one-line description, so it stays.
                if prose_lines == 1 && is_shell_setup(t) {
                    return String::new();
                }
                break;
            };
            let content = content.trim_start_matches(marker.chars().next().unwrap_or('#'));
            let content = content.trim();
            let decorative = !content.chars().any(char::is_alphanumeric);
            if decorative || is_pragma(t) {
                if !words.is_empty() && content.is_empty() {
                    break;
                }
            } else {
                push(&mut words, content);
                prose_lines += 1;
            }
            line = lines.next().map(str::trim);
        }
        return finish(words);
    }
    String::new()
}

/// A shell line that sets up how the rest runs (options, traps, the word separator).
fn is_shell_setup(line: &str) -> bool {
    ["set -", "set +", "shopt ", "trap ", "IFS="]
        .iter()
        .any(|p| line.starts_with(p))
}

/// Comment lines that are instructions to tools, not prose.
fn is_pragma(t: &str) -> bool {
    let body = t.trim_start_matches(['#', '/', ' ']);
    let lower = body.to_ascii_lowercase();
    lower.contains("-*-")
        || lower.starts_with("vim:")
        || lower.starts_with("shellcheck ")
        || lower.starts_with("eslint")
        || lower.starts_with("@ts-")
        || lower.starts_with("pylint:")
        || lower.starts_with("type:")
        || lower.starts_with("noqa")
        || lower.starts_with("fmt:")
        || lower.starts_with("spdx-license-identifier")
        || lower.starts_with("coding:")
        || lower.starts_with("coding=")
}

fn finish(words: Vec<String>) -> String {
    super::excerpt(&words.join(" "), MAX_DESCRIPTION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_and_compiled_files_are_not_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let scripts = dir.path().join("scripts");
        fs::create_dir_all(scripts.join("pkg/__pycache__")).unwrap();
        let files = [
            ("run.py", "import sys\nprint(sys.argv)\n"),
            (
                "cli.py",
                "def main():\n    pass\n\nif __name__ == \"__main__\":\n    main()\n",
            ),
            ("opts.py", "import argparse\n"),
            // Defines a command line but never runs it: nothing happens when run.
            (
                "unused.py",
                "import argparse\ndef main():\n    argparse.ArgumentParser()\n",
            ),
            ("__init__.py", ""),
            (
                "pkg/__init__.py",
                "from .util import x\nfrom .base import B\n",
            ),
            // Imported by its package, with a guard that only refuses to run.
            (
                "pkg/base.py",
                "import re\nclass B:\n    pass\nprint_me = re.compile('x')\nB.x = 1\n\nif __name__ == \"__main__\":\n    raise RuntimeError(\"not run directly\")\n",
            ),
            // Imports relatively: fails outside its package, even with a main guard.
            (
                "pkg/rel.py",
                "import sys\nfrom .base import B\nprint(sys.argv)\nif __name__ == \"__main__\":\n    main()\n",
            ),
            // The control: a package's own runnable script stays.
            (
                "pkg/tool.py",
                "import sys\nprint(sys.argv)\nif __name__ == \"__main__\":\n    main()\n",
            ),
            (
                "pkg/util.py",
                "#!/usr/bin/env python3\n\"\"\"Helpers.\n\nprint(1) in a docstring\n\"\"\"\nimport os\nX: int = 1\n\n\nclass A:\n    pass\n\ndef x():\n    return 1\n",
            ),
            ("plain.py", "\"\"\"List things.\"\"\"\nprint('x')\n"),
            // A guard that exits with main's status runs main; one that raises refuses to run.
            (
                "exits.py",
                "def main():\n    return 0\n\nif __name__ == \"__main__\":\n    raise SystemExit(main())\n",
            ),
            (
                "refuses.py",
                "def f():\n    return 0\n\nif __name__ == \"__main__\":\n    raise ImportError(\"a library\")\n",
            ),
            ("empty.py", "\"\"\"Not clearly a helper.\"\"\"\nimport os\n"),
            ("pkg/__pycache__/util.cpython-312.pyc", "#!binary"),
            ("pkg/native.so", "#!not really"),
            ("tool.sh", "echo hi\n"),
        ];
        for (rel, text) in files {
            fs::write(scripts.join(rel), text).unwrap();
        }
        let found: Vec<String> = detect(dir.path(), "node", "")
            .into_iter()
            .map(|s| s.rel_path)
            .collect();
        assert_eq!(
            found,
            [
                "scripts/cli.py",
                "scripts/empty.py",
                "scripts/exits.py",
                "scripts/opts.py",
                "scripts/pkg/tool.py",
                "scripts/plain.py",
                "scripts/run.py",
                "scripts/tool.sh"
            ]
        );
    }

    #[test]
    fn scripts_the_body_names_elsewhere_in_the_folder_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for (rel, text) in [
            (
                "eval-viewer/generate_review.py",
                "import sys\nprint(sys.argv)\n",
            ),
            ("eval-viewer/unnamed.py", "print(1)\n"),
            ("core/helpers.py", "def f():\n    return 1\n"),
            ("tools/stats/stats.py", "print(1)\n"),
            ("assets/data.json", "{}"),
        ] {
            fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
            fs::write(root.join(rel), text).unwrap();
        }
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("x.py"), "print(1)\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
        let body = "Run `python <skill-path>/eval-viewer/generate_review.py ws` to review.\n\
                    Run python core/helpers.py, python ../other/x.py, bash /etc/x.sh, python \
                    linked/x.py, python tools/stats/stats.py, python eval-viewer/missing.py and \
                    python assets/data.json. See eval-viewer/unnamed.py for the layout.";
        let found: Vec<String> = detect(&root, "node", body)
            .into_iter()
            .map(|s| s.rel_path)
            .collect();
        // Named and runnable only: not a helper of definitions, not through a link leading out,
        // not a tool's script (it runs as its tool), not a file the body does not name.
        assert_eq!(found, ["eval-viewer/generate_review.py"]);
        assert!(detect(&root, "node", "").is_empty(), "the control");
        // Options between the interpreter and the path, and text that is no ASCII around it.
        for body in [
            "Run `python3 -u eval-viewer/generate_review.py ws`.",
            "Then run “python eval-viewer/generate_review.py” — «done».",
            "uv run --with pandas eval-viewer/generate_review.py",
        ] {
            let found: Vec<String> = detect(&root, "node", body)
                .into_iter()
                .map(|s| s.rel_path)
                .collect();
            assert_eq!(found, ["eval-viewer/generate_review.py"], "{body}");
        }
    }

    #[test]
    fn extension_first() {
        for (file, ts, want) in [
            ("x.py", "node", Some("python3")),
            ("x.bash", "node", Some("bash")),
            ("x.mjs", "node", Some("node")),
            ("x.ts", "deno", Some("deno")),
            ("x.rb", "node", Some("ruby")),
            ("x.pl", "node", Some("perl")),
            ("x.txt", "node", None),
            ("Makefile", "node", None),
        ] {
            assert_eq!(interpreter_by_extension(file, ts), want, "{file}");
        }
        // A mismatched shebang does not override the extension; a `.ts` one does.
        for (file, head, ts, want) in [
            ("x.py", &b"#!/bin/bash\n"[..], "node", Some("python3")),
            (
                "x.ts",
                b"#!/usr/bin/env -S deno run\n",
                "node",
                Some("deno"),
            ),
            ("x.ts", b"", "tsx", Some("tsx")),
        ] {
            assert_eq!(classify(file, head, ts), Some(want.map(str::to_owned)));
        }
        assert_eq!(classify("data.json", b"{}", "node"), None);
    }

    #[test]
    fn shebangs() {
        for (head, want) in [
            (&b"#!/bin/bash\necho"[..], Some("bash")),
            (b"#!/usr/bin/env python3\n", Some("python3")),
            (b"#! /bin/sh -e\n", Some("sh")),
            (b"#!/usr/bin/env -S node --no-warnings\n", Some("node")),
            (b"#!/usr/bin/env\n", None),
            // `python` runs as `python3`, the name allowed_interpreters knows.
            (b"#!/usr/bin/env python\n", Some("python3")),
            (b"#!/usr/bin/python -u\n", Some("python3")),
            (b"#!/usr/bin/python2\n", Some("python2")),
            (b"echo hi\n", None),
        ] {
            let got = shebang_interpreter(head);
            assert_eq!(got.as_deref(), want, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn the_first_comment_describes_a_script() {
        for (text, want) in [
            (
                "#!/usr/bin/env bash\n# shellcheck disable=SC2086\n\n# Speak text aloud\n# with the \
                 system voice.\n#\n# Usage: say.sh TEXT\nset -eu\n",
                "Speak text aloud with the system voice.",
            ),
            // A Python docstring after the encoding line.
            (
                "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\"\"\"Look up a word\nin the \
                 dictionary.\n\nUsage: lookup.py WORD\n\"\"\"\nimport sys\n",
                "Look up a word in the dictionary.",
            ),
            ("'''One line.'''\n", "One line."),
            ("r\"\"\"\n  Raw doc.\n\"\"\"\n", "Raw doc."),
            // A PEP 723 block is skipped.
            (
                "# /// script\n# dependencies = []\n# ///\n\"\"\"Real doc.\"\"\"\n",
                "Real doc.",
            ),
            // Slash comments.
            (
                "#!/usr/bin/env node\n'use strict';\n// Fetch a page\n// and print it.\nconst x = 1;\n",
                "Fetch a page and print it.",
            ),
            (
                "/**\n * Convert files.\n * Fast.\n *\n * @param x\n */\n",
                "Convert files. Fast.",
            ),
            ("/* Inline block. */\ncode();\n", "Inline block."),
            // No comment first: nothing.
            ("import sys\n# late comment\n", ""),
            ("", ""),
            ("#!/bin/sh\n", ""),
            ("# ----------\n# Title\n", "Title"),
            // A comment over the code line it explains is not the script's description.
            ("#!/bin/bash\n\n# Exit on error\nset -e\n", ""),
            ("#!/bin/bash\n# Strict mode\nset -euo pipefail\n", ""),
            // Above other code, one line is the script's description.
            (
                "#!/bin/sh\n# Speak TEXT aloud.\necho \"$1\"\n",
                "Speak TEXT aloud.",
            ),
            ("// Render a page.\nconsole.log(1)\n", "Render a page."),
            ("#!/bin/sh\n# Say hello.\n\necho hello\n", "Say hello."),
        ] {
            assert_eq!(describe(text), want, "{text:?}");
        }
    }

    #[test]
    fn long_description_is_cut() {
        let s = format!("# {}\n", "word ".repeat(200));
        let d = describe(&s);
        assert_eq!(d.chars().count(), MAX_DESCRIPTION);
        assert!(d.ends_with(" word…"), "{d}");
        // A long doc comment ends at a sentence, not inside a word (MCP tool descriptions).
        let s = format!(
            "\"\"\"{}Dates are written in ISO form and numbers without thousands separators.\"\"\"\n",
            "This sentence is forty-five characters long. ".repeat(6)
        );
        let d = describe(&s);
        assert!(d.ends_with("characters long. …"), "{d}");
        assert!(d.chars().count() <= MAX_DESCRIPTION, "{d}");
    }
}
