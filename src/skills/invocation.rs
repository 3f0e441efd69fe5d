//! Script invocations the way SKILL.md bodies write them (DESIGN §2): `python3 scripts/x.py ARGS`,
//! `bash SKILL/scripts/x.sh`, `node /abs/path/inside/a/skill/scripts/x.js`, and for packages
//! `python -m scripts.x ARGS`. When the path names a loaded skill's script this is that script —
//! the same policy (`scripts/*`), the same interpreter check — not a call of the interpreter.

use super::resolve::ResolvedScript;
use super::{ResolveError, SkillSet};
use std::path::Path;

/// Interpreters a SKILL.md may put in front of a script, the family whose [`OPTIONS`] they
/// take, the interpreters each one can run (by the script's detected interpreter), and the
/// extension a body may leave off (`python scripts/check_fields file.pdf` for
/// `scripts/check_fields.py`).
const FRONTS: &[(&str, &str, &[&str], &str)] = &[
    ("python", "python", &["python3", "python"], ".py"),
    ("python3", "python", &["python3", "python"], ".py"),
    ("bash", "bash", &["bash", "sh"], ".sh"),
    ("sh", "bash", &["bash", "sh"], ".sh"),
    ("node", "node", &["node"], ".js"),
];

/// Options an interpreter may be given before the script that take no code, no file to run
/// and no module to import — the call still runs that script, with them. Anything else
/// (`python -c`/`-i`/`-W`, `bash -c`, `node -e`/`-r`/`--require`…) leaves the command an
/// interpreter call, decided by the policy as such. Python short options may be combined
/// (`-uB`). `(interpreter family, option, why it is harmless)`:
const OPTIONS: &[(&str, &str, &str)] = &[
    ("python", "-u", "unbuffered stdout and stderr"),
    ("python", "-B", "no .pyc files written"),
    ("python", "-O", "assertions off"),
    ("python", "-E", "PYTHON* variables ignored"),
    ("python", "-s", "no user site-packages"),
    ("python", "-S", "no `site` import"),
    ("python", "-I", "isolated: -E -s -P"),
    ("python", "-P", "the cwd not put on sys.path"),
    ("python", "-q", "no banner"),
    ("python", "-b", "warnings on bytes/str mixing"),
    ("python", "-v", "import tracing on stderr"),
    // `-W` is left out: its category (`-W error::pkg.Warning`) is imported, from sys.path.
    ("bash", "-e", "stop at the first failing command"),
    ("bash", "-u", "unset variables are errors"),
    ("bash", "-x", "trace commands on stderr"),
    ("bash", "-v", "echo input lines on stderr"),
    ("node", "--no-warnings", "warnings silenced"),
    ("node", "--no-deprecation", "deprecation warnings silenced"),
    ("node", "--trace-warnings", "stack traces for warnings"),
    (
        "node",
        "--trace-uncaught",
        "stack traces for uncaught exceptions",
    ),
    ("node", "--enable-source-maps", "source-mapped stack traces"),
];

/// `python -X OPT` values that only change diagnostics or encoding (`pycache_prefix=`, `frozen_modules`
/// and the like are left out: they point Python at files).
const PYTHON_X: &[&str] = &[
    "utf8",
    "utf8=0",
    "utf8=1",
    "dev",
    "importtime",
    "faulthandler",
    "tracemalloc",
    "warn_default_encoding",
    "no_debug_ranges",
];

/// The options at the start of `words` that are in [`OPTIONS`] for `family`, and how many
/// words they take; `None` when one is not (then this is no script invocation).
fn leading_options(family: &str, words: &[String]) -> Option<(Vec<String>, usize)> {
    let known = |o: &str| OPTIONS.iter().any(|(f, opt, _)| *f == family && *opt == o);
    let mut options = Vec::new();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if !w.starts_with('-') || w == "-m" || w == "-" {
            break;
        }
        let ok = if family == "python" && (w == "-X" || w.starts_with("-X")) {
            let value = match w.strip_prefix("-X").filter(|v| !v.is_empty()) {
                Some(v) => v,
                None => {
                    i += 1;
                    options.push(w.clone());
                    words.get(i)?.as_str()
                }
            };
            PYTHON_X.contains(&value)
        } else if family != "node" && !w.starts_with("--") && w.len() > 2 {
            // Combined short options: `-uB`, `-eu`.
            w[1..].chars().all(|c| known(&format!("-{c}")))
        } else {
            known(w)
        };
        if !ok {
            return None;
        }
        options.push(words[i].clone());
        i += 1;
    }
    Some((options, i))
}

