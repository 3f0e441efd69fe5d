//! Programs that run code given to them: an interpreter's first argument (a script, or code
//! after an option such as `-c`) decides what runs, not the program's name, so "always" for
//! `python3 scripts/check.py` (or an allow hint) covers that script, never any Python. Pure.

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

/// True when `program` (a name or a path) starts its arguments as a command (`env`, `timeout`,
/// `xargs`, `sudo` …): what runs is in the arguments, not the program's name.
pub fn is_wrapper(program: &str) -> bool {
    super::wrapper::starts(program).is_some()
}

/// A `#!` line at the start of `head`: its program as written and, for `env [-S] [OPT…] NAME`,
/// the NAME `env` looks up on `PATH`. `None` when `head` has no `#!` line naming a program in
/// UTF-8.
pub fn shebang(head: &[u8]) -> Option<(String, Option<String>)> {
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let mut words = std::str::from_utf8(line).ok()?.split_whitespace();
    let program = words.next()?.to_owned();
    let env = program.rsplit('/').next() == Some("env");
    // `env`'s own options (`-S`, `-i`) and variables (`VAR=x`) come before the name.
    let name = env.then(|| words.find(|w| !w.starts_with('-') && !w.contains('=')));
    Some((program, name.flatten().map(str::to_owned)))
}

/// Runners whose first argument is a subcommand: `uv run x.py`, `deno run x.ts`, `bun run x`,
/// `pipx run tool`. Only `run SCRIPT` says what runs; any other subcommand (`deno eval CODE`)
/// may carry code.
const RUNNERS: &[&str] = &["uv", "uvx", "deno", "bun", "pipx", "npx"];

/// True when `program` (a name or a path) is an interpreter: its arguments are code.
pub fn is_interpreter(program: &str) -> bool {
    INTERPRETERS.contains(&base_name(program).as_str())
}

/// How much of `argv` names what runs, for a decision that outlives this one command ("always",
/// an allow pattern): the program alone for most programs; for an interpreter, the program and
/// its script (`python3 scripts/x.py`; a runner with its `run` and script: `uv run x.py`). `None`
/// when nothing short of the whole command says what runs: code in an option (`-c`, `-e`) or
/// from stdin, a runner's other subcommands (`deno eval CODE`, `uvx TOOL ARGS`), and a wrapper
/// (`env`, `timeout`, `sudo` …), whose arguments are the command.
pub fn what_runs(argv: &[String]) -> Option<&[String]> {
    let program = argv.first()?;
    if is_wrapper(program) {
        return None;
    }
    if !is_interpreter(program) {
        return Some(&argv[..1]);
    }
    let script_at = |i: usize| argv.get(i).is_some_and(|w| !w.starts_with('-'));
    if RUNNERS.contains(&base_name(program).as_str()) {
        return match argv.get(1).map(String::as_str) {
            // What follows `run` is a command of its own (`uv run python -c CODE`, `uv run
            // x.py`): what runs is what runs in it.
            Some("run") if script_at(2) => what_runs(&argv[2..]).map(|w| &argv[..2 + w.len()]),
            // `bun x.ts`: a file given straight to the runner (not a program: `uvx python3.12`).
            Some(w)
                if script_at(1)
                    && (w.contains('/') || w.contains('.'))
                    && !is_interpreter(w)
                    && !is_wrapper(w) =>
            {
                Some(&argv[..2])
            }
            _ => None,
        };
    }
    script_at(1).then(|| &argv[..2])
}

/// `program`'s file name, lower-case, version suffix stripped (`/usr/bin/Python3.12` → `python`).
fn base_name(program: &str) -> String {
    let name = program
        .rsplit('/')
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
        .to_owned()
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
        for (argv, runs) in [
            ("git status", Some("git")),
            ("python3 scripts/x.py a", Some("python3 scripts/x.py")),
            ("python3 -c print(1)", None),
            ("bash", None),
            // A runner's `run` and its script; its other subcommands may carry code.
            ("uv run scripts/fill.py a", Some("uv run scripts/fill.py")),
            ("uv run --with x python", None),
            // What follows `run` is a command: code in an option there is code.
            ("uv run python -c print(1)", None),
            ("uv run python x.py a", Some("uv run python x.py")),
            ("uv run env rm x", None),
            ("uvx python3.12 -c x", None),
            ("deno eval Deno.exit()", None),
            ("bun x.ts", Some("bun x.ts")),
            // A wrapper's arguments are the command.
            ("env bash -c x", None),
            ("/usr/bin/timeout 5 rm x", None),
        ] {
            let words = |s: &str| v(&s.split(' ').collect::<Vec<_>>());
            let runs = runs.map(words);
            assert_eq!(what_runs(&words(argv)), runs.as_deref(), "{argv}");
        }
        assert_eq!(what_runs(&[]), None);
    }
}
