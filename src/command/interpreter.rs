//! Programs that run code given to them: an interpreter's first argument (a script, or code
//! after an option such as `-c`) decides what runs, not the program's name. Pure.
//!
//! A user who said "always" to `python3 scripts/check.py` meant that script: under the old rule
//! (the program, any arguments) every later `python3 …` the model wrote ran without a question,
//! and the allow hint for an unlisted script suggested `--allow 'python3'`, i.e. any Python.

/// Interpreters by file name, version suffix stripped (`python3.12` → `python`), ignoring case.
const INTERPRETERS: &[&str] = &[
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "rscript",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "java",
    "uv",
    "uvx",
    "npx",
    "pipx",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "jq",
];

/// True when `program` (a name or a path) is an interpreter: its arguments are code.
pub fn is_interpreter(program: &str) -> bool {
    let name = program
        .rsplit('/')
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&base)
}

/// How much of `argv` names what runs, for a decision that outlives this one command ("always",
/// an allow pattern): the program alone for most programs; for an interpreter, the program and
/// its script (`python3 scripts/x.py`), or `None` when code comes in an option (`-c`, `-e`) or
/// from stdin — then nothing short of the whole command says what runs.
pub fn what_runs(argv: &[String]) -> Option<&[String]> {
    let program = argv.first()?;
    if !is_interpreter(program) {
        return Some(&argv[..1]);
    }
    match argv.get(1) {
        Some(script) if !script.starts_with('-') => Some(&argv[..2]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn interpreters_by_name_whatever_their_version_or_path() {
        for p in [
            "python3",
            "python3.12",
            "/usr/bin/python",
            "node",
            "bash",
            "Rscript",
            "awk",
        ] {
            assert!(is_interpreter(p), "{p}");
        }
        for p in ["scripts/x.py", "git", "ls", "pythonic", "shellcheck", "say"] {
            assert!(!is_interpreter(p), "{p}");
        }
    }

    #[test]
    fn what_runs_is_the_script_for_an_interpreter() {
        assert_eq!(what_runs(&v(&["git", "status"])), Some(&v(&["git"])[..]));
        assert_eq!(
            what_runs(&v(&["python3", "scripts/x.py", "a"])),
            Some(&v(&["python3", "scripts/x.py"])[..])
        );
        assert_eq!(what_runs(&v(&["python3", "-c", "print(1)"])), None);
        assert_eq!(what_runs(&v(&["bash"])), None);
        assert_eq!(what_runs(&[]), None);
    }
}