/// A script found behind an interpreter: run it with `argv[args_from..]` as its arguments.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The script named.
    pub script: ResolvedScript,
    /// Where in argv its own arguments start.
    pub args_from: usize,
}

impl SkillSet {
    /// `None` when argv is not an interpreter in front of a loaded skill's script (it is then a
    /// system command like any other). `Some(Err)` when it names one but cannot run it: an
    /// ambiguous path (the error lists the qualified candidates), an unsafe path, or an
    /// interpreter that does not fit the script.
    pub(crate) fn invocation(&self, argv: &[String]) -> Option<Result<Invocation, ResolveError>> {
        let first = argv.first()?;
        let (front, options_of, family, ext) = FRONTS.iter().find(|(n, ..)| first == n)?;
        let (options, skipped) = leading_options(options_of, &argv[1..])?;
        let at = 1 + skipped;
        let with_options = |mut script: ResolvedScript| {
            script.options = options.clone();
            script
        };
        let target = argv.get(at)?;
        if front.starts_with("python") && target == "-m" {
            let module = argv.get(at + 1)?;
            return self.module(module).map(|r| {
                r.map(|script| Invocation {
                    script: with_options(script),
                    args_from: at + 2,
                })
            });
        }
        // `./FILE` and `./SKILL/FILE` are the user's files in the working directory, never a
        // skill's root script of that name; `./scripts/x` still names a skill's path.
        let written = match target.strip_prefix("./") {
            Some(file) if !file.starts_with("scripts/") && !file.contains(['<', '{', '$']) => None,
            stripped => self.written_reference(stripped.unwrap_or(target)),
        };
        // Written as a skill's path (a placeholder for its folder, a root script's name), it
        // can be no file of the user's: not found is said, not run as an interpreter call.
        let skills_only = written.is_some();
        let mut reference = match written {
            Some(Ok(reference)) => reference,
            Some(Err(e)) => return Some(Err(e)),
            None => self.reference_for(target)?,
        };
        if !self.is_script_ref(&reference) {
            return None;
        }
        let mut resolved = self.resolve(&reference);
        if matches!(resolved, Err(ResolveError::NotFound(_))) && !reference.ends_with(ext) {
            let with_ext = format!("{reference}{ext}");
            let retry = self.resolve(&with_ext);
            if !matches!(retry, Err(ResolveError::NotFound(_))) {
                (reference, resolved) = (with_ext, retry);
            }
        }
        let script = match resolved {
            Err(ResolveError::NotFound(_)) if !skills_only && !reference.contains(['/', ':']) => {
                return None;
            }
            Err(ResolveError::NotFound(_))
                if !skills_only && self.unqualified_missing(&reference) =>
            {
                return None;
            }
            Err(e) => return Some(Err(e)),
            Ok(s) => s,
        };
        if !family.contains(&script.interpreter.as_str()) {
            return Some(Err(ResolveError::NotFound(format!(
                "`{front} {target}`: {} is a {} script; write {} {} (or the path alone)",
                script.rel_path, script.interpreter, script.interpreter, target
            ))));
        }
        Some(Ok(Invocation {
            script: with_options(script),
            args_from: at + 1,
        }))
    }

    /// How `target` would be written as a script reference: `./scripts/x` → `scripts/x`, an
    /// absolute path inside a loaded skill → the reference of that script there
    /// (`SKILL/scripts/x`, `SKILL:x.py` at the root, `SKILL:DIR/x.py` for one its SKILL.md
    /// names), so the policy (a deny of `SKILL:*` too) sees the script. `None` for anything else.
    fn reference_for(&self, target: &str) -> Option<String> {
        let t = target.strip_prefix("./").unwrap_or(target);
        if Path::new(t).is_absolute() {
            let canonical = std::fs::canonicalize(t).ok()?;
            let skill = self.iter().find(|s| canonical.starts_with(&s.dir))?;
            let rel = canonical.strip_prefix(&skill.dir).ok()?.to_str()?;
            if rel.starts_with("scripts/") {
                return Some(format!("{}/{rel}", skill.name));
            }
            // A tool's script is that tool.
            if let Some(tool) = skill.tools().find(|t| t.script == rel) {
                return Some(format!("{}:{}", skill.name, tool.id));
            }
            return skill
                .script(rel)
                .map(|_| super::resolve::script_reference(&skill.name, rel));
        }
        Some(t.to_owned())
    }

    /// An unqualified `scripts/x` that no loaded skill has: a file of the user's, not ours.
    fn unqualified_missing(&self, reference: &str) -> bool {
        reference.starts_with("scripts/")
            && self
                .iter()
                .all(|s| std::fs::symlink_metadata(s.dir.join(reference)).is_err())
    }

    /// `python -m scripts.x`: the loaded skill with `scripts/x.py` or `scripts/x/__main__.py`.
    fn module(&self, module: &str) -> Option<Result<ResolvedScript, ResolveError>> {
        let rest = module.strip_prefix("scripts.")?;
        if rest.is_empty() || !rest.split('.').all(is_identifier) {
            return None;
        }
        let base = format!("scripts/{}", rest.replace('.', "/"));
        let candidates = [format!("{base}.py"), format!("{base}/__main__.py")];
        let found: Vec<(&str, &String)> = self
            .iter()
            .flat_map(|s| {
                candidates
                    .iter()
                    .filter(|c| s.dir.join(c).is_file())
                    .map(move |c| (s.name.as_str(), c))
                    .take(1)
            })
            .collect();
        match found.as_slice() {
            [] => None,
            [(skill, rel)] => Some(self.resolve(&format!("{skill}/{rel}")).map(|mut r| {
                r.module = Some(module.to_owned());
                r
            })),
            many => Some(Err(ResolveError::Ambiguous {
                written: format!("-m {module}"),
                rel: many[0].1.clone(),
                skills: many.iter().map(|(s, _)| s.to_string()).collect(),
            })),
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::skills::{argv, write_test_skill as skill};

    #[test]
    fn interpreters_in_front_of_skill_scripts() {
        let root = tempfile::tempdir().unwrap();
        let main = "if __name__ == '__main__':\n    print(1)\n";
        skill(
            root.path(),
            "alpha",
            &[("scripts/run.py", main), ("scripts/go.sh", "echo\n")],
        );
        skill(
            root.path(),
            "beta",
            &[("scripts/run.py", main), ("scripts/pkg/__main__.py", main)],
        );
        let set = SkillSet::load(&[root.path().to_path_buf()]);

        let inv = set.invocation(&argv(&["python", "scripts/go.sh"]));
        assert!(
            inv.unwrap()
                .unwrap_err()
                .to_string()
                .contains("is a bash script")
        );
        let abs = root.path().join("alpha/scripts/run.py");
        // The script named, as SKILL/PATH; its arguments start after it.
        for (words, want) in [
            (&["sh", "./scripts/go.sh", "x"][..], "alpha/scripts/go.sh"),
            (&["bash", "alpha/scripts/go"], "alpha/scripts/go.sh"),
            (&["python3", "beta/scripts/run"], "beta/scripts/run.py"),
            (&["python3", "beta/scripts/run.py"], "beta/scripts/run.py"),
            (&["python3", abs.to_str().unwrap()], "alpha/scripts/run.py"),
        ] {
            let inv = set.invocation(&argv(words)).unwrap().unwrap();
            let got = format!("{}/{}", inv.script.skill, inv.script.rel_path);
            assert_eq!((got.as_str(), inv.args_from), (want, 2), "{words:?}");
        }

        let e = set
            .invocation(&argv(&["python3", "scripts/run.py"]))
            .unwrap()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`scripts/run.py` is in several skills; write one of \
             alpha/scripts/run.py, beta/scripts/run.py"
        );

        let inv = set
            .invocation(&argv(&["python", "-m", "scripts.pkg", "a"]))
            .unwrap()
            .unwrap();
        assert_eq!(inv.script.module.as_deref(), Some("scripts.pkg"));
        assert_eq!((inv.script.skill.as_str(), inv.args_from), ("beta", 3));
        assert!(
            set.invocation(&argv(&["python", "-m", "scripts.run"]))
                .unwrap()
                .is_err()
        );

        // Options that take no code: still the script, the options passed on.
        for (words, options, from) in [
            (
                &["python3", "-u", "beta/scripts/run.py", "a"][..],
                &["-u"][..],
                3,
            ),
            (
                &["python3", "-uB", "-X", "utf8", "beta/scripts/run.py"],
                &["-uB", "-X", "utf8"],
                5,
            ),
            (
                &["python", "-Ximporttime", "-m", "scripts.pkg", "a"],
                &["-Ximporttime"],
                4,
            ),
            (&["bash", "-eu", "alpha/scripts/go.sh"], &["-eu"], 3),
        ] {
            let inv = set.invocation(&argv(words)).unwrap().unwrap();
            assert_eq!(inv.script.options, options, "{words:?}");
            assert_eq!(inv.args_from, from, "{words:?}");
        }

        // Not a skill script: a system command, decided by the policy as usual.
        for words in [
            &["python3", "-c", "print(1)", "beta/scripts/run.py"][..],
            &["python3", "-i", "beta/scripts/run.py"],
            &["python3", "-uc", "print(1)"],
            &["python3", "-W", "error::x.Y", "beta/scripts/run.py"],
            &[
                "python3",
                "-X",
                "pycache_prefix=/tmp",
                "beta/scripts/run.py",
            ],
            &["python3", "-X"],
            &["bash", "-c", "alpha/scripts/go.sh"],
            &["bash", "-o", "pipefail", "alpha/scripts/go.sh"],
            &["node", "-r", "x", "alpha/scripts/go.sh"],
            &["python3", "scripts/mine.py"][..],
            &["python3", "-c", "print(1)"],
            &["python3", "-m", "http.server"],
            &["ruby", "scripts/run.py"],
            &["python3"],
            &["python3", "/etc/passwd"],
        ] {
            assert!(set.invocation(&argv(words)).is_none(), "{words:?}");
        }
    }

    #[test]
    fn a_root_file_named_with_its_extension_is_that_file() {
        let root = tempfile::tempdir().unwrap();
        skill(
            root.path(),
            "tool",
            &[
                ("build.sh", "echo root\n"),
                ("scripts/build.sh", "echo sub\n"),
            ],
        );
        skill(root.path(), "other", &[("run.py", "print(1)\n")]);
        let set = SkillSet::load(&[root.path().to_path_buf()]);
        let rel = |r: Result<ResolvedScript, ResolveError>| r.unwrap().rel_path;
        // The file name with its extension: the root file; the stem or the path: scripts/.
        assert_eq!(rel(set.resolve("tool:build.sh")), "build.sh");
        assert_eq!(rel(set.resolve("tool:build")), "scripts/build.sh");
        assert_eq!(
            rel(set.resolve("tool/scripts/build.sh")),
            "scripts/build.sh"
        );
        for written in ["build.sh", "tool/build.sh"] {
            let reference = set.written_reference(written).unwrap().unwrap();
            assert_eq!(rel(set.resolve(&reference)), "build.sh", "{written}");
        }
        for (script, want) in [
            ("tool:build.sh", "build.sh"),
            ("build.sh", "build.sh"),
            ("build", "scripts/build.sh"),
            ("scripts/build.sh", "scripts/build.sh"),
        ] {
            assert_eq!(rel(set.resolve_in("tool", script)), want, "{script}");
        }
        // The functions offered (native tools, MCP) run what they are described as.
        for f in crate::skills::functions(&set) {
            assert_eq!(rel(set.resolve(&f.reference)), f.rel_path, "{}", f.name);
        }
        let inv = set
            .invocation(&argv(&["bash", "build.sh"]))
            .unwrap()
            .unwrap();
        assert_eq!(inv.script.rel_path, "build.sh");

        // `./FILE` is the user's file, not a skill's root script; the bare name is the skill's.
        assert!(set.invocation(&argv(&["python3", "./run.py"])).is_none());
        let inv = set
            .invocation(&argv(&["python3", "run.py"]))
            .unwrap()
            .unwrap();
        assert_eq!(inv.script.skill, "other");
    }
}
